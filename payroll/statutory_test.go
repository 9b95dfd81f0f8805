package payroll_test

import (
	"testing"
	"time"

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
	if r := payroll.RatesOn(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)); r["personalAllowance"] != "" || r["averageSalary"] != "" || r["pension"] != "19.9" {
		t.Errorf("2027 carries 2026's yearly figures or loses the rates: %v", r)
	}
	if m := payroll.RatesOn(time.Date(2016, 5, 1, 0, 0, 0, 0, time.UTC))["maxBaseMultiplier"]; m != "12" {
		t.Errorf("2016 multiplier %q, want 12", m)
	}
}
