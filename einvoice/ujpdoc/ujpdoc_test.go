package ujpdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/denar-mk/denar"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sp(s string) *string { return &s }

type line struct {
	qty, price, disc, group, indicator string
}

// testDoc is a valid invoice between the two sandbox VAT payers.
func testDoc(lines ...line) *Document {
	d := &Document{
		Header: Header{DocType: "100", DocTypeName: "Фактура", DocDate: "2026-11-20", DocTurnoverDate: "2026-11-20", DocNumber: "F-2026-0001", DocID: "doc-0001"},
		Seller: Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: "4030000000001", SellerName: "Тест Продавач ДООЕЛ Скопје",
			SellerAddress: Address{StreetAddress: "бул. Партизански одреди", StreetNumber: "1", PostalCode: "1000", City: "Скопје"}},
		Buyer: Buyer{BuyerCCode: "MK", BuyerCName: "Северна Македонија", BuyerTin: "4030000000010", BuyerName: "Тест Купувач ДОО Скопје",
			BuyerAddress: Address{StreetAddress: "ул. Македонија", StreetNumber: "2", PostalCode: "1000", City: "Скопје"}},
		DocPayment: Payment{DocPaymentTypeCode: "P12", DocPaymentTypeDesc: "Плаќање преку банка", DocCurrency: "MKD", DocCurrencyCode: "MKD"},
	}
	for i, l := range lines {
		disc := l.disc
		if disc == "" {
			disc = "0"
		}
		d.DocItems = append(d.DocItems, Item{DocItemLineNo: i + 1, DocItemDesc: "Ставка", DocItemQty: A(l.qty),
			DocItemUnitOriginalPriceWoVat: A(l.price), DocItemUnitDiscountAmount: A(disc), DocItemVatGroup: l.group, DocItemTaxIndicator: l.indicator})
	}
	return d
}

type wantVat struct{ group, indicator, taxable, vat, total string }

func TestComputeTotals(t *testing.T) {
	cb := Snapshot()
	tests := []struct {
		name                        string
		lines                       []line
		avans                       string
		storno                      bool
		net, disc, vat, gross, fin  string
		vats                        []wantVat
		unitPrice0, unitVat0, line0 string // first line, when checked
	}{
		{name: "UJP status example: 1500 + 18% with an advance of 100",
			lines: []line{{"3", "500", "", "DDV-A", "DDV-A"}}, avans: "100",
			net: "1500", disc: "0", vat: "270", gross: "1770", fin: "1670",
			vats: []wantVat{{"DDV-A", "DDV-A", "1500", "270", "1770"}}},
		{name: "discount with four-decimal unit prices",
			lines: []line{{"2.5", "123.4567", "10.1234", "DDV-A", "DDV-A"}},
			net:   "308.64", disc: "25.31", vat: "51", gross: "334.33", fin: "334.33",
			vats:       []wantVat{{"DDV-A", "DDV-A", "283.33", "51", "334.33"}},
			unitPrice0: "113.3333", unitVat0: "20.4", line0: "334.33"},
		{name: "mixed rates 18, 5 and 10",
			lines: []line{{"1", "1000", "", "DDV-A", "DDV-A"}, {"10", "50", "", "DDV-B", "DDV-B"}, {"2", "100", "", "DDV-V", "DDV-V"}},
			net:   "1700", disc: "0", vat: "225", gross: "1925", fin: "1925",
			vats: []wantVat{{"DDV-A", "DDV-A", "1000", "180", "1180"}, {"DDV-B", "DDV-B", "500", "25", "525"}, {"DDV-V", "DDV-V", "200", "20", "220"}}},
		{name: "two lines of one group are summed",
			lines: []line{{"1", "10.005", "", "DDV-B", "DDV-B"}, {"1", "10.005", "", "DDV-B", "DDV-B"}},
			net:   "20.02", disc: "0", vat: "1", gross: "21.02", fin: "21.02",
			vats:       []wantVat{{"DDV-B", "DDV-B", "20.02", "1", "21.02"}},
			unitPrice0: "10.005", unitVat0: "0.5003", line0: "10.51"},
		{name: "exempt indicator next to a standard line",
			lines: []line{{"1", "1000", "", "DDV-G", "DDV-9-1"}, {"1", "100", "", "DDV-A", "DDV-A"}},
			net:   "1100", disc: "0", vat: "18", gross: "1118", fin: "1118",
			vats: []wantVat{{"DDV-G", "DDV-9-1", "1000", "0", "1000"}, {"DDV-A", "DDV-A", "100", "18", "118"}}},
		{name: "zero rate (not a VAT payer) rounds half away from zero",
			lines: []line{{"3", "33.3333", "", "DDV-G", "DDV-G"}, {"1", "0.125", "", "DDV-G", "DDV-G"}},
			net:   "100.13", disc: "0", vat: "0", gross: "100.13", fin: "100.13",
			vats: []wantVat{{"DDV-G", "DDV-G", "100.13", "0", "100.13"}}},
		{name: "reverse charge: no VAT on lines or document, shown in vatTotals",
			lines: []line{{"4", "250", "", "DDV-A", "DDV-11-A"}},
			net:   "1000", disc: "0", vat: "0", gross: "1000", fin: "1000",
			vats:       []wantVat{{"DDV-A", "DDV-11-A", "1000", "180", "1180"}},
			unitPrice0: "250", unitVat0: "0", line0: "1000"},
		{name: "storno negates quantities, totals and advance",
			lines: []line{{"-3", "500", "", "DDV-A", "DDV-A"}, {"-1", "0.125", "", "DDV-G", "DDV-G"}}, avans: "-100", storno: true,
			net: "-1500.13", disc: "0", vat: "-270", gross: "-1770.13", fin: "-1670.13",
			vats: []wantVat{{"DDV-A", "DDV-A", "-1500", "-270", "-1770"}, {"DDV-G", "DDV-G", "-0.13", "0", "-0.13"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := testDoc(tc.lines...)
			if tc.avans != "" {
				d.DocTotals.DocAvansAmount = A(tc.avans)
			}
			if err := ComputeTotals(d, cb); err != nil {
				t.Fatal(err)
			}
			tt := d.DocTotals
			for _, c := range []struct {
				name string
				got  Amount
				want string
			}{{"net", tt.DocNetAmount, tc.net}, {"discount", tt.DocDiscountAmount, tc.disc}, {"vat", tt.DocVatAmount, tc.vat},
				{"gross", tt.DocGrossAmount, tc.gross}, {"grossR", tt.DocGrossAmountR, tc.gross}, {"final", tt.DocFinalAmount, tc.fin}} {
				if !c.got.Equal(A(c.want).Amount) {
					t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
				}
			}
			if len(d.VatTotals) != len(tc.vats) {
				t.Fatalf("vatTotals: %d groups, want %d", len(d.VatTotals), len(tc.vats))
			}
			for i, w := range tc.vats {
				g := d.VatTotals[i]
				if g.VatCode != w.group || g.VatTaxIndicator != w.indicator || !g.VatTaxableAmount.Equal(A(w.taxable).Amount) ||
					!g.VatAmount.Equal(A(w.vat).Amount) || !g.VatTotalAmount.Equal(A(w.total).Amount) {
					t.Errorf("vatTotals[%d] = %s/%s %s %s %s, want %v", i, g.VatCode, g.VatTaxIndicator, g.VatTaxableAmount, g.VatAmount, g.VatTotalAmount, w)
				}
			}
			if tc.unitPrice0 != "" {
				it := d.DocItems[0]
				if !it.DocItemUnitPriceWoVat.Equal(A(tc.unitPrice0).Amount) || !it.DocItemUnitVat.Equal(A(tc.unitVat0).Amount) || !it.DocItemTotalPriceWVat.Equal(A(tc.line0).Amount) {
					t.Errorf("line 1: unit %s, unit VAT %s, total with VAT %s; want %s %s %s", it.DocItemUnitPriceWoVat, it.DocItemUnitVat, it.DocItemTotalPriceWVat, tc.unitPrice0, tc.unitVat0, tc.line0)
				}
			}
			if tc.storno {
				d.Header.DocStorno = StornoVoid
				d.Header.VoidReasonCode = sp("S-1")
				d.DocReferences = []Reference{{DocTypeRef: RefTypeSystem, DocNameRef: "Од систем", DocNumberRef: "019b8d43-7840-7433-b358-08891b53605c"}}
			}
			if ps := Validate(d, cb); len(ps) != 0 {
				t.Errorf("computed document does not validate: %+v", ps)
			}
		})
	}
}

func TestForeignCurrency(t *testing.T) {
	cb := Snapshot()
	d := testDoc(line{"1", "100", "", "DDV-A", "DDV-A"})
	d.DocPayment.DocCurrency, d.DocPayment.DocCurrencyCode = "EUR", "EUR"
	if err := ComputeTotals(d, cb); err != nil {
		t.Fatal(err)
	}
	ps := Validate(d, cb)
	if !hasPath(ps, "docPayment.docCurrencyExchRate") || !hasPath(ps, "docPayment.docCurrencyDate") {
		t.Fatalf("EUR without a rate: %+v", ps)
	}
	rate := A("61.695")
	d.DocPayment.DocCurrencyExchRate, d.DocPayment.DocCurrencyDate = &rate, sp("2026-11-20")
	if ps := Validate(d, cb); len(ps) != 0 {
		t.Fatalf("EUR with a rate: %+v", ps)
	}
	if got := MKD(d.DocTotals.DocGrossAmount, d.DocPayment.DocCurrencyExchRate); !got.Equal(A("7280.01").Amount) {
		t.Errorf("118 EUR at 61.695 = %s MKD, want 7280.01", got)
	}
}

func hasPath(ps Problems, path string) bool {
	for _, p := range ps {
		if p.Path == path {
			return true
		}
	}
	return false
}

func TestValidate(t *testing.T) {
	cb := Snapshot()
	tests := []struct {
		name             string
		mutate           func(d *Document)
		path, code, book string
	}{
		{"unknown tax indicator", func(d *Document) { d.DocItems[0].DocItemTaxIndicator = "DDV-Q" }, "docItems[0].docItemTaxIndicator", "E1009", CBTaxIndicators},
		{"indicator used with the wrong group", func(d *Document) { d.DocItems[0].DocItemVatGroup = "DDV-B" }, "docItems[0].docItemTaxIndicator", "E1009", CBTaxIndicators},
		{"unknown tax group", func(d *Document) { d.DocItems[0].DocItemVatGroup = "VAT18" }, "docItems[0].docItemVatGroup", "E1004", CBTaxGroups},
		{"wrong line VAT", func(d *Document) { d.DocItems[0].DocItemTotalVat = A("181") }, "docItems[0].docItemTotalVat", "E10203", ""},
		{"wrong document total", func(d *Document) { d.DocTotals.DocGrossAmount = A("1181") }, "docTotals.docGrossAmount", "E10201", ""},
		{"wrong VAT group total", func(d *Document) { d.VatTotals[0].VatAmount = A("18.01") }, "vatTotals[0].vatAmount", "E10202", ""},
		{"missing VAT group", func(d *Document) { d.VatTotals = nil }, "vatTotals", "E10202", ""},
		{"resident buyer without a tax number", func(d *Document) { d.Buyer.BuyerTin = "" }, "buyer.buyerTin", "E10001", ""},
		{"buyer ЕДБ of 12 digits", func(d *Document) { d.Buyer.BuyerTin = "403000000001" }, "buyer.buyerTin", "E5011", ""},
		{"buyer ЕДБ with a wrong check digit", func(d *Document) { d.Buyer.BuyerTin = "4030000000002" }, "buyer.buyerTin", "E5011", ""},
		{"seller ЕДБ with a wrong check digit", func(d *Document) { d.Seller.SellerTin = "4030000375890" }, "seller.sellerTin", "E5011", ""},
		{"sender ЕДБ with a wrong check digit", func(d *Document) {
			d.Sender = &Sender{SenderCCode: "MK", SenderCName: "Северна Македонија", SenderTin: "4030000000003", SenderName: "Испраќач",
				SenderAddress: Address{StreetAddress: "ул. 1", City: "Битола"}}
		}, "sender.senderTin", "E5011", ""},
		{"payment description mismatch", func(d *Document) { d.DocPayment.DocPaymentTypeDesc = "Готово" }, "docPayment.docPaymentTypeDesc", "E50075", CBPaymentTypes},
		{"unknown payment type", func(d *Document) { d.DocPayment.DocPaymentTypeCode = "1020" }, "docPayment.docPaymentTypeCode", "E50074", CBPaymentTypes},
		{"unknown currency", func(d *Document) { d.DocPayment.DocCurrencyCode = "МКД" }, "docPayment.docCurrencyCode", "E50076", CBCurrencies},
		{"Cyrillic country code", func(d *Document) { d.Seller.SellerCCode = "МК" }, "seller.sellerCCode", "E10011", CBCountries},
		{"country name mismatch", func(d *Document) { d.Buyer.BuyerCName = "Македонија" }, "buyer.buyerCName", "E10012", CBCountries},
		{"unknown document type", func(d *Document) { d.Header.DocType = "999" }, "header.docType", "E1017", CBDocumentTypes},
		{"missing docId", func(d *Document) { d.Header.DocID = "" }, "header.docId", "E4019", ""},
		{"bad date", func(d *Document) { d.Header.DocDate = "20.11.2026" }, "header.docDate", "E5011", ""},
		// Dates after the document's own (error-codes.txt E50071-3); the
		// same day is the base document's, and passes.
		{"delivery after the document", func(d *Document) { d.Header.DocDeliveryDate = sp("2026-11-21") }, "header.docDeliveryDate", "E50071", ""},
		{"turnover after the document", func(d *Document) { d.Header.DocTurnoverDate = "2026-11-21" }, "header.docTurnoverDate", "E50072", ""},
		{"referenced document after this one", func(d *Document) {
			d.DocReferences = []Reference{{DocTypeRef: "NAR", DocNumberRef: "N-1", DocDateRef: sp("2026-12-01")}}
		}, "docReferences[0].docDateRef", "E50073", ""},
		{"storno without a reference", func(d *Document) { d.Header.DocStorno = StornoVoid; d.Header.VoidReasonCode = sp("S-1") }, "docReferences", "E1024", CBRefDocumentTypes},
		{"storno with an unknown reason", func(d *Document) {
			d.Header.DocStorno = StornoVoid
			d.Header.VoidReasonCode = sp("S-9")
		}, "header.voidReasonCode", "E1006", CBVoidReasons},
		{"correction without a reason", func(d *Document) { d.Header.DocStorno = StornoCorrection }, "header.correctionReasonCode", "E1031", CBCorrectionReasons},
		{"unknown reference type", func(d *Document) {
			d.DocReferences = []Reference{{DocTypeRef: "XYZ", DocNumberRef: "1"}}
		}, "docReferences[0].docTypeRef", "E1021", CBRefDocumentTypes},
		{"discount above the unit price", func(d *Document) {
			d.DocItems[0].DocItemUnitDiscountAmount = A("1000.01")
			if err := ComputeTotals(d, Snapshot()); err != nil {
				panic(err)
			}
		}, "docItems[0].docItemUnitDiscountAmount", "E5011", ""},
		{"advance above gross", func(d *Document) {
			d.DocTotals.DocAvansAmount = A("5000")
			d.DocTotals.DocFinalAmount = A("-3820")
		}, "docTotals.docAvansAmount", "E10201", ""},
	}
	base := func() *Document {
		d := testDoc(line{"1", "1000", "", "DDV-A", "DDV-A"})
		if err := ComputeTotals(d, cb); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if ps := Validate(base(), cb); len(ps) != 0 {
		t.Fatalf("base document: %+v", ps)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := base()
			tc.mutate(d)
			ps := Validate(d, cb)
			for _, p := range ps {
				if p.Path == tc.path && p.Code == tc.code && p.Codebook == tc.book {
					err := ps.Err()
					var de *denar.Error
					if !errors.As(err, &de) || de.Code != denar.ECodeValidation {
						t.Fatalf("Err() = %v", err)
					}
					return
				}
			}
			t.Fatalf("want %s at %s (codebook %q), got %+v", tc.code, tc.path, tc.book, ps)
		})
	}
}

func TestReverseChargeNeedsNote(t *testing.T) {
	cb := Snapshot()
	d := testDoc(line{"1", "1000", "", "DDV-A", "DDV-11-A"})
	if err := ComputeTotals(d, cb); err != nil {
		t.Fatal(err)
	}
	d.VatTotals[0].VatTaxIndicatorNote = nil
	ps := Validate(d, cb)
	if len(ps) != 1 || ps[0].Code != "E1032" {
		t.Fatalf("got %+v", ps)
	}
}

func TestSnapshot(t *testing.T) {
	cb := Snapshot()
	for _, code := range []string{"O-1", "O-5", "O-6", "\u041e-6", "\u041e-7", "O-7"} {
		if _, ok := cb.RejectReason(code); !ok {
			t.Errorf("reject reason %q not found", code)
		}
	}
	if c, _ := cb.RejectReason("O-7"); c.Code != "\u041e-7" {
		t.Errorf("O-7 resolves to %q, want UJP's Cyrillic О-7", c.Code)
	}
	impacts := map[string]VatImpact{"DDV-A": ImpactStandard, "DDV-G": ImpactNula, "DDV-9-1": ImpactOsloboden, "DDV-7-I": ImpactOsloboden, "DDV-11-A": ImpactPrenesen, "DDV-12-4": ImpactPrenesen, "DDV-10-14-2": ImpactNula}
	for code, want := range impacts {
		if ti, ok := cb.TaxIndicator(code); !ok || ti.VatImpact != want {
			t.Errorf("%s: %v %v, want %v", code, ti.VatImpact, ok, want)
		}
	}
	if len(cb.Countries) < 150 || len(cb.Currencies) != 13 || len(cb.DocumentStatuses) != 8 || len(cb.TaxGroups) != 4 {
		t.Errorf("snapshot sizes: %d countries, %d currencies, %d statuses, %d groups", len(cb.Countries), len(cb.Currencies), len(cb.DocumentStatuses), len(cb.TaxGroups))
	}
}

// TestGolden pins the JSON a computed document marshals to, so a renamed
// field or a changed number format shows up in review.
func TestGolden(t *testing.T) {
	cb := Snapshot()
	d := testDoc(line{"2.5", "123.4567", "10.1234", "DDV-A", "DDV-A"}, line{"1", "1000", "", "DDV-A", "DDV-11-A"}, line{"1", "50", "", "DDV-G", "DDV-9-1"})
	d.DocTotals.DocAvansAmount = A("100")
	if err := ComputeTotals(d, cb); err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(Request{RequestTimestamp: "2026-11-20T12:00:00", Document: *d}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "invoice.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("document JSON differs from %s (run with -update after checking):\n%s", golden, got)
	}
	r, err := Decode(want)
	if err != nil {
		t.Fatal(err)
	}
	if ps := Validate(&r.Document, cb); len(ps) != 0 {
		t.Errorf("golden document does not validate: %+v", ps)
	}
}

func TestDecodeRejectsUnknownFields(t *testing.T) {
	if _, err := Decode([]byte(`{"requestTimestamp":"x","document":{"header":{"docTyp":"100"}}}`)); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func FuzzDecode(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "invoice.golden.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"requestTimestamp":"2026-01-05T12:00:00","document":{"docItems":[{"docItemQty":"1e3"}]}}`))
	f.Add([]byte(`{"document":{"docTotals":{"docNetAmount":-0.5}}}`))
	cb := Snapshot()
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes must survive validation and a round trip.
		_ = Validate(&r.Document, cb)
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal decoded document: %v", err)
		}
		if _, err := Decode(out); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
	})
}

func TestTimestamp(t *testing.T) {
	utc := time.Date(2026, 1, 5, 11, 0, 0, 0, time.UTC) // winter: Skopje is UTC+1
	if got := FormatTimestamp(utc); got != "2026-01-05T12:00:00" {
		t.Errorf("FormatTimestamp = %s", got)
	}
	summer := time.Date(2026, 7, 5, 10, 0, 0, 0, time.UTC) // summer: UTC+2
	if got := FormatTimestamp(summer); got != "2026-07-05T12:00:00" {
		t.Errorf("FormatTimestamp(summer) = %s", got)
	}
	for s, want := range map[string]time.Time{"2026-01-05T12:00:00": utc, "2026-01-05T11:00:00Z": utc, "2026-01-05T12:00:00.000": utc} {
		got, err := ParseTimestamp(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTimestamp(%s) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseTimestamp("05.01.2026 12:00"); err == nil {
		t.Error("malformed timestamp accepted")
	}
}

func TestStornoAndCorrectionBuilders(t *testing.T) {
	cb := Snapshot()
	orig := testDoc(line{"3", "500", "", "DDV-A", "DDV-A"}, line{"1", "100", "", "DDV-A", "DDV-11-A"})
	orig.DocTotals.DocAvansAmount = A("100")
	if err := ComputeTotals(orig, cb); err != nil {
		t.Fatal(err)
	}
	const euid = "019b8d43-7840-7433-b358-08891b53605c"
	st, err := Storno(orig, euid, "st-1", "S-2026-1", "S-3", sp("returned"), "2026-11-21", cb)
	if err != nil {
		t.Fatal(err)
	}
	if ps := Validate(st, cb); len(ps) != 0 {
		t.Fatalf("storno: %+v", ps)
	}
	if !st.DocTotals.DocGrossAmount.Equal(orig.DocTotals.DocGrossAmount.Neg()) || !st.DocTotals.DocFinalAmount.Equal(orig.DocTotals.DocFinalAmount.Neg()) ||
		!st.VatTotals[1].VatAmount.Equal(orig.VatTotals[1].VatAmount.Neg()) {
		t.Errorf("storno totals are not the negated original's: %+v vs %+v", st.DocTotals, orig.DocTotals)
	}
	if SystemReference(st) != euid || orig.DocItems[0].DocItemQty.IsNegative() || orig.Header.DocStorno != 0 {
		t.Error("storno reference missing or original modified")
	}

	corr := testDoc(line{"2", "500", "", "DDV-A", "DDV-A"})
	corr.DocReferences = []Reference{{DocTypeRef: "NAR_DOC", DocNameRef: "Нарачка", DocNumberRef: "N-1"}}
	if err := ComputeTotals(corr, cb); err != nil {
		t.Fatal(err)
	}
	MarkCorrection(corr, euid, "2026-11-20", "C02", nil, cb)
	if ps := Validate(corr, cb); len(ps) != 0 || len(corr.DocReferences) != 2 || SystemReference(corr) != euid {
		t.Fatalf("correction: %+v %+v", ps, corr.DocReferences)
	}
}

func TestSender(t *testing.T) {
	cb := Snapshot()
	d := testDoc(line{"1", "10", "", "DDV-A", "DDV-A"})
	if err := ComputeTotals(d, cb); err != nil {
		t.Fatal(err)
	}
	d.Sender = &Sender{SenderCCode: "MK", SenderCName: "Македонија", SenderTin: "4030000000028", SenderName: "Испраќач",
		SenderAddress: Address{StreetAddress: "ул. 1", City: "Битола"}}
	ps := Validate(d, cb)
	if len(ps) != 1 || ps[0].Path != "sender.senderCName" || ps[0].Codebook != CBCountries {
		t.Fatalf("got %+v", ps)
	}
	b, _ := json.Marshal(d)
	if _, err := Decode([]byte(`{"requestTimestamp":"x","document":` + string(b) + `}`)); err != nil {
		t.Fatal(err)
	}
}

// TestValidateForeignTaxNumber: only a Macedonian party's tax number is an
// ЕДБ; a foreign one is not held to its length or check digit.
func TestValidateForeignTaxNumber(t *testing.T) {
	cb := Snapshot()
	d := testDoc(line{"1", "1000", "", "DDV-A", "DDV-A"})
	if err := ComputeTotals(d, cb); err != nil {
		t.Fatal(err)
	}
	de, ok := cb.Lookup(CBCountries, "DE")
	if !ok {
		t.Fatal("no DE in the snapshot")
	}
	d.Buyer.BuyerCCode, d.Buyer.BuyerCName, d.Buyer.BuyerTin = "DE", de.Name, "DE123456789"
	for _, p := range Validate(d, cb) {
		if p.Path == "buyer.buyerTin" {
			t.Fatalf("foreign tax number refused: %+v", p)
		}
	}
}
