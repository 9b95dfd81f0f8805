package ujpdoc

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// CBDocTypeTaxIndicators names the pairs of document type and tax
// indicator UJP allows (doc-type-x-tax-indicator) in a diff: each entry's
// code is "docType/indicator".
const CBDocTypeTaxIndicators = "document-type-tax-indicators"

// DiffLists are the lists Diff and Digests compare, in the order a caller
// meets them.
var DiffLists = []string{CBDocumentTypes, CBRefDocumentTypes, CBPaymentTypes, CBCurrencies, CBCountries, CBTaxGroups,
	CBTaxIndicators, CBDocTypeTaxIndicators, CBVoidReasons, CBCorrectionReasons, CBRejectReasons, CBDocumentStatuses}

// ListChange is how one code list differs between two sets of lists.
type ListChange struct {
	List    string       `json:"list" example:"tax-indicators" doc:"The list: a codebook name of GET /v1/codebooks, or document-type-tax-indicators (the tax indicators each document type may use; codes 'documentType/indicator')."`
	Added   []CodeEntry  `json:"added" doc:"Codes UJP lists now and did not before."`
	Removed []CodeEntry  `json:"removed" doc:"Codes UJP no longer lists: a request using one is refused."`
	Changed []CodeChange `json:"changed" doc:"Codes listed before and now whose name or properties changed."`
}

// CodeEntry is a code and its name.
type CodeEntry struct {
	Code string `json:"code" example:"DDV-14-3-10" doc:"The code."`
	Name string `json:"name" example:"Промет на услуги кон лице што не е даночен обврзник" doc:"UJP's name of it."`
}

// CodeChange is a code whose name or properties changed.
type CodeChange struct {
	Code    string        `json:"code" example:"100" doc:"The code."`
	Name    string        `json:"name" example:"Општа Фактура" doc:"UJP's name of it now."`
	Changes []FieldChange `json:"changes" doc:"What changed."`
}

// FieldChange is one property of a code, before and after.
type FieldChange struct {
	Field  string `json:"field" example:"name" doc:"The property: name, percent (tax groups), vatImpact, taxGroups or note (tax indicators), hasItems, hasReference or referenceRequired (document types)."`
	Before string `json:"before" example:"Фактура" doc:"Its value before."`
	After  string `json:"after" example:"Општа Фактура" doc:"Its value now."`
}

// diffEntry is a list entry reduced to what a diff compares: its code, its
// name and the properties validation or a printed invoice uses, by name,
// in a fixed order. Descriptions (UJP's explanatory texts, which the
// snapshot took from other fields of the reference) and the snapshot's
// source notes are not compared.
type diffEntry struct {
	code, name string
	props      [][2]string
}

func boolText(b bool) string { return strconv.FormatBool(b) }

// diffEntries reduces the list named list of cb; the first entry of a code
// counts.
func diffEntries(cb *Codebooks, list string) []diffEntry {
	var out []diffEntry
	simple := func(l []Code) {
		for _, c := range l {
			out = append(out, diffEntry{code: c.Code, name: c.Name})
		}
	}
	switch list {
	case CBDocumentTypes:
		for _, d := range cb.DocumentTypes {
			out = append(out, diffEntry{code: d.Code, name: d.Name, props: [][2]string{{"hasItems", boolText(d.HasItems)},
				{"hasReference", boolText(d.HasReference)}, {"referenceRequired", boolText(d.IsReferenceMandatory)}}})
		}
	case CBRefDocumentTypes:
		simple(cb.RefDocumentTypes)
	case CBPaymentTypes:
		simple(cb.PaymentTypes)
	case CBCurrencies:
		simple(cb.Currencies)
	case CBCountries:
		simple(cb.Countries)
	case CBVoidReasons:
		simple(cb.VoidReasons)
	case CBCorrectionReasons:
		simple(cb.CorrectionReasons)
	case CBRejectReasons:
		simple(cb.RejectReasons)
	case CBDocumentStatuses:
		simple(cb.DocumentStatuses)
	case CBTaxGroups:
		for _, g := range cb.TaxGroups {
			out = append(out, diffEntry{code: g.Code, name: g.Name, props: [][2]string{{"percent", strconv.Itoa(g.Percent)}}})
		}
	case CBTaxIndicators:
		for _, t := range cb.TaxIndicators {
			groups := slices.Clone(t.TaxGroupCodes)
			slices.Sort(groups)
			out = append(out, diffEntry{code: t.Code, name: t.CategoryName, props: [][2]string{{"note", t.Note},
				{"vatImpact", string(t.VatImpact)}, {"taxGroups", strings.Join(groups, ", ")}}})
		}
	case CBDocTypeTaxIndicators:
		for _, d := range cb.DocumentTypes {
			for _, t := range cb.TaxIndicators {
				if cb.IndicatorAllowed(d.Code, t.Code) {
					out = append(out, diffEntry{code: d.Code + "/" + t.Code, name: t.CategoryName})
				}
			}
		}
	}
	seen := map[string]bool{}
	uniq := out[:0]
	for _, e := range out {
		if !seen[e.code] {
			seen[e.code] = true
			uniq = append(uniq, e)
		}
	}
	slices.SortFunc(uniq, func(a, b diffEntry) int { return strings.Compare(a.code, b.code) })
	return uniq
}

// Diff reports how the lists of next differ from those of prev, list by
// list (in DiffLists order, only lists that differ), code by code (in code
// order). A pair of document type and indicator counts in
// CBDocTypeTaxIndicators only; its name is the indicator's.
func Diff(prev, next *Codebooks) []ListChange {
	var out []ListChange
	for _, list := range DiffLists {
		if list == CBDocTypeTaxIndicators {
			// A pair is news only when both its type and its indicator
			// were listed before and are listed now: a new indicator is
			// reported once, in tax-indicators.
			if c := diffPairs(prev, next); c != nil {
				out = append(out, *c)
			}
			continue
		}
		if c := diffList(list, diffEntries(prev, list), diffEntries(next, list)); c != nil {
			out = append(out, *c)
		}
	}
	return out
}

func diffList(list string, a, b []diffEntry) *ListChange {
	c := ListChange{List: list, Added: []CodeEntry{}, Removed: []CodeEntry{}, Changed: []CodeChange{}}
	old := make(map[string]diffEntry, len(a))
	for _, e := range a {
		old[e.code] = e
	}
	now := make(map[string]bool, len(b))
	for _, e := range b {
		now[e.code] = true
		o, ok := old[e.code]
		if !ok {
			c.Added = append(c.Added, CodeEntry{Code: e.code, Name: e.name})
			continue
		}
		var fields []FieldChange
		if o.name != e.name {
			fields = append(fields, FieldChange{Field: "name", Before: o.name, After: e.name})
		}
		for i, p := range e.props {
			if i < len(o.props) && o.props[i] != p {
				fields = append(fields, FieldChange{Field: p[0], Before: o.props[i][1], After: p[1]})
			}
		}
		if fields != nil {
			c.Changed = append(c.Changed, CodeChange{Code: e.code, Name: e.name, Changes: fields})
		}
	}
	for _, e := range a {
		if !now[e.code] {
			c.Removed = append(c.Removed, CodeEntry{Code: e.code, Name: e.name})
		}
	}
	if len(c.Added)+len(c.Removed)+len(c.Changed) == 0 {
		return nil
	}
	return &c
}

// diffPairs compares the allowed pairs of the document types both sets
// list. A new or removed type or indicator is reported in its own list;
// its pairs only for a new indicator some document types may not use
// (which ones may is the news).
func diffPairs(prev, next *Codebooks) *ListChange {
	both := func(cb, other *Codebooks, isNext bool) []diffEntry {
		var out []diffEntry
		for _, e := range diffEntries(cb, CBDocTypeTaxIndicators) {
			dt, ti, _ := strings.Cut(e.code, "/")
			if _, ok := other.DocumentType(dt); !ok {
				continue
			}
			if _, ok := other.TaxIndicator(ti); !ok && (!isNext || cb.IndicatorDocTypes(ti) == nil) {
				continue
			}
			out = append(out, diffEntry{code: e.code, name: e.name})
		}
		return out
	}
	a, b := both(prev, next, false), both(next, prev, true)
	// A pair whose indicator was renamed is not a change of the pair.
	for i := range b {
		for j := range a {
			if a[j].code == b[i].code {
				a[j].name = b[i].name
			}
		}
	}
	return diffList(CBDocTypeTaxIndicators, a, b)
}

// Digests fingerprints each list of DiffLists in cb: equal digests, equal
// lists (order and the snapshot's source notes aside).
func Digests(cb *Codebooks) map[string]string {
	out := make(map[string]string, len(DiffLists))
	for _, list := range DiffLists {
		h := sha256.New()
		for _, e := range diffEntries(cb, list) {
			h.Write([]byte(e.code))
			h.Write([]byte{0})
			h.Write([]byte(e.name))
			for _, p := range e.props {
				h.Write([]byte{0})
				h.Write([]byte(p[0]))
				h.Write([]byte{1})
				h.Write([]byte(p[1]))
			}
			h.Write([]byte{2})
		}
		out[list] = hex.EncodeToString(h.Sum(nil)[:12])
	}
	return out
}

// Summary words a diff in one line, list by list: "tax-indicators: added
// DDV-14-3-10; payment-types: removed P13; document-types: changed 100
// (name)". At most max codes are named per kind; the rest are counted.
func Summary(changes []ListChange, max int) string {
	var parts []string
	codes := func(verb string, cs []string) string {
		if len(cs) == 0 {
			return ""
		}
		s := verb + " " + strings.Join(cs[:min(len(cs), max)], ", ")
		if len(cs) > max {
			s += " and " + strconv.Itoa(len(cs)-max) + " more"
		}
		return s
	}
	for _, c := range changes {
		var added, removed, changed []string
		for _, e := range c.Added {
			added = append(added, e.Code)
		}
		for _, e := range c.Removed {
			removed = append(removed, e.Code)
		}
		for _, e := range c.Changed {
			var fs []string
			for _, f := range e.Changes {
				fs = append(fs, f.Field)
			}
			changed = append(changed, e.Code+" ("+strings.Join(fs, ", ")+")")
		}
		var kinds []string
		for _, k := range []string{codes("added", added), codes("removed", removed), codes("changed", changed)} {
			if k != "" {
				kinds = append(kinds, k)
			}
		}
		parts = append(parts, c.List+": "+strings.Join(kinds, "; "))
	}
	return strings.Join(parts, " · ")
}
