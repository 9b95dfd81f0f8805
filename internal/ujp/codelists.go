package ujp

import (
	"encoding/json"
	"fmt"

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
	TaxGroupCode         string   `json:"taxGroupCode,omitempty"`
	// TaxGroupCodes is the simulator's addition: every group an indicator
	// may be used with, where UJP's list names one.
	TaxGroupCodes []string `json:"taxGroupCodes,omitempty"`
	IsActive      *bool    `json:"isActive,omitempty"`
	ValidDateFrom *string  `json:"validDateFrom,omitempty"`
	ValidDateTo   *string  `json:"validDateTo,omitempty"`
}

func ptr[T any](v T) *T { return &v }

// EncodeCodeList renders one list of cb in the shape UJP serves under key
// (a value of CodeListPaths).
func EncodeCodeList(cb *ujpdoc.Codebooks, key string) ([]CodeListItem, error) {
	var out []CodeListItem
	simple := func(list []ujpdoc.Code, f func(c ujpdoc.Code) CodeListItem) {
		for _, c := range list {
			it := f(c)
			it.IsActive = ptr(true)
			out = append(out, it)
		}
	}
	switch key {
	case "documentTypesList":
		for _, d := range cb.DocumentTypes {
			out = append(out, CodeListItem{Code: d.Code, Name: d.Name, Type: ptr(1), NeedSignature: ptr(true), HasItems: ptr(d.HasItems),
				HasReference: ptr(d.HasReference), IsReferenceMandatory: ptr(d.IsReferenceMandatory), IsActive: ptr(true)})
		}
	case "refDocumentTypes":
		simple(cb.RefDocumentTypes, func(c ujpdoc.Code) CodeListItem {
			return CodeListItem{Code: c.Code, Name: c.Name, Description: c.Description}
		})
	case "paymentTypeList":
		simple(cb.PaymentTypes, func(c ujpdoc.Code) CodeListItem { return CodeListItem{Code: c.Code, Description: c.Name} })
	case "currencyList":
		simple(cb.Currencies, func(c ujpdoc.Code) CodeListItem {
			return CodeListItem{Code: c.Code, Name: c.Name, Description: c.Description}
		})
	case "countryList":
		simple(cb.Countries, func(c ujpdoc.Code) CodeListItem { return CodeListItem{Code: c.Code, Name: c.Name, Tin: c.Code + "001"} })
	case "voidReasonList":
		simple(cb.VoidReasons, func(c ujpdoc.Code) CodeListItem { return CodeListItem{Code: c.Code, VoidReason: c.Name} })
	case "correctionReasonList":
		simple(cb.CorrectionReasons, func(c ujpdoc.Code) CodeListItem { return CodeListItem{Code: c.Code, CorrectionReason: c.Name} })
	case "rejectReasonList":
		simple(cb.RejectReasons, func(c ujpdoc.Code) CodeListItem { return CodeListItem{Code: c.Code, RejectReason: c.Name} })
	case "statusList":
		simple(cb.DocumentStatuses, func(c ujpdoc.Code) CodeListItem {
			return CodeListItem{Code: c.Code, Name: c.Name, Description: c.Description}
		})
	case "taxGroupList":
		for _, g := range cb.TaxGroups {
			out = append(out, CodeListItem{Code: g.Code, Name: g.Name, Percent: ptr(float64(g.Percent)), IsActive: ptr(true)})
		}
	case "taxIndicators":
		for _, t := range cb.TaxIndicators {
			it := CodeListItem{Code: t.Code, CategoryCode: t.Code, CategoryName: t.CategoryName, Note: ptr(t.Note), VatImpact: string(t.VatImpact),
				TaxGroupCodes: t.TaxGroupCodes, IsActive: ptr(true)}
			if len(t.TaxGroupCodes) > 0 {
				it.TaxGroupCode = t.TaxGroupCodes[0]
			}
			out = append(out, it)
		}
	default:
		return nil, fmt.Errorf("unknown code list %q", key)
	}
	return out, nil
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
		case "taxIndicators":
			groups := it.TaxGroupCodes
			if len(groups) == 0 && it.TaxGroupCode != "" {
				groups = []string{it.TaxGroupCode}
			}
			note := ""
			if it.Note != nil {
				note = *it.Note
			}
			cb.TaxIndicators = append(cb.TaxIndicators, ujpdoc.TaxIndicator{Code: it.Code, CategoryName: it.CategoryName, Note: note,
				VatImpact: ujpdoc.VatImpact(it.VatImpact), TaxGroupCodes: groups})
		default:
			return fmt.Errorf("unknown code list %q", key)
		}
	}
	return nil
}
