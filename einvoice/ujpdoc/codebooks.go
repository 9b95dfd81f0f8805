package ujpdoc

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Codebook names: field errors carry them so that a client can tell which
// list a code was checked against. They are plural nouns throughout (UJP's
// endpoints mix /currency, /correction-reason and /void-reasons; ours do
// not), and each is its snapshot file's name under codebooks/.
const (
	CBDocumentTypes     = "document-types"
	CBRefDocumentTypes  = "ref-document-types"
	CBPaymentTypes      = "payment-types"
	CBCurrencies        = "currencies"
	CBCountries         = "countries"
	CBVoidReasons       = "void-reasons"
	CBCorrectionReasons = "correction-reasons"
	CBRejectReasons     = "reject-reasons"
	CBTaxGroups         = "tax-groups"
	CBTaxIndicators     = "tax-indicators"
	CBDocumentStatuses  = "document-statuses"
)

// VatImpact says how a tax indicator's lines are taxed.
type VatImpact string

// The four vatImpact values of UJP's tax-indicator list.
const (
	ImpactStandard  VatImpact = "STANDARD"  // VAT at the group's rate, computed and shown
	ImpactNula      VatImpact = "NULA"      // 0% rate: no VAT, shown as 0
	ImpactOsloboden VatImpact = "OSLOBODEN" // exempt: no VAT, sent as 0
	ImpactPrenesen  VatImpact = "PRENESEN"  // reverse charge (art. 32/32-a): no VAT on lines and document, shown in vatTotals
)

// Code is an entry of a simple code list.
type Code struct {
	Code        string `json:"code"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"`
}

// DocumentType is an entry of the document-types list.
type DocumentType struct {
	Code                 string `json:"code"`
	Name                 string `json:"name"`
	HasItems             bool   `json:"hasItems"`
	HasReference         bool   `json:"hasReference"`
	IsReferenceMandatory bool   `json:"isReferenceMandatory"`
	Source               string `json:"source,omitempty"`
}

// TaxGroup is a VAT rate group (DDV-A 18%, DDV-B 5%, DDV-V 10%, DDV-G 0%).
type TaxGroup struct {
	Code    string `json:"code"`
	Name    string `json:"name"`
	Percent int    `json:"percent"`
	Source  string `json:"source,omitempty"`
}

// TaxIndicator classifies a supply; TaxGroupCodes lists the groups (rates)
// it may be used with.
type TaxIndicator struct {
	Code          string    `json:"code"`
	CategoryName  string    `json:"categoryName"`
	Note          string    `json:"note"`
	VatImpact     VatImpact `json:"vatImpact"`
	TaxGroupCodes []string  `json:"taxGroupCodes"`
	Source        string    `json:"source,omitempty"`
}

// Codebooks is one consistent set of UJP code lists. The zero value knows no
// codes; Snapshot returns the embedded copy; the UJP gateway's cache fills
// one from the authority's endpoints.
type Codebooks struct {
	FetchedAt         time.Time      `json:"fetchedAt"`
	DocumentTypes     []DocumentType `json:"documentTypes"`
	RefDocumentTypes  []Code         `json:"refDocumentTypes"`
	PaymentTypes      []Code         `json:"paymentTypes"`
	Currencies        []Code         `json:"currencies"`
	Countries         []Code         `json:"countries"`
	VoidReasons       []Code         `json:"voidReasons"`
	CorrectionReasons []Code         `json:"correctionReasons"`
	RejectReasons     []Code         `json:"rejectReasons"`
	TaxGroups         []TaxGroup     `json:"taxGroups"`
	TaxIndicators     []TaxIndicator `json:"taxIndicators"`
	DocumentStatuses  []Code         `json:"documentStatuses"`
	// DocTypeTaxIndicators are the tax indicators each document type may
	// use, as UJP lists them per type (doc-type-x-tax-indicator,
	// api-specification.txt:445-477). A type it has no entry for (and the
	// snapshot, which has none) may use every indicator.
	DocTypeTaxIndicators map[string][]string `json:"docTypeTaxIndicators,omitempty"`
}

// IndicatorAllowed reports whether document type docType may use tax
// indicator code by UJP's per-type lists: true when the type has no list.
func (cb *Codebooks) IndicatorAllowed(docType, code string) bool {
	list, ok := cb.DocTypeTaxIndicators[docType]
	if !ok || len(list) == 0 {
		return true
	}
	for _, c := range list {
		if c == code {
			return true
		}
	}
	return false
}

// IndicatorDocTypes lists the document types that may use tax indicator
// code, in the order of the document-types list; nil when every type may.
func (cb *Codebooks) IndicatorDocTypes(code string) []string {
	var out []string
	all := true
	for _, d := range cb.DocumentTypes {
		if cb.IndicatorAllowed(d.Code, code) {
			out = append(out, d.Code)
		} else {
			all = false
		}
	}
	if all {
		return nil
	}
	if out == nil {
		out = []string{}
	}
	return out
}

//go:embed codebooks/*.json
var snapshotFS embed.FS

// Snapshot returns the embedded codebook snapshot (see codebooks/SOURCES.md
// for where each list comes from). Each call returns a fresh copy.
func Snapshot() *Codebooks {
	cb := &Codebooks{}
	for name, dst := range map[string]any{
		CBDocumentTypes:     &cb.DocumentTypes,
		CBRefDocumentTypes:  &cb.RefDocumentTypes,
		CBPaymentTypes:      &cb.PaymentTypes,
		CBCurrencies:        &cb.Currencies,
		CBCountries:         &cb.Countries,
		CBVoidReasons:       &cb.VoidReasons,
		CBCorrectionReasons: &cb.CorrectionReasons,
		CBRejectReasons:     &cb.RejectReasons,
		CBTaxGroups:         &cb.TaxGroups,
		CBTaxIndicators:     &cb.TaxIndicators,
		CBDocumentStatuses:  &cb.DocumentStatuses,
	} {
		file := name + ".json"
		b, err := snapshotFS.ReadFile("codebooks/" + file)
		if err != nil {
			panic(fmt.Sprintf("ujpdoc: embedded codebook %s: %v", file, err))
		}
		if err := json.Unmarshal(b, dst); err != nil {
			panic(fmt.Sprintf("ujpdoc: embedded codebook %s: %v", file, err))
		}
	}
	return cb
}

func findCode(list []Code, code string) (Code, bool) {
	for _, c := range list {
		if c.Code == code {
			return c, true
		}
	}
	return Code{}, false
}

// DocumentType looks a document type up by code.
func (cb *Codebooks) DocumentType(code string) (DocumentType, bool) {
	for _, d := range cb.DocumentTypes {
		if d.Code == code {
			return d, true
		}
	}
	return DocumentType{}, false
}

// TaxGroup looks a tax group up by code.
func (cb *Codebooks) TaxGroup(code string) (TaxGroup, bool) {
	for _, g := range cb.TaxGroups {
		if g.Code == code {
			return g, true
		}
	}
	return TaxGroup{}, false
}

// TaxIndicator looks a tax indicator up by code.
func (cb *Codebooks) TaxIndicator(code string) (TaxIndicator, bool) {
	for _, t := range cb.TaxIndicators {
		if t.Code == code {
			return t, true
		}
	}
	return TaxIndicator{}, false
}

// Lookup finds a code in the simple list named by one of the CB* constants.
func (cb *Codebooks) Lookup(codebook, code string) (Code, bool) {
	switch codebook {
	case CBRefDocumentTypes:
		return findCode(cb.RefDocumentTypes, code)
	case CBPaymentTypes:
		return findCode(cb.PaymentTypes, code)
	case CBCurrencies:
		return findCode(cb.Currencies, code)
	case CBCountries:
		return findCode(cb.Countries, code)
	case CBVoidReasons:
		return findCode(cb.VoidReasons, code)
	case CBCorrectionReasons:
		return findCode(cb.CorrectionReasons, code)
	case CBRejectReasons:
		return findCode(cb.RejectReasons, code)
	case CBDocumentStatuses:
		return findCode(cb.DocumentStatuses, code)
	}
	return Code{}, false
}

// RejectReason finds a reject reason. UJP's captured list spells О-6 and О-7
// with a Cyrillic О; a Latin O-6 typed by a person is matched to it, so that
// the homoglyph never decides whether a rejection goes through. The code
// returned is the one UJP lists.
func (cb *Codebooks) RejectReason(code string) (Code, bool) {
	if c, ok := findCode(cb.RejectReasons, code); ok {
		return c, true
	}
	alt := code
	switch {
	case strings.HasPrefix(code, "O"):
		alt = "\u041e" + code[1:]
	case strings.HasPrefix(code, "\u041e"):
		alt = "O" + code[len("\u041e"):]
	}
	return findCode(cb.RejectReasons, alt)
}
