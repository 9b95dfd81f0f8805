package inbox

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// FuzzNewInboxDocument feeds arbitrary payloads, as UJP might give them, to
// the parser of incoming documents: it never panics, keeps the payload
// byte for byte, and always yields a row the API can show (a readable
// deadline, a known kind, seller JSON), with a problem when the payload is
// not a UJP document.
func FuzzNewInboxDocument(f *testing.F) {
	for _, s := range []string{
		`{"requestTimestamp":"2026-11-23T10:00:00","document":{"header":{"docStorno":0,"docType":"100","docDate":"2026-11-20","docTurnoverDate":"2026-10-31","docNumber":"F-1","docId":"x"},
		  "seller":{"sellerCCode":"MK","sellerTin":"4030000000001","sellerName":"Тест","sellerAddress":{"streetAddress":"ул","streetNumber":"1","postalCode":"1000","city":"Скопје"}},
		  "docPayment":{"docCurrencyCode":"MKD"},"docTotals":{"docNetAmountDisc":100,"docVatAmount":18,"docGrossAmount":118}}}`,
		`{"document":{"header":{"docStorno":1,"docDate":"2026-02-29"},"docReferences":[{"docTypeRef":"SYS","docNumberRef":"019b8d43-7840-7433-b358-08891b53605c"}]}}`,
		`{"document":{"header":{"docTurnoverDate":"31.12.2026"}}}`,
		`{}`, `[]`, `null`, ``, `{"document":{"docTotals":{"docGrossAmount":1e999999}}}`, "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	co := dbq.Company{ID: "cmp_1", AccountID: "acc_1", Environment: "sandbox"}
	now := time.Date(2026, 11, 23, 22, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, payload []byte) {
		row := newInboxDocument(co, "euid-1", payload, now, "Испратена (Нова)")
		if !bytes.Equal(row.Payload, payload) {
			t.Fatal("the payload was changed")
		}
		if _, err := time.Parse(time.DateOnly, row.DecideBy); err != nil {
			t.Fatalf("decideBy %q: %v", row.DecideBy, err)
		}
		if by, err := einvoice.DecideByDate(row.TransactionDate); err == nil && by != row.DecideBy {
			t.Fatalf("decideBy %s for transaction date %s, want %s", row.DecideBy, row.TransactionDate, by)
		}
		switch row.Kind {
		case "invoice", "storno", "correction":
		default:
			t.Fatalf("kind %q", row.Kind)
		}
		if !json.Valid([]byte(row.Seller)) || !json.Valid([]byte(row.Problems)) {
			t.Fatalf("seller %q problems %q", row.Seller, row.Problems)
		}
		if row.TotalNet == "" || row.TotalVat == "" || row.TotalGross == "" {
			t.Fatal("empty totals")
		}
		if row.UjpStatus != "01" || row.DecisionState != einvoice.DecisionPending || row.CompanyID != co.ID || row.Euid != "euid-1" {
			t.Fatalf("row %+v", row)
		}
		// What the API shows renders.
		view := inboxView(dbq.InboxDocument{ID: row.ID, Seller: row.Seller, Problems: row.Problems, DecideBy: row.DecideBy, Kind: row.Kind}, now)
		if _, err := json.Marshal(view); err != nil {
			t.Fatal(err)
		}
	})
}
