package denar_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/denar-mk/denar/sdk/denar"
	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
)

// From an API key to a delivered e-invoice and a verified webhook, in the
// sandbox: onboard the seller (or find it), receive webhooks, issue an
// e-invoice, wait until UJP delivered it, and see the signed webhook that
// says so. docs/sdk.md shows this program; TestGuideProgram keeps the two
// the same.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	server := os.Getenv("DENAR_EINVOICE_URL")
	c, err := denar.NewEInvoice(server, denar.Options{APIKey: os.Getenv("DENAR_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}

	// 1. The seller: onboard it, or find it when the account has it.
	var companyID string
	co, err := c.CreateCompany(ctx, einvoiceapi.CreateCompanyBody{TaxNumber: "4030000000001",
		Representative: einvoiceapi.Representative{Name: "Марија Николовска", Email: "marija@example.mk"}})
	var p *denar.Problem
	switch {
	case err == nil:
		companyID = co.Id
		// The sandbox's representative reads no mail: accept for them.
		if err := c.AcceptSandboxMandate(ctx, companyID); err != nil {
			log.Fatal(err)
		}
	case errors.As(err, &p) && p.Code == denar.CodeCompanyExists:
		p.Member("companyId", &companyID)
	default:
		log.Fatal(err)
	}
	seller := c.Company(companyID)

	// The company's e-invoices are signed on its side, by its signing
	// agent: wait until one runs.
	for {
		co, err := seller.Details(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if co.Environments.Sandbox.SignerReady {
			break
		}
		log.Printf("waiting for the signer: denar-agent run --sandbox-self-signed --server %s --company %s", server, companyID)
		select {
		case <-ctx.Done():
			log.Fatal(ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}

	// 2. A webhook receiver: verify the signature over the raw body
	// before reading it.
	type delivered struct {
		Type string
		Data struct{ Object einvoiceapi.EInvoice }
	}
	var secret string
	events := make(chan delivered, 16)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := denar.VerifySignature(body, r.Header.Get(denar.WebhookSignatureHeader), []string{secret}, 0); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var e delivered
		if json.Unmarshal(body, &e) == nil {
			events <- e
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	endpoint, err := c.CreateWebhookEndpoint(ctx, einvoiceapi.CreateWebhookEndpointBody{
		Url: "http://" + ln.Addr().String() + "/hooks/denar", Events: &[]string{"einvoice.submitted", "einvoice.failed"},
		CompanyIds: &[]string{companyID}})
	if err != nil {
		log.Fatal(err)
	}
	secret = *endpoint.Secret // shown this once: keep it

	// 3. Issue an e-invoice to the sandbox buyer: 3 hours of consulting at
	// 1,000 denars less 100 discount, VAT 18% (tax indicator DDV-A).
	skopje, _ := time.LoadLocation("Europe/Skopje")
	inv, err := seller.Issue(ctx, einvoiceapi.Request{
		Number: "F-" + strconv.FormatInt(time.Now().UnixNano(), 36), IssueDate: time.Now().In(skopje).Format(time.DateOnly),
		Buyer: einvoiceapi.Party{TaxNumber: "4030000000010", Name: "Тест Купувач ДОО Скопје",
			Address: einvoiceapi.PartyAddress{Street: ptr("ул. Македонија"), Number: ptr("2"), PostalCode: ptr("1000"), City: ptr("Скопје")}},
		Payment: einvoiceapi.Payment{TypeCode: "P12", Currency: "MKD", DueDays: ptr(int64(15))},
		Lines: &[]einvoiceapi.Line{{Description: "Консултантски услуги", Unit: ptr("час"), Quantity: "3", UnitPrice: "1000",
			UnitDiscount: ptr("100"), VatPercent: "18", TaxIndicator: "DDV-A"}},
	})
	if err != nil {
		log.Fatal(err) // a *denar.Problem: p.Errors name the fields at fault
	}
	fmt.Println("issued", inv.Status, inv.Totals.Gross)

	// 4. Wait until UJP delivered it (an EUID).
	inv, err = seller.WaitForStatus(ctx, inv.Id, einvoiceapi.EInvoiceStatusDelivered)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("delivered", inv.Euid != nil)

	// 5. The webhook that says so, verified.
	for {
		select {
		case e := <-events:
			if e.Data.Object.Id == inv.Id {
				fmt.Println("webhook", e.Type, e.Data.Object.Status)
				return
			}
		case <-ctx.Done():
			log.Fatal("no webhook: ", ctx.Err())
		}
	}
	// Output:
	// issued awaiting_signature 3186.00
	// delivered true
	// webhook einvoice.submitted delivered
}
