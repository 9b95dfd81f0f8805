package payroll_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/denar-mk/denar/money"
	"github.com/denar-mk/denar/payroll"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// explainCases are research/payroll.md's worked examples and issue 16's
// partial months, explained line by line.
var explainCases = []struct{ name, body string }{
	{"r5_reference", `{"grossSalary":"30000","effectiveDate":"2026-11-22"}`},
	{"e8_two_decimals", `{"grossSalary":"36037","effectiveDate":"2026-01-15"}`},
	{"e12_above_the_cap", `{"grossSalary":"1200000","effectiveDate":"2025-06-15"}`},
	{"e14_net_to_gross", `{"targetNet":"50000","effectiveDate":"2025-06-15"}`},
	{"e16_contractor", `{"grossSalary":"11111","contractor":true,"effectiveDate":"2026-11-22"}`},
	{"r2_partial_month_top_up", `{"grossSalary":"30000","absentHours":88,"effectiveDate":"2026-11-22"}`},
	{"march_2026_leaver", `{"grossSalary":"51000","period":{"year":2026,"month":3},"placements":[{"startDate":"2024-02-01","endDate":"2026-03-13"}]}`},
	{"premiums_seniority_net_bonus", `{"grossSalary":"30000","effectiveDate":"2026-11-22","nightHours":16,"overtimeHours":10,"sickCompanyHours":8,"seniority":{"months":125},"bonusAmount":"5000","deductions":[{"description":"кредит","amount":"1200.50"}]}`},
	{"january_2027_provisional", `{"grossSalary":"30000","effectiveDate":"2027-01-20"}`},
}

var workLog = regexp.MustCompile(`\bR[0-9]+\b|research(/[a-z]+\.md)? ?§|[Ii]ssue [0-9]`)

// TestExplainGolden: every worked example's explanation is pinned in
// testdata/explain, and its lines agree with the result: each line that
// produces a result field, rounded to whole denars, is that field.
func TestExplainGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range explainCases {
		in, err := payroll.DecodeInput([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		r, err := payroll.CalculateExplained(in, today)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var raw bytes.Buffer
		if err := json.Indent(&raw, r.AppendJSON(nil), "", "  "); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		raw.WriteByte('\n')
		path := filepath.Join("testdata", "explain", tc.name+".json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, raw.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if want, err := os.ReadFile(path); err != nil || !bytes.Equal(raw.Bytes(), want) {
			t.Errorf("%s differs from %s (go test ./payroll -run Explain -update, and review the diff)", tc.name, path)
		}
		// The explanation is read by payroll accountants: it cites the
		// rules in words, never the project's own labels (R1…R12) or its
		// research notes.
		if m := workLog.Find(raw.Bytes()); m != nil {
			t.Errorf("%s: the explanation says %q", tc.name, m)
		}
		var fields map[string]any
		_ = json.Unmarshal(r.AppendJSON(nil), &fields)
		for _, l := range r.Explain.Lines {
			v, ok := fields[l.Step].(string)
			if !ok || l.Step == "baseGross" {
				continue
			}
			if got := money.MustParse(l.Value).Round(0).String(); got != v {
				t.Errorf("%s: line %s gives %s → %s, the result says %s", tc.name, l.Step, l.Value, got, v)
			}
		}
		plain, _ := payroll.Calculate(in, today)
		if plain.Explain != nil || string(plainJSON(plain)) != string(plainJSON(r)) {
			t.Errorf("%s: explaining changes the result", tc.name)
		}
	}
}

// plainJSON is the result without its explanation.
func plainJSON(r *payroll.Result) []byte {
	c := *r
	c.Explain = nil
	return c.AppendJSON(nil)
}

// TestExplainNamesSources: every statutory figure a line takes names its
// effective date and source.
func TestExplainNamesSources(t *testing.T) {
	t.Parallel()
	r, err := payroll.CalculateExplained(&payroll.Input{GrossSalary: s("30000"), EffectiveDate: s("2026-11-22")}, today)
	if err != nil {
		t.Fatal(err)
	}
	statutory := 0
	for _, l := range r.Explain.Lines {
		for _, in := range l.Inputs {
			switch in.Name {
			case payroll.KeyPension, payroll.KeyHealth, payroll.KeyAdditionalHealth, payroll.KeyEmployment, payroll.KeyPIT, payroll.KeyPersonalAllowance, payroll.KeyMaxBase:
				statutory++
				if in.EffectiveFrom == "" || in.Source == "" {
					t.Errorf("line %s: %s without effective date or source", l.Step, in.Name)
				}
			}
		}
	}
	if statutory < 7 {
		t.Errorf("%d statutory inputs named", statutory)
	}
	if !strings.Contains(r.Explain.Lines[len(r.Explain.Lines)-1].Formula, "whole denars") {
		t.Error("no line says how the reported figures are rounded")
	}
}
