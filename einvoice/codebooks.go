package einvoice

import (
	"slices"
	"strconv"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// CodebookInfo describes one of UJP's code lists: what it is and which
// request fields take one of its codes.
type CodebookInfo struct {
	Name        string   `json:"name" example:"tax-indicators" doc:"The list's name: the codebook member of a field error that refers to it, and the {name} of GET /v1/codebooks/{name}."`
	Title       string   `json:"title" example:"Tax indicators" doc:"What the list is, in a few words."`
	Description string   `json:"description" example:"How a line's supply is taxed. Each indicator may be used only with the VAT rates listed in its vatPercents." doc:"How the codes are used, and what to watch for."`
	Fields      []string `json:"fields" example:"[\"POST /v1/einvoices lines[].taxIndicator\"]" doc:"The request fields that take a code of this list, each as 'METHOD path field'; empty for a list that is only read (document-statuses)."`
	Count       int      `json:"count" example:"96" doc:"How many values the list has."`
}

// CodebookValue is one value of a code list. The members after name are
// those of the lists that have them.
type CodebookValue struct {
	Code        string `json:"code" example:"DDV-A" doc:"The code to send, verbatim (some of UJP's codes contain Cyrillic letters that look Latin, such as the О of О-6: copy them from here)."`
	Name        string `json:"name" example:"Стандардно оданочување со општа даночна стапка од 18%" doc:"UJP's name of the value, in Macedonian."`
	Description string `json:"description,omitempty" example:"ДДВ не е пресметан согласно член 51 став 3 од ЗДДВ" doc:"UJP's note on the value (for a tax indicator: the text printed on the invoice for its lines), when it has one."`
	// Document types.
	HasItems          *bool `json:"hasItems,omitempty" example:"true" doc:"document-types: the document has lines."`
	HasReference      *bool `json:"hasReference,omitempty" example:"false" doc:"document-types: the document may refer to another (references[])."`
	ReferenceRequired *bool `json:"referenceRequired,omitempty" example:"false" doc:"document-types: the document must refer to another."`
	// Tax groups.
	Percent *int `json:"percent,omitempty" example:"18" doc:"tax-groups: the VAT rate of the group, in percent; a line's vatPercent picks its group by this rate."`
	// Tax indicators.
	VatImpact   ujpdoc.VatImpact `json:"vatImpact,omitempty" enum:"STANDARD,NULA,OSLOBODEN,PRENESEN" example:"STANDARD" doc:"tax-indicators: how the lines are taxed. STANDARD: VAT at the rate, computed and shown; NULA: 0% rate; OSLOBODEN: exempt, no VAT; PRENESEN: reverse charge, the buyer accounts for the VAT (none on the lines)."`
	TaxGroups   []string         `json:"taxGroups,omitempty" example:"[\"DDV-A\"]" doc:"tax-indicators: the tax groups (VAT rates) the indicator may be used with."`
	VatPercents []int            `json:"vatPercents,omitempty" example:"[18]" doc:"tax-indicators: the vatPercent values a line with this indicator may have (the rates of taxGroups)."`
	// DocumentTypes restricts a tax indicator to some document types.
	DocumentTypes []string `json:"documentTypes,omitempty" example:"[\"100\"]" doc:"tax-indicators: the document types (documentType) whose lines may use the indicator, when UJP does not allow it for every type; absent: every type may."`
}

// A codebook of the catalogue: its description and how to read its values.
type codebookEntry struct {
	info   CodebookInfo
	values func(cb *ujpdoc.Codebooks) []CodebookValue
}

func codes(list func(cb *ujpdoc.Codebooks) []ujpdoc.Code) func(cb *ujpdoc.Codebooks) []CodebookValue {
	return func(cb *ujpdoc.Codebooks) []CodebookValue {
		l := list(cb)
		out := make([]CodebookValue, 0, len(l))
		for _, c := range l {
			out = append(out, CodebookValue{Code: c.Code, Name: c.Name, Description: c.Description})
		}
		return out
	}
}

// catalogue lists the code lists a caller meets, in the order a caller
// meets them when issuing an e-invoice, then the inbox's.
func catalogue() []codebookEntry {
	return []codebookEntry{
		{CodebookInfo{Name: ujpdoc.CBDocumentTypes, Title: "Document types",
			Description: "The kind of document an e-invoice is. 100 (invoice) when documentType is left out.",
			Fields:      []string{"POST /v1/einvoices documentType", "POST /v1/einvoices/{id}/correction documentType"}},
			func(cb *ujpdoc.Codebooks) []CodebookValue {
				out := make([]CodebookValue, 0, len(cb.DocumentTypes))
				for _, d := range cb.DocumentTypes {
					out = append(out, CodebookValue{Code: d.Code, Name: d.Name,
						HasItems: new(d.HasItems), HasReference: new(d.HasReference), ReferenceRequired: new(d.IsReferenceMandatory)})
				}
				return out
			}},
		{CodebookInfo{Name: ujpdoc.CBRefDocumentTypes, Title: "Reference document types",
			Description: "The kind of a related document an e-invoice refers to (an order, a contract, a customs declaration). SYS, a reference to another e-invoice by its EUID, is set by the service on a storno or correction and cannot be sent.",
			Fields:      []string{"POST /v1/einvoices references[].type", "POST /v1/einvoices/{id}/correction references[].type"}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.RefDocumentTypes })},
		{CodebookInfo{Name: ujpdoc.CBPaymentTypes, Title: "Payment types",
			Description: "How the buyer pays. P12 is a bank transfer.",
			Fields:      []string{"POST /v1/einvoices payment.typeCode", "POST /v1/einvoices/{id}/correction payment.typeCode"}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.PaymentTypes })},
		{CodebookInfo{Name: ujpdoc.CBCurrencies, Title: "Currencies",
			Description: "The document's currency (ISO 4217). A currency other than MKD needs payment.exchangeRate (denars per unit) and payment.exchangeRateDate.",
			Fields:      []string{"POST /v1/einvoices payment.currency", "POST /v1/einvoices expectedTotals.currency", "POST /v1/einvoices/{id}/correction payment.currency"}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.Currencies })},
		{CodebookInfo{Name: ujpdoc.CBCountries, Title: "Countries",
			Description: "A party's country (ISO 3166-1 alpha-2, Latin letters). MK when left out; a party of another country gives foreignTaxNumber instead of taxNumber.",
			Fields:      []string{"POST /v1/einvoices buyer.country", "POST /v1/einvoices sender.country", "POST /v1/einvoices/{id}/correction buyer.country"}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.Countries })},
		{CodebookInfo{Name: ujpdoc.CBTaxGroups, Title: "Tax groups (VAT rates)",
			Description: "The VAT rates. A line does not name its group: its vatPercent (18, 10, 5 or 0) picks the group of that rate.",
			Fields:      []string{"POST /v1/einvoices lines[].vatPercent", "POST /v1/einvoices/{id}/correction lines[].vatPercent"}},
			func(cb *ujpdoc.Codebooks) []CodebookValue {
				out := make([]CodebookValue, 0, len(cb.TaxGroups))
				for _, g := range cb.TaxGroups {
					out = append(out, CodebookValue{Code: g.Code, Name: g.Name, Percent: new(g.Percent)})
				}
				return out
			}},
		{CodebookInfo{Name: ujpdoc.CBTaxIndicators, Title: "Tax indicators",
			Description: "How a line's supply is taxed: standard rate, exempt, reverse charge, not taxable in the country. Each indicator may be used only with the VAT rates in its vatPercents; DDV-A (standard 18%) is the common one.",
			Fields:      []string{"POST /v1/einvoices lines[].taxIndicator", "POST /v1/einvoices/{id}/correction lines[].taxIndicator"}},
			func(cb *ujpdoc.Codebooks) []CodebookValue {
				out := make([]CodebookValue, 0, len(cb.TaxIndicators))
				for _, t := range cb.TaxIndicators {
					v := CodebookValue{Code: t.Code, Name: t.CategoryName, Description: t.Note, VatImpact: t.VatImpact,
						TaxGroups: slices.Clone(t.TaxGroupCodes), VatPercents: []int{}, DocumentTypes: cb.IndicatorDocTypes(t.Code)}
					for _, g := range t.TaxGroupCodes {
						if tg, ok := cb.TaxGroup(g); ok {
							v.VatPercents = append(v.VatPercents, tg.Percent)
						}
					}
					out = append(out, v)
				}
				return out
			}},
		{CodebookInfo{Name: ujpdoc.CBVoidReasons, Title: "Void (storno) reasons",
			Description: "Why a delivered e-invoice is cancelled with a storno document.",
			Fields:      []string{"POST /v1/einvoices/{id}/storno reason", "POST /v1/sandbox/inbox/{id}/simulate voidReason"}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.VoidReasons })},
		{CodebookInfo{Name: ujpdoc.CBCorrectionReasons, Title: "Correction reasons",
			Description: "Why a delivered e-invoice is replaced by a correction.",
			Fields:      []string{"POST /v1/einvoices/{id}/correction reason"}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.CorrectionReasons })},
		{CodebookInfo{Name: ujpdoc.CBRejectReasons, Title: "Reject reasons",
			Description: "Why a buyer rejects an incoming e-invoice. О-6 and О-7 are spelled with a Cyrillic О in UJP's list; a Latin O is accepted too. О-7 (other) needs a comment.",
			Fields:      []string{"POST /v1/inbox/{id}/reject reasonCode", "POST /v1/sandbox/einvoices/{id}/simulate rejectReasonCode"}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.RejectReasons })},
		{CodebookInfo{Name: ujpdoc.CBDocumentStatuses, Title: "UJP document statuses",
			Description: "UJP's own status of a document, as an incoming e-invoice's ujpStatus shows it. Never sent by a caller.",
			Fields:      []string{}},
			codes(func(cb *ujpdoc.Codebooks) []ujpdoc.Code { return cb.DocumentStatuses })},
	}
}

// CodebookNames are the names of the code lists Codebook serves, in the
// catalogue's order.
func CodebookNames() []string {
	var out []string
	for _, e := range catalogue() {
		out = append(out, e.info.Name)
	}
	return out
}

// Codebooks describes every code list of cb a caller meets.
func Codebooks(cb *ujpdoc.Codebooks) []CodebookInfo {
	var out []CodebookInfo
	for _, e := range catalogue() {
		info := e.info
		info.Count = len(e.values(cb))
		out = append(out, info)
	}
	return out
}

// Codebook returns the description and the values of the list named name
// (one of CodebookNames); false for another name.
func Codebook(cb *ujpdoc.Codebooks, name string) (CodebookInfo, []CodebookValue, bool) {
	for _, e := range catalogue() {
		if e.info.Name == name {
			values := e.values(cb)
			info := e.info
			info.Count = len(values)
			return info, values, true
		}
	}
	return CodebookInfo{}, nil, false
}

// RatesText words a tax indicator's allowed VAT rates ("18", "10 or 5").
func RatesText(v CodebookValue) string {
	var s []string
	for _, p := range v.VatPercents {
		s = append(s, strconv.Itoa(p))
	}
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for i, x := range s[1:] {
		if i == len(s)-2 {
			out += " or " + x
		} else {
			out += ", " + x
		}
	}
	return out
}
