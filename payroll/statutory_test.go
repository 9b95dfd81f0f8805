package payroll_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/payroll"
)

// TestRateHistory: every key has versions, each with a source; versions of
// a key tile time without gaps; RatesOn agrees with the history on every
// boundary; and the July 2026 change (R1) is where the spec puts it.
func TestRateHistory(t *testing.T) {
	t.Parallel()
	hist := payroll.RateHistory()
	byKey := map[string][]payroll.History{}
	for _, h := range hist {
		if h.Source == "" {
			t.Errorf("%s from %s has no source", h.Key, h.EffectiveFrom)
		}
		byKey[h.Key] = append(byKey[h.Key], h)
	}
	for _, k := range payroll.Keys() {
		vs := byKey[k]
		if len(vs) == 0 {
			t.Errorf("key %s has no history", k)
			continue
		}
		for i, v := range vs {
			from, err := time.Parse(time.DateOnly, v.EffectiveFrom)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			if i > 0 && v.EffectiveFrom <= vs[i-1].EffectiveFrom {
				t.Errorf("%s: two versions from %s", k, v.EffectiveFrom)
			}
			if i == len(vs)-1 {
				if v.EffectiveTo != nil {
					t.Errorf("%s: the last version ends on %s", k, *v.EffectiveTo)
				}
			} else {
				to, _ := time.Parse(time.DateOnly, *v.EffectiveTo)
				if to.AddDate(0, 0, 1).Format(time.DateOnly) != vs[i+1].EffectiveFrom {
					t.Errorf("%s: version to %s is not followed by one from the next day (%s)", k, *v.EffectiveTo, vs[i+1].EffectiveFrom)
				}
			}
			got, ok := payroll.RatesOn(from)[k]
			if (v.Value == nil) == ok || (ok && got != *v.Value) {
				t.Errorf("RatesOn(%s)[%s] = %q, %v; history says %v", v.EffectiveFrom, k, got, ok, v.Value)
			}
		}
	}
	june := payroll.RatesOn(time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC))
	july := payroll.RatesOn(time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC))
	if june["pension"] != "18.8" || june["employment"] != "1.2" || july["pension"] != "19.9" || july["employment"] != "0.1" || july["health"] != "7.5" || july["additionalHealth"] != "0.5" {
		t.Errorf("R1 boundary: June %v, July %v", june, july)
	}
	if _, ok := payroll.RatesOn(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))["averageSalary"]; ok {
		t.Error("2024 has an average salary: it was not found, so it must not be invented")
	}
	// 2027: the yearly figures are not published yet; 2026's are carried
	// forward and marked provisional (issue 16, defect 7).
	jan27 := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if r := payroll.RatesOn(jan27); r["personalAllowance"] != "10932" || r["averageSalary"] != "69141" || r["maxBase"] != "1106256" || r["pension"] != "19.9" {
		t.Errorf("2027 rates %v, want 2026's yearly figures carried and the July 2026 rates", r)
	}
	prov := payroll.ProvisionalOn(jan27)
	var keys []string
	for _, p := range prov {
		keys = append(keys, p.Key)
		if p.CarriedFrom != "2026-01-01" || p.Source == "" || p.Reason == "" {
			t.Errorf("provisional %+v: want the 2026 figure with its source and a reason", p)
		}
	}
	if fmt.Sprint(keys) != "[personalAllowance averageSalary minBase maxBase]" {
		t.Errorf("provisional keys %v", keys)
	}
	if p := payroll.ProvisionalOn(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)); len(p) != 0 {
		t.Errorf("2026 figures are published, yet provisional: %v", p)
	}
	if m := payroll.RatesOn(time.Date(2016, 5, 1, 0, 0, 0, 0, time.UTC))["maxBaseMultiplier"]; m != "12" {
		t.Errorf("2016 multiplier %q, want 12", m)
	}
}

// TestProvisional2027 (issue 16, defect 7): from 2027-01-01, before the
// 2027 figures are published, a calculation without effectiveDate is
// computed with 2026's, marked provisional with the carried figures'
// sources, and warned about; a caller's own figure is not provisional.
func TestProvisional2027(t *testing.T) {
	t.Parallel()
	jan := time.Date(2027, 1, 15, 9, 0, 0, 0, time.UTC)
	r, err := payroll.Calculate(&payroll.Input{GrossSalary: s("30000")}, jan)
	if err != nil {
		t.Fatalf("January 2027 without effectiveDate: %v", err)
	}
	if !r.Provisional || r.SalaryNet.String() != "20533" || len(r.ProvisionalFigures) != 3 || len(r.Warnings) != 3 {
		t.Fatalf("provisional %v net %s figures %+v warnings %+v", r.Provisional, r.SalaryNet.String(), r.ProvisionalFigures, r.Warnings)
	}
	for _, f := range r.ProvisionalFigures {
		if f.CarriedFrom != "2026-01-01" || f.Source == "" {
			t.Errorf("figure %+v", f)
		}
	}
	if w := r.Warnings[0]; w.Code != "provisional_figure" || !strings.Contains(w.Message, "2027") {
		t.Errorf("warning %+v", w)
	}
	// With the published figures passed in, nothing is provisional.
	r, err = payroll.Calculate(&payroll.Input{GrossSalary: s("30000"), PersonalAllowance: s("11400"), AverageSalary: s("74000")}, jan)
	if err != nil || r.Provisional || len(r.Warnings) != 0 {
		t.Fatalf("with 2027 figures: %v %+v", err, r)
	}
	// A contractor uses no yearly figure.
	if r, _ := payroll.Calculate(&payroll.Input{GrossSalary: s("11111"), Contractor: true}, jan); r.Provisional {
		t.Error("contractor marked provisional")
	}
	// 2026 is published.
	if r, _ := payroll.Calculate(&payroll.Input{GrossSalary: s("30000")}, today); r.Provisional || r.Warnings == nil || r.ProvisionalFigures == nil {
		t.Errorf("2026: provisional %v warnings %v figures %v", r.Provisional, r.Warnings, r.ProvisionalFigures)
	}
}

// TestRefusalNamesTheMissingFigure: where a figure of the past is not
// known, the refusal says which one.
func TestRefusalNamesTheMissingFigure(t *testing.T) {
	t.Parallel()
	tests := []struct{ date, path, names string }{
		{"2024-05-31", "averageSalary", "minimum contribution base (minBase) and the maximum contribution base (maxBase) for 2024"},
		{"2014-05-31", "averageSalary", "maximum contribution base (maxBase) for 2014"},
		{"2013-05-31", "averageSalary", "minimum contribution base (minBase) for 2013"},
		{"2017-05-31", "personalAllowance", "personal allowance (personalAllowance) for 2017"},
	}
	for _, tt := range tests {
		_, err := payroll.Calculate(&payroll.Input{GrossSalary: s("30000"), EffectiveDate: s(tt.date)}, today)
		var e *denar.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v", tt.date, err)
		}
		found := false
		for _, f := range e.Fields {
			if f.Path == tt.path && strings.Contains(f.Message, tt.names) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %v, want %q at %s", tt.date, e.Fields, tt.names, tt.path)
		}
	}
}
