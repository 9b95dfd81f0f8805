package payroll_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/denar-mk/denar/payroll"
)

// FuzzCalculate decodes arbitrary JSON into an Input and calculates it: no
// input may panic; every result keeps net ≤ gross (non-contractors) and
// contributions within the rates of the capped base.
func FuzzCalculate(f *testing.F) {
	for _, seed := range []string{
		`{"grossSalary":"30000"}`,
		`{"targetNet":"50000","effectiveDate":"2025-06-15"}`,
		`{"grossSalary":"1200000","overtimeHours":12.5,"nightHours":40,"sickCompanyHours":16}`,
		`{"grossSalary":"15000","absentHours":88,"minBaseMode":"always","seniority":{"months":250}}`,
		`{"grossSalary":"30000","bonusAmount":"5000","netBased":true,"sundayHours":8}`,
		`{"grossSalary":"30000","period":{"year":2026,"month":3},"placements":[{"startDate":"2026-03-05","endDate":"2026-03-20"}]}`,
		`{"grossSalary":"11111","contractor":true,"rateOverrides":{"pit":"15"}}`,
		`{"grossSalary":"30000","workingHours":88,"fundHours":176,"deductions":[{"description":"x","amount":"10"}]}`,
		`{"grossSalary":"99999999999"}`, `{"grossSalary":"1e3"}`, `{"overtimeHours":1e400}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in payroll.Input
		if json.Unmarshal(data, &in) != nil {
			return
		}
		r, err := payroll.Calculate(&in, today)
		if err != nil {
			return
		}
		gross, _ := strconv.ParseInt(r.SalaryGross, 10, 64)
		net, _ := strconv.ParseInt(r.SalaryNet, 10, 64)
		contrib, _ := strconv.ParseInt(r.TotalContributions, 10, 64)
		if !in.Contractor && net > gross {
			t.Fatalf("net %d > gross %d for %s", net, gross, data)
		}
		if net < 0 || contrib < 0 {
			t.Fatalf("negative net %d or contributions %d for %s", net, contrib, data)
		}
		// 28% of the largest published cap, plus rounding, bounds contributions
		// unless the caller overrode the rates or the bases.
		if len(in.RateOverrides) == 0 && in.AverageSalary == nil && contrib > 1106256*30/100+4 {
			t.Fatalf("contributions %d exceed the rates on the cap for %s", contrib, data)
		}
	})
}
