package payroll_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/denar-mk/denar/money"
	"github.com/denar-mk/denar/payroll"
)

// FuzzCalculate decodes arbitrary JSON into an Input and calculates it: no
// input may panic; every result has whole, non-negative money; net ≤ gross
// for non-contractors; and contributions stay within the rates on the
// maximum base of the date (unless the caller overrode rates or bases).
func FuzzCalculate(f *testing.F) {
	for _, seed := range []string{
		`{"grossSalary":"30000"}`,
		`{"targetNet":"50000","effectiveDate":"2025-06-15"}`,
		`{"grossSalary":"1200000","overtimeHours":12.5,"nightHours":40,"sickCompanyHours":16}`,
		`{"grossSalary":"15000","absentHours":88,"minBaseMode":"always","seniority":{"months":250}}`,
		`{"grossSalary":"30000","bonusAmount":"5000","netBased":true,"sundayHours":8}`,
		`{"targetNet":"30000","bonusAmount":"5000","bonusBasis":"gross","netBased":true,"overtimeHours":8}`,
		`{"grossSalary":"30000","period":{"year":2026,"month":3},"placements":[{"startDate":"2026-03-05","endDate":"2026-03-20"}]}`,
		`{"grossSalary":"11111","contractor":true,"rateOverrides":{"pit":"15"}}`,
		`{"grossSalary":"30000","workingHours":88,"fundHours":176,"deductions":[{"description":"x","amount":"10"}]}`,
		`{"grossSalary":"6000","workingHours":92,"fundHours":184,"noPersonalAllowance":true,"effectiveDate":"2012-02-29"}`,
		`{"grossSalary":"30000","effectiveDate":"2024-02-01","averageSalary":"60000","rateOverrides":{"maxBaseMultiplier":100}}`,
		`{"grossSalary":"999999999","overtimeHours":744,"overtimeRate":1000,"workingHours":1}`,
		`{"targetNet":"999999999","rateOverrides":{"pension":100}}`,
		`{"grossSalary":"99999999999"}`, `{"grossSalary":"1e3"}`, `{"overtimeHours":1e400}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := payroll.DecodeInput(data)
		if err != nil {
			return
		}
		r, err := payroll.Calculate(in, today)
		if err != nil {
			return
		}
		raw, _ := json.Marshal(r)
		var fields map[string]any
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatalf("result JSON does not parse: %v\n%s", err, raw)
		}
		for k, v := range fields {
			if str, ok := v.(string); ok && k != "bonusBasis" && k != "insuranceCode" {
				if n, err := strconv.ParseInt(str, 10, 64); err != nil || n < 0 {
					t.Fatalf("%s = %q is not a whole non-negative amount for %s", k, str, data)
				}
			}
		}
		gross, _ := strconv.ParseInt(r.SalaryGross.String(), 10, 64)
		net, _ := strconv.ParseInt(r.SalaryNet.String(), 10, 64)
		if !in.Contractor && net > gross {
			t.Fatalf("net %d > gross %d for %s", net, gross, data)
		}
		if len(in.RateOverrides) > 0 || in.AverageSalary != nil {
			return
		}
		date, _ := payroll.EffectiveDate(in, today)
		rates := payroll.RatesOn(date)
		maxBase, err := money.Parse(rates[payroll.KeyMaxBase])
		if err != nil {
			t.Fatalf("a calculation on %s succeeded without a maximum base", date)
		}
		var sum money.Amount
		for _, k := range []string{payroll.KeyPension, payroll.KeyHealth, payroll.KeyAdditionalHealth, payroll.KeyEmployment} {
			sum = sum.Add(money.MustParse(rates[k]))
		}
		// Each of the four contributions rounds by at most half a denar.
		bound := maxBase.Mul(sum).Div(money.FromInt(100), 2).Add(money.FromInt(2))
		contrib := r.TotalContributions
		if contrib.GreaterThan(bound) {
			t.Fatalf("contributions %s exceed the rates × cap %s on %s for %s", contrib, bound, date.Format("2006-01-02"), data)
		}
	})
}
