package ujp

import (
	"slices"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// MergeCodebooks is the set of code lists validation uses after UJP served
// next, the previous set being prev (UJP's earlier lists, or the embedded
// snapshot before UJP was ever read): UJP's lists, except that a list UJP
// served empty keeps prev's (an empty list would make every code invalid),
// and each tax indicator keeps at least the tax groups the published list
// gives it (withReferenceGroups). kept names (ujpdoc.CB…) the lists taken
// from prev.
func MergeCodebooks(prev, next *ujpdoc.Codebooks) (merged *ujpdoc.Codebooks, kept []string) {
	m := *next
	ref := ujpdoc.Snapshot()
	if len(m.DocumentTypes) == 0 {
		m.DocumentTypes = prev.DocumentTypes
		kept = append(kept, ujpdoc.CBDocumentTypes)
	}
	if len(m.TaxGroups) == 0 {
		m.TaxGroups = prev.TaxGroups
		kept = append(kept, ujpdoc.CBTaxGroups)
	}
	if len(m.TaxIndicators) == 0 {
		m.TaxIndicators = prev.TaxIndicators
		kept = append(kept, ujpdoc.CBTaxIndicators)
	} else {
		m.TaxIndicators = withReferenceGroups(m.TaxIndicators, ref.TaxIndicators)
	}
	if len(m.DocTypeTaxIndicators) == 0 {
		m.DocTypeTaxIndicators = prev.DocTypeTaxIndicators
		kept = append(kept, ujpdoc.CBDocTypeTaxIndicators)
	}
	for _, p := range []struct {
		name     string
		dst, old *[]ujpdoc.Code
	}{
		{ujpdoc.CBRefDocumentTypes, &m.RefDocumentTypes, &prev.RefDocumentTypes}, {ujpdoc.CBPaymentTypes, &m.PaymentTypes, &prev.PaymentTypes},
		{ujpdoc.CBCurrencies, &m.Currencies, &prev.Currencies}, {ujpdoc.CBCountries, &m.Countries, &prev.Countries},
		{ujpdoc.CBVoidReasons, &m.VoidReasons, &prev.VoidReasons}, {ujpdoc.CBCorrectionReasons, &m.CorrectionReasons, &prev.CorrectionReasons},
		{ujpdoc.CBRejectReasons, &m.RejectReasons, &prev.RejectReasons}, {ujpdoc.CBDocumentStatuses, &m.DocumentStatuses, &prev.DocumentStatuses},
	} {
		if len(*p.dst) == 0 {
			*p.dst = *p.old
			kept = append(kept, p.name)
		}
	}
	return &m, kept
}

// withReferenceGroups adds to each live indicator the tax groups the
// published list of tax indicators gives it (tax-indicators.txt: DDV-14-4,
// DDV-14-5 and DDV-uvoz are used at several rates) when UJP's live lists
// named fewer: UJP's list entries carry one taxGroupCode each
// (api-specification.txt:712), so a single-entry list would otherwise make
// a lawful rate a local refusal. UJP still judges the document it is sent.
func withReferenceGroups(live, ref []ujpdoc.TaxIndicator) []ujpdoc.TaxIndicator {
	out := make([]ujpdoc.TaxIndicator, len(live))
	for i, t := range live {
		t.TaxGroupCodes = slices.Clone(t.TaxGroupCodes)
		for _, r := range ref {
			if r.Code != t.Code {
				continue
			}
			for _, g := range r.TaxGroupCodes {
				if !slices.Contains(t.TaxGroupCodes, g) {
					t.TaxGroupCodes = append(t.TaxGroupCodes, g)
				}
			}
		}
		out[i] = t
	}
	return out
}
