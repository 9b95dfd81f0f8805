package ujp

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// CodeListItem is the union of the item shapes of UJP's code lists; each
// list fills the fields its endpoint documents (void reasons name their text
// voidReason, payment types description, and so on).
type CodeListItem struct {
	Code                 string   `json:"code"`
	Name                 string   `json:"name,omitempty"`
	Description          string   `json:"description,omitempty"`
	VoidReason           string   `json:"voidReason,omitempty"`
	CorrectionReason     string   `json:"correctionReason,omitempty"`
	RejectReason         string   `json:"rejectReason,omitempty"`
	Tin                  string   `json:"tin,omitempty"`
	Type                 *int     `json:"type,omitempty"`
	NeedSignature        *bool    `json:"needSignature,omitempty"`
	HasItems             *bool    `json:"hasItems,omitempty"`
	HasReference         *bool    `json:"hasReference,omitempty"`
	IsReferenceMandatory *bool    `json:"isReferenceMandatory,omitempty"`
	Percent              *float64 `json:"percent,omitempty"`
	CategoryCode         string   `json:"categoryCode,omitempty"`
	CategoryName         string   `json:"categoryName,omitempty"`
	Note                 *string  `json:"note,omitempty"`
	VatImpact            string   `json:"vatImpact,omitempty"`
	// TaxGroupCode is the one tax group an entry of the tax-indicator
	// lists names (api-specification.txt:712); an indicator used with
	// several groups comes as several entries, or as one.
	TaxGroupCode  string  `json:"taxGroupCode,omitempty"`
	IsActive      *bool   `json:"isActive,omitempty"`
	ValidDateFrom *string `json:"validDateFrom,omitempty"`
	ValidDateTo   *string `json:"validDateTo,omitempty"`
	// An entry of doc-type-x-tax-indicator (api-specification.txt:455-477):
	// the indicator, and the pair's own codes and activity.
	TaxIndicator     *CodeListItem `json:"taxIndicator,omitempty"`
	DocTypeCode      string        `json:"docTypeCode,omitempty"`
	TaxIndicatorCode string        `json:"taxIndicatorCode,omitempty"`
	Active           *bool         `json:"active,omitempty"`
}

// indicatorUnion gathers the tax indicators of /tax-indicators and of
// every /doc-type-x-tax-indicator/{docType}, in first-seen order, with the
// union of the tax groups named for each.
type indicatorUnion struct {
	order []string
	by    map[string]*ujpdoc.TaxIndicator
}

func newIndicatorUnion() *indicatorUnion {
	return &indicatorUnion{by: map[string]*ujpdoc.TaxIndicator{}}
}

func (u *indicatorUnion) add(it CodeListItem) {
	if it.Code == "" || (it.IsActive != nil && !*it.IsActive) {
		return
	}
	t, ok := u.by[it.Code]
	if !ok {
		note := ""
		if it.Note != nil {
			note = *it.Note
		}
		t = &ujpdoc.TaxIndicator{Code: it.Code, CategoryName: it.CategoryName, Note: note, VatImpact: ujpdoc.VatImpact(it.VatImpact)}
		u.by[it.Code] = t
		u.order = append(u.order, it.Code)
	}
	if g := it.TaxGroupCode; g != "" && !slices.Contains(t.TaxGroupCodes, g) {
		t.TaxGroupCodes = append(t.TaxGroupCodes, g)
	}
}

// addList reads /tax-indicators.
func (u *indicatorUnion) addList(raw json.RawMessage) error {
	var items []CodeListItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("code list %s: %w", keyTaxIndicators, err)
	}
	for _, it := range items {
		u.add(it)
	}
	return nil
}

// addDocTypeList reads one /doc-type-x-tax-indicator/{docType} and
// returns the codes of the indicators it allows, in first-seen order.
func (u *indicatorUnion) addDocTypeList(raw json.RawMessage) ([]string, error) {
	var items []CodeListItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("code list %s: %w", keyDocTypeTaxIndicators, err)
	}
	var codes []string
	for _, it := range items {
		if it.TaxIndicator == nil || (it.Active != nil && !*it.Active) {
			continue
		}
		ti := *it.TaxIndicator
		if ti.Code == "" {
			ti.Code = it.TaxIndicatorCode
		}
		if ti.IsActive != nil && !*ti.IsActive {
			continue
		}
		u.add(ti)
		if ti.Code != "" && !slices.Contains(codes, ti.Code) {
			codes = append(codes, ti.Code)
		}
	}
	return codes, nil
}

func (u *indicatorUnion) indicators() []ujpdoc.TaxIndicator {
	out := make([]ujpdoc.TaxIndicator, 0, len(u.order))
	for _, c := range u.order {
		out = append(out, *u.by[c])
	}
	return out
}

// decodeCodeList adds one list, as UJP served it under key, to cb. Inactive
// entries are left out: a code UJP has retired is not valid in a document.
func decodeCodeList(cb *ujpdoc.Codebooks, key string, raw json.RawMessage) error {
	var items []CodeListItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("code list %s: %w", key, err)
	}
	first := func(ss ...string) string {
		for _, s := range ss {
			if s != "" {
				return s
			}
		}
		return ""
	}
	for _, it := range items {
		if it.IsActive != nil && !*it.IsActive {
			continue
		}
		c := ujpdoc.Code{Code: it.Code, Name: first(it.Name, it.Description)}
		switch key {
		case "documentTypesList":
			cb.DocumentTypes = append(cb.DocumentTypes, ujpdoc.DocumentType{Code: it.Code, Name: it.Name, HasItems: it.HasItems == nil || *it.HasItems,
				HasReference: it.HasReference != nil && *it.HasReference, IsReferenceMandatory: it.IsReferenceMandatory != nil && *it.IsReferenceMandatory})
		case "refDocumentTypes":
			c.Description = it.Description
			cb.RefDocumentTypes = append(cb.RefDocumentTypes, c)
		case "paymentTypeList":
			c.Name = first(it.Description, it.Name)
			cb.PaymentTypes = append(cb.PaymentTypes, c)
		case "currencyList":
			c.Name, c.Description = it.Name, it.Description
			cb.Currencies = append(cb.Currencies, c)
		case "countryList":
			cb.Countries = append(cb.Countries, c)
		case "voidReasonList":
			c.Name = it.VoidReason
			cb.VoidReasons = append(cb.VoidReasons, c)
		case "correctionReasonList":
			c.Name = it.CorrectionReason
			cb.CorrectionReasons = append(cb.CorrectionReasons, c)
		case "rejectReasonList":
			c.Name = it.RejectReason
			cb.RejectReasons = append(cb.RejectReasons, c)
		case "statusList":
			c.Description = it.Description
			cb.DocumentStatuses = append(cb.DocumentStatuses, c)
		case "taxGroupList":
			p := 0
			if it.Percent != nil {
				p = int(*it.Percent)
			}
			cb.TaxGroups = append(cb.TaxGroups, ujpdoc.TaxGroup{Code: it.Code, Name: it.Name, Percent: p})
		default:
			return fmt.Errorf("unknown code list %q", key)
		}
	}
	return nil
}
