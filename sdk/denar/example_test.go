package denar_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
	c, err := denar.NewEInvoice(srv.einvoiceURL, denar.Options{APIKey: srv.einvoiceKey})
	if err != nil {
		panic(err)
	}
	c.Poll = 100 * time.Millisecond
	return c
}

// seller is the sandbox seller the tests onboarded, 4030000000001.
func seller() *denar.CompanyClient { return einvoice().Company(srv.company) }

func ExamplePayroll_Calculate() {
	res, err := payroll().Calculate(context.Background(), payrollapi.Input{GrossSalary: ptr("30000"), EffectiveDate: ptr("2026-01-15")})
	if err != nil {
		panic(err)
	}
	fmt.Println("net", res.NetPaid)
	// Output: net 20533
}

// With period and no workingHours, the hourly rate's divisor is the
// month's fund of hours: its weekdays × 8, public holidays included as
// paid hours (May 2026: 21 weekdays, 168 hours).
func ExamplePayroll_Calculate_period() {
	res, err := payroll().Calculate(context.Background(), payrollapi.Input{GrossSalary: ptr("30000"),
		Period: &payrollapi.Period{Year: 2026, Month: 5}, NightHours: ptr(16.0)})
	if err != nil {
		panic(err)
	}
	fmt.Println("fund", res.WorkingHours, "night pay", res.NightPay)
	// Output: fund 168 night pay 3857
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
		// October 2026: 22 weekdays × 8 = 176 hours, the public holidays
		// (11 and 23 October) counted as paid hours of the fund.
		Batch: payrollapi.Batch{PeriodMonth: 10, PeriodYear: 2026, WorkingHours: ptr(176.0)},
		Records: &[]payrollapi.Record{{
			Employee:     payrollapi.Employee{FirstName: "Ана", LastName: "Ангеловска", Embg: ptr("1505985412349"), MunicipalityCode: ptr("182")},
			WorkingHours: ptr(176.0), SalaryGross: "30000", SalaryNet: "20533", Pension: "5970", Health: "2250",
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
// of the company signs it on the way). A client bound to the company
// sends X-Company-Id on every request.
func ExampleCompanyClient_WaitForStatus() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	co := einvoice().Company(srv.company)
	e, err := co.Issue(ctx, invoice("SDK-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err != nil {
		panic(err)
	}
	e, err = co.WaitForStatus(ctx, e.Id, einvoiceapi.EInvoiceStatusDelivered)
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Status, e.Euid != nil)
	// Output: delivered true
}

// Cancel a delivered e-invoice with a storno: its reason is a void-reasons
// code (EInvoice.Codebook(ctx, "void-reasons") lists them).
func ExampleCompanyClient_Storno() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	co := seller()
	e, err := co.Issue(ctx, invoice("SDK-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	if err != nil {
		panic(err)
	}
	if _, err := co.WaitForStatus(ctx, e.Id, einvoiceapi.EInvoiceStatusDelivered); err != nil {
		panic(err)
	}
	s, err := co.Storno(ctx, e.Id, einvoiceapi.StornoBody{Reason: "S-1", Comment: ptr("двојно")})
	if err != nil {
		panic(err)
	}
	s, err = co.WaitForStatus(ctx, s.Id, einvoiceapi.EInvoiceStatusDelivered)
	if err != nil {
		panic(err)
	}
	fmt.Println("storno", s.Status)
	// Output: storno delivered
}

// Reject an incoming e-invoice: the sandbox drops one from its fictitious
// supplier into the inbox, found by iterating over the inbox. The reason is
// a reject-reasons code.
func ExampleCompanyClient_Reject() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	co := seller()
	in, err := co.SandboxDropIncoming(ctx, einvoiceapi.SandboxIncomingInputBody{})
	if err != nil {
		panic(err)
	}
	var doc *einvoiceapi.InboxDocument
	for doc == nil {
		for d, err := range co.Inbox(ctx, einvoiceapi.ListInboxParams{}) {
			if err != nil {
				panic(err)
			}
			if d.Euid == in.Euid {
				doc = &d
				break
			}
		}
		if doc == nil {
			select {
			case <-ctx.Done():
				panic(ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	d, err := co.Reject(ctx, doc.Id, einvoiceapi.RejectBody{ReasonCode: "O-2", Comment: ptr("Погрешна цена")})
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Seller.TaxNumber, *d.Decision.ReasonCode)
	// Output: 4030000000044 O-2
}

// A sandbox onboarding from start to end: the company is created waiting
// for its mandate, and the mandate is accepted as its (fictitious)
// representative would from the mail.
func ExampleEInvoice_AcceptSandboxMandate() {
	ctx := context.Background()
	c := einvoice()
	co, err := c.CreateCompany(ctx, einvoiceapi.CreateCompanyBody{TaxNumber: "4030000000010",
		Representative: einvoiceapi.Representative{Name: "Јован Јовановски", Email: "jovan@example.mk"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(co.Name, co.Status)
	if err := c.AcceptSandboxMandate(ctx, co.Id); err != nil {
		panic(err)
	}
	co, err = c.Company(co.Id).Details(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(co.Status)
	// Output:
	// Тест Купувач ДОО Скопје pending_mandate
	// active
}

// The values a field takes from a code list: a tax indicator names the VAT
// rates a line with it may have. A field error names its list in
// Problem.Errors[].Codebook.
func ExampleEInvoice_Codebook() {
	ctx := context.Background()
	cb, err := einvoice().Codebook(ctx, "tax-indicators")
	if err != nil {
		panic(err)
	}
	for _, v := range *cb.Values {
		if v.Code == "DDV-A" || v.Code == "DDV-14-4" {
			fmt.Println(v.Code, *v.VatImpact, *v.VatPercents)
		}
	}
	wrong := invoice("X-1")
	(*wrong.Lines)[0].TaxIndicator = "DDV-X"
	_, err = seller().Issue(ctx, wrong)
	var p *denar.Problem
	if errors.As(err, &p) {
		fmt.Println(p.Code, p.Errors[0].Path, p.Errors[0].Codebook)
	}
	// Output:
	// DDV-A STANDARD [18]
	// DDV-14-4 PRENESEN [10 5]
	// validation_failed lines[0].taxIndicator tax-indicators
}

// Webhooks: an endpoint subscribed to real event types (EInvoice.EventTypes
// lists them), and a test delivery, verified on the receiving side.
func ExampleEInvoice_CreateWebhookEndpoint() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := einvoice()
	var secret string
	got := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := denar.VerifySignature(body, r.Header.Get(denar.WebhookSignatureHeader), []string{secret}, 0)
		got <- fmt.Sprint(r.Header.Get("Service-Event-Type"), " verified: ", err == nil)
	}))
	defer receiver.Close()
	ep, err := c.CreateWebhookEndpoint(ctx, einvoiceapi.CreateWebhookEndpointBody{Url: receiver.URL,
		Events: &[]string{"einvoice.submitted", "einvoice.rejected", "inbox.received"}})
	if err != nil {
		panic(err)
	}
	secret = *ep.Secret
	if _, err := c.TestWebhookEndpoint(ctx, ep.Id); err != nil {
		panic(err)
	}
	select {
	case s := <-got:
		fmt.Println(s)
	case <-ctx.Done():
		panic(ctx.Err())
	}
	if err := c.DeleteWebhookEndpoint(ctx, ep.Id); err != nil {
		panic(err)
	}
	// Output: webhook_endpoint.test verified: true
}

// Every list has an iterator that follows the cursors; the event types are
// the catalogue webhook endpoints subscribe from.
func ExampleEInvoice_Events() {
	ctx := context.Background()
	c := einvoice()
	types, err := c.EventTypes(ctx)
	if err != nil {
		panic(err)
	}
	known := map[string]bool{}
	for _, k := range types {
		known[k.Type] = true
	}
	n := 0
	for e, err := range c.Company(srv.company).Events(ctx, einvoiceapi.ListEventsParams{Limit: ptr(int64(2))}) {
		if err != nil {
			panic(err)
		}
		if !known[e.Type] {
			panic("an event of an unknown type: " + e.Type)
		}
		if n++; n == 3 {
			break // the iterator fetched a second page
		}
	}
	fmt.Println(known["einvoice.submitted"], known["inbox.received"], n)
	// Output: true true 3
}

// The account's documents of a month; a sandbox key reads sandbox usage.
func ExampleEInvoice_Usage() {
	u, err := einvoice().Usage(context.Background(), einvoiceapi.GetUsageParams{
		Period: time.Now().Format("2006-01"), Environment: ptr(einvoiceapi.GetUsageParamsEnvironmentSandbox)})
	if err != nil {
		panic(err)
	}
	fmt.Println(u.Object, u.Environment, u.Totals.Billable)
	// Output: usage sandbox 0
}

func ExampleVerifySignature() {
	secret := "whsec_0123456789abcdef"
	body := []byte(`{"type":"einvoice.submitted"}`)
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
