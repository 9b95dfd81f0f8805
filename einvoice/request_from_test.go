package einvoice

import (
	"encoding/json"
	"testing"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// TestRequestOfRebuildsTheDocument builds documents from requests of every
// shape Build knows, turns each back into a request and builds again: the
// two documents are equal field for field, and a correction's SYS
// reference is not carried into the next request.
func TestRequestOfRebuildsTheDocument(t *testing.T) {
	t.Parallel()
	cb := ujpdoc.Snapshot()
	foreign := validRequest()
	foreign.Payment.Currency, foreign.Payment.ExchangeRate, foreign.Payment.ExchangeRateDate = "EUR", ptr("61.6950"), ptr("2026-11-19")
	foreign.Advance = &Advance{Amount: "500", Date: ptr("2026-11-01"), Description: ptr("Аванс")}
	foreign.SupplyDate = ptr("2026-11-18")
	foreign.Notes = ptr("Белешка")
	foreign.Payment.DueDate, foreign.Payment.Terms, foreign.Payment.Note = ptr("2026-12-05"), ptr("30 дена"), ptr("Уплата на сметка")
	foreign.Buyer.VatNumber, foreign.Buyer.Contact, foreign.Buyer.Email = ptr("MK4030000000010"), ptr("Ана"), ptr("ana@kupuvac.mk")
	foreign.Buyer.Address.Number = nil
	foreign.Sender = &Party{TaxNumber: "4030000000028", Name: "Испраќач ДООЕЛ", Address: PartyAddress{Street: ptr("Кеј"), Number: ptr("2"), PostalCode: ptr("6000"), City: ptr("Охрид")}}
	foreign.References = []Reference{{Type: cb.RefDocumentTypes[0].Code, Number: "P-1", Date: ptr("2026-10-01")}}
	foreign.Lines[1].Sku = ptr("978-608")
	if foreign.References[0].Type == ujpdoc.RefTypeSystem {
		foreign.References[0].Type = cb.RefDocumentTypes[1].Code
	}
	for name, req := range map[string]Request{"plain": validRequest(), "foreign currency, advance, sender, references": foreign} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d1, err := req.Build(seller(), "einv_1", cb)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			// As a correction's stored document: with the SYS reference.
			ujpdoc.MarkCorrection(d1, "EUID-ORIGINAL", "2026-11-01", cb.CorrectionReasons[0].Code, nil, cb)
			again := RequestOf(d1)
			for _, r := range again.References {
				if r.Type == ujpdoc.RefTypeSystem {
					t.Fatal("the SYS reference was carried over")
				}
			}
			d2, err := again.Build(seller(), "einv_1", cb)
			if err != nil {
				t.Fatalf("Build of RequestOf: %v", err)
			}
			ujpdoc.MarkCorrection(d2, "EUID-ORIGINAL", "2026-11-01", cb.CorrectionReasons[0].Code, nil, cb)
			a, _ := json.Marshal(d1)
			b, _ := json.Marshal(d2)
			if string(a) != string(b) {
				t.Fatalf("rebuilt document differs:\n%s\n%s", a, b)
			}
		})
	}
}
