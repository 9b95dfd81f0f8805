package denar_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/denar-mk/denar/sdk/denar"
	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
	"github.com/denar-mk/denar/sdk/denar/payrollapi"
)

func ptr[T any](v T) *T { return &v }

func payroll() *denar.Payroll {
	c, err := denar.NewPayroll(srv.payrollURL, denar.Options{APIKey: srv.payrollKey})
	if err != nil {
		panic(err)
	}
	return c
}

func einvoice() *denar.EInvoice {
	c, err := denar.NewEInvoice(srv.einvoiceURL, denar.Options{APIKey: srv.einvoiceKey, CompanyID: srv.company})
	if err != nil {
		panic(err)
	}
	c.Poll = 100 * time.Millisecond
	return c
}

func ExamplePayroll_Calculate() {
	res, err := payroll().Calculate(context.Background(), payrollapi.Input{GrossSalary: ptr("30000"), EffectiveDate: ptr("2026-01-15")})
	if err != nil {
		panic(err)
	}
	fmt.Println("net", res.NetPaid)
	// Output: net 20533
}

func ExamplePayroll_CalculateBatch() {
	res, err := payroll().CalculateBatch(context.Background(), payrollapi.BatchInput{Inputs: &[]payrollapi.Input{
		{GrossSalary: ptr("30000"), EffectiveDate: ptr("2026-01-15")},
		{TargetNet: ptr("20533"), EffectiveDate: ptr("2026-01-15")},
	}})
	if err != nil {
		panic(err)
	}
	for _, r := range *res.Data {
		fmt.Println(r.SalaryGross, r.NetPaid)
	}
	// Output:
	// 30000 20533
	// 29999 20533
}

func ExamplePayroll_MpinXML() {
	xml, err := payroll().MpinXML(context.Background(), payrollapi.MpinRequest{
		Company: payrollapi.Company{Name: "Дизајнија ДООЕЛ", TaxId: ptr("4030990123455"), City: ptr("Скопје"), MunicipalityCode: ptr("182")},
		Batch:   payrollapi.Batch{PeriodMonth: 10, PeriodYear: 2026, WorkingHours: ptr(160.0)},
		Records: &[]payrollapi.Record{{
			Employee:     payrollapi.Employee{FirstName: "Ана", LastName: "Ангеловска", Embg: ptr("1505985412349"), MunicipalityCode: ptr("182")},
			WorkingHours: ptr(160.0), SalaryGross: "30000", SalaryNet: "20533", Pension: "5970", Health: "2250",
			AdditionalHealth: "150", EmploymentContrib: "30", Pit: "1067", PersonalAllowance: ptr("10932"),
		}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(string(xml), "<NetoIznosVk>20533</NetoIznosVk>"))
	// Output: true
}

// A wrong body is a *denar.Problem naming the field.
func ExampleProblem() {
	_, err := payroll().Calculate(context.Background(), payrollapi.Input{GrossSalary: ptr("thirty")})
	var p *denar.Problem
	if errors.As(err, &p) {
		fmt.Println(p.Status, p.Code == denar.CodeValidationFailed, p.Errors[0].Path)
	}
	// Output: 422 true grossSalary
}

func ExampleEInvoice_CreateCompany() {
	co, err := einvoice().CreateCompany(context.Background(), einvoiceapi.CreateCompanyBody{
		TaxNumber:      "4030000000028",
		Representative: einvoiceapi.Representative{Name: "Петар Петровски", Email: "petar@example.mk"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(co.Name, co.Status)
	// Output: Тест Занаетчија Битола pending_mandate
}

func invoice(number string) einvoiceapi.Request {
	skopje, _ := time.LoadLocation("Europe/Skopje")
	return einvoiceapi.Request{
		Number: number, IssueDate: time.Now().In(skopje).Format(time.DateOnly),
		Buyer: einvoiceapi.Party{TaxNumber: "4030000000010", Name: "Тест Купувач ДОО Скопје",
			Address: einvoiceapi.PartyAddress{Street: ptr("ул. Македонија"), Number: ptr("2"), PostalCode: ptr("1000"), City: ptr("Скопје")}},
		Payment: einvoiceapi.Payment{TypeCode: "P12", Currency: "MKD"},
		Lines:   &[]einvoiceapi.Line{{Description: "Консултантски услуги", Quantity: "3", UnitPrice: "1000", VatPercent: "18", TaxIndicator: "DDV-A"}},
	}
}

// Issue an e-invoice and wait until UJP delivered it (the sandbox signer
// of the company signs it on the way).
func ExampleEInvoice_WaitForStatus() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := einvoice()
	e, err := c.Issue(ctx, "", invoice("SDK-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err != nil {
		panic(err)
	}
	e, err = c.WaitForStatus(ctx, "", e.Id, einvoiceapi.EInvoiceStatusDelivered)
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Status, e.Euid != nil)
	// Output: delivered true
}

func ExampleEInvoice_Storno() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := einvoice()
	e, err := c.Issue(ctx, "", invoice("SDK-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err != nil {
		panic(err)
	}
	if _, err := c.WaitForStatus(ctx, "", e.Id, einvoiceapi.EInvoiceStatusDelivered); err != nil {
		panic(err)
	}
	s, err := c.Storno(ctx, "", e.Id, einvoiceapi.StornoBody{Reason: "S-1", Comment: ptr("двојно")})
	if err != nil {
		panic(err)
	}
	s, err = c.WaitForStatus(ctx, "", s.Id, einvoiceapi.EInvoiceStatusDelivered)
	if err != nil {
		panic(err)
	}
	fmt.Println("storno", s.Status)
	// Output: storno delivered
}

// Reject an incoming e-invoice: the sandbox drops one from its fictitious
// supplier into the inbox, found by iterating over the inbox.
func ExampleEInvoice_Reject() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := einvoice()
	r, err := c.Raw.SandboxDropIncomingWithResponse(ctx, &einvoiceapi.SandboxDropIncomingParams{}, einvoiceapi.SandboxIncomingInputBody{})
	if err != nil || r.JSON202 == nil {
		panic(fmt.Sprint(err, string(r.Body)))
	}
	var doc *einvoiceapi.InboxDocument
	for doc == nil {
		for d, err := range c.Inbox(ctx, einvoiceapi.ListInboxParams{}) {
			if err != nil {
				panic(err)
			}
			if d.Euid == r.JSON202.Euid {
				doc = &d
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	d, err := c.Reject(ctx, "", doc.Id, einvoiceapi.RejectBody{ReasonCode: "O-2", Comment: ptr("Погрешна цена")})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Seller.TaxNumber, *d.Decision.ReasonCode)
	// Output: 4030000000044 O-2
}

func ExampleVerifySignature() {
	secret := "whsec_0123456789abcdef"
	body := []byte(`{"type":"einvoice.delivered"}`)
	t := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(t + "." + string(body)))
	header := "t=" + t + ",v1=" + hex.EncodeToString(mac.Sum(nil))

	fmt.Println(denar.VerifySignature(body, header, []string{"whsec_old", secret}, 0))
	err := denar.VerifySignature([]byte(`{"type":"forged"}`), header, []string{secret}, 0)
	fmt.Println(errors.Is(err, denar.ErrWebhookSignature))
	// Output:
	// <nil>
	// true
}
