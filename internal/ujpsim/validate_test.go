package ujpsim

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the example documents under testdata/documents")

func testLists(t testing.TB) *codeLists {
	t.Helper()
	cl, err := loadCodeLists()
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func seedRegistry() registry {
	r := registry{}
	for _, c := range SeedCompanies() {
		r[c.TaxNumber] = c
	}
	return r
}

// exampleDoc is a valid document of docType from the sandbox seller to the
// sandbox buyer, one line per (group, indicator) pair given.
func exampleDoc(cl *codeLists, docType string, lines ...[2]string) *document {
	reg := seedRegistry()
	sel, buy := reg[TaxSeller], reg[TaxBuyer]
	dt, _ := cl.docType(docType)
	pt, _ := cl.paymentType("P12")
	if len(lines) == 0 {
		lines = [][2]string{{"DDV-A", "DDV-A"}, {"DDV-B", "DDV-B"}}
	}
	d := &document{
		Header: header{DocType: dt.Code, DocTypeName: dt.Name, DocDate: "2026-11-20", DocTurnoverDate: strp("2026-11-19"),
			DocNumber: "F-" + docType + "-0001", DocID: "example-" + docType},
		DocReferences: []reference{},
		Seller: seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: sel.TaxNumber, SellerVatNumber: sel.VatNumber,
			SellerName: sel.Name, SellerAddress: address{StreetAddress: sel.Address.Street, StreetNumber: sel.Address.Number, PostalCode: sel.Address.Zip, City: sel.Address.City}},
		Buyer: buyer{BuyerCCode: "MK", BuyerCName: "Северна Македонија", BuyerTin: buy.TaxNumber, BuyerVatNumber: buy.VatNumber,
			BuyerName: buy.Name, BuyerAddress: address{StreetAddress: buy.Address.Street, StreetNumber: buy.Address.Number, PostalCode: buy.Address.Zip, City: buy.Address.City}},
		DocPayment: payment{DocPaymentTypeCode: pt.Code, DocPaymentTypeDesc: pt.Description, DocCurrency: strp("MKD"), DocCurrencyCode: strp("MKD")},
	}
	for i, l := range lines {
		d.DocItems = append(d.DocItems, item{DocItemLineNo: i + 1, DocItemDesc: "Ставка " + l[1], DocItemQty: N("2.5"),
			DocItemUnitOriginalPriceWoVat: N("123.4567"), DocItemUnitDiscountAmount: N("10.1234"), DocItemVatGroup: l[0], DocItemTaxIndicator: l[1]})
	}
	compute(d, cl)
	return d
}

type invalidCase struct {
	name, code, prop string
	mutate           func(*document)
}

// invalidCases each break one rule of a valid invoice (type 100, DDV-A and
// DDV-B lines) and name the code and property the rule reports.
var invalidCases = []invalidCase{
	{"missing-doc-type", "E4019", "header.docType", func(d *document) { d.Header.DocType = "" }},
	{"unknown-doc-type", "E1017", "header.docType", func(d *document) { d.Header.DocType = "999" }},
	{"doc-type-name", "E50079", "header.docTypeName", func(d *document) { d.Header.DocTypeName = "Општа Фактура" }},
	{"missing-doc-id", "E4019", "header.docId", func(d *document) { d.Header.DocID = "" }},
	{"bad-doc-date", "E4013", "header.docDate", func(d *document) { d.Header.DocDate = "20.11.2026" }},
	{"delivery-after-doc-date", "E50071", "header.docDeliveryDate", func(d *document) { d.Header.DocDeliveryDate = strp("2026-11-21") }},
	{"turnover-after-doc-date", "E50072", "header.docTurnoverDate", func(d *document) { d.Header.DocTurnoverDate = strp("2026-11-21") }},
	{"ref-date-after-doc-date", "E50073", "docReferences[0].docDateRef", func(d *document) {
		d.DocReferences = []reference{{DocTypeRef: "DOG", DocNameRef: "Договор", DocNumberRef: "D-1", DocDateRef: strp("2026-12-01")}}
	}},
	{"unknown-ref-type", "E1021", "docReferences[0].docTypeRef", func(d *document) {
		d.DocReferences = []reference{{DocTypeRef: "XXX", DocNameRef: "Договор", DocNumberRef: "D-1"}}
	}},
	{"ref-name", "E10211", "docReferences[0].docNameRef", func(d *document) {
		d.DocReferences = []reference{{DocTypeRef: "DOG", DocNameRef: "Уговор", DocNumberRef: "D-1"}}
	}},
	{"ref-type-st", "E1029", "docReferences[0].docTypeRef", func(d *document) {
		d.DocReferences = []reference{{DocTypeRef: "ST", DocNameRef: "Сторно", DocNumberRef: "D-1"}}
	}},
	{"unknown-seller-country", "E10011", "seller.sellerCCode", func(d *document) { d.Seller.SellerCCode = "XX" }},
	{"seller-country-name", "E10012", "seller.sellerCName", func(d *document) { d.Seller.SellerCName = "Македонија" }},
	{"missing-seller-tin", "E10001", "seller.sellerTin", func(d *document) { d.Seller.SellerTin = "" }},
	{"unknown-seller", "E1000", "seller.sellerTin", func(d *document) { d.Seller.SellerTin = TaxNeverExisted }},
	{"seller-name", "E10002", "seller.sellerName", func(d *document) { d.Seller.SellerName = "Тест Продавач ДООЕЛ" }},
	{"seller-vat-number", "E10003", "seller.sellerVatNumber", func(d *document) { d.Seller.SellerVatNumber = strp("МК4030000000099") }},
	{"seller-vat-missing", "E10008", "seller.sellerVatNumber", func(d *document) { d.Seller.SellerVatNumber = nil }},
	{"seller-city", "E10004", "seller.sellerAddress.city", func(d *document) { d.Seller.SellerAddress.City = "Битола" }},
	{"seller-postal-code", "E10005", "seller.sellerAddress.postalCode", func(d *document) { d.Seller.SellerAddress.PostalCode = "7000" }},
	{"seller-street-too-long", "E4013", "seller.sellerAddress.streetAddress", func(d *document) { d.Seller.SellerAddress.StreetAddress = strings.Repeat("у", 61) }},
	{"seller-street-number-missing", "E4019", "seller.sellerAddress.streetNumber", func(d *document) { d.Seller.SellerAddress.StreetNumber = "" }},
	{"missing-buyer-tin", "E10001", "buyer.buyerTin", func(d *document) { d.Buyer.BuyerTin = "" }},
	{"unknown-buyer", "E1014", "buyer.buyerTin", func(d *document) { d.Buyer.BuyerTin = TaxNeverExisted }},
	{"buyer-name", "E10006", "buyer.buyerName", func(d *document) { d.Buyer.BuyerName = "Тест Купувач" }},
	{"buyer-vat-number", "E10007", "buyer.buyerVatNumber", func(d *document) { d.Buyer.BuyerVatNumber = strp("МК4030000000099") }},
	{"buyer-vat-missing", "E10008", "buyer.buyerVatNumber", func(d *document) { d.Buyer.BuyerVatNumber = nil }},
	{"buyer-name-too-long", "E4013", "buyer.buyerName", func(d *document) { d.Buyer.BuyerName = strings.Repeat("б", 81) }},
	{"unknown-payment-type", "E50074", "docPayment.docPaymentTypeCode", func(d *document) { d.DocPayment.DocPaymentTypeCode = "1020" }},
	{"payment-description", "E50075", "docPayment.docPaymentTypeDesc", func(d *document) { d.DocPayment.DocPaymentTypeDesc = "Банка" }},
	{"unknown-currency", "E50076", "docPayment.docCurrencyCode", func(d *document) { d.DocPayment.DocCurrencyCode = strp("XYZ") }},
	{"currency-name", "E50077", "docPayment.docCurrency", func(d *document) { d.DocPayment.DocCurrency = strp("МКД") }},
	{"no-lines", "E4019", "docItems", func(d *document) { d.DocItems = nil; d.VatTotals = nil }},
	{"unknown-tax-group", "E1004", "docItems[0].docItemVatGroup", func(d *document) { d.DocItems[0].DocItemVatGroup = "VAT18" }},
	{"unknown-tax-indicator", "E1009", "docItems[0].docItemTaxIndicator", func(d *document) { d.DocItems[0].DocItemTaxIndicator = "ДДВ 18" }},
	{"indicator-not-for-group", "E1004", "docItems[1].docItemVatGroup", func(d *document) { d.DocItems[1].DocItemTaxIndicator = "DDV-A" }},
	{"rate-not-the-groups", "E10203", "docItems[0].docItemVat", func(d *document) { d.DocItems[0].DocItemVat = N("5") }},
	{"line-unit-price", "E10203", "docItems[0].docItemUnitPriceWoVat", func(d *document) { d.DocItems[0].DocItemUnitPriceWoVat = N("113.3334") }},
	{"line-unit-vat", "E10203", "docItems[0].docItemUnitVat", func(d *document) { d.DocItems[0].DocItemUnitVat = N("20.41") }},
	{"line-total-vat", "E10203", "docItems[0].docItemTotalVat", func(d *document) { d.DocItems[0].DocItemTotalVat = N("51.01") }},
	{"doc-net-amount", "E10201", "docTotals.docNetAmount", func(d *document) { d.DocTotals.DocNetAmount = num(d.DocTotals.DocNetAmount.V.Add(N("0.01").V)) }},
	{"doc-gross-amount-r", "E10201", "docTotals.docGrossAmountR", func(d *document) { d.DocTotals.DocGrossAmountR = num(d.DocTotals.DocGrossAmountR.V.Add(N("0.1").V)) }},
	{"doc-final-amount", "E10201", "docTotals.docFinalAmount", func(d *document) { d.DocTotals.DocFinalAmount = N("1") }},
	{"vat-taxable-amount", "E10202", "vatTotals[0].vatTaxableAmount", func(d *document) { d.VatTotals[0].VatTaxableAmount = N("1") }},
	{"vat-percent", "E10202", "vatTotals[0].vatPercent", func(d *document) { d.VatTotals[0].VatPercent = N("10") }},
	{"vat-group-missing", "E10202", "vatTotals", func(d *document) { d.VatTotals = d.VatTotals[:1] }},
	{"vat-indicator-note", "E1032", "vatTotals[0].vatTaxIndicatorNote", func(d *document) { d.VatTotals[0].VatTaxIndicatorNote = strp("напомена") }},
	{"storno-without-reason", "E4019", "header.voidReasonCode", func(d *document) {
		d.Header.DocStorno = stornoVoid
		d.DocReferences = []reference{{DocTypeRef: "SYS", DocNameRef: "Од систем", DocNumberRef: "019b8d43-7840-7433-b358-08891b53605c"}}
		negate(d)
	}},
	{"storno-unknown-reason", "E1006", "header.voidReasonCode", func(d *document) {
		d.Header.DocStorno, d.Header.VoidReasonCode = stornoVoid, strp("S-9")
		d.DocReferences = []reference{{DocTypeRef: "SYS", DocNameRef: "Од систем", DocNumberRef: "019b8d43-7840-7433-b358-08891b53605c"}}
		negate(d)
	}},
	{"storno-without-reference", "E1024", "docReferences", func(d *document) {
		d.Header.DocStorno, d.Header.VoidReasonCode = stornoVoid, strp("S-1")
		negate(d)
	}},
	{"storno-positive-quantity", "E1025", "docItems[0].docItemQty", func(d *document) {
		d.Header.DocStorno, d.Header.VoidReasonCode = stornoVoid, strp("S-1")
		d.DocReferences = []reference{{DocTypeRef: "SYS", DocNameRef: "Од систем", DocNumberRef: "019b8d43-7840-7433-b358-08891b53605c"}}
	}},
	{"correction-without-reference", "E1027", "docReferences", func(d *document) {
		d.Header.DocStorno, d.Header.CorrectionReasonCode = stornoCorrection, strp("C01")
	}},
	{"correction-unknown-reason", "E1031", "header.correctionReasonCode", func(d *document) {
		d.Header.DocStorno, d.Header.CorrectionReasonCode = stornoCorrection, strp("C99")
		d.DocReferences = []reference{{DocTypeRef: "SYS", DocNameRef: "Од систем", DocNumberRef: "019b8d43-7840-7433-b358-08891b53605c"}}
	}},
}

// negate turns a document into its storno's figures.
func negate(d *document) {
	for i := range d.DocItems {
		d.DocItems[i].DocItemQty = num(d.DocItems[i].DocItemQty.V.Neg())
	}
	d.DocTotals = totals{}
	compute(d, testListsOnce)
}

var testListsOnce, _ = loadCodeLists()

// validCases are the valid examples: every document type, and every
// vatImpact (STANDARD, NULA, OSLOBODEN, PRENESEN) including a second rate
// of a multi-rate indicator.
func validCases(cl *codeLists) map[string]*document {
	out := map[string]*document{}
	for _, dt := range cl.DocumentTypes {
		out["type-"+dt.Code] = exampleDoc(cl, dt.Code)
	}
	out["impact-standard"] = exampleDoc(cl, "100", [2]string{"DDV-A", "DDV-A"}, [2]string{"DDV-V", "DDV-V"}, [2]string{"DDV-B", "DDV-B"})
	out["impact-nula"] = exampleDoc(cl, "100", [2]string{"DDV-G", "DDV-G"}, [2]string{"DDV-G", "DDV-10-14-2"})
	out["impact-osloboden"] = exampleDoc(cl, "100", [2]string{"DDV-G", "DDV-7-I"}, [2]string{"DDV-G", "DDV-9-10"})
	out["impact-prenesen"] = exampleDoc(cl, "100", [2]string{"DDV-A", "DDV-11-A"}, [2]string{"DDV-B", "DDV-14-4"}, [2]string{"DDV-V", "DDV-14-4"})
	out["impact-mixed"] = exampleDoc(cl, "100", [2]string{"DDV-A", "DDV-A"}, [2]string{"DDV-G", "DDV-7-I"}, [2]string{"DDV-A", "DDV-uvoz"})
	storno := exampleDoc(cl, "100")
	storno.Header.DocStorno, storno.Header.VoidReasonCode, storno.Header.VoidComment = stornoVoid, strp("S-2"), strp("Договорот е поништен")
	storno.DocReferences = []reference{{DocTypeRef: "SYS", DocNameRef: "Од систем", DocNumberRef: "019b8d43-7840-7433-b358-08891b53605c", DocDateRef: strp("2026-11-19")}}
	negate(storno)
	out["storno"] = storno
	corr := exampleDoc(cl, "100")
	corr.Header.DocStorno, corr.Header.CorrectionReasonCode = stornoCorrection, strp("C01")
	corr.DocReferences = []reference{{DocTypeRef: "SYS", DocNameRef: "Од систем", DocNumberRef: "019b8d43-7840-7433-b358-08891b53605c", DocDateRef: strp("2026-11-19")}}
	out["correction"] = corr
	withAdvance := exampleDoc(cl, "130")
	withAdvance.DocTotals.DocAvansAmount = N("100")
	compute(withAdvance, cl)
	out["advance"] = withAdvance
	return out
}

func docFile(t *testing.T, dir, name string, d *document) []byte {
	t.Helper()
	path := filepath.Join("testdata", "documents", dir, name+".json")
	b, err := json.MarshalIndent(sendRequest{RequestTimestamp: "2026-11-20T12:00:00", Document: *d}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write the examples)", err)
	}
	if !bytes.Equal(got, b) {
		t.Errorf("%s differs from the example the test builds; run with -update", path)
	}
	return got
}

func decodeFile(t *testing.T, b []byte) *document {
	t.Helper()
	r, err := decodeSend(b)
	if err != nil {
		t.Fatal(err)
	}
	return &r.Document
}

// TestValidExamples: a valid document of each type and each vatImpact
// passes, read back from its example file.
func TestValidExamples(t *testing.T) {
	t.Parallel()
	cl := testLists(t)
	cases := validCases(cl)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		b := docFile(t, "valid", name, cases[name])
		if items := validate(decodeFile(t, b), cl, seedRegistry()); len(items) > 0 {
			t.Errorf("%s: %+v", name, items)
		}
	}
}

// TestInvalidExamples: each rule's violation reports its code at its
// property, read back from its example file.
func TestInvalidExamples(t *testing.T) {
	t.Parallel()
	cl := testLists(t)
	for _, tc := range invalidCases {
		d := exampleDoc(cl, "100")
		tc.mutate(d)
		b := docFile(t, "invalid", tc.name, d)
		items := validate(decodeFile(t, b), cl, seedRegistry())
		found := false
		for _, it := range items {
			found = found || (it.ErrorCode == tc.code && it.Property == tc.prop)
		}
		if !found {
			t.Errorf("%s: want %s at %s, got %+v", tc.name, tc.code, tc.prop, items)
		}
	}
}

// TestIndicatorForDocumentType: an indicator the list allows for one
// document type only (the changed lists' DDV-14-3-10, type 100) is E1009
// on another.
func TestIndicatorForDocumentType(t *testing.T) {
	t.Parallel()
	cl := testLists(t).changed()
	ok := exampleDoc(cl, "100", [2]string{"DDV-V", "DDV-14-3-10"})
	if items := validate(ok, cl, seedRegistry()); len(items) > 0 {
		t.Fatalf("type 100 with DDV-14-3-10: %+v", items)
	}
	bad := exampleDoc(cl, "110", [2]string{"DDV-V", "DDV-14-3-10"})
	items := validate(bad, cl, seedRegistry())
	if len(items) != 1 || items[0].ErrorCode != "E1009" || items[0].Property != "docItems[0].docItemTaxIndicator" {
		t.Fatalf("type 110 with DDV-14-3-10: %+v", items)
	}
}

// TestMultiRateIndicatorsServedPerGroup: DDV-14-4 is two entries (DDV-V
// and DDV-B), DDV-uvoz three, each with a single taxGroupCode.
func TestMultiRateIndicatorsServedPerGroup(t *testing.T) {
	t.Parallel()
	cl := testLists(t)
	for code, want := range map[string][]string{"DDV-14-4": {"DDV-V", "DDV-B"}, "DDV-14-5": {"DDV-V", "DDV-B"}, "DDV-uvoz": {"DDV-A", "DDV-V", "DDV-B"}, "DDV-A": {"DDV-A"}} {
		var got []string
		for _, e := range cl.indicator(code) {
			got = append(got, e.TaxGroupCode)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: groups %v, want %v", code, got, want)
		}
	}
	b, _ := json.Marshal(cl.TaxIndicators)
	if bytes.Contains(b, []byte("taxGroupCodes")) {
		t.Fatal("the tax-indicator list carries a taxGroupCodes list")
	}
}

// TestToleranceFromExamples: a total half a cent off passes, a cent off
// does not.
func TestToleranceFromExamples(t *testing.T) {
	t.Parallel()
	cl := testLists(t)
	d := exampleDoc(cl, "100")
	d.DocItems[0].DocItemTotalPriceWoVat = num(d.DocItems[0].DocItemTotalPriceWoVat.V.Add(N("0.004").V))
	for _, it := range validate(d, cl, seedRegistry()) {
		if it.Property == "docItems[0].docItemTotalPriceWoVat" {
			t.Fatalf("0.004 off: %+v", it)
		}
	}
	d.DocItems[0].DocItemTotalPriceWoVat = num(d.DocItems[0].DocItemTotalPriceWoVat.V.Add(N("0.006").V))
	found := false
	for _, it := range validate(d, cl, seedRegistry()) {
		found = found || (it.Property == "docItems[0].docItemTotalPriceWoVat" && it.ErrorCode == "E10203")
	}
	if !found {
		t.Fatal("0.01 off passes")
	}
}

// FuzzValidate: whatever a payload holds, decoding and validation return
// without panicking.
func FuzzValidate(f *testing.F) {
	cl := testLists(f)
	for _, d := range validCases(cl) {
		b, _ := json.Marshal(sendRequest{RequestTimestamp: "2026-11-20T12:00:00", Document: *d})
		f.Add(b)
	}
	f.Add([]byte(`{"document":{"docItems":[{"docItemQty":1e17,"docItemUnitOriginalPriceWoVat":-1}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeSend(b)
		if err != nil {
			return
		}
		_ = validate(&r.Document, cl, seedRegistry())
	})
}
