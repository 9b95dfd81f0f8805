package payroll_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/payroll"
)

func TestConvert(t *testing.T) {
	t.Parallel()
	overrides := map[string]json.RawMessage{"personalAllowance": json.RawMessage(`0`)}
	tests := []struct {
		name string
		in   payroll.ConvertInput
		want payroll.ConvertResult
	}{
		// E14: (50,000 − 1,027) / 0.648 = 75,575.6; 75,575 nets 50,000.
		{"E14 net to gross", payroll.ConvertInput{Net: s("50000"), EffectiveDate: s("2025-06-15")},
			payroll.ConvertResult{Gross: "75575", Net: "50000", EffectiveDate: "2025-06-15"}},
		// E15: (26,046 − 1,093.20) / 0.648 = 38,507.4 → 38,507.
		{"E15 net to gross", payroll.ConvertInput{Net: s("26046"), EffectiveDate: s("2026-05-15")},
			payroll.ConvertResult{Gross: "38507", Net: "26046", EffectiveDate: "2026-05-15"}},
		{"R5 gross to net", payroll.ConvertInput{Gross: s("30000")},
			payroll.ConvertResult{Gross: "30000", Net: "20533", EffectiveDate: "2026-11-22"}},
		// R11: a contractor's net grosses up by 1/0.9: 10,000 → 11,111
		// (research E16: 11,111 × 10% = 1,111.10; net 9,999.90 → 10,000).
		{"R11 contractor gross-up", payroll.ConvertInput{Net: s("10000"), Contractor: true},
			payroll.ConvertResult{Gross: "11111", Net: "10000", Contractor: true, EffectiveDate: "2026-11-22"}},
		// Without allowance: N = 0.648 G: 20,000 / 0.648 = 30,864.20;
		// 30,864 nets 19,999.87 → 20,000.
		{"overrides", payroll.ConvertInput{Net: s("20000"), RateOverrides: overrides},
			payroll.ConvertResult{Gross: "30864", Net: "20000", EffectiveDate: "2026-11-22"}},
	}
	for _, tt := range tests {
		got, err := payroll.Convert(&tt.in, today)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if *got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, *got, tt.want)
		}
	}
	for _, bad := range []payroll.ConvertInput{{}, {Gross: s("1"), Net: s("1")}, {Net: s("-1")}} {
		_, err := payroll.Convert(&bad, today)
		e, ok := err.(*denar.Error)
		if !ok || len(e.Fields) == 0 || (e.Fields[0].Path != "gross" && e.Fields[0].Path != "net") {
			t.Errorf("%+v: %v, want a field error at gross or net", bad, err)
		}
	}
}

func TestCalculateBatch(t *testing.T) {
	t.Parallel()
	inputs := make([]payroll.Input, 500)
	for i := range inputs {
		g := fmt.Sprint(30000 + i)
		inputs[i] = payroll.Input{GrossSalary: &g}
	}
	res, err := payroll.CalculateBatch(inputs, today)
	if err != nil || len(res) != 500 || res[0].SalaryNet != "20533" || res[499].SalaryGross != "30499" {
		t.Fatalf("batch of 500: %v", err)
	}
	inputs[7].GrossSalary = s("-1")
	inputs[9].GrossSalary = nil
	_, err = payroll.CalculateBatch(inputs, today)
	e, ok := err.(*denar.Error)
	if !ok || len(e.Fields) != 2 || e.Fields[0].Path != "inputs[7].grossSalary" || e.Fields[1].Path != "inputs[9].grossSalary" {
		t.Fatalf("invalid inputs: %v", err)
	}
	for _, n := range []int{0, 501} {
		_, err := payroll.CalculateBatch(make([]payroll.Input, n), today)
		if e, ok := err.(*denar.Error); !ok || e.Fields[0].Path != "inputs" {
			t.Errorf("%d inputs: %v", n, err)
		}
	}
}
