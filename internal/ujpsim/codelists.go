package ujpsim

import (
	"fmt"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/ujp"
)

// CodeListItem is an entry of a code list as UJP serves it.
type CodeListItem = ujp.CodeListItem

func ptr[T any](v T) *T { return &v }

// encodeCodeList renders one list of cb in the shape UJP serves under key
// (a value of ujp.CodeListPaths). A tax indicator used with several tax
// groups is one entry per (indicator, group) pair: the reference's entries
// name one taxGroupCode each (api-specification.txt:712).
func encodeCodeList(cb *ujpdoc.Codebooks, key string) ([]CodeListItem, error) {
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
			out = append(out, indicatorEntries(t)...)
		}
	default:
		return nil, fmt.Errorf("unknown code list %q", key)
	}
	return out, nil
}

// indicatorEntries is an indicator as the tax-indicator lists serve it: one
// entry per tax group it is used with.
func indicatorEntries(t ujpdoc.TaxIndicator) []CodeListItem {
	var out []CodeListItem
	for _, g := range t.TaxGroupCodes {
		out = append(out, CodeListItem{Code: t.Code, CategoryCode: t.Code, CategoryName: t.CategoryName, Note: ptr(t.Note),
			VatImpact: string(t.VatImpact), TaxGroupCode: g, IsActive: ptr(true)})
	}
	return out
}

// docTypeIndicators is doc-type-x-tax-indicator/{docType} (api-specification.txt:445-502):
// every indicator, one entry per (indicator, group) pair.
func docTypeIndicators(cb *ujpdoc.Codebooks, docType string) ([]CodeListItem, bool) {
	dt, ok := cb.DocumentType(docType)
	if !ok {
		return nil, false
	}
	var out []CodeListItem
	for _, t := range cb.TaxIndicators {
		for _, e := range indicatorEntries(t) {
			ti := e
			out = append(out, CodeListItem{TaxIndicator: &ti, DocTypeCode: dt.Code, TaxIndicatorCode: t.Code, Active: ptr(true)})
		}
	}
	return out, true
}
