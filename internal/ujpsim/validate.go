package ujpsim

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Validation of a sent document, written from the reference: the required
// fields and maximum lengths of the field codebook (sifrarnici-field-
// codebook.txt; З required, О optional, Ш from a code list, П written by the
// sender, * required when its condition holds), the code lists the
// simulator serves (codes and the names beside them,
// api-specification.txt:55-71), the totals formulas and vatImpact
// (api-specification.txt:72-98, totals.go), date order (E50071-E50073) and
// the parties against the registry (api-specification.txt:38-43). Every
// problem is collected; the answer reports them all.
//
// Codes are those of the JSON Receiver (error-codes.txt:58-160). A missing
// required field is E4019; a value of the wrong form or length is E4013
// (the JSON schema): the JSON Receiver's E5011 is "No OCSP responses", not
// eInvoiceApi's "Invalid value for field".

type checker struct {
	cl    *codeLists
	items []ErrorItem
}

func (c *checker) add(code, prop, codebook, format string, args ...any) {
	c.items = append(c.items, ErrorItem{ErrorCode: code, Property: prop, Codebook: codebook, ErrorMessage: fmt.Sprintf(format, args...)})
}

// required reports a missing З field (E4019) and says whether it is there.
func (c *checker) required(prop, v string) bool {
	if strings.TrimSpace(v) == "" {
		c.add("E4019", prop, "", "Missing required fields: %s", prop)
		return false
	}
	return true
}

// maxLen reports a value longer than the codebook's length (E4013).
func (c *checker) maxLen(prop, v string, n int) {
	if utf8.RuneCountInString(v) > n {
		c.add("E4013", prop, "", "JSON schema validation failed: %s is longer than %d characters", prop, n)
	}
}

// text checks a free-text field: required or not, and its length.
func (c *checker) text(prop, v string, req bool, n int) {
	if req && !c.required(prop, v) {
		return
	}
	c.maxLen(prop, v, n)
}

// date reads an optional date field (YYYY-MM-DD); "" when absent or bad.
func (c *checker) date(prop string, v *string) string {
	if v == nil || *v == "" {
		return ""
	}
	if _, ok := parseDate(*v); !ok {
		c.add("E4013", prop, "", "JSON schema validation failed: %s is not a date YYYY-MM-DD", prop)
		return ""
	}
	return *v
}

var edbRE = regexp.MustCompile(`^[0-9]{13}$`)

// registry is what the send handler looked up: the companies of the
// document's parties, by tax number.
type registry map[string]Company

// validate returns every problem of d. reg holds the registry entries of
// its parties.
func validate(d *document, cl *codeLists, reg registry) []ErrorItem {
	c := &checker{cl: cl}
	dt := c.header(d)
	c.references(d, dt)
	c.parties(d, reg)
	c.payment(d)
	c.lines(d, dt)
	c.vatTotalsFields(d)
	if len(d.DocItems) > 0 {
		c.checkTotals(d)
	}
	return c.items
}

func (c *checker) header(d *document) docTypeEntry {
	h := d.Header
	var dt docTypeEntry
	// docType ЗШ, docTypeName ЗП: the code and its name from the list
	// (sifrarnici-field-codebook.txt:2-23).
	if c.required("header.docType", h.DocType) {
		var ok bool
		if dt, ok = c.cl.docType(h.DocType); !ok {
			c.add("E1017", "header.docType", "document-types", "Document type not found: %q", h.DocType)
		}
	}
	if c.required("header.docTypeName", h.DocTypeName) && dt.Code != "" && h.DocTypeName != dt.Name {
		c.add("E50079", "header.docTypeName", "document-types", "Document type mismatch: the name of %s is %q", dt.Code, dt.Name)
	}
	// docNumber and docId are not in the published codebook; the
	// simulator bounds them at 255 characters (its own limit).
	c.text("header.docNumber", h.DocNumber, true, 255)
	c.text("header.docId", h.DocID, true, 255)
	docDate := ""
	if c.required("header.docDate", h.DocDate) {
		docDate = c.date("header.docDate", &h.DocDate)
	}
	// E50071-E50073: a date after docDate. The same day is allowed: UJP's
	// own current-status examples have docDate = docDeliveryDate
	// (api-specification.txt:925-926, 1128-1129).
	after := func(code, prop string, v *string, what string) {
		day := c.date(prop, v)
		if day != "" && docDate != "" && day > docDate {
			c.add(code, prop, "", "%s is not before docDate: %s is after %s", what, day, docDate)
		}
	}
	after("E50071", "header.docDeliveryDate", h.DocDeliveryDate, "docDeliveryDate")
	after("E50072", "header.docTurnoverDate", h.DocTurnoverDate, "docTurnoverDate")
	c.date("header.docPeriodStartDate", h.DocPeriodStartDate)
	c.date("header.docPeriodEndDate", h.DocPeriodEndDate)
	for i, r := range d.DocReferences {
		after("E50073", fmt.Sprintf("docReferences[%d].docDateRef", i), r.DocDateRef, "docDateRef")
	}

	switch h.DocStorno {
	case stornoNone:
		if h.VoidReasonCode != nil || h.CorrectionReasonCode != nil {
			c.add("E4013", "header", "", "JSON schema validation failed: a void or correction reason with docStorno 0")
		}
	case stornoVoid:
		// A storno: negative quantities and totals, a void reason
		// (api-specification.txt:802-804), and its original.
		if !c.required("header.voidReasonCode", deref(h.VoidReasonCode)) {
			break
		}
		if _, ok := c.cl.voidReason(*h.VoidReasonCode); !ok {
			c.add("E1006", "header.voidReasonCode", "void-reasons", "Void reason not found: %q", *h.VoidReasonCode)
		}
	case stornoCorrection:
		// A correction: a full replacement with a correction reason
		// (api-specification.txt:805-806).
		code := deref(h.CorrectionReasonCode)
		if code == "" {
			c.add("E1031", "header.correctionReasonCode", "correction-reason", "Invalid correction request: a correction reason is required")
		} else if _, ok := c.cl.correctionReason(code); !ok {
			c.add("E1031", "header.correctionReasonCode", "correction-reason", "Invalid correction request: unknown correction reason %q", code)
		}
	default:
		c.add("E4013", "header.docStorno", "", "JSON schema validation failed: docStorno is 0, 1 (storno) or 2 (correction)")
	}
	return dt
}

func (c *checker) references(d *document, dt dtLike) {
	if dt.mandatoryRef() && len(d.DocReferences) == 0 {
		c.add("E4019", "docReferences", "document-types", "Missing required fields: document type %s requires a reference", d.Header.DocType)
	}
	sys := 0
	for i, r := range d.DocReferences {
		p := fmt.Sprintf("docReferences[%d].", i)
		// docTypeRef ЗШ*, docNameRef ЗП*: required with a reference
		// (sifrarnici-field-codebook.txt:26-43).
		if r.DocTypeRef == "ST" {
			c.add("E1029", p+"docTypeRef", "ref-document-types", "docTypeRef cannot be 'ST' for this document type")
		} else if c.required(p+"docTypeRef", r.DocTypeRef) {
			if rt, ok := c.cl.refType(r.DocTypeRef); !ok {
				c.add("E1021", p+"docTypeRef", "ref-document-types", "Document reference not found: unknown reference type %q", r.DocTypeRef)
			} else if c.required(p+"docNameRef", r.DocNameRef) && r.DocNameRef != rt.Name {
				c.add("E10211", p+"docNameRef", "ref-document-types", "Document reference name mismatch: the name of %s is %q", rt.Code, rt.Name)
			}
		}
		c.text(p+"docNumberRef", r.DocNumberRef, true, 255)
		if r.DocTypeRef == refSystem {
			sys++
		}
	}
	switch d.Header.DocStorno {
	case stornoVoid:
		if d.systemReference() == "" {
			c.add("E1024", "docReferences", "ref-document-types", "Voided document must reference a document (docTypeRef %s, docNumberRef its EUID)", refSystem)
		}
	case stornoCorrection:
		if d.systemReference() == "" {
			c.add("E1027", "docReferences", "ref-document-types", "Corrected document must reference a document (docTypeRef %s, docNumberRef its EUID)", refSystem)
		}
	}
	if d.Header.DocStorno != stornoNone && sys > 1 {
		c.add("E1025", "docReferences", "", "Invalid void request: one %s reference names the original", refSystem)
	}
}

// dtLike lets references read an unknown document type as a zero entry.
type dtLike = docTypeEntry

func (d docTypeEntry) mandatoryRef() bool { return d.IsReferenceMandatory }

// country checks a party's country code and name against /countries.
func (c *checker) country(codeProp, code, nameProp, name string) (countryEntry, bool) {
	if !c.required(codeProp, code) {
		return countryEntry{}, false
	}
	co, ok := c.cl.country(code)
	if !ok {
		c.add("E10011", codeProp, "countries", "A non-existent country was provided for the company: %q", code)
		return co, false
	}
	if c.required(nameProp, name) && name != co.Name {
		c.add("E10012", nameProp, "countries", "An incorrect country code was provided for the company: the name of %s is %q", co.Code, co.Name)
	}
	return co, true
}

// addr checks an address: street З 60, number З 10, postal code ЗШ 5, city
// ЗШ 60 (sifrarnici-field-codebook.txt:121-148).
func (c *checker) addr(prop string, a address) {
	c.text(prop+".streetAddress", a.StreetAddress, true, 60)
	c.text(prop+".streetNumber", a.StreetNumber, true, 10)
	c.text(prop+".postalCode", a.PostalCode, true, 5)
	c.text(prop+".city", a.City, true, 60)
}

func (c *checker) opt(prop string, v *string, n int) { c.maxLen(prop, deref(v), n) }

// party is a party's registry check: the tax number exists, under the
// same name, VAT number, city and postal code (api-specification.txt:38-43;
// E10001-E10008 of the JSON Receiver, error-codes.txt:60-71). Names are
// compared exactly.
type partyCodes struct{ name, vat string }

func (c *checker) registryCheck(prefix string, tin, name string, vat *string, a address, reg registry, notFound string, codes partyCodes) {
	co, ok := reg[tin]
	if !ok {
		msg := "Company not found"
		if notFound == "E1014" {
			msg = "Tax payer not found"
		}
		c.add(notFound, prefix+"Tin", "", "%s: %s", msg, tin)
		return
	}
	if name != "" && name != co.Name {
		c.add(codes.name, prefix+"Name", "", "An incorrect company name was provided: the registry has %q", co.Name)
	}
	// The VAT number is entered when the party is a VAT payer
	// (sifrarnici-field-codebook.txt:101-106, 620-625).
	switch {
	case co.VatNumber != nil && deref(vat) == "":
		c.add("E10008", prefix+"VatNumber", "", "VatNumber missing! The registry has %q", *co.VatNumber)
	case deref(vat) != "" && (co.VatNumber == nil || *co.VatNumber != *vat):
		c.add(codes.vat, prefix+"VatNumber", "", "An incorrect VAT number was provided for the company")
	}
	if a.City != "" && a.City != co.Address.City {
		c.add("E10004", prefix+"Address.city", "", "An incorrect city was provided for the company: the registry has %q", co.Address.City)
	}
	if a.PostalCode != "" && a.PostalCode != co.Address.Zip {
		c.add("E10005", prefix+"Address.postalCode", "", "An incorrect postal code was provided for the company: the registry has %q", co.Address.Zip)
	}
}

func (c *checker) parties(d *document, reg registry) {
	s := d.Seller
	sc, _ := c.country("seller.sellerCCode", s.SellerCCode, "seller.sellerCName", s.SellerCName)
	c.text("seller.sellerName", s.SellerName, true, 80)
	c.opt("seller.sellerVatNumber", s.SellerVatNumber, 30)
	c.addr("seller.sellerAddress", s.SellerAddress)
	c.opt("seller.sellerSubsidiaryCode", s.SellerSubsidiaryCode, 20)
	c.opt("seller.sellerSubsidiaryName", s.SellerSubsidiaryName, 100)
	c.opt("seller.sellerSubsidiaryAddress", s.SellerSubsidiaryAddress, 100)
	if strings.TrimSpace(s.SellerTin) == "" {
		c.add("E10001", "seller.sellerTin", "", "Missing TIN during company validation process")
	} else if c.maxLen("seller.sellerTin", s.SellerTin, 30); sc.Code == "MK" && !edbRE.MatchString(s.SellerTin) {
		c.add("E4013", "seller.sellerTin", "", "JSON schema validation failed: a Macedonian tax number has 13 digits")
	} else {
		c.registryCheck("seller.seller", s.SellerTin, s.SellerName, s.SellerVatNumber, s.SellerAddress, reg, "E1000", partyCodes{"E10002", "E10003"})
		if co, ok := reg[s.SellerTin]; ok && sc.Code != "" && co.CountryCode != "" && co.CountryCode != sc.Code {
			c.add("E10012", "seller.sellerCCode", "countries", "An incorrect country code was provided for the company: the registry has %q", co.CountryCode)
		}
	}

	b := d.Buyer
	bc, _ := c.country("buyer.buyerCCode", b.BuyerCCode, "buyer.buyerCName", b.BuyerCName)
	c.text("buyer.buyerName", b.BuyerName, true, 80)
	c.opt("buyer.buyerVatNumber", b.BuyerVatNumber, 30)
	c.addr("buyer.buyerAddress", b.BuyerAddress)
	c.opt("buyer.buyerSubsidiaryCode", b.BuyerSubsidiaryCode, 20)
	c.opt("buyer.buyerSubsidiaryName", b.BuyerSubsidiaryName, 100)
	c.opt("buyer.buyerSubsidiaryAddress", b.BuyerSubsidiaryAddress, 100)
	c.maxLen("buyer.buyerTin", b.BuyerTin, 30)
	// buyerTin ЗШ*: required for a resident buyer
	// (sifrarnici-field-codebook.txt:610-618).
	if bc.Code == "MK" {
		switch {
		case strings.TrimSpace(b.BuyerTin) == "":
			c.add("E10001", "buyer.buyerTin", "", "Missing TIN during company validation process")
		case !edbRE.MatchString(b.BuyerTin):
			c.add("E4013", "buyer.buyerTin", "", "JSON schema validation failed: a Macedonian tax number has 13 digits")
		default:
			c.registryCheck("buyer.buyer", b.BuyerTin, b.BuyerName, b.BuyerVatNumber, b.BuyerAddress, reg, "E1014", partyCodes{"E10006", "E10007"})
		}
	}

	// The sender, when another party sends for the seller (UJP04 fields).
	// Absent when the seller sends: UJP's own status answers carry an
	// empty senderTin (api-specification.txt:934).
	if sn := d.Sender; sn != nil {
		c.country("sender.senderCCode", sn.SenderCCode, "sender.senderCName", sn.SenderCName)
		c.text("sender.senderTin", sn.SenderTin, true, 30)
		c.text("sender.senderName", sn.SenderName, true, 80)
		c.opt("sender.senderVatNumber", sn.SenderVatNumber, 30)
		c.addr("sender.senderAddress", sn.SenderAddress)
		c.opt("sender.senderSubsidiaryCode", sn.SenderSubsidiaryCode, 20)
		c.opt("sender.senderSubsidiaryName", sn.SenderSubsidiaryName, 100)
		c.opt("sender.senderSubsidiaryAddress", sn.SenderSubsidiaryAddress, 100)
		if edbRE.MatchString(sn.SenderTin) {
			if co, ok := reg[sn.SenderTin]; !ok {
				c.add("E1000", "sender.senderTin", "", "Company not found: %s", sn.SenderTin)
			} else if sn.SenderName != co.Name {
				c.add("E10002", "sender.senderName", "", "An incorrect company name was provided: the registry has %q", co.Name)
			}
		}
	}
}

func (c *checker) payment(d *document) {
	p := d.DocPayment
	// docPaymentTypeCode ЗШ, docPaymentTypeDesc ЗП
	// (sifrarnici-field-codebook.txt:1187-1200).
	if c.required("docPayment.docPaymentTypeCode", p.DocPaymentTypeCode) {
		pt, ok := c.cl.paymentType(p.DocPaymentTypeCode)
		switch {
		case !ok:
			c.add("E50074", "docPayment.docPaymentTypeCode", "payment-types", "Payment type not found: %q", p.DocPaymentTypeCode)
		case c.required("docPayment.docPaymentTypeDesc", p.DocPaymentTypeDesc) && p.DocPaymentTypeDesc != pt.Description:
			c.add("E50075", "docPayment.docPaymentTypeDesc", "payment-types", "Payment type description mismatch: %s is %q", pt.Code, pt.Description)
		}
	}
	c.date("docPayment.docPaymentTypeDueDate", p.DocPaymentTypeDueDate)
	c.date("docPayment.docCurrencyDate", p.DocCurrencyDate)
	if p.DocPaymentTypeDueDays != nil && *p.DocPaymentTypeDueDays < 0 {
		c.add("E4013", "docPayment.docPaymentTypeDueDays", "", "JSON schema validation failed: due days are not negative")
	}
	// docCurrency ОП, docCurrencyCode ОШ (sifrarnici-field-codebook.txt:
	// 1226-1239): optional; when given, from /currency, with its name.
	code := deref(p.DocCurrencyCode)
	if code == "" {
		if deref(p.DocCurrency) != "" {
			c.add("E4019", "docPayment.docCurrencyCode", "currency", "Missing required fields: docCurrencyCode with docCurrency")
		}
		return
	}
	cur, ok := c.cl.currency(code)
	if !ok {
		c.add("E50076", "docPayment.docCurrencyCode", "currency", "Currency not found: %q", code)
		return
	}
	if n := deref(p.DocCurrency); n != "" && n != cur.Name {
		c.add("E50077", "docPayment.docCurrency", "currency", "Currency name mismatch: %s is %q", cur.Code, cur.Name)
	}
	if p.DocCurrencyExchRate.Set && !p.DocCurrencyExchRate.V.IsPositive() {
		c.add("E4013", "docPayment.docCurrencyExchRate", "", "JSON schema validation failed: an exchange rate is positive")
	}
}

// lines checks each line's required fields, its codes, that the indicator
// is allowed for the document type (/doc-type-x-tax-indicator) and that
// the line's group is one of the indicator's.
func (c *checker) lines(d *document, dt docTypeEntry) {
	if len(d.DocItems) == 0 {
		if dt.Code == "" || dt.HasItems {
			c.add("E4019", "docItems", "document-types", "Missing required fields: docItems (at least one line)")
		}
		return
	}
	storno := d.Header.DocStorno == stornoVoid
	for i, it := range d.DocItems {
		p := fmt.Sprintf("docItems[%d].", i)
		if it.DocItemLineNo != i+1 {
			c.add("E4013", p+"docItemLineNo", "", "JSON schema validation failed: lines are numbered 1, 2, … in order; expected %d", i+1)
		}
		c.text(p+"docItemDesc", it.DocItemDesc, true, 500)
		for field, n := range map[string]Num{"docItemQty": it.DocItemQty, "docItemUnitOriginalPriceWoVat": it.DocItemUnitOriginalPriceWoVat,
			"docItemUnitPriceWoVat": it.DocItemUnitPriceWoVat, "docItemVat": it.DocItemVat, "docItemTotalOriginalPriceWoVat": it.DocItemTotalOriginalPriceWoVat,
			"docItemTotalPriceWoVat": it.DocItemTotalPriceWoVat, "docItemTotalPriceWVat": it.DocItemTotalPriceWVat} {
			if !n.Set {
				c.add("E4019", p+field, "", "Missing required fields: %s", p+field)
			}
		}
		switch {
		case it.DocItemQty.V.IsZero():
		case storno && it.DocItemQty.V.IsPositive():
			c.add("E1025", p+"docItemQty", "", "Invalid void request: a storno's quantities are negative")
		case !storno && it.DocItemQty.V.IsNegative():
			c.add("E4013", p+"docItemQty", "", "JSON schema validation failed: a quantity is positive (a storno negates them)")
		}
		if it.DocItemQty.Set && it.DocItemQty.V.IsZero() {
			c.add("E4013", p+"docItemQty", "", "JSON schema validation failed: a quantity is not zero")
		}
		if it.DocItemUnitOriginalPriceWoVat.V.IsNegative() {
			c.add("E4013", p+"docItemUnitOriginalPriceWoVat", "", "JSON schema validation failed: a unit price is not negative")
		}
		if dsc := it.DocItemUnitDiscountAmount.V; dsc.IsNegative() || dsc.GreaterThan(it.DocItemUnitOriginalPriceWoVat.V) {
			c.add("E4013", p+"docItemUnitDiscountAmount", "", "JSON schema validation failed: a unit discount is between 0 and the unit price")
		}
		// docItemVatGroup ЗШ, docItemTaxIndicator ЗШ
		// (sifrarnici-field-codebook.txt:697-722).
		_, _, gok := c.cl.taxGroup(it.DocItemVatGroup)
		if c.required(p+"docItemVatGroup", it.DocItemVatGroup) && !gok {
			c.add("E1004", p+"docItemVatGroup", "tax-groups", "Tax group not found: %q", it.DocItemVatGroup)
		}
		if !c.required(p+"docItemTaxIndicator", it.DocItemTaxIndicator) {
			continue
		}
		tis := c.cl.indicator(it.DocItemTaxIndicator)
		switch {
		case len(tis) == 0:
			c.add("E1009", p+"docItemTaxIndicator", "tax-indicators", "Tax indicator not found: %q", it.DocItemTaxIndicator)
			continue
		case dt.Code != "" && !c.cl.allowedFor(dt.Code, it.DocItemTaxIndicator):
			c.add("E1009", p+"docItemTaxIndicator", "doc-type-x-tax-indicator", "Tax indicator not found: %s is not used with document type %s",
				it.DocItemTaxIndicator, dt.Code)
		}
		if !gok {
			continue
		}
		var groups []string
		found := false
		for _, ti := range tis {
			groups = append(groups, ti.TaxGroupCode)
			found = found || ti.TaxGroupCode == it.DocItemVatGroup
		}
		if !found {
			c.add("E1004", p+"docItemVatGroup", "tax-indicators", "Tax group not found: %s is used with %s, not %s",
				it.DocItemTaxIndicator, strings.Join(groups, " or "), it.DocItemVatGroup)
		}
	}
}

// vatTotalsFields checks the required fields of each vatTotals group
// (sifrarnici-field-codebook.txt:940-1173): vatTaxIndicator ЗШ, its note
// ОП 200, vatCode ЗШ, vatPercent ЗП.
func (c *checker) vatTotalsFields(d *document) {
	if len(d.DocItems) > 0 && len(d.VatTotals) == 0 {
		c.add("E4019", "vatTotals", "", "Missing required fields: vatTotals")
	}
	for j, v := range d.VatTotals {
		p := fmt.Sprintf("vatTotals[%d].", j)
		if c.required(p+"vatTaxIndicator", v.VatTaxIndicator) && len(c.cl.indicator(v.VatTaxIndicator)) == 0 {
			c.add("E1009", p+"vatTaxIndicator", "tax-indicators", "Tax indicator not found: %q", v.VatTaxIndicator)
		}
		c.opt(p+"vatTaxIndicatorNote", v.VatTaxIndicatorNote, 200)
		if _, _, ok := c.cl.taxGroup(v.VatCode); c.required(p+"vatCode", v.VatCode) && !ok {
			c.add("E1004", p+"vatCode", "tax-groups", "Tax group not found: %q", v.VatCode)
		}
		if !v.VatPercent.Set {
			c.add("E4019", p+"vatPercent", "", "Missing required fields: %svatPercent", p)
		}
	}
}
