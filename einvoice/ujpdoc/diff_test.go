package ujpdoc

import (
	"reflect"
	"slices"
	"testing"
)

// TestDiff: each kind of change UJP can make to its lists is reported in
// its list, with the codes and names; the snapshot's source notes and the
// order of entries are not changes.
func TestDiff(t *testing.T) {
	t.Parallel()
	allTypes := func(cb *Codebooks) map[string][]string {
		m := map[string][]string{}
		for _, d := range cb.DocumentTypes {
			for _, ti := range cb.TaxIndicators {
				m[d.Code] = append(m[d.Code], ti.Code)
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		change func(cb *Codebooks)
		want   []ListChange
	}{
		{"nothing", func(cb *Codebooks) {}, nil},
		{"source notes and order", func(cb *Codebooks) {
			for i := range cb.TaxIndicators {
				cb.TaxIndicators[i].Source = ""
			}
			slices.Reverse(cb.Countries)
		}, nil},
		{"every type listing every indicator", func(cb *Codebooks) { cb.DocTypeTaxIndicators = allTypes(cb) }, nil},
		{"a new indicator for one document type", func(cb *Codebooks) {
			cb.TaxIndicators = append(cb.TaxIndicators, TaxIndicator{Code: "DDV-14-3-10", CategoryName: "Нов", VatImpact: ImpactStandard, TaxGroupCodes: []string{"DDV-V"}})
			cb.DocTypeTaxIndicators = allTypes(cb)
			for dt, l := range cb.DocTypeTaxIndicators {
				if dt != "100" {
					cb.DocTypeTaxIndicators[dt] = slices.DeleteFunc(l, func(c string) bool { return c == "DDV-14-3-10" })
				}
			}
		}, []ListChange{
			{List: CBTaxIndicators, Added: []CodeEntry{{"DDV-14-3-10", "Нов"}}, Removed: []CodeEntry{}, Changed: []CodeChange{}},
			{List: CBDocTypeTaxIndicators, Added: []CodeEntry{{"100/DDV-14-3-10", "Нов"}}, Removed: []CodeEntry{}, Changed: []CodeChange{}},
		}},
		{"a new indicator for every document type", func(cb *Codebooks) {
			cb.TaxIndicators = append(cb.TaxIndicators, TaxIndicator{Code: "DDV-X", CategoryName: "Х", TaxGroupCodes: []string{"DDV-A"}})
		}, []ListChange{{List: CBTaxIndicators, Added: []CodeEntry{{"DDV-X", "Х"}}, Removed: []CodeEntry{}, Changed: []CodeChange{}}}},
		{"an indicator no longer allowed for one type", func(cb *Codebooks) {
			cb.DocTypeTaxIndicators = allTypes(cb)
			cb.DocTypeTaxIndicators["110"] = slices.DeleteFunc(cb.DocTypeTaxIndicators["110"], func(c string) bool { return c == "DDV-A" })
		}, []ListChange{{List: CBDocTypeTaxIndicators, Added: []CodeEntry{}, Removed: []CodeEntry{{"110/DDV-A", "Стандардно оданочување со општа даночна стапка од 18%"}}, Changed: []CodeChange{}}}},
		{"a removed payment type", func(cb *Codebooks) {
			cb.PaymentTypes = slices.DeleteFunc(cb.PaymentTypes, func(c Code) bool { return c.Code == "P13" })
		}, []ListChange{{List: CBPaymentTypes, Added: []CodeEntry{}, Removed: []CodeEntry{{"P13", "Плаќање на рати"}}, Changed: []CodeChange{}}}},
		{"a renamed document type", func(cb *Codebooks) { cb.DocumentTypes[0].Name = "Општа Фактура" },
			[]ListChange{{List: CBDocumentTypes, Added: []CodeEntry{}, Removed: []CodeEntry{},
				Changed: []CodeChange{{Code: "100", Name: "Општа Фактура", Changes: []FieldChange{{"name", "Фактура", "Општа Фактура"}}}}}}},
		{"a changed rate", func(cb *Codebooks) {
			for i := range cb.TaxGroups {
				if cb.TaxGroups[i].Code == "DDV-B" {
					cb.TaxGroups[i].Percent = 6
				}
			}
		}, []ListChange{{List: CBTaxGroups, Added: []CodeEntry{}, Removed: []CodeEntry{},
			Changed: []CodeChange{{Code: "DDV-B", Name: "ДДВ 5%", Changes: []FieldChange{{"percent", "5", "6"}}}}}}},
		{"an indicator's rate groups", func(cb *Codebooks) {
			for i := range cb.TaxIndicators {
				if cb.TaxIndicators[i].Code == "DDV-A" {
					cb.TaxIndicators[i].TaxGroupCodes = []string{"DDV-A", "DDV-V"}
				}
			}
		}, []ListChange{{List: CBTaxIndicators, Added: []CodeEntry{}, Removed: []CodeEntry{},
			Changed: []CodeChange{{Code: "DDV-A", Name: "Стандардно оданочување со општа даночна стапка од 18%",
				Changes: []FieldChange{{"taxGroups", "DDV-A", "DDV-A, DDV-V"}}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			prev, next := Snapshot(), Snapshot()
			tc.change(next)
			got := Diff(prev, next)
			if tc.want != nil && tc.want[0].List == CBTaxGroups {
				// The group's name is the snapshot's.
				g, _ := prev.TaxGroup("DDV-B")
				tc.want[0].Changed[0].Name = g.Name
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Diff:\n got %+v\nwant %+v", got, tc.want)
			}
			same := reflect.DeepEqual(Digests(prev), Digests(next))
			if same != (tc.want == nil) {
				t.Errorf("digests equal %v, want %v", same, tc.want == nil)
			}
		})
	}
}

func TestDiffSummary(t *testing.T) {
	t.Parallel()
	prev, next := Snapshot(), Snapshot()
	next.DocumentTypes[0].Name = "Општа Фактура"
	next.PaymentTypes = slices.DeleteFunc(next.PaymentTypes, func(c Code) bool { return c.Code == "P13" })
	next.Currencies = append(next.Currencies, Code{Code: "AAA"}, Code{Code: "BBB"}, Code{Code: "CCC"})
	got := Summary(Diff(prev, next), 2)
	want := "document-types: changed 100 (name) · payment-types: removed P13 · currencies: added AAA, BBB and 1 more"
	if got != want {
		t.Fatalf("Summary:\n got %q\nwant %q", got, want)
	}
}

func TestIndicatorAllowed(t *testing.T) {
	t.Parallel()
	cb := Snapshot()
	if !cb.IndicatorAllowed("100", "DDV-A") || cb.IndicatorDocTypes("DDV-A") != nil {
		t.Fatal("the snapshot restricts an indicator")
	}
	cb.DocTypeTaxIndicators = map[string][]string{"110": {"DDV-V"}}
	if cb.IndicatorAllowed("110", "DDV-A") || !cb.IndicatorAllowed("100", "DDV-A") || !cb.IndicatorAllowed("110", "DDV-V") {
		t.Fatal("a type's list is not followed")
	}
	if got := cb.IndicatorDocTypes("DDV-A"); slices.Contains(got, "110") || !slices.Contains(got, "100") {
		t.Fatalf("IndicatorDocTypes(DDV-A) = %v", got)
	}
}
