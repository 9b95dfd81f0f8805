package ujpdoc

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/money"
)

// Problem is one reason UJP would refuse a document. Code is the error code
// UJP's JSON Receiver answers for it (E4019, E1009, E10201, …), kept as UJP
// writes it; Codebook names the code list a rule comes from.
//
// A problem of the rule checks also keeps the format and arguments of its
// Message (Format), not serialised, as denar.FieldError does.
type Problem struct {
	Path     string `json:"path"`
	Message  string `json:"message"`
	Codebook string `json:"codebook,omitempty"`
	Code     string `json:"code"`

	format string
	args   []any
}

// Format returns the format and arguments Message was made of, or "" and
// nil when Message is the whole text.
func (p Problem) Format() (string, []any) { return p.format, p.args }

// Problems is the list Validate returns.
type Problems []Problem

// Err returns nil for no problems, else a validation_failed *denar.Error
// whose field errors keep the codebook names.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	fe := make(denar.FieldErrors, 0, len(ps))
	for _, p := range ps {
		fe = append(fe, denar.FieldError{Path: p.Path, Message: p.Message, Codebook: p.Codebook})
	}
	return fe.Err()
}

// Codes returns the distinct UJP codes in order of first appearance.
func (ps Problems) Codes() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if !seen[p.Code] {
			seen[p.Code] = true
			out = append(out, p.Code)
		}
	}
	return out
}

// HasTotals reports whether any problem is a totals mismatch.
func (ps Problems) HasTotals() bool {
	for _, p := range ps {
		if strings.HasPrefix(p.Code, "E1020") {
			return true
		}
	}
	return false
}

// UJP error codes the checks produce (JSON Receiver namespace).
const (
	CodeMissingFields        = "E4019"
	CodeDocTypeNotFound      = "E1017"
	CodeTaxGroupNotFound     = "E1004"
	CodeTaxIndicatorNotFound = "E1009"
	CodeVoidReasonNotFound   = "E1006"
	CodeCountryNotFound      = "E10011"
	CodeCountryMismatch      = "E10012"
	CodeMissingTIN           = "E10001"
	CodeTotals               = "E1020"
	CodeDocTotals            = "E10201"
	CodeVatTotals            = "E10202"
	CodeItemTotals           = "E10203"
	CodeVoidNoReference      = "E1024"
	CodeInvalidVoid          = "E1025"
	CodeCorrectionNoRef      = "E1027"
	CodeInvalidCorrection    = "E1031"
	CodeVatIndicatorNote     = "E1032"
	CodePaymentTypeNotFound  = "E50074"
	CodePaymentDescMismatch  = "E50075"
	CodeCurrencyNotFound     = "E50076"
	CodeCurrencyNameMismatch = "E50077"
	CodeInvalidValue         = "E5011"
	CodeDocumentValidation   = "E5007"
	CodeReferenceNotFound    = "E1021"
	CodeDeliveryAfterDoc     = "E50071"
	CodeTurnoverAfterDoc     = "E50072"
	CodeDateRefAfterDoc      = "E50073"
)

type checker struct {
	cb *Codebooks
	ps Problems
}

func (c *checker) add(code, path, cbName, format string, args ...any) {
	c.ps = append(c.ps, Problem{Path: path, Message: fmt.Sprintf(format, args...), Codebook: cbName, Code: code, format: format, args: args})
}

func (c *checker) required(path, v string) bool {
	if strings.TrimSpace(v) == "" {
		c.add(CodeMissingFields, path, "", "required")
		return false
	}
	return true
}

func (c *checker) maxLen(path, v string, n int) {
	if len([]rune(v)) > n {
		c.add(CodeInvalidValue, path, "", "longer than %d characters", n)
	}
}

func (c *checker) date(path string, v *string, required bool) {
	if v == nil || *v == "" {
		if required {
			c.add(CodeMissingFields, path, "", "required")
		}
		return
	}
	if _, err := time.Parse(time.DateOnly, *v); err != nil {
		c.add(CodeInvalidValue, path, "", "not a date in the form YYYY-MM-DD")
	}
}

// edb checks a Macedonian party's tax number (ЕДБ) at path: 13 digits, the
// last the mod-11 check digit of ident.EDB. UJP's answer to a wrong check
// digit is not published; E5011 (Invalid value for field) is its code for a
// malformed value.
func (c *checker) edb(path, v string) {
	switch err := ident.EDB(v); {
	case errors.Is(err, ident.ErrChecksum):
		c.add(CodeInvalidValue, path, "", "is not a valid ЕДБ: the 13th digit is not the check digit of the first 12")
	case err != nil:
		c.add(CodeInvalidValue, path, "", "a Macedonian tax number (ЕДБ) has 13 digits")
	}
}

// notAfterDocDate is UJP's E50071/E50072/E50073 (error-codes.txt, JSON
// Receiver): the delivery date, the turnover date and a referenced
// document's date may not be after the document's own date. The same day
// is allowed: UJP's own status example has docDate = docDeliveryDate
// (api-specification.txt:1009-1010). Dates that do not parse are reported
// by date.
func (c *checker) notAfterDocDate(code, path, name string, v *string, docDate string) {
	if v == nil || *v == "" {
		return
	}
	t, err1 := time.Parse(time.DateOnly, *v)
	doc, err2 := time.Parse(time.DateOnly, docDate)
	if err1 != nil || err2 != nil || !t.After(doc) {
		return
	}
	c.add(code, path, "", "%s %s is after the document's date %s", name, *v, docDate)
}

// Validate checks a document as UJP's JSON Receiver does before it assigns
// an EUID: required fields by document type, codebook codes (and the names
// UJP expects next to them), storno and correction rules, and every computed
// amount against the totals formulas. Registry checks (is the seller the
// company it claims to be) need the registry and are the caller's.
func Validate(d *Document, cb *Codebooks) Problems {
	c := &checker{cb: cb}
	c.header(d)
	c.references(d)
	c.parties(d)
	c.payment(d)
	c.items(d)
	if !hasCode(c.ps, CodeTaxGroupNotFound, CodeTaxIndicatorNotFound, CodeMissingFields) {
		c.ps = append(c.ps, CheckTotals(d, cb)...)
	}
	return c.ps
}

func hasCode(ps Problems, codes ...string) bool {
	for _, p := range ps {
		for _, c := range codes {
			if p.Code == c {
				return true
			}
		}
	}
	return false
}

func (c *checker) header(d *Document) {
	h := d.Header
	if c.required("header.docType", h.DocType) {
		if _, ok := c.cb.DocumentType(h.DocType); !ok {
			c.add(CodeDocTypeNotFound, "header.docType", CBDocumentTypes, "unknown document type %q", h.DocType)
		}
	}
	// docTypeName is required but not compared: UJP's own examples pair 100
	// with both "Фактура" and "Општа Фактура".
	c.required("header.docTypeName", h.DocTypeName)
	c.date("header.docDate", &h.DocDate, true)
	c.date("header.docTurnoverDate", &h.DocTurnoverDate, false)
	c.date("header.docDeliveryDate", h.DocDeliveryDate, false)
	c.date("header.docPeriodStartDate", h.DocPeriodStartDate, false)
	c.date("header.docPeriodEndDate", h.DocPeriodEndDate, false)
	c.notAfterDocDate(CodeDeliveryAfterDoc, "header.docDeliveryDate", "docDeliveryDate", h.DocDeliveryDate, h.DocDate)
	c.notAfterDocDate(CodeTurnoverAfterDoc, "header.docTurnoverDate", "docTurnoverDate", &h.DocTurnoverDate, h.DocDate)
	if c.required("header.docNumber", h.DocNumber) {
		c.maxLen("header.docNumber", h.DocNumber, 50)
	}
	if c.required("header.docId", h.DocID) {
		c.maxLen("header.docId", h.DocID, 100)
	}
	switch h.DocStorno {
	case StornoNone:
		if h.VoidReasonCode != nil || h.CorrectionReasonCode != nil {
			c.add(CodeInvalidValue, "header", "", "a reason is given but docStorno is 0")
		}
	case StornoVoid:
		if h.VoidReasonCode == nil || *h.VoidReasonCode == "" {
			c.add(CodeInvalidVoid, "header.voidReasonCode", CBVoidReasons, "a storno needs a void reason")
		} else if _, ok := c.cb.Lookup(CBVoidReasons, *h.VoidReasonCode); !ok {
			c.add(CodeVoidReasonNotFound, "header.voidReasonCode", CBVoidReasons, "unknown void reason %q", *h.VoidReasonCode)
		}
		if SystemReference(d) == "" {
			c.add(CodeVoidNoReference, "docReferences", CBRefDocumentTypes, "a storno must reference the voided document (docTypeRef %s, docNumberRef its EUID)", RefTypeSystem)
		}
		for i, it := range d.DocItems {
			if it.DocItemQty.IsPositive() {
				c.add(CodeInvalidVoid, fmt.Sprintf("docItems[%d].docItemQty", i), "", "a storno's quantities are negative")
			}
		}
	case StornoCorrection:
		if h.CorrectionReasonCode == nil || *h.CorrectionReasonCode == "" {
			c.add(CodeInvalidCorrection, "header.correctionReasonCode", CBCorrectionReasons, "a correction needs a correction reason")
		} else if _, ok := c.cb.Lookup(CBCorrectionReasons, *h.CorrectionReasonCode); !ok {
			c.add(CodeInvalidCorrection, "header.correctionReasonCode", CBCorrectionReasons, "unknown correction reason %q", *h.CorrectionReasonCode)
		}
		if SystemReference(d) == "" {
			c.add(CodeCorrectionNoRef, "docReferences", CBRefDocumentTypes, "a correction must reference the corrected document (docTypeRef %s, docNumberRef its EUID)", RefTypeSystem)
		}
	default:
		c.add(CodeInvalidValue, "header.docStorno", "", "must be 0, 1 (storno) or 2 (correction)")
	}
}

// SystemReference returns the EUID a document references through a SYS
// reference (the voided or corrected original), or "".
func SystemReference(d *Document) string {
	for _, r := range d.DocReferences {
		if r.DocTypeRef == RefTypeSystem && r.DocNumberRef != "" {
			return r.DocNumberRef
		}
	}
	return ""
}

func (c *checker) references(d *Document) {
	dt, _ := c.cb.DocumentType(d.Header.DocType)
	if dt.IsReferenceMandatory && len(d.DocReferences) == 0 {
		c.add(CodeMissingFields, "docReferences", CBDocumentTypes, "document type %s requires a reference", dt.Code)
	}
	for i, r := range d.DocReferences {
		p := fmt.Sprintf("docReferences[%d]", i)
		if c.required(p+".docTypeRef", r.DocTypeRef) {
			if _, ok := c.cb.Lookup(CBRefDocumentTypes, r.DocTypeRef); !ok {
				c.add(CodeReferenceNotFound, p+".docTypeRef", CBRefDocumentTypes, "unknown reference document type %q", r.DocTypeRef)
			}
		}
		c.required(p+".docNumberRef", r.DocNumberRef)
		c.date(p+".docDateRef", r.DocDateRef, false)
		c.notAfterDocDate(CodeDateRefAfterDoc, p+".docDateRef", "docDateRef", r.DocDateRef, d.Header.DocDate)
	}
}

func (c *checker) country(path, code, namePath, name string) {
	if !c.required(path, code) {
		return
	}
	cc, ok := c.cb.Lookup(CBCountries, code)
	if !ok {
		c.add(CodeCountryNotFound, path, CBCountries, "unknown country code %q (ISO 3166-1 alpha-2, Latin letters)", code)
		return
	}
	if name != "" && name != cc.Name {
		c.add(CodeCountryMismatch, namePath, CBCountries, "country name for %s is %q", code, cc.Name)
	}
}

func (c *checker) address(path string, a Address) {
	c.required(path+".streetAddress", a.StreetAddress)
	c.maxLen(path+".streetAddress", a.StreetAddress, 60)
	c.maxLen(path+".streetNumber", a.StreetNumber, 10)
	c.required(path+".city", a.City)
	c.maxLen(path+".city", a.City, 60)
	c.maxLen(path+".postalCode", a.PostalCode, 5)
}

func (c *checker) parties(d *Document) {
	s := d.Seller
	c.country("seller.sellerCCode", s.SellerCCode, "seller.sellerCName", s.SellerCName)
	if c.required("seller.sellerTin", s.SellerTin) && s.SellerCCode == "MK" {
		c.edb("seller.sellerTin", s.SellerTin)
	}
	c.required("seller.sellerName", s.SellerName)
	c.maxLen("seller.sellerName", s.SellerName, 80)
	c.address("seller.sellerAddress", s.SellerAddress)

	b := d.Buyer
	c.country("buyer.buyerCCode", b.BuyerCCode, "buyer.buyerCName", b.BuyerCName)
	if b.BuyerCCode == "MK" {
		if strings.TrimSpace(b.BuyerTin) == "" {
			c.add(CodeMissingTIN, "buyer.buyerTin", "", "required for a resident buyer")
		} else {
			c.edb("buyer.buyerTin", b.BuyerTin)
		}
	}
	if sn := d.Sender; sn != nil {
		c.country("sender.senderCCode", sn.SenderCCode, "sender.senderCName", sn.SenderCName)
		if c.required("sender.senderTin", sn.SenderTin) && sn.SenderCCode == "MK" {
			c.edb("sender.senderTin", sn.SenderTin)
		}
		c.required("sender.senderName", sn.SenderName)
		c.address("sender.senderAddress", sn.SenderAddress)
	}
	c.required("buyer.buyerName", b.BuyerName)
	c.maxLen("buyer.buyerName", b.BuyerName, 80)
	c.address("buyer.buyerAddress", b.BuyerAddress)
}

func (c *checker) payment(d *Document) {
	p := d.DocPayment
	if c.required("docPayment.docPaymentTypeCode", p.DocPaymentTypeCode) {
		pt, ok := c.cb.Lookup(CBPaymentTypes, p.DocPaymentTypeCode)
		switch {
		case !ok:
			c.add(CodePaymentTypeNotFound, "docPayment.docPaymentTypeCode", CBPaymentTypes, "unknown payment type %q", p.DocPaymentTypeCode)
		case p.DocPaymentTypeDesc != "" && p.DocPaymentTypeDesc != pt.Name:
			c.add(CodePaymentDescMismatch, "docPayment.docPaymentTypeDesc", CBPaymentTypes, "description of %s is %q", pt.Code, pt.Name)
		}
	}
	if !c.required("docPayment.docCurrencyCode", p.DocCurrencyCode) {
		return
	}
	cur, ok := c.cb.Lookup(CBCurrencies, p.DocCurrencyCode)
	if !ok {
		c.add(CodeCurrencyNotFound, "docPayment.docCurrencyCode", CBCurrencies, "unknown currency %q", p.DocCurrencyCode)
		return
	}
	if p.DocCurrency != "" && p.DocCurrency != cur.Name {
		c.add(CodeCurrencyNameMismatch, "docPayment.docCurrency", CBCurrencies, "currency name for %s is %q", cur.Code, cur.Name)
	}
	if cur.Code != "MKD" {
		if p.DocCurrencyExchRate == nil || !p.DocCurrencyExchRate.IsPositive() {
			c.add(CodeMissingFields, "docPayment.docCurrencyExchRate", "", "a positive exchange rate to MKD is required for %s", cur.Code)
		}
		c.date("docPayment.docCurrencyDate", p.DocCurrencyDate, true)
	}
	if p.DocPaymentTypeDueDate != nil {
		c.date("docPayment.docPaymentTypeDueDate", p.DocPaymentTypeDueDate, false)
	}
}

func (c *checker) items(d *Document) {
	if len(d.DocItems) == 0 {
		c.add(CodeMissingFields, "docItems", "", "at least one line is required")
	}
	for i, it := range d.DocItems {
		p := fmt.Sprintf("docItems[%d]", i)
		if it.DocItemLineNo != i+1 {
			c.add(CodeInvalidValue, p+".docItemLineNo", "", "lines are numbered 1, 2, … in order; expected %d", i+1)
		}
		c.required(p+".docItemDesc", it.DocItemDesc)
		if it.DocItemQty.IsZero() {
			c.add(CodeMissingFields, p+".docItemQty", "", "required and not zero")
		}
		if it.DocItemUnitOriginalPriceWoVat.IsNegative() {
			c.add(CodeInvalidValue, p+".docItemUnitOriginalPriceWoVat", "", "unit prices are not negative; a storno negates quantities")
		}
		if disc, price := it.DocItemUnitDiscountAmount, it.DocItemUnitOriginalPriceWoVat; disc.IsNegative() || disc.GreaterThan(price.Amount) {
			c.add(CodeInvalidValue, p+".docItemUnitDiscountAmount", "", "a unit discount is between 0 and the unit price %s", price.String())
		}
		var g TaxGroup
		var gok bool
		if c.required(p+".docItemVatGroup", it.DocItemVatGroup) {
			if g, gok = c.cb.TaxGroup(it.DocItemVatGroup); !gok {
				c.add(CodeTaxGroupNotFound, p+".docItemVatGroup", CBTaxGroups, "unknown tax group %q", it.DocItemVatGroup)
			}
		}
		if !c.required(p+".docItemTaxIndicator", it.DocItemTaxIndicator) {
			continue
		}
		ti, ok := c.cb.TaxIndicator(it.DocItemTaxIndicator)
		if !ok {
			c.add(CodeTaxIndicatorNotFound, p+".docItemTaxIndicator", CBTaxIndicators, "unknown tax indicator %q", it.DocItemTaxIndicator)
			continue
		}
		if !c.cb.IndicatorAllowed(d.Header.DocType, ti.Code) {
			c.add(CodeTaxIndicatorNotFound, p+".docItemTaxIndicator", CBTaxIndicators, "tax indicator %s is not used with document type %s", ti.Code, d.Header.DocType)
		}
		if gok && !contains(ti.TaxGroupCodes, g.Code) {
			c.add(CodeTaxIndicatorNotFound, p+".docItemTaxIndicator", CBTaxIndicators, "tax indicator %s is used with tax group %s, not %s", ti.Code, strings.Join(ti.TaxGroupCodes, " or "), g.Code)
		}
		if gok && !it.DocItemVat.Equal(money.FromInt(int64(g.Percent))) {
			c.add(CodeItemTotals, p+".docItemVat", CBTaxGroups, "rate of %s is %d", g.Code, g.Percent)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// CheckTotals recomputes every computed amount by the formulas (see the
// package's rounding comment) and reports each that differs: line amounts
// as E10203, docTotals as E10201, vatTotals as E10202. docGrossAmountR is
// accepted either at two decimals or rounded to whole units, because UJP
// does not say which "R" means; every other amount must match exactly.
func CheckTotals(d *Document, cb *Codebooks) Problems {
	want := cloneForTotals(d)
	if err := ComputeTotals(want, cb); err != nil {
		return Problems{{Path: "docItems", Message: err.Error(), Code: CodeTaxIndicatorNotFound, Codebook: CBTaxIndicators}}
	}
	var ps Problems
	cmp := func(code, path string, got, exp Amount) {
		if !got.Equal(exp.Amount) {
			ps = append(ps, Problem{Path: path, Code: code, Message: fmt.Sprintf("is %s; the formula gives %s", got.String(), exp.String())})
		}
	}
	for i := range d.DocItems {
		g, w := d.DocItems[i], want.DocItems[i]
		p := fmt.Sprintf("docItems[%d].", i)
		cmp(CodeItemTotals, p+"docItemUnitPriceWoVat", g.DocItemUnitPriceWoVat, w.DocItemUnitPriceWoVat)
		cmp(CodeItemTotals, p+"docItemUnitVat", g.DocItemUnitVat, w.DocItemUnitVat)
		cmp(CodeItemTotals, p+"docItemTotalOriginalPriceWoVat", g.DocItemTotalOriginalPriceWoVat, w.DocItemTotalOriginalPriceWoVat)
		cmp(CodeItemTotals, p+"docItemTotalPriceWoVat", g.DocItemTotalPriceWoVat, w.DocItemTotalPriceWoVat)
		cmp(CodeItemTotals, p+"docItemTotalVat", g.DocItemTotalVat, w.DocItemTotalVat)
		cmp(CodeItemTotals, p+"docItemTotalPriceWVat", g.DocItemTotalPriceWVat, w.DocItemTotalPriceWVat)
	}
	gt, wt := d.DocTotals, want.DocTotals
	cmp(CodeDocTotals, "docTotals.docNetAmount", gt.DocNetAmount, wt.DocNetAmount)
	cmp(CodeDocTotals, "docTotals.docDiscountAmount", gt.DocDiscountAmount, wt.DocDiscountAmount)
	cmp(CodeDocTotals, "docTotals.docNetAmountDisc", gt.DocNetAmountDisc, wt.DocNetAmountDisc)
	cmp(CodeDocTotals, "docTotals.docVatAmount", gt.DocVatAmount, wt.DocVatAmount)
	cmp(CodeDocTotals, "docTotals.docGrossAmount", gt.DocGrossAmount, wt.DocGrossAmount)
	whole := wt.DocGrossAmount.Round(0)
	if !gt.DocGrossAmountR.Equal(wt.DocGrossAmount.Amount) && !gt.DocGrossAmountR.Equal(whole) {
		ps = append(ps, Problem{Path: "docTotals.docGrossAmountR", Code: CodeDocTotals, Message: fmt.Sprintf("is %s; expected %s or %s", gt.DocGrossAmountR, wt.DocGrossAmount, whole)})
	}
	cmp(CodeDocTotals, "docTotals.docFinalAmount", gt.DocFinalAmount, Amount{gt.DocGrossAmountR.Sub(gt.DocAvansAmount.Amount)})
	if d.Header.DocStorno != StornoVoid && (gt.DocAvansAmount.IsNegative() || gt.DocAvansAmount.GreaterThan(gt.DocGrossAmountR.Amount)) {
		ps = append(ps, Problem{Path: "docTotals.docAvansAmount", Code: CodeDocTotals, Message: "an advance is between 0 and the gross amount"})
	}
	if len(d.VatTotals) != len(want.VatTotals) {
		ps = append(ps, Problem{Path: "vatTotals", Code: CodeVatTotals, Message: fmt.Sprintf("has %d groups; the lines give %d (one per tax group and tax indicator)", len(d.VatTotals), len(want.VatTotals))})
		return ps
	}
	for i, w := range want.VatTotals {
		// Match by key rather than position: the order of groups carries
		// no meaning.
		j := -1
		for k, g := range d.VatTotals {
			if g.VatCode == w.VatCode && g.VatTaxIndicator == w.VatTaxIndicator {
				j = k
			}
		}
		if j < 0 {
			ps = append(ps, Problem{Path: fmt.Sprintf("vatTotals[%d]", i), Code: CodeVatTotals, Message: fmt.Sprintf("no group for tax group %s and indicator %s", w.VatCode, w.VatTaxIndicator)})
			continue
		}
		g := d.VatTotals[j]
		p := fmt.Sprintf("vatTotals[%d].", j)
		cmp(CodeVatTotals, p+"vatPercent", g.VatPercent, w.VatPercent)
		cmp(CodeVatTotals, p+"vatTaxableAmount", g.VatTaxableAmount, w.VatTaxableAmount)
		cmp(CodeVatTotals, p+"vatAmount", g.VatAmount, w.VatAmount)
		cmp(CodeVatTotals, p+"vatTotalAmount", g.VatTotalAmount, w.VatTotalAmount)
		if ti, _ := cb.TaxIndicator(w.VatTaxIndicator); ti.VatImpact == ImpactPrenesen && (g.VatTaxIndicatorNote == nil || *g.VatTaxIndicatorNote == "") {
			ps = append(ps, Problem{Path: p + "vatTaxIndicatorNote", Code: CodeVatIndicatorNote, Codebook: CBTaxIndicators, Message: "a reverse-charge group carries the indicator's note: " + ti.Note})
		}
	}
	return ps
}

// cloneForTotals copies what ComputeTotals reads and writes, so that
// checking never modifies the caller's document.
func cloneForTotals(d *Document) *Document {
	c := *d
	c.DocItems = append([]Item(nil), d.DocItems...)
	c.VatTotals = nil
	return &c
}
