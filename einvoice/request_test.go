package einvoice

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

var update = flag.Bool("update", false, "rewrite golden files")

func ptr[T any](v T) *T { return &v }

func seller() ujpdoc.Seller {
	return ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: "4030000000001",
		SellerName:    "Тест Продавач ДООЕЛ Скопје",
		SellerAddress: ujpdoc.Address{StreetAddress: "бул. Партизански одреди", StreetNumber: "1", PostalCode: "1000", City: "Скопје"}}
}

func validRequest() Request {
	return Request{
		Number: "F-2026-0001", IssueDate: "2026-11-20", ClientReference: ptr("order-1"),
		Buyer: Party{TaxNumber: "4030000000010", Name: "Тест Купувач ДОО Битола",
			Address: PartyAddress{Street: ptr("Широк сокак"), Number: ptr("5"), PostalCode: ptr("7000"), City: ptr("Битола")}},
		Payment: Payment{TypeCode: "P12", Currency: "MKD", DueDays: ptr(15)},
		Lines: []Line{
			{Description: "Консултантски услуги", Unit: ptr("час"), Quantity: "3", UnitPrice: "1000", UnitDiscount: "100", VatPercent: "18", TaxIndicator: "DDV-A"},
			{Description: "Книга", Quantity: "2", UnitPrice: "333.3333", VatPercent: "5", TaxIndicator: "DDV-B"},
		},
	}
}

func TestBuildGolden(t *testing.T) {
	cb := ujpdoc.Snapshot()
	req := validRequest()
	d, err := req.Build(seller(), "einv_test", cb)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if d.Header.DocID != "einv_test" || d.Header.DocType != "100" || d.Header.DocTurnoverDate != "2026-11-20" {
		t.Errorf("header = %+v", d.Header)
	}
	got, _ := json.MarshalIndent(d, "", "  ")
	const golden = "testdata/build.golden.json"
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("document differs from %s; rerun with -update and review\n%s", golden, got)
	}
	// 3×900 = 2700 net at 18% → 486; 2×333.3333 = 666.67 at 5% → 33.33.
	tot := DocTotals(d)
	if tot != (Totals{Net: "3366.67", Vat: "519.33", Gross: "3886.00", Currency: "MKD"}) {
		t.Errorf("totals = %+v", tot)
	}
}

func TestBuildExpectedTotals(t *testing.T) {
	cb := ujpdoc.Snapshot()
	req := validRequest()
	req.ExpectedTotals = &Totals{Net: "3366.67", Vat: "519.33", Gross: "3886", Currency: "MKD"}
	if _, err := req.Build(seller(), "einv_x", cb); err != nil {
		t.Fatalf("matching totals: %v", err)
	}
	req.ExpectedTotals = &Totals{Net: "3366.67", Vat: "519.34", Gross: "3886.01"}
	_, err := req.Build(seller(), "einv_x", cb)
	var de *denar.Error
	if !errors.As(err, &de) || de.Code != "totals_mismatch" {
		t.Fatalf("err = %v; want totals_mismatch", err)
	}
	var paths []string
	for _, f := range de.Fields {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "expectedTotals.vat,expectedTotals.gross" {
		t.Errorf("fields = %v", paths)
	}
}

func TestBuildForeignCurrencyAndAdvance(t *testing.T) {
	cb := ujpdoc.Snapshot()
	req := validRequest()
	req.Payment.Currency = "EUR"
	req.Payment.ExchangeRate = ptr("61.6950")
	req.Payment.ExchangeRateDate = ptr("2026-11-19")
	req.Advance = &Advance{Amount: "500", Description: ptr("Аванс")}
	d, err := req.Build(seller(), "einv_eur", cb)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if d.DocPayment.DocCurrencyExchRate == nil || d.DocTotals.DocFinalAmount.StringFixed(2) != "3386.00" {
		t.Errorf("payment %+v totals %+v", d.DocPayment, d.DocTotals)
	}
}

func TestBuildFieldErrors(t *testing.T) {
	cb := ujpdoc.Snapshot()
	for _, tc := range []struct {
		name     string
		edit     func(*Request)
		path     string
		codebook string
	}{
		{"document type", func(r *Request) { r.DocumentType = "999" }, "documentType", ujpdoc.CBDocumentTypes},
		{"number", func(r *Request) { r.Number = " " }, "number", ""},
		{"issue date", func(r *Request) { r.IssueDate = "20.11.2026" }, "issueDate", ""},
		{"buyer name", func(r *Request) { r.Buyer.Name = "" }, "buyer.name", ""},
		{"buyer tin", func(r *Request) { r.Buyer.TaxNumber = "" }, "buyer.taxNumber", ""},
		{"buyer tin check digit", func(r *Request) { r.Buyer.TaxNumber = "4030000000011" }, "buyer.taxNumber", ""},
		{"buyer tin length", func(r *Request) { r.Buyer.TaxNumber = "403000000001" }, "buyer.taxNumber", ""},
		{"sender tin check digit", func(r *Request) {
			r.Sender = &Party{TaxNumber: "4030000000002", Name: "Испраќач", Address: PartyAddress{Street: ptr("Кеј"), City: ptr("Охрид")}}
		}, "sender.taxNumber", ""},
		{"buyer country", func(r *Request) { r.Buyer.Country = "XX" }, "buyer.country", ujpdoc.CBCountries},
		{"payment type", func(r *Request) { r.Payment.TypeCode = "zz" }, "payment.typeCode", ujpdoc.CBPaymentTypes},
		{"currency", func(r *Request) { r.Payment.Currency = "XXX" }, "payment.currency", ujpdoc.CBCurrencies},
		{"rate missing", func(r *Request) { r.Payment.Currency = "EUR" }, "payment.exchangeRate", ""},
		{"no lines", func(r *Request) { r.Lines = nil }, "lines", ""},
		{"quantity", func(r *Request) { r.Lines[0].Quantity = "abc" }, "lines[0].quantity", ""},
		{"zero quantity", func(r *Request) { r.Lines[0].Quantity = "0" }, "lines[0].quantity", ""},
		{"vat percent", func(r *Request) { r.Lines[1].VatPercent = "7" }, "lines[1].vatPercent", ujpdoc.CBTaxGroups},
		{"indicator", func(r *Request) { r.Lines[1].TaxIndicator = "NOPE" }, "lines[1].taxIndicator", ujpdoc.CBTaxIndicators},
		{"indicator vs rate", func(r *Request) { r.Lines[1].TaxIndicator = "DDV-A" }, "lines[1].taxIndicator", ujpdoc.CBTaxIndicators},
		{"reference type", func(r *Request) { r.References = []Reference{{Type: "SYS", Number: "x"}} }, "references[0].type", ujpdoc.CBRefDocumentTypes},
		// One decimal grammar for every decimal field, and no more
		// decimals than UJP's document carries (refused, not rounded).
		{"tiny quantity", func(r *Request) { r.Lines[0].Quantity = "0.0000001" }, "lines[0].quantity", ""},
		{"quantity with 5 decimals", func(r *Request) { r.Lines[0].Quantity = "1.00001" }, "lines[0].quantity", ""},
		{"quantity with an exponent", func(r *Request) { r.Lines[0].Quantity = "1e3" }, "lines[0].quantity", ""},
		{"quantity with a plus", func(r *Request) { r.Lines[0].Quantity = "+3" }, "lines[0].quantity", ""},
		{"quantity with a bare point", func(r *Request) { r.Lines[0].Quantity = "3." }, "lines[0].quantity", ""},
		{"quantity with a leading point", func(r *Request) { r.Lines[0].Quantity = ".5" }, "lines[0].quantity", ""},
		{"negative quantity", func(r *Request) { r.Lines[0].Quantity = "-3" }, "lines[0].quantity", ""},
		{"unit price with 5 decimals", func(r *Request) { r.Lines[0].UnitPrice = "1000.00001" }, "lines[0].unitPrice", ""},
		{"unit price with an exponent", func(r *Request) { r.Lines[0].UnitPrice = "1E3" }, "lines[0].unitPrice", ""},
		{"discount with an exponent", func(r *Request) { r.Lines[0].UnitDiscount = "1e2" }, "lines[0].unitDiscount", ""},
		{"negative discount", func(r *Request) { r.Lines[0].UnitDiscount = "-1" }, "lines[0].unitDiscount", ""},
		{"vat percent with an exponent", func(r *Request) { r.Lines[0].VatPercent = "1.8e1" }, "lines[0].vatPercent", ""},
		{"advance with 3 decimals", func(r *Request) { r.Advance = &Advance{Amount: "1.001"} }, "advance.amount", ""},
		{"advance with an exponent", func(r *Request) { r.Advance = &Advance{Amount: "1e2"} }, "advance.amount", ""},
		{"rate with an exponent", func(r *Request) {
			r.Payment.Currency, r.Payment.ExchangeRate, r.Payment.ExchangeRateDate = "EUR", ptr("6.1695e1"), ptr("2026-11-19")
		}, "payment.exchangeRate", ""},
		{"expected net with an exponent", func(r *Request) { r.ExpectedTotals = &Totals{Net: "3.36667e3", Vat: "519.33", Gross: "3886"} }, "expectedTotals.net", ""},
		{"due date before the issue date", func(r *Request) { r.Payment.DueDate = ptr("2026-11-19") }, "payment.dueDate", ""},
		{"empty client reference", func(r *Request) { r.ClientReference = ptr("") }, "clientReference", ""},
		{"blank client reference", func(r *Request) { r.ClientReference = ptr(" \t") }, "clientReference", ""},
		{"long client reference", func(r *Request) { r.ClientReference = ptr(strings.Repeat("я", 201)) }, "clientReference", ""},
		{"discount above price", func(r *Request) { r.Lines[0].UnitDiscount = "1000.01" }, "lines[0].unitDiscount", ""},
		{"discount far above price", func(r *Request) { r.Lines[1].UnitDiscount = "2000" }, "lines[1].unitDiscount", ""},
		{"advance above gross", func(r *Request) { r.Advance = &Advance{Amount: "5000"} }, "advance.amount", ""},
		// UJP's E50072 and E50073, at the request's fields.
		{"supply after the issue date", func(r *Request) { r.SupplyDate = ptr("2026-11-21") }, "supplyDate", ""},
		{"reference dated after the issue date", func(r *Request) {
			r.References = []Reference{{Type: "NAR", Number: "N-1", Date: ptr("2026-11-21")}}
		}, "references[0].date", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := validRequest()
			req.Lines = append([]Line(nil), req.Lines...)
			tc.edit(&req)
			_, err := req.Build(seller(), "einv_x", cb)
			var de *denar.Error
			if !errors.As(err, &de) || de.Code != denar.ECodeValidation {
				t.Fatalf("err = %v; want validation_failed", err)
			}
			for _, f := range de.Fields {
				if f.Path == tc.path && f.Codebook == tc.codebook {
					return
				}
			}
			t.Errorf("fields %+v; want %s (codebook %q)", de.Fields, tc.path, tc.codebook)
		})
	}
}

// TestBuildFollowsDocTypeIndicators: where UJP lists the tax indicators of
// a document type (doc-type-x-tax-indicator), a line may use only those;
// the type without a list (and the snapshot) allows every indicator.
func TestBuildFollowsDocTypeIndicators(t *testing.T) {
	cb := ujpdoc.Snapshot()
	cb.DocTypeTaxIndicators = map[string][]string{"110": {"DDV-A"}}
	for _, tc := range []struct {
		docType string
		ok      bool
	}{{"100", true}, {"110", false}} {
		req := validRequest()
		req.DocumentType = tc.docType
		_, err := req.Build(seller(), "einv_x", cb)
		var de *denar.Error
		switch {
		case tc.ok && err != nil:
			t.Errorf("document type %s: %v", tc.docType, err)
		case !tc.ok && (!errors.As(err, &de) || len(de.Fields) != 1 || de.Fields[0].Path != "lines[1].taxIndicator" ||
			de.Fields[0].Codebook != ujpdoc.CBTaxIndicators || !strings.Contains(de.Fields[0].Message, "document type 110")):
			t.Errorf("document type %s: %v; want lines[1].taxIndicator refused for the type", tc.docType, err)
		}
		if tc.ok {
			continue
		}
		plain := validRequest()
		d, err := plain.Build(seller(), "einv_x", ujpdoc.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		d.Header.DocType = "110"
		if ps := ujpdoc.Validate(d, cb); !slices.ContainsFunc(ps, func(p ujpdoc.Problem) bool {
			return p.Path == "docItems[1].docItemTaxIndicator" && p.Code == ujpdoc.CodeTaxIndicatorNotFound
		}) {
			t.Errorf("ujpdoc.Validate of a type-110 document with DDV-B: %+v", ps)
		}
	}
}

// TestBuildDecimals: trailing zeros are no precision, so "1.50000" is a
// quantity of 1.5; the document writes what was asked for.
func TestBuildDecimals(t *testing.T) {
	req := validRequest()
	req.Lines = append([]Line(nil), req.Lines...)
	req.Lines[0].Quantity, req.Lines[0].UnitPrice = "1.50000", "999.99990"
	d, err := req.Build(seller(), "einv_x", ujpdoc.Snapshot())
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if q, p := d.DocItems[0].DocItemQty.String(), d.DocItems[0].DocItemUnitOriginalPriceWoVat.String(); q != "1.5" || p != "999.9999" {
		t.Errorf("quantity %s, unit price %s", q, p)
	}
}

// TestBuildDueDate: payment is due on the issue date at the earliest.
func TestBuildDueDate(t *testing.T) {
	for _, due := range []string{"2026-11-20", "2026-12-20"} {
		req := validRequest()
		req.Payment.DueDate = ptr(due)
		if _, err := req.Build(seller(), "einv_x", ujpdoc.Snapshot()); err != nil {
			t.Errorf("due %s: %v", due, err)
		}
	}
}

// TestBuildFullDiscount: a discount may take the whole unit price (a line
// given free), not more.
func TestBuildFullDiscount(t *testing.T) {
	req := validRequest()
	req.Lines = append([]Line(nil), req.Lines...)
	req.Lines[0].UnitDiscount = "1000"
	if _, err := req.Build(seller(), "einv_x", ujpdoc.Snapshot()); err != nil {
		t.Fatalf("Build: %v", err)
	}
}

// TestRequestPath: a problem of UJP's document is reported at the request
// field it was built from; what no request field gives stays under
// "document.".
func TestRequestPath(t *testing.T) {
	r := validRequest()
	withSupply := validRequest()
	withSupply.SupplyDate = ptr("2026-11-19")
	for _, tc := range []struct {
		req       *Request
		doc, want string
	}{
		{&r, "docTotals.docAvansAmount", "advance.amount"},
		{&r, "docTotals.docAvansDate", "advance.date"},
		{&r, "docItems[12].docItemUnitDiscountAmount", "lines[12].unitDiscount"},
		{&r, "docItems[0].docItemUnitOriginalPriceWoVat", "lines[0].unitPrice"},
		{&r, "docItems[3].docItemQty", "lines[3].quantity"},
		{&r, "docItems[1].docItemVatGroup", "lines[1].vatPercent"},
		{&r, "docItems[1].docItemDesc", "lines[1].description"},
		{&r, "docItems", "lines"},
		{&r, "docReferences[2].docDateRef", "references[2].date"},
		{&r, "docReferences", "references"},
		{&r, "header.docNumber", "number"},
		{&r, "header.docDate", "issueDate"},
		{&r, "header.docTurnoverDate", "issueDate"},
		{&withSupply, "header.docTurnoverDate", "supplyDate"},
		{&r, "buyer.buyerTin", "buyer.taxNumber"},
		{&r, "buyer.buyerCName", "buyer.country"},
		{&r, "buyer.buyerAddress.streetAddress", "buyer.address.street"},
		{&r, "buyer.buyerAddress.streetNumber", "buyer.address.number"},
		{&r, "sender.senderAddress.city", "sender.address.city"},
		{&r, "docPayment.docCurrencyExchRate", "payment.exchangeRate"},
		{&r, "docPayment.docPaymentTypeDueDate", "payment.dueDate"},
		{&r, "seller.sellerName", "document.seller.sellerName"},
		{&r, "docTotals.docGrossAmount", "document.docTotals.docGrossAmount"},
		{&r, "docItems[0].docItemTotalVat", "document.docItems[0].docItemTotalVat"},
		{&r, "vatTotals[0].vatAmount", "document.vatTotals[0].vatAmount"},
		{&r, "header.docId", "document.header.docId"},
	} {
		if got := tc.req.requestPath(tc.doc); got != tc.want {
			t.Errorf("requestPath(%s) = %s; want %s", tc.doc, got, tc.want)
		}
	}
}

// TestCorrectionBuild: the correction body's own fields are checked with
// the document's, each error at its real path.
func TestCorrectionBuild(t *testing.T) {
	cb := ujpdoc.Snapshot()
	reason := cb.CorrectionReasons[0].Code
	long := strings.Repeat("я", 501)
	for _, tc := range []struct {
		name  string
		edit  func(*CorrectionRequest)
		paths []string
	}{
		{"valid", func(*CorrectionRequest) {}, nil},
		{"void reason", func(c *CorrectionRequest) { c.Reason = "S-1" }, []string{"reason"}},
		{"no reason", func(c *CorrectionRequest) { c.Reason = "" }, []string{"reason"}},
		{"storno", func(c *CorrectionRequest) { c.DocStorno = 1 }, []string{"docStorno"}},
		{"comment", func(c *CorrectionRequest) { c.Comment = &long }, []string{"comment"}},
		{"with document errors", func(c *CorrectionRequest) { c.Reason = "C99"; c.Number = "" }, []string{"reason", "number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CorrectionRequest{Request: validRequest(), DocStorno: 2, Reason: reason}
			tc.edit(&c)
			d, err := c.Build(seller(), "einv_c", cb)
			if tc.paths == nil {
				if err != nil || d == nil {
					t.Fatalf("Build: %v", err)
				}
				return
			}
			var de *denar.Error
			if !errors.As(err, &de) || de.Code != denar.ECodeValidation {
				t.Fatalf("err = %v; want validation_failed", err)
			}
			var got []string
			for _, f := range de.Fields {
				got = append(got, f.Path)
				// Codebook names are plural, as void-reasons is.
				if f.Path == "reason" && f.Codebook != "correction-reasons" {
					t.Errorf("reason's codebook %q; want correction-reasons", f.Codebook)
				}
			}
			for _, p := range tc.paths {
				if !slices.Contains(got, p) {
					t.Errorf("fields %v; want %s", got, p)
				}
			}
		})
	}
	// The body is the issue body with three top-level fields.
	var m map[string]any
	b, _ := json.Marshal(CorrectionRequest{Request: validRequest(), DocStorno: 2, Reason: reason})
	if err := json.Unmarshal(b, &m); err != nil || m["docStorno"] != float64(2) || m["reason"] != reason || m["number"] == nil {
		t.Fatalf("shape %s", b)
	}
}

// Every problem is reported at once, not the first only.
func TestBuildAllErrors(t *testing.T) {
	_, err := (&Request{}).Build(seller(), "einv_x", ujpdoc.Snapshot())
	var de *denar.Error
	if !errors.As(err, &de) || len(de.Fields) < 5 {
		t.Fatalf("err = %v; want many field errors", err)
	}
}

func TestDecode(t *testing.T) {
	b, _ := json.Marshal(validRequest())
	r, err := Decode(bytes.NewReader(b))
	if err != nil || r.Number != "F-2026-0001" {
		t.Fatalf("Decode = %+v, %v", r, err)
	}
	if !bytes.Equal(r.Fingerprint(), func() []byte { v := validRequest(); return v.Fingerprint() }()) {
		t.Error("fingerprint differs after a round trip")
	}
	for _, tc := range []struct{ body, path string }{
		{`{"numbr":"x"}`, "numbr"},
		{`{"lines":"x"}`, "lines"},
		{`{"number":"x"} {}`, ""},
		{`{`, ""},
	} {
		_, err := Decode(strings.NewReader(tc.body))
		var de *denar.Error
		if !errors.As(err, &de) || de.Code != denar.ECodeValidation || de.Fields[0].Path != tc.path {
			t.Errorf("Decode(%s) = %v; want a field error at %q", tc.body, err, tc.path)
		}
	}
}

// FuzzDecodeBuild: any body decodes to a request or a validation error, and
// any decoded request builds or fails with a *denar.Error; never a panic.
func FuzzDecodeBuild(f *testing.F) {
	b, _ := json.Marshal(validRequest())
	f.Add(b)
	f.Add([]byte(`{"lines":[{"quantity":"1e9999999","unitPrice":"-0","vatPercent":"18.0"}]}`))
	f.Add([]byte(`{"payment":{"currency":"EUR","exchangeRate":"NaN"}}`))
	cb := ujpdoc.Snapshot()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := Decode(bytes.NewReader(body))
		if err != nil {
			var de *denar.Error
			if !errors.As(err, &de) {
				t.Fatalf("Decode error %T %v is not a *denar.Error", err, err)
			}
			return
		}
		if _, err := req.Build(seller(), "einv_fuzz", cb); err != nil {
			var de *denar.Error
			if !errors.As(err, &de) {
				t.Fatalf("Build error %T %v is not a *denar.Error", err, err)
			}
		}
	})
}

// TestLinesSchemaBound: the schema's maxItems on lines (the OpenAPI
// document, huma's validation) is the MaxLines Build enforces.
func TestLinesSchemaBound(t *testing.T) {
	f, _ := reflect.TypeFor[Request]().FieldByName("Lines")
	if got := f.Tag.Get("maxItems"); got != strconv.Itoa(MaxLines) {
		t.Errorf("lines maxItems %q; Build allows %d", got, MaxLines)
	}
}

// TestForeignPartyWithoutCountry: country defaults to MK, so a foreign
// buyer sent without one is refused at taxNumber, with what it needs.
func TestForeignPartyWithoutCountry(t *testing.T) {
	t.Parallel()
	cb := ujpdoc.Snapshot()
	for _, tt := range []struct {
		name string
		edit func(*Party)
		want string
	}{
		{"no tax number at all", func(p *Party) { p.TaxNumber = "" }, "a foreign party gives its country (a countries code such as \"DE\") and foreignTaxNumber instead"},
		{"a foreign tax number, no country", func(p *Party) { p.TaxNumber, p.ForeignTaxNumber = "", ptr("DE123456789") },
			"for a foreign party with a foreignTaxNumber, give its country"},
	} {
		req := validRequest()
		tt.edit(&req.Buyer)
		_, err := req.Build(seller(), "einv_x", cb)
		var de *denar.Error
		if !errors.As(err, &de) || len(de.Fields) != 1 || de.Fields[0].Path != "buyer.taxNumber" || !strings.Contains(de.Fields[0].Message, tt.want) {
			t.Errorf("%s: %v, want buyer.taxNumber saying %q", tt.name, err, tt.want)
		}
	}
	// With its country, a foreign buyer needs no ЕДБ.
	req := validRequest()
	req.Buyer.TaxNumber, req.Buyer.ForeignTaxNumber, req.Buyer.Country = "", ptr("DE123456789"), "DE"
	if _, err := req.Build(seller(), "einv_x", cb); err != nil {
		t.Errorf("a foreign buyer with its country: %v", err)
	}
}

// TestNoVATShown: a seller not registered for VAT may not show VAT on a
// line (ЗДДВ член 51 став 3, DDV-G).
func TestNoVATShown(t *testing.T) {
	t.Parallel()
	req := validRequest()
	fe := req.NoVATShown()
	var paths []string
	for _, f := range fe {
		paths = append(paths, f.Path)
		if !strings.Contains(f.Message, "not registered for VAT") || !strings.Contains(f.Message, "DDV-G") {
			t.Errorf("%s: %s", f.Path, f.Message)
		}
	}
	var want []string
	for i, l := range req.Lines {
		if l.VatPercent != "0" && l.VatPercent != "" {
			want = append(want, fmt.Sprintf("lines[%d].vatPercent", i))
		}
	}
	if len(want) == 0 || strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	for i := range req.Lines {
		req.Lines[i].VatPercent, req.Lines[i].TaxIndicator = "0", "DDV-G"
	}
	if fe := req.NoVATShown(); len(fe) != 0 {
		t.Errorf("lines without VAT: %v", fe)
	}
}
