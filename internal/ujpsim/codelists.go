package ujpsim

import (
	"embed"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/denar-mk/denar/money"
)

// The simulator's code lists: one JSON file per UJP code-list endpoint under
// codelists/, each holding the list under the key UJP's response carries it
// (api-specification.txt:121-775), written from the reference texts (see
// codelists/SOURCES.md). The handler adds success, createdDate and
// errorStatus around them. Validation reads the same lists, so a document is
// checked against exactly what the simulator serves.

//go:embed codelists/*.json
var codeListFS embed.FS

type docTypeEntry struct {
	Code                 string  `json:"code"`
	Name                 string  `json:"name"`
	Type                 int     `json:"type"`
	NeedSignature        bool    `json:"needSignature"`
	HasItems             bool    `json:"hasItems"`
	HasReference         bool    `json:"hasReference"`
	IsReferenceMandatory bool    `json:"isReferenceMandatory"`
	IsActive             bool    `json:"isActive"`
	ValidDateFrom        string  `json:"validDateFrom"`
	ValidDateTo          *string `json:"validDateTo"`
	Description          *string `json:"description"`
	UpdatedOn            string  `json:"updatedOn"`
}

type refTypeEntry struct {
	Code                    string  `json:"code"`
	Name                    string  `json:"name"`
	Type                    int     `json:"type"`
	IsActive                bool    `json:"isActive"`
	ValidDateFrom           string  `json:"validDateFrom"`
	ValidDateTo             *string `json:"validDateTo"`
	RefDocNumberDescription string  `json:"refDocNumberDescription"`
	DateDescription         string  `json:"dateDescription"`
	Description             string  `json:"description"`
	UpdatedOn               string  `json:"updated_on"`
}

type paymentTypeEntry struct {
	Code          string  `json:"code"`
	Description   string  `json:"description"`
	IsActive      bool    `json:"isActive"`
	ValidDateFrom string  `json:"validDateFrom"`
	ValidDateTo   *string `json:"validDateTo"`
	UpdatedOn     string  `json:"updated_on"`
}

type currencyEntry struct {
	Code        string `json:"code"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

type countryEntry struct {
	Code string `json:"code"`
	Name string `json:"name"`
	Tin  string `json:"tin"`
}

type voidReasonEntry struct {
	Code          string  `json:"code"`
	VoidReason    string  `json:"voidReason"`
	IsActive      bool    `json:"isActive"`
	ValidDateFrom string  `json:"validDateFrom"`
	ValidDateTo   *string `json:"validDateTo"`
	UpdatedOn     string  `json:"updated_on"`
}

type correctionReasonEntry struct {
	Code             string  `json:"code"`
	CorrectionReason string  `json:"correctionReason"`
	IsActive         bool    `json:"isActive"`
	ValidDateFrom    string  `json:"validDateFrom"`
	ValidDateTo      *string `json:"validDateTo"`
	UpdatedOn        string  `json:"updatedOn"`
}

type rejectReasonEntry struct {
	Code          string  `json:"code"`
	RejectReason  string  `json:"rejectReason"`
	IsActive      bool    `json:"isActive"`
	ValidDateFrom string  `json:"validDateFrom"`
	ValidDateTo   *string `json:"validDateTo"`
	UpdatedOn     string  `json:"updatedOn"`
}

type taxGroupEntry struct {
	Code          string      `json:"code"`
	Name          string      `json:"name"`
	Percent       json.Number `json:"percent"`
	Description   string      `json:"description"`
	IsActive      bool        `json:"isActive"`
	ValidDateFrom string      `json:"validDateFrom"`
	ValidDateTo   *string     `json:"validDateTo"`
}

// taxIndicatorEntry is one (indicator, tax group) pair: UJP's list carries a
// single taxGroupCode per entry (api-specification.txt:712,725), so an
// indicator with several rates (tax-indicators.txt:389,399,404,444) is
// several entries.
type taxIndicatorEntry struct {
	Code          string  `json:"code"`
	CategoryCode  string  `json:"categoryCode"`
	CategoryName  string  `json:"categoryName"`
	CategoryDesc  string  `json:"categoryDesc"`
	Note          string  `json:"note"`
	VatImpact     string  `json:"vatImpact"`
	IsActive      bool    `json:"isActive"`
	ValidDateFrom string  `json:"validDateFrom"`
	ValidDateTo   *string `json:"validDateTo"`
	UpdatedOn     string  `json:"updated_on"`
	TaxGroupCode  string  `json:"taxGroupCode"`
}

// docTypeTaxEntry is an entry of /doc-type-x-tax-indicator. The embedded
// file names the indicator by code; the handler fills taxIndicator, one
// entry per (indicator, tax group), as UJP's example shows it
// (api-specification.txt:455-477).
type docTypeTaxEntry struct {
	DocTypeID        int                `json:"docTypeId"`
	TaxIndicator     *taxIndicatorEntry `json:"taxIndicator,omitempty"`
	ValidDateFrom    string             `json:"validDateFrom"`
	ValidDateTo      *string            `json:"validDateTo"`
	Active           bool               `json:"active"`
	DocTypeCode      string             `json:"docTypeCode"`
	DocTypeName      string             `json:"docTypeName"`
	TaxIndicatorCode string             `json:"taxIndicatorCode"`
}

type statusEntry struct {
	Code        string `json:"code"`
	Name        string `json:"name"`
	Description string `json:"description"`
	UpdatedOn   string `json:"updated_on"`
}

type purchaseTaxEntry struct {
	Code          string  `json:"code"`
	Name          string  `json:"name"`
	Description   string  `json:"description"`
	VatImpact     string  `json:"vatImpact"`
	IsActive      bool    `json:"isActive"`
	ValidDateFrom string  `json:"validDateFrom"`
	ValidDateTo   *string `json:"validDateTo"`
	UpdatedOn     string  `json:"updated_on"`
}

// vatImpact values (api-specification.txt:94-98).
const (
	impactStandard  = "STANDARD"
	impactNula      = "NULA"
	impactOsloboden = "OSLOBODEN"
	impactPrenesen  = "PRENESEN"
)

// codeLists is one consistent set of the simulator's code lists.
type codeLists struct {
	DocumentTypes     []docTypeEntry          `json:"documentTypesList"`
	RefDocumentTypes  []refTypeEntry          `json:"refDocumentTypes"`
	PaymentTypes      []paymentTypeEntry      `json:"paymentTypeList"`
	Currencies        []currencyEntry         `json:"currencyList"`
	Countries         []countryEntry          `json:"countryList"`
	VoidReasons       []voidReasonEntry       `json:"voidReasonList"`
	CorrectionReasons []correctionReasonEntry `json:"correctionReasonList"`
	RejectReasons     []rejectReasonEntry     `json:"rejectReasonList"`
	TaxGroups         []taxGroupEntry         `json:"taxGroupList"`
	TaxIndicators     []taxIndicatorEntry     `json:"taxIndicators"`
	DocTypeTax        []docTypeTaxEntry       `json:"docTypeXTaxIndicatorList"`
	Statuses          []statusEntry           `json:"statusList"`
	PurchaseTax       []purchaseTaxEntry      `json:"purchaseTaxIndicators"`

	percents map[string]money.Amount // tax group → percent
	allowed  map[[2]string]bool      // (docType, indicator)
}

// codeListFiles are the embedded files, one per endpoint, by path under
// /einvoice_api/api/v1.
var codeListFiles = []struct{ file, path string }{
	{"document-types", "/document-types"},
	{"ref-document-types", "/ref-document-types"},
	{"payment-types", "/payment-types"},
	{"currency", "/currency"},
	{"countries", "/countries"},
	{"void-reasons", "/void-reasons"},
	{"correction-reason", "/correction-reason"},
	{"reject-reason", "/reject-reason"},
	{"tax-groups", "/tax-groups"},
	{"tax-indicators", "/tax-indicators"},
	{"doc-type-x-tax-indicator", ""}, // served per document type
	{"document-statuses", "/document-statuses"},
	{"purchase-tax-indicators", "/purchase-tax-indicators"},
}

// loadCodeLists reads the embedded files. Each file sets one field (its
// key); together they fill codeLists.
func loadCodeLists() (*codeLists, error) {
	cl := &codeLists{}
	for _, f := range codeListFiles {
		b, err := codeListFS.ReadFile("codelists/" + f.file + ".json")
		if err != nil {
			return nil, fmt.Errorf("ujpsim: code list %s: %w", f.file, err)
		}
		if err := json.Unmarshal(b, cl); err != nil {
			return nil, fmt.Errorf("ujpsim: code list %s: %w", f.file, err)
		}
	}
	if err := cl.index(); err != nil {
		return nil, err
	}
	return cl, nil
}

func (cl *codeLists) index() error {
	cl.percents = map[string]money.Amount{}
	for _, g := range cl.TaxGroups {
		p, err := money.Parse(g.Percent.String())
		if err != nil {
			return fmt.Errorf("ujpsim: tax group %s: percent %q: %w", g.Code, g.Percent, err)
		}
		cl.percents[g.Code] = p
	}
	cl.allowed = map[[2]string]bool{}
	for _, e := range cl.DocTypeTax {
		if e.Active {
			cl.allowed[[2]string{e.DocTypeCode, e.TaxIndicatorCode}] = true
		}
	}
	return nil
}

// changed returns the code lists as they read after UJP changed them (the
// codeListChange fault): a new tax indicator (DDV-14-3-10, services to a
// non-taxable person at 10%, allowed for document type 100 only), payment
// type P13 removed, and document type 100 renamed to "Општа Фактура" (the
// name UJP's own validation example pairs with 100,
// api-specification.txt:57-58).
func (cl *codeLists) changed() *codeLists {
	c := *cl
	c.DocumentTypes = append([]docTypeEntry(nil), cl.DocumentTypes...)
	for i := range c.DocumentTypes {
		if c.DocumentTypes[i].Code == "100" {
			c.DocumentTypes[i].Name = "Општа Фактура"
		}
	}
	c.PaymentTypes = nil
	for _, p := range cl.PaymentTypes {
		if p.Code != "P13" {
			c.PaymentTypes = append(c.PaymentTypes, p)
		}
	}
	nt := taxIndicatorEntry{Code: "DDV-14-3-10", CategoryCode: "DDV-14-3-10",
		CategoryName: "Промет на услуги кон лице што не е даночен обврзник согласно член 14 став 3 од ЗДДВ по повластена даночна стапка од 10%",
		CategoryDesc: "Промет на услуги од даночен обврзник во земјата кон лице што не е даночен обврзник по повластена даночна стапка од 10%.",
		Note:         "Промет кој подлежи на оданочување со ДДВ согласно член 14 став 3 од ЗДДВ", VatImpact: impactStandard, IsActive: true,
		ValidDateFrom: "2026-09-01 00:00:00", UpdatedOn: "2026-09-01 00:00:00", TaxGroupCode: "DDV-V"}
	c.TaxIndicators = append(append([]taxIndicatorEntry(nil), cl.TaxIndicators...), nt)
	c.DocTypeTax = append(append([]docTypeTaxEntry(nil), cl.DocTypeTax...), docTypeTaxEntry{DocTypeID: 1, ValidDateFrom: nt.ValidDateFrom,
		Active: true, DocTypeCode: "100", DocTypeName: "Општа Фактура", TaxIndicatorCode: nt.Code})
	for i := range c.DocTypeTax {
		if c.DocTypeTax[i].DocTypeCode == "100" {
			c.DocTypeTax[i].DocTypeName = "Општа Фактура"
		}
	}
	if err := c.index(); err != nil {
		panic(err) // the embedded lists indexed once already
	}
	return &c
}

func (cl *codeLists) docType(code string) (docTypeEntry, bool) {
	for _, d := range cl.DocumentTypes {
		if d.Code == code && d.IsActive {
			return d, true
		}
	}
	return docTypeEntry{}, false
}

func (cl *codeLists) refType(code string) (refTypeEntry, bool) {
	for _, d := range cl.RefDocumentTypes {
		if d.Code == code && d.IsActive {
			return d, true
		}
	}
	return refTypeEntry{}, false
}

func (cl *codeLists) paymentType(code string) (paymentTypeEntry, bool) {
	for _, d := range cl.PaymentTypes {
		if d.Code == code && d.IsActive {
			return d, true
		}
	}
	return paymentTypeEntry{}, false
}

func (cl *codeLists) currency(code string) (currencyEntry, bool) {
	for _, d := range cl.Currencies {
		if d.Code == code {
			return d, true
		}
	}
	return currencyEntry{}, false
}

func (cl *codeLists) country(code string) (countryEntry, bool) {
	for _, d := range cl.Countries {
		if d.Code == code {
			return d, true
		}
	}
	return countryEntry{}, false
}

func (cl *codeLists) voidReason(code string) (voidReasonEntry, bool) {
	for _, d := range cl.VoidReasons {
		if d.Code == code && d.IsActive {
			return d, true
		}
	}
	return voidReasonEntry{}, false
}

func (cl *codeLists) correctionReason(code string) (correctionReasonEntry, bool) {
	for _, d := range cl.CorrectionReasons {
		if d.Code == code && d.IsActive {
			return d, true
		}
	}
	return correctionReasonEntry{}, false
}

// rejectReason finds a reject reason by its exact code, as UJP lists it.
func (cl *codeLists) rejectReason(code string) (rejectReasonEntry, bool) {
	for _, d := range cl.RejectReasons {
		if d.Code == code && d.IsActive {
			return d, true
		}
	}
	return rejectReasonEntry{}, false
}

func (cl *codeLists) taxGroup(code string) (taxGroupEntry, money.Amount, bool) {
	for _, d := range cl.TaxGroups {
		if d.Code == code && d.IsActive {
			return d, cl.percents[code], true
		}
	}
	return taxGroupEntry{}, money.Amount{}, false
}

// indicator returns the entries of a tax indicator, one per tax group it
// may be used with; none when the code is unknown.
func (cl *codeLists) indicator(code string) []taxIndicatorEntry {
	var out []taxIndicatorEntry
	for _, d := range cl.TaxIndicators {
		if d.Code == code && d.IsActive {
			out = append(out, d)
		}
	}
	return out
}

func (cl *codeLists) allowedFor(docType, indicator string) bool {
	return cl.allowed[[2]string{docType, indicator}]
}

func (cl *codeLists) statusName(code string) string {
	for _, d := range cl.Statuses {
		if d.Code == code {
			return d.Name
		}
	}
	return ""
}

// docTypeTax is /doc-type-x-tax-indicator/{docType}: the allowed indicators,
// one entry per (indicator, tax group), with the indicator inlined.
func (cl *codeLists) docTypeTax(docType string) []docTypeTaxEntry {
	out := []docTypeTaxEntry{}
	for _, e := range cl.DocTypeTax {
		if docType != "" && e.DocTypeCode != docType {
			continue
		}
		for _, ti := range cl.indicator(e.TaxIndicatorCode) {
			x := e
			t := ti
			x.TaxIndicator = &t
			out = append(out, x)
		}
	}
	return out
}

// page is UJP's paged list answer (api-specification.txt:189-212).
type page struct {
	Content       any  `json:"content"`
	PageNumber    int  `json:"pageNumber"`
	PageSize      int  `json:"pageSize"`
	TotalElements int  `json:"totalElements"`
	TotalPages    int  `json:"totalPages"`
	Last          bool `json:"last"`
}

// pageOf cuts one page out of n items; less(i, j) orders them.
func pageOf[T any](items []T, pg, size int, less func(a, b T) bool, desc bool) page {
	sorted := append([]T(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if desc {
			return less(sorted[j], sorted[i])
		}
		return less(sorted[i], sorted[j])
	})
	total := len(sorted)
	pages := (total + size - 1) / size
	from := min(pg*size, total)
	to := min(from+size, total)
	return page{Content: sorted[from:to], PageNumber: pg, PageSize: size, TotalElements: total, TotalPages: pages, Last: pg >= pages-1}
}
