package einvoiceapi_test

import (
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

const issueBody = `{"number":"F-1","issueDate":"2026-11-20","clientReference":"order-1",
 "buyer":{"taxNumber":"4030000000010","name":"Тест Услуги ДОО Скопје","address":{"street":"Широк сокак","number":"5","postalCode":"7000","city":"Битола"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"3","unitPrice":"1000","unitDiscount":"100","vatPercent":"18","taxIndicator":"DDV-A"}]%s}`

// TestIssueEInvoiceErrors: every refusal of POST /v1/einvoices leaves
// nothing behind. The happy path needs a registered signer and is covered
// where the signing environment exists (see docs/einvoices.md).
func TestIssueEInvoiceErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		acct := c.account("")
		co := denar.NewID("co")
		err := db.InTx(t.Context(), func(tx *store.Tx) error {
			_, err := tx.CreateCompany(t.Context(), dbq.CreateCompanyParams{ID: co, AccountID: acct, Name: "Продавач ДООЕЛ",
				TaxNumber: "4030000000001", VatNumber: "МК4030000000001", Status: "active", SigningMode: "bridge", Environment: "sandbox",
				Address: `{"street":"Партизанска","number":"1","city":"Скопје","zip":"1000"}`, CreatedAt: tx.Now})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		key := c.key(acct, "sandbox", []string{"einvoices:write", "einvoices:read"}, []string{co})
		for _, tc := range []struct {
			name, extra, code string
			status            int
			field, codebook   string
			replace           []string // old, new pairs applied to the body
		}{
			{"no signer", "", "signer_not_ready", 409, "", "", nil},
			{"totals", `,"expectedTotals":{"net":"2700","vat":"486.01","gross":"3186"}`, "totals_mismatch", 422, "expectedTotals.vat", "", nil},
			{"codebook", `,"documentType":"999"`, "validation_failed", 422, "documentType", "document-types", nil},
			{"tax indicator", "", "validation_failed", 422, "lines[0].taxIndicator", "tax-indicators", []string{`"taxIndicator":"DDV-A"`, `"taxIndicator":"DDV-X"`}},
			// Problems of the built document are reported at the request
			// field they come from, never at a field the client did not send.
			{"discount above price", "", "validation_failed", 422, "lines[0].unitDiscount", "", []string{`"unitDiscount":"100"`, `"unitDiscount":"1000.01"`}},
			{"discount far above price", "", "validation_failed", 422, "lines[0].unitDiscount", "", []string{`"unitDiscount":"100"`, `"unitDiscount":"2000"`}},
			{"advance above gross", `,"advance":{"amount":"5000"}`, "validation_failed", 422, "advance.amount", "", nil},
			// An ЕДБ whose 13th digit is not the check digit of the others.
			{"buyer ЕДБ check digit", "", "validation_failed", 422, "buyer.taxNumber", "", []string{`"taxNumber":"4030000000010"`, `"taxNumber":"4030000000011"`}},
			// Decimals: one grammar, and no more decimals than UJP's
			// document carries (refused, not rounded).
			{"tiny quantity", "", "validation_failed", 422, "lines[0].quantity", "", []string{`"quantity":"3"`, `"quantity":"0.0000001"`}},
			{"quantity with an exponent", "", "validation_failed", 422, "lines[0].quantity", "", []string{`"quantity":"3"`, `"quantity":"1e3"`}},
			{"price with a plus", "", "validation_failed", 422, "lines[0].unitPrice", "", []string{`"unitPrice":"1000"`, `"unitPrice":"+1000"`}},
			{"advance with an exponent", `,"advance":{"amount":"1E2"}`, "validation_failed", 422, "advance.amount", "", nil},
			{"due date before the issue date", "", "validation_failed", 422, "payment.dueDate", "", []string{`"currency":"MKD"}`, `"currency":"MKD","dueDate":"2026-11-19"}`}},
			// An empty clientReference would be one handle shared by
			// every invoice that sends it.
			{"empty client reference", "", "validation_failed", 422, "clientReference", "", []string{`"clientReference":"order-1"`, `"clientReference":""`}},
			{"blank client reference", "", "validation_failed", 422, "clientReference", "", []string{`"clientReference":"order-1"`, `"clientReference":"  "`}},
			{"long client reference", "", "validation_failed", 422, "clientReference", "", []string{`"clientReference":"order-1"`, `"clientReference":"` + strings.Repeat("r", 201) + `"`}},
			// A number the schema allows (an integer) that the field cannot
			// hold is reported at its path, in words without Go types.
			{"due days out of range", "", "validation_failed", 422, "payment.dueDays", "", []string{`"currency":"MKD"}`, `"currency":"MKD","dueDays":100000000000000000000}`}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				body := strings.Replace(issueBody, "%s", tc.extra, 1)
				for i := 0; i+1 < len(tc.replace); i += 2 {
					body = strings.Replace(body, tc.replace[i], tc.replace[i+1], 1)
				}
				r := c.do("POST", "/v1/einvoices", key, body)
				m := r.json(t)
				if r.status != tc.status || m["code"] != tc.code {
					t.Fatalf("%d %s", r.status, r.body)
				}
				if tc.field == "" {
					return
				}
				if b := string(r.body); strings.Contains(b, "Go struct") || strings.Contains(b, "of type ") {
					t.Errorf("Go decoding error leaked: %s", r.body)
				}
				for _, f := range m["errors"].([]any) {
					fm := f.(map[string]any)
					if strings.HasPrefix(fm["path"].(string), "document.") {
						t.Errorf("field error at a path the client never sent: %v", fm)
					}
					if fm["path"] == tc.field && (tc.codebook == "" || fm["codebook"] == tc.codebook) {
						// A code outside its list names where the list is.
						if want := "(allowed values: GET /v1/codebooks/" + tc.codebook + ")"; tc.codebook != "" && !strings.HasSuffix(fm["message"].(string), want) {
							t.Errorf("message %q does not end in %s", fm["message"], want)
						}
						return
					}
				}
				t.Errorf("no field error at %s (%s): %s", tc.field, tc.codebook, r.body)
			})
		}
		rows, _ := db.Reader().ListEInvoices(t.Context(), dbq.ListEInvoicesParams{AccountID: acct, Environment: "sandbox",
			AllCompanies: true, CompanyID: co, Lim: 10})
		if len(rows) != 0 {
			t.Errorf("%d e-invoices stored by refused requests", len(rows))
		}
	})
}
