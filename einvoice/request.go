package einvoice

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/money"
)

// Request is the body of POST /v1/einvoices (and, within
// CorrectionRequest, of POST /v1/einvoices/{id}/correction): our own JSON,
// from which Build makes UJP's document. The seller is not in it: it is
// the company the request is scoped to, filled from its registry data.
type Request struct {
	// DocumentType is a code of the document-types codebook; "100"
	// (invoice) when empty.
	DocumentType string `json:"documentType,omitempty" example:"100" doc:"The kind of document: a document-types code (GET /v1/codebooks/document-types). 100 (invoice) when left out."`
	// Number is the issuer's own document number (UJP docNumber), required.
	Number string `json:"number" example:"F-2026-0042" doc:"Your document number, as printed on the invoice (UJP's docNumber), unique in your numbering. Required."`
	// IssueDate (docDate) and SupplyDate (docTurnoverDate, the transaction
	// date; IssueDate when null) are YYYY-MM-DD.
	IssueDate  string  `json:"issueDate" example:"2026-05-04" doc:"The issue date, YYYY-MM-DD (UJP's docDate)."`
	SupplyDate *string `json:"supplyDate,omitempty" example:"2026-04-30" doc:"The date of the supply (transaction), YYYY-MM-DD, not after issueDate (UJP's docTurnoverDate); the buyer's decision deadline counts from it. issueDate when left out."`
	// ClientReference is the caller's idempotency handle, unique per
	// company: the same body again returns the existing e-invoice. 1 to
	// MaxClientReference characters, not all white space: an empty one
	// would be one more handle all such invoices share.
	ClientReference *string     `json:"clientReference,omitempty" minLength:"1" maxLength:"200" pattern:"\\S" example:"order-1001" doc:"Your own reference for this e-invoice, unique per company: the same body again returns the existing e-invoice, another body 409 client_reference_conflict. 1 to 200 characters (the clientReference filter of GET /v1/einvoices takes as many), not only white space."`
	Notes           *string     `json:"notes,omitempty" example:"Рок за плаќање 15 дена од денот на издавање." doc:"Free text printed on the invoice (UJP's docNotes)."`
	Buyer           Party       `json:"buyer" doc:"Who the invoice is to. A buyer in MK is checked against UJP's registry: taxNumber must be known there and name must be the registry's name (422 at buyer.taxNumber or buyer.name, codebook companies)."`
	Sender          *Party      `json:"sender,omitempty" doc:"The party that ships the goods, when it is not the seller (optional)."`
	References      []Reference `json:"references" maxItems:"100" doc:"Documents this one refers to: an order, a contract, a customs declaration (up to 100; [] for none)."`
	Payment         Payment     `json:"payment" doc:"How and when the buyer pays, and the document's currency."`
	Lines           []Line      `json:"lines" maxItems:"1000" doc:"The items: 1 to 1000 lines, numbered in this order."`
	Advance         *Advance    `json:"advance,omitempty" doc:"An advance the buyer already paid (and was invoiced for), deducted from the amount to pay (optional)."`
	ExpectedTotals  *Totals     `json:"expectedTotals,omitempty" doc:"The totals you computed (optional): when given, the service compares them with its own (UJP's formulas) and answers 422 totals_mismatch, naming each total that differs, instead of issuing a document with other amounts."`
}

// CorrectionRequest is the body of POST /v1/einvoices/{id}/correction, as
// the spec gives it: the issue body (the complete replacement document)
// with docStorno 2, the correction reason (correction-reasons codebook,
// C0x) and an optional comment, all at the top level.
type CorrectionRequest struct {
	Request
	DocStorno int     `json:"docStorno" enum:"2" example:"2" doc:"Always 2: marks the document as a correction (UJP's docStorno)."`
	Reason    string  `json:"reason" maxLength:"10" example:"C01" doc:"Why the original is corrected: a correction-reasons code, C0x (GET /v1/codebooks/correction-reasons)."`
	Comment   *string `json:"comment,omitempty" maxLength:"500" nullable:"true" example:"Погрешна цена во ставка 1" doc:"Free text sent with the reason (UJP's correctionComment), up to 500 characters."`
}

// Fingerprint is Request.Fingerprint for the whole correction body.
func (c *CorrectionRequest) Fingerprint() []byte {
	b, _ := json.Marshal(c)
	return b
}

// Build is Request.Build with the correction's own fields checked too, all
// field errors reported together; the caller marks the document as the
// correction of its original (ujpdoc.MarkCorrection) once it knows it.
func (c *CorrectionRequest) Build(seller ujpdoc.Seller, docID string, cb *ujpdoc.Codebooks) (*ujpdoc.Document, error) {
	var fe denar.FieldErrors
	if c.DocStorno != int(ujpdoc.StornoCorrection) {
		fe.Add("docStorno", "must be 2 (a correction)")
	}
	if e := CheckCorrectionReason("reason", c.Reason, cb); e != nil {
		fe = append(fe, *e)
	}
	if c.Comment != nil && len([]rune(*c.Comment)) > 500 {
		fe.Add("comment", "is longer than 500 characters")
	}
	doc, err := c.Request.Build(seller, docID, cb)
	if len(fe) == 0 {
		return doc, err
	}
	var de *denar.Error
	if err == nil || (errors.As(err, &de) && de.Code == denar.ECodeValidation) {
		if de != nil {
			fe = append(fe, de.Fields...)
		}
		return nil, fe.Err()
	}
	return nil, err
}

// Party is the spec's party object. Country is a countries codebook code,
// "MK" when empty; TaxNumber (ЕДБ) is required for MK parties.
type Party struct {
	Country          string       `json:"country,omitempty" example:"MK" doc:"The party's country, a countries code (GET /v1/codebooks/countries). MK when left out."`
	TaxNumber        string       `json:"taxNumber" example:"4030000000010" doc:"For a party in MK (the default country), required: its ЕДБ, the bare 13 digits, the 13th the mod-11 check digit of the first 12 (docs/errors.md, Tax numbers); a wrong length or check digit is 422 validation_failed at this field (UJP E5011). A party of another country leaves it empty and gives foreignTaxNumber."`
	ForeignTaxNumber *string      `json:"foreignTaxNumber,omitempty" example:"DE123456789" doc:"The tax number a party of another country has there (with country set to that country's code)."`
	VatNumber        *string      `json:"vatNumber,omitempty" example:"МК4030000000010" doc:"The party's VAT number, as UJP's registry spells it (МК and the ЕДБ, the МК in Cyrillic). For the buyer, leave it out: the service takes it from UJP's registry (one given must be the registry's, else 422 at buyer.vatNumber)."`
	Name             string       `json:"name" example:"Тест Купувач ДОО Скопје" doc:"The party's name. For a buyer in MK, exactly as UJP's registry has it (GET /v1/companies shows your own companies' registry names)."`
	Address          PartyAddress `json:"address" doc:"The party's address; each part may be null."`
	SubsidiaryCode   *string      `json:"subsidiaryCode,omitempty" example:"02" doc:"The code of the party's branch (подружница) the invoice is for, if any."`
	SubsidiaryName   *string      `json:"subsidiaryName,omitempty" example:"Продавница Центар" doc:"The name of that branch."`
	Contact          *string      `json:"contact,omitempty" example:"Марија Николовска, 02 3123 456" doc:"A contact person or phone number."`
	Email            *string      `json:"email,omitempty" example:"smetkovodstvo@example.mk" doc:"The party's e-mail address."`
}

// PartyAddress is the address of a party; each part may be null.
type PartyAddress struct {
	Street     *string `json:"street" example:"ул. Македонија" doc:"Street name."`
	Number     *string `json:"number" example:"2" doc:"House number."`
	PostalCode *string `json:"postalCode" example:"1000" doc:"Postal code."`
	City       *string `json:"city" example:"Скопје" doc:"City."`
}

// Reference is a related document: Type from the ref-document-types
// codebook (SYS is reserved for storno and correction).
type Reference struct {
	Type   string  `json:"type" example:"NAR" doc:"What the referred document is: a ref-document-types code (GET /v1/codebooks/ref-document-types), such as NAR (order) or DOG (contract). SYS (another e-invoice) is set by the service on a storno or correction and cannot be sent."`
	Number string  `json:"number" example:"НР-2026-117" doc:"The referred document's number."`
	Date   *string `json:"date,omitempty" example:"2026-04-28" doc:"The referred document's date, YYYY-MM-DD, not after issueDate."`
}

// Payment terms and currency. ExchangeRate (denars per unit, decimal
// string) and ExchangeRateDate are required for a currency other than MKD.
type Payment struct {
	TypeCode         string  `json:"typeCode" example:"P12" doc:"How the buyer pays: a payment-types code (GET /v1/codebooks/payment-types); P12 is a bank transfer."`
	DueDate          *string `json:"dueDate,omitempty" example:"2026-05-19" doc:"The payment due date, YYYY-MM-DD, not before issueDate."`
	DueDays          *int    `json:"dueDays,omitempty" example:"15" doc:"Days the buyer has to pay, counted from issueDate (0 or more)."`
	Terms            *string `json:"terms,omitempty" example:"Плаќање на трансакциска сметка 300-0000000123-45" doc:"Payment terms as printed on the invoice."`
	Note             *string `json:"note,omitempty" example:"Повикувачки број 2026-0042" doc:"A note about the payment."`
	Currency         string  `json:"currency" example:"MKD" doc:"The document's currency: a currencies code (GET /v1/codebooks/currencies). Every amount of the document is in it."`
	ExchangeRate     *string `json:"exchangeRate,omitempty" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"61.6950" doc:"Denars per unit of currency, a decimal string; required for a currency other than MKD."`
	ExchangeRateDate *string `json:"exchangeRateDate,omitempty" example:"2026-05-04" doc:"The date of exchangeRate, YYYY-MM-DD; required for a currency other than MKD."`
}

// Line is one item. Quantity, UnitPrice (without VAT), UnitDiscount (per
// unit, default 0) and VatPercent are decimal strings; VatPercent picks the
// tax group (18 → DDV-A, 5 → DDV-B, 10 → DDV-V, 0 → DDV-G).
type Line struct {
	Sku             *string `json:"sku,omitempty" example:"CONS-01" doc:"Your article code (SKU), if you have one."`
	Description     string  `json:"description" example:"Консултантски услуги" doc:"What is supplied. Required."`
	Unit            *string `json:"unit,omitempty" example:"час" doc:"The unit of measure as printed on the invoice: free text, not a code list."`
	Quantity        string  `json:"quantity" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"3" doc:"A decimal number (digits, optionally a point and decimals; no exponent or plus sign), greater than zero, at most 4 decimals."`
	UnitPrice       string  `json:"unitPrice" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"1000" doc:"The price of one unit without VAT, a decimal string, at most 4 decimals."`
	UnitDiscount    string  `json:"unitDiscount,omitempty" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"100" doc:"A discount per unit, a decimal string of at most 4 decimals, at most the unit price; 0 when left out."`
	VatPercent      string  `json:"vatPercent" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"18" doc:"The VAT rate in percent: 18, 10, 5 or 0. It picks the tax group (GET /v1/codebooks/tax-groups), which must be one the taxIndicator allows."`
	TaxIndicator    string  `json:"taxIndicator" example:"DDV-A" doc:"How the line is taxed: a tax-indicators code (GET /v1/codebooks/tax-indicators) allowed with vatPercent; DDV-A for a supply at the standard 18%."`
	DomesticProduct *bool   `json:"domesticProduct,omitempty" example:"true" doc:"Whether the goods are made in North Macedonia. Accepted and kept, not sent to UJP (its codebook gives the field no values)."`
}

// Advance is an advance already paid and invoiced, deducted from the
// amount to pay.
type Advance struct {
	Amount      string  `json:"amount" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"1000" doc:"The advance paid, in the document's currency, a decimal string of at most 2 decimals, at most the gross amount."`
	Date        *string `json:"date,omitempty" example:"2026-04-15" doc:"When the advance was paid, YYYY-MM-DD."`
	Description *string `json:"description,omitempty" example:"Аванс по авансна фактура А-2026-0007" doc:"Which advance invoice it was, as printed."`
}

// Totals are the document totals in the document currency, as decimal
// strings at two decimals; the shape of both expectedTotals and the
// e-invoice's totals.
type Totals struct {
	Net      string `json:"net" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"2700.00" doc:"The net amount after discounts, a decimal string (2 decimals in answers)."`
	Vat      string `json:"vat" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"486.00" doc:"The VAT, a decimal string."`
	Gross    string `json:"gross" pattern:"^-?[0-9]+(\\.[0-9]+)?$" example:"3186.00" doc:"The amount with VAT, net + vat, a decimal string."`
	Currency string `json:"currency" required:"false" example:"MKD" doc:"The currency code of the amounts. Optional in expectedTotals (when given, it must be the document's)."`
}

// MaxClientReference bounds clientReference, in characters: the
// clientReference filter of GET /v1/einvoices takes no longer one.
const MaxClientReference = 200

// MaxLines bounds the lines of one request (spec, Limits).
const MaxLines = 1000

// UJPCodeSuffix is added to the format of a UJP rule's problem (ujpdoc.Validate)
// when it becomes a field error of a request: the argument is UJP's code.
const UJPCodeSuffix = " (UJP %s)"

// Decode parses a request body strictly: unknown fields, trailing data and
// wrong types are a validation_failed error, never a panic.
func Decode(r io.Reader) (*Request, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, decodeErr(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, (&denar.FieldErrors{{Path: "", Message: "trailing data after the JSON object"}}).Err()
	}
	return &req, nil
}

func decodeErr(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return denar.FieldErrors{{Path: te.Field, Message: fmt.Sprintf("must be %s", te.Type)}}.Err()
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return denar.FieldErrors{{Path: strings.Trim(f, `"`), Message: "is not a field of this request"}}.Err()
	}
	return denar.FieldErrors{{Path: "", Message: "is not valid JSON: " + msg}}.Err()
}

// Fingerprint is a digest-ready canonical form of the request: the body
// re-encoded from the parsed struct, so whitespace and key order do not
// make the same request look different under one clientReference.
func (r *Request) Fingerprint() []byte {
	b, _ := json.Marshal(r)
	return b
}

// Build validates the request and makes UJP's document: seller from the
// company, docID the stable id of this e-invoice (the same on every
// submission attempt, so UJP refuses a second copy), totals by ujpdoc's
// formulas. It returns every field error at once (paths in the request's
// terms, codebook named), or totals_mismatch when ExpectedTotals differ.
func (r *Request) Build(seller ujpdoc.Seller, docID string, cb *ujpdoc.Codebooks) (*ujpdoc.Document, error) {
	var fe denar.FieldErrors
	d := &ujpdoc.Document{Seller: seller}
	h := &d.Header
	h.DocID = docID
	h.DocType = r.DocumentType
	if h.DocType == "" {
		h.DocType = "100"
	}
	if dt, ok := cb.DocumentType(h.DocType); ok {
		h.DocTypeName = dt.Name
	} else {
		fe.AddCodebook("documentType", ujpdoc.CBDocumentTypes, "%q is not a document type", h.DocType)
	}
	h.DocNumber = strings.TrimSpace(r.Number)
	if h.DocNumber == "" {
		fe.Add("number", "is required")
	}
	h.DocDate = date(&fe, "issueDate", r.IssueDate, true)
	h.DocTurnoverDate = h.DocDate
	if r.SupplyDate != nil {
		h.DocTurnoverDate = date(&fe, "supplyDate", *r.SupplyDate, true)
	}
	h.DocNotes = r.Notes
	if ref := r.ClientReference; ref != nil {
		switch {
		case strings.TrimSpace(*ref) == "":
			fe.Add("clientReference", "must not be empty or only white space")
		case utf8.RuneCountInString(*ref) > MaxClientReference:
			fe.Add("clientReference", "is longer than %d characters", MaxClientReference)
		}
	}

	b := party(&fe, "buyer", r.Buyer, cb)
	d.Buyer = ujpdoc.Buyer{BuyerCCode: b.country, BuyerCName: b.countryName, BuyerTin: r.Buyer.TaxNumber,
		BuyerForeignTin: r.Buyer.ForeignTaxNumber, BuyerVatNumber: r.Buyer.VatNumber, BuyerName: r.Buyer.Name,
		BuyerAddress: b.addr, BuyerSubsidiaryCode: r.Buyer.SubsidiaryCode, BuyerSubsidiaryName: r.Buyer.SubsidiaryName,
		BuyerContact: r.Buyer.Contact, BuyerEmail: r.Buyer.Email}
	if r.Sender != nil {
		s := party(&fe, "sender", *r.Sender, cb)
		d.Sender = &ujpdoc.Sender{SenderCCode: s.country, SenderCName: s.countryName, SenderTin: r.Sender.TaxNumber,
			SenderVatNumber: r.Sender.VatNumber, SenderName: r.Sender.Name, SenderAddress: s.addr,
			SenderSubsidiaryCode: r.Sender.SubsidiaryCode, SenderSubsidiaryName: r.Sender.SubsidiaryName}
	}

	for i, ref := range r.References {
		p := fmt.Sprintf("references[%d]", i)
		rr := ujpdoc.Reference{DocTypeRef: ref.Type, DocNumberRef: ref.Number}
		if c, ok := cb.Lookup(ujpdoc.CBRefDocumentTypes, ref.Type); ok && ref.Type != ujpdoc.RefTypeSystem {
			rr.DocNameRef = c.Name
		} else {
			fe.AddCodebook(p+".type", ujpdoc.CBRefDocumentTypes, "%q is not a reference document type you can set", ref.Type)
		}
		if strings.TrimSpace(ref.Number) == "" {
			fe.Add(p+".number", "is required")
		}
		if ref.Date != nil {
			v := date(&fe, p+".date", *ref.Date, true)
			rr.DocDateRef = &v
		}
		d.DocReferences = append(d.DocReferences, rr)
	}

	pm := &d.DocPayment
	pm.DocPaymentTypeCode = r.Payment.TypeCode
	if c, ok := cb.Lookup(ujpdoc.CBPaymentTypes, r.Payment.TypeCode); ok {
		pm.DocPaymentTypeDesc = c.Name
	} else {
		fe.AddCodebook("payment.typeCode", ujpdoc.CBPaymentTypes, "%q is not a payment type", r.Payment.TypeCode)
	}
	pm.DocPaymentTypeDueDays, pm.DocPaymentTerms, pm.DocPaymentNote = r.Payment.DueDays, r.Payment.Terms, r.Payment.Note
	if r.Payment.DueDays != nil && *r.Payment.DueDays < 0 {
		fe.Add("payment.dueDays", "must not be negative")
	}
	if r.Payment.DueDate != nil {
		v := date(&fe, "payment.dueDate", *r.Payment.DueDate, true)
		pm.DocPaymentTypeDueDate = &v
		// Both dates parsed: YYYY-MM-DD compares as text.
		if validDate(v) && validDate(h.DocDate) && v < h.DocDate {
			fe.Add("payment.dueDate", "is before the issue date %s", h.DocDate)
		}
	}
	pm.DocCurrencyCode = r.Payment.Currency
	if c, ok := cb.Lookup(ujpdoc.CBCurrencies, r.Payment.Currency); ok {
		pm.DocCurrency = c.Name
	} else {
		fe.AddCodebook("payment.currency", ujpdoc.CBCurrencies, "%q is not a currency", r.Payment.Currency)
	}
	if r.Payment.Currency != "" && r.Payment.Currency != "MKD" {
		if r.Payment.ExchangeRate == nil {
			fe.Add("payment.exchangeRate", "is required for a currency other than MKD")
		} else if v, ok := amount(&fe, "payment.exchangeRate", *r.Payment.ExchangeRate, true, anyScale); ok {
			a := ujpdoc.Dec(v)
			pm.DocCurrencyExchRate = &a
		}
		if r.Payment.ExchangeRateDate == nil {
			fe.Add("payment.exchangeRateDate", "is required for a currency other than MKD")
		} else {
			v := date(&fe, "payment.exchangeRateDate", *r.Payment.ExchangeRateDate, true)
			pm.DocCurrencyDate = &v
		}
	}

	switch {
	case len(r.Lines) == 0:
		fe.Add("lines", "needs at least one line")
	case len(r.Lines) > MaxLines:
		fe.Add("lines", "has more than %d lines", MaxLines)
	}
	for i, l := range r.Lines {
		d.DocItems = append(d.DocItems, line(&fe, i, l, h.DocType, cb))
	}
	if r.Advance != nil {
		if v, ok := amount(&fe, "advance.amount", r.Advance.Amount, false, ujpdoc.TotalScale); ok {
			d.DocTotals.DocAvansAmount = ujpdoc.Dec(v)
		}
		d.DocTotals.DocAvansDesc = r.Advance.Description
		if r.Advance.Date != nil {
			v := date(&fe, "advance.date", *r.Advance.Date, true)
			d.DocTotals.DocAvansDate = &v
		}
	}
	if t := r.ExpectedTotals; t != nil {
		for _, c := range [][2]string{{"expectedTotals.net", t.Net}, {"expectedTotals.vat", t.Vat}, {"expectedTotals.gross", t.Gross}} {
			if _, ok := parseDecimal(c[1]); c[1] != "" && !ok {
				fe.Add(c[0], "is not a decimal number "+decimalGrammar)
			}
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if err := ujpdoc.ComputeTotals(d, cb); err != nil {
		return nil, fmt.Errorf("build %s: %w", docID, err)
	}
	if ps := ujpdoc.Validate(d, cb); len(ps) > 0 {
		for _, p := range ps {
			if f, args := p.Format(); f != "" {
				fe.AddCodebook(r.requestPath(p.Path), p.Codebook, f+UJPCodeSuffix, append(args[:len(args):len(args)], p.Code)...)
				continue
			}
			fe = append(fe, denar.FieldError{Path: r.requestPath(p.Path), Message: p.Message + " (UJP " + p.Code + ")", Codebook: p.Codebook})
		}
		return nil, fe.Err()
	}
	if r.ExpectedTotals != nil {
		if err := checkExpected(*r.ExpectedTotals, DocTotals(d)); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// DocTotals summarises a built document's totals in the public shape.
func DocTotals(d *ujpdoc.Document) Totals {
	t := d.DocTotals
	return Totals{Net: t.DocNetAmountDisc.StringFixed(2), Vat: t.DocVatAmount.StringFixed(2),
		Gross: t.DocGrossAmount.StringFixed(2), Currency: d.DocPayment.DocCurrencyCode}
}

// checkExpected compares the caller's totals with ours as numbers, so
// "100" and "100.00" agree; each differing total is its own field error.
func checkExpected(exp, got Totals) error {
	var fe denar.FieldErrors
	for _, c := range []struct{ path, exp, got string }{
		{"expectedTotals.net", exp.Net, got.Net},
		{"expectedTotals.vat", exp.Vat, got.Vat},
		{"expectedTotals.gross", exp.Gross, got.Gross},
	} {
		if c.exp == "" {
			continue
		}
		e, ok := parseDecimal(c.exp)
		if !ok {
			fe.Add(c.path, "is not a decimal number "+decimalGrammar)
			continue
		}
		if !e.Equal(money.MustParse(c.got)) {
			fe.Add(c.path, "is %s; the service computes %s", c.exp, c.got)
		}
	}
	if exp.Currency != "" && exp.Currency != got.Currency {
		fe.Add("expectedTotals.currency", "is %s; the document is in %s", exp.Currency, got.Currency)
	}
	if len(fe) == 0 {
		return nil
	}
	return &denar.Error{Code: "totals_mismatch", Message: "expectedTotals differ from the totals computed by UJP's formulas", Fields: fe}
}

// requestPath turns a ujpdoc problem path back into the request field it
// comes from ("docItems[2].docItemUnitDiscountAmount" is
// "lines[2].unitDiscount", "docTotals.docAvansAmount" is "advance.amount"),
// so a client is never pointed at a field it did not send. What no request
// field gives (the seller, which is the company, computed amounts, docId)
// keeps UJP's name under "document.".
func (r *Request) requestPath(p string) string {
	var idx []string
	key := indexRE.ReplaceAllStringFunc(p, func(m string) string {
		idx = append(idx, m)
		return "[]"
	})
	to, ok := docToRequest[key]
	if key == "header.docTurnoverDate" && r.SupplyDate == nil {
		to = "issueDate" // the turnover date is the issue date then
	}
	if !ok {
		return "document." + p
	}
	for _, m := range idx {
		to = strings.Replace(to, "[]", m, 1)
	}
	return to
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// docToRequest maps the paths of UJP's document (indices as "[]") to the
// request fields Build fills them from.
var docToRequest = func() map[string]string {
	m := map[string]string{
		"header.docType": "documentType", "header.docTypeName": "documentType", "header.docNumber": "number",
		"header.docDate": "issueDate", "header.docTurnoverDate": "supplyDate", "header.docNotes": "notes",
		"header.correctionReasonCode": "reason", "header.correctionComment": "comment",
		"docReferences": "references", "docReferences[]": "references[]",
		"docReferences[].docTypeRef": "references[].type", "docReferences[].docNameRef": "references[].type",
		"docReferences[].docNumberRef": "references[].number", "docReferences[].docDateRef": "references[].date",
		"docPayment.docPaymentTypeCode": "payment.typeCode", "docPayment.docPaymentTypeDesc": "payment.typeCode",
		"docPayment.docPaymentTypeDueDays": "payment.dueDays", "docPayment.docPaymentTypeDueDate": "payment.dueDate",
		"docPayment.docPaymentTerms": "payment.terms", "docPayment.docPaymentNote": "payment.note",
		"docPayment.docCurrency": "payment.currency", "docPayment.docCurrencyCode": "payment.currency",
		"docPayment.docCurrencyDate": "payment.exchangeRateDate", "docPayment.docCurrencyExchRate": "payment.exchangeRate",
		"docItems": "lines", "docItems[]": "lines[]",
		"docItems[].docItemDesc": "lines[].description", "docItems[].docItemSku": "lines[].sku",
		"docItems[].docItemMUnit": "lines[].unit", "docItems[].docItemQty": "lines[].quantity",
		"docItems[].docItemUnitOriginalPriceWoVat": "lines[].unitPrice", "docItems[].docItemUnitDiscountAmount": "lines[].unitDiscount",
		"docItems[].docItemVat": "lines[].vatPercent", "docItems[].docItemVatGroup": "lines[].vatPercent",
		"docItems[].docItemTaxIndicator": "lines[].taxIndicator", "docTotals.docAvansAmount": "advance.amount", "docTotals.docAvansDate": "advance.date", "docTotals.docAvansDesc": "advance.description",
	}
	for _, party := range []string{"buyer", "sender"} {
		for ujp, req := range map[string]string{"CCode": "country", "CName": "country", "Tin": "taxNumber",
			"ForeignTin": "foreignTaxNumber", "VatNumber": "vatNumber", "Name": "name", "Address": "address",
			"SubsidiaryCode": "subsidiaryCode", "SubsidiaryName": "subsidiaryName", "Contact": "contact", "Email": "email"} {
			m[party+"."+party+ujp] = party + "." + req
		}
		for ujp, req := range map[string]string{"streetAddress": "street", "streetNumber": "number", "postalCode": "postalCode", "city": "city"} {
			m[party+"."+party+"Address."+ujp] = party + ".address." + req
		}
	}
	return m
}()

type builtParty struct {
	country, countryName string
	addr                 ujpdoc.Address
}

func party(fe *denar.FieldErrors, path string, p Party, cb *ujpdoc.Codebooks) builtParty {
	b := builtParty{country: p.Country}
	if b.country == "" {
		b.country = "MK"
	}
	if c, ok := cb.Lookup(ujpdoc.CBCountries, b.country); ok {
		b.countryName = c.Name
	} else {
		fe.AddCodebook(path+".country", ujpdoc.CBCountries, "%q is not a country", b.country)
	}
	if strings.TrimSpace(p.Name) == "" {
		fe.Add(path+".name", "is required")
	}
	if b.country == "MK" && strings.TrimSpace(p.TaxNumber) == "" {
		// country defaults to MK: a foreign party sent without one lands
		// here, and is told what it needs instead.
		if p.ForeignTaxNumber != nil && strings.TrimSpace(*p.ForeignTaxNumber) != "" {
			fe.Add(path+".taxNumber", "is required for a party in MK; for a foreign party with a foreignTaxNumber, give its country (a countries code such as \"DE\")")
		} else {
			fe.Add(path+".taxNumber", "is required for a party in MK; a foreign party gives its country (a countries code such as \"DE\") and foreignTaxNumber instead")
		}
	}
	s := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	b.addr = ujpdoc.Address{StreetAddress: s(p.Address.Street), StreetNumber: s(p.Address.Number),
		PostalCode: s(p.Address.PostalCode), City: s(p.Address.City)}
	return b
}

func line(fe *denar.FieldErrors, i int, l Line, docType string, cb *ujpdoc.Codebooks) ujpdoc.Item {
	p := fmt.Sprintf("lines[%d]", i)
	it := ujpdoc.Item{DocItemLineNo: i + 1, DocItemSku: l.Sku, DocItemDesc: l.Description, DocItemMUnit: l.Unit,
		DocItemTaxIndicator: l.TaxIndicator}
	if strings.TrimSpace(l.Description) == "" {
		fe.Add(p+".description", "is required")
	}
	if v, ok := amount(fe, p+".quantity", l.Quantity, true, ujpdoc.QtyScale); ok {
		it.DocItemQty = ujpdoc.Dec(v)
	}
	v, priceOK := amount(fe, p+".unitPrice", l.UnitPrice, false, ujpdoc.UnitScale)
	if priceOK {
		it.DocItemUnitOriginalPriceWoVat = ujpdoc.Dec(v)
	}
	if l.UnitDiscount != "" {
		if v, ok := amount(fe, p+".unitDiscount", l.UnitDiscount, false, ujpdoc.UnitScale); ok {
			it.DocItemUnitDiscountAmount = ujpdoc.Dec(v)
			// UJP's unit price after discount is price − discount
			// (docItemUnitPriceWoVat), and its unit prices are never
			// negative: a discount may take the whole price, not more.
			if price := it.DocItemUnitOriginalPriceWoVat; priceOK && it.DocItemUnitDiscountAmount.GreaterThan(price.Amount) {
				fe.Add(p+".unitDiscount", "is more than the unit price %s: the price after discount would be negative", price.String())
			}
		}
	}
	if pct, ok := amount(fe, p+".vatPercent", l.VatPercent, false, anyScale); ok {
		found := false
		for _, g := range cb.TaxGroups {
			if money.FromInt(int64(g.Percent)).Equal(pct) {
				it.DocItemVatGroup, it.DocItemVat, found = g.Code, ujpdoc.Dec(pct), true
				break
			}
		}
		if !found {
			fe.AddCodebook(p+".vatPercent", ujpdoc.CBTaxGroups, "%s%% is not a VAT rate of any tax group", l.VatPercent)
		}
	}
	if ti, ok := cb.TaxIndicator(l.TaxIndicator); !ok {
		fe.AddCodebook(p+".taxIndicator", ujpdoc.CBTaxIndicators, "%q is not a tax indicator", l.TaxIndicator)
	} else if !cb.IndicatorAllowed(docType, ti.Code) {
		fe.AddCodebook(p+".taxIndicator", ujpdoc.CBTaxIndicators, "tax indicator %s is not used with document type %s (UJP lists it for %s)",
			ti.Code, docType, strings.Join(cb.IndicatorDocTypes(ti.Code), ", "))
	} else if it.DocItemVatGroup != "" && !contains(ti.TaxGroupCodes, it.DocItemVatGroup) {
		fe.AddCodebook(p+".taxIndicator", ujpdoc.CBTaxIndicators, "tax indicator %s is used with tax group %s, not %s (%s%%)",
			ti.Code, strings.Join(ti.TaxGroupCodes, " or "), it.DocItemVatGroup, l.VatPercent)
	}
	// l.DomesticProduct is accepted but not sent: UJP's field codebook gives
	// docItemDomesticProduct as a 2-character string without its values,
	// so guessing one could make UJP refuse the document (docs/einvoices.md).
	return it
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// anyScale: amount puts no bound on the decimals (the value itself is
// checked otherwise: a VAT rate must be a group's, an exchange rate is the
// bank's).
const anyScale = -1

// decimalRE is the one grammar of the request's decimal strings: digits,
// optionally a point and more digits, optionally a leading minus; no plus
// sign, no exponent, no bare point ("3.", ".5"). money.Parse alone would
// take "1e3".
var decimalRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// decimalGrammar words decimalRE for a client.
const decimalGrammar = `such as "1234.50" (no exponent or plus sign)`

// parseDecimal reads a request's decimal string by decimalRE.
func parseDecimal(s string) (money.Amount, bool) {
	if len(s) > 32 || !decimalRE.MatchString(s) {
		return money.Amount{}, false
	}
	v, err := money.Parse(s)
	return v, err == nil
}

// amount parses a decimal string of the request; negative values are
// refused (a storno is built from its original, never posted with
// negative lines), positive requires > 0, and a value with more than
// places decimals (trailing zeros aside) is refused rather than rounded,
// unless places is anyScale.
func amount(fe *denar.FieldErrors, path, s string, positive bool, places int32) (money.Amount, bool) {
	if s == "" {
		fe.Add(path, "is required")
		return money.Amount{}, false
	}
	v, ok := parseDecimal(s)
	if !ok {
		fe.Add(path, "is not a decimal number "+decimalGrammar)
		return money.Amount{}, false
	}
	if v.IsNegative() || (positive && v.IsZero()) {
		if positive {
			fe.Add(path, "must be greater than zero")
		} else {
			fe.Add(path, "must not be negative")
		}
		return money.Amount{}, false
	}
	if places != anyScale && v.Trim().Scale() > places {
		fe.Add(path, "has more than %d decimals, the most UJP's document carries here", places)
		return money.Amount{}, false
	}
	return v, true
}

func validDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

func date(fe *denar.FieldErrors, path, s string, required bool) string {
	if s == "" {
		if required {
			fe.Add(path, "is required")
		}
		return ""
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		fe.Add(path, "must be a date YYYY-MM-DD")
	}
	return s
}

// NoVATShown reports the lines that show VAT, for a seller not registered
// for VAT: such a taxpayer owes no VAT on its supplies and may not state
// VAT separately on its invoices (ЗДДВ член 51 став 3, UJP's tax indicator
// DDV-G, "Не е ДДВ обврзник"), so a line must have vatPercent 0 and
// taxIndicator DDV-G. A vatPercent that is not a number is left to Build.
func (r *Request) NoVATShown() denar.FieldErrors {
	var fe denar.FieldErrors
	for i, l := range r.Lines {
		if v, err := money.Parse(strings.TrimSpace(l.VatPercent)); err == nil && !v.IsZero() {
			fe.Add(fmt.Sprintf("lines[%d].vatPercent", i), "is %s%%, but the company is not registered for VAT and may not show VAT (ЗДДВ член 51 став 3): use vatPercent 0 with taxIndicator DDV-G", l.VatPercent)
		}
	}
	return fe
}
