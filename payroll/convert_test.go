package payroll_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/payroll"
)

type convertWant struct {
	Gross, Net    string
	Contractor    bool
	EffectiveDate string
}

func TestConvert(t *testing.T) {
	t.Parallel()
	overrides := map[string]json.RawMessage{"personalAllowance": json.RawMessage(`0`)}
	tests := []struct {
		name string
		in   payroll.ConvertInput
		want convertWant
	}{
		// E14: (50,000 − 1,027) / 0.648 = 75,575.6; 75,575 nets 50,000.
		{"E14 net to gross", payroll.ConvertInput{Net: s("50000"), EffectiveDate: s("2025-06-15")},
			convertWant{Gross: "75575", Net: "50000", EffectiveDate: "2025-06-15"}},
		// E15: (26,046 − 1,093.20) / 0.648 = 38,507.4 → 38,507.
		{"E15 net to gross", payroll.ConvertInput{Net: s("26046"), EffectiveDate: s("2026-05-15")},
			convertWant{Gross: "38507", Net: "26046", EffectiveDate: "2026-05-15"}},
		{"R5 gross to net", payroll.ConvertInput{Gross: s("30000")},
			convertWant{Gross: "30000", Net: "20533", EffectiveDate: "2026-11-22"}},
		// The caller's gross comes back as given (issue 16, defect 8); its
		// net is 20,533.56 → 20,534.
		{"gross with cents", payroll.ConvertInput{Gross: s("30000.50")},
			convertWant{Gross: "30000.5", Net: "20534", EffectiveDate: "2026-11-22"}},
		// R11: a contractor's net grosses up by 1/0.9: 10,000 → 11,111
		// (research E16: 11,111 × 10% = 1,111.10; net 9,999.90 → 10,000).
		{"R11 contractor gross-up", payroll.ConvertInput{Net: s("10000"), Contractor: true},
			convertWant{Gross: "11111", Net: "10000", Contractor: true, EffectiveDate: "2026-11-22"}},
		// Without allowance: N = 0.648 G: 20,000 / 0.648 = 30,864.20;
		// 30,864 nets 19,999.87 → 20,000.
		{"overrides", payroll.ConvertInput{Net: s("20000"), RateOverrides: overrides},
			convertWant{Gross: "30864", Net: "20000", EffectiveDate: "2026-11-22"}},
	}
	for _, tt := range tests {
		got, err := payroll.Convert(&tt.in, today)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if g := (convertWant{got.Gross.String(), got.Net.String(), got.Contractor, got.EffectiveDate}); g != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, g, tt.want)
		}
	}
	// A date whose figures are not published yet converts on the last
	// published ones and says so, as a calculation does.
	carried, err := payroll.Convert(&payroll.ConvertInput{Net: s("20533"), EffectiveDate: s("2027-03-01")}, today)
	if err != nil {
		t.Fatal(err)
	}
	if carried.Gross.String() != "29999" || !carried.Provisional || len(carried.ProvisionalFigures) == 0 ||
		len(carried.Warnings) != len(carried.ProvisionalFigures) || carried.Warnings[0].Code != "provisional_figure" {
		t.Errorf("2027: %+v, want 29999 marked provisional with its figures and warnings", carried)
	}
	if now, _ := payroll.Convert(&payroll.ConvertInput{Gross: s("30000")}, today); now.Provisional || now.Warnings == nil || now.ProvisionalFigures == nil {
		t.Errorf("today: %+v, want not provisional, empty lists", now)
	}
	// A figure the service does not know is asked for where convert
	// takes it: a rate override.
	_, err = payroll.Convert(&payroll.ConvertInput{Gross: s("30000"), EffectiveDate: s("2023-03-01")}, today)
	if e, ok := err.(*denar.Error); !ok || len(e.Fields) == 0 || e.Fields[0].Path != "rateOverrides.averageSalary" ||
		!strings.Contains(e.Fields[0].Message, "pass rateOverrides.averageSalary") {
		t.Errorf("2023: %v, want a field error at rateOverrides.averageSalary", err)
	}
	for _, bad := range []payroll.ConvertInput{{}, {Gross: s("1"), Net: s("1")}, {Net: s("-1")}} {
		_, err := payroll.Convert(&bad, today)
		e, ok := err.(*denar.Error)
		if !ok || len(e.Fields) == 0 || (e.Fields[0].Path != "gross" && e.Fields[0].Path != "net") {
			t.Errorf("%+v: %v, want a field error at gross or net", bad, err)
		}
	}
}

// TestAppendBatchJSON: one result per input in input order; any invalid
// input fails the batch with every input's problems under inputs[i].
func TestAppendBatchJSON(t *testing.T) {
	t.Parallel()
	body := func(inputs []string) []byte { return []byte(`{"inputs":[` + strings.Join(inputs, ",") + `]}`) }
	inputs := make([]string, 500)
	for i := range inputs {
		inputs[i] = fmt.Sprintf(`{"grossSalary":"%d"}`, 30000+i)
	}
	out, err := payroll.AppendBatchJSON(nil, body(inputs), today, false)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Data []map[string]any }
	if err := json.Unmarshal(out, &res); err != nil || len(res.Data) != 500 || res.Data[0]["salaryNet"] != "20533" || res.Data[499]["salaryGross"] != "30499" {
		t.Fatalf("batch of 500: %v %d", err, len(res.Data))
	}
	inputs[7] = `{"grossSalary":"-1"}`
	inputs[9] = `{"colour":"red"}`
	_, err = payroll.AppendBatchJSON(nil, body(inputs), today, false)
	e, ok := err.(*denar.Error)
	if !ok || len(e.Fields) != 3 || e.Fields[0].Path != "inputs[7].grossSalary" || e.Fields[1].Path != "inputs[9].colour" || e.Fields[2].Path != "inputs[9].grossSalary" {
		t.Fatalf("invalid inputs: %v", err)
	}
	for _, n := range []int{0, 501} {
		many := make([]string, n)
		for i := range many {
			many[i] = `{"grossSalary":"1"}`
		}
		_, err := payroll.AppendBatchJSON(nil, body(many), today, false)
		if e, ok := err.(*denar.Error); !ok || e.Fields[0].Path != "inputs" {
			t.Errorf("%d inputs: %v", n, err)
		}
	}
}
