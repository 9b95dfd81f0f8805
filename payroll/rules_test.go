package payroll_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/payroll"
)

// calcJSON decodes body strictly, calculates it at now and returns the
// result as its JSON object, so expectations use the wire names.
func calcJSON(t *testing.T, body string, now time.Time) (map[string]any, error) {
	t.Helper()
	in, err := payroll.DecodeInput([]byte(body))
	if err != nil {
		return nil, err
	}
	r, err := payroll.Calculate(in, now)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

// wire writes a JSON value the way the expectations spell it: strings bare,
// numbers as JSON writes them.
func wire(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRules has a worked example for every rule R1–R12 of the spec and for
// each item of the hours model. All figures: 2 decimals half-up inside,
// whole denars half-up on output. Rates: 18.8/7.5/0.5/1.2 to June 2026,
// 19.9/7.5/0.5/0.1 from July 2026; allowance 2026 10,932; minimum base 2026
// 34,571, maximum 1,106,256.
func TestRulesByHand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		now  time.Time // zero: the package's fixed "today", 2026-11-22
		want map[string]string
	}{
		// R1: 38,507 on the last day of the old rates and the first of the new.
		// June: pension 38,507 × 18.8% = 7,239.32; employment × 1.2% = 462.08.
		// July: pension × 19.9% = 7,662.89; employment × 0.1% = 38.51. Both
		// total 28%: 10,781.96 and 10,781.97, so the net is 26,046 either way.
		{"R1 June 2026 rates", `{"grossSalary":"38507","effectiveDate":"2026-06-30"}`, time.Time{},
			map[string]string{"pension": "7239", "employmentContrib": "462", "salaryNet": "26046"}},
		{"R1 July 2026 rates", `{"grossSalary":"38507","effectiveDate":"2026-07-01"}`, time.Time{},
			map[string]string{"pension": "7663", "employmentContrib": "39", "totalContributions": "10782", "salaryNet": "26046"}},
		// R2 cap: 2025, 1,200,000 above the 1,010,464 cap (research E12):
		// 189,967.23 + 75,784.80 + 5,052.32 + 12,125.57 = 282,929.92;
		// taxable 1,200,000 − 282,929.92 − 10,270 = 906,800.08; PIT 90,680.01;
		// net 826,390.07.
		{"R2 cap", `{"grossSalary":"1200000","effectiveDate":"2025-06-15"}`, time.Time{},
			map[string]string{"pension": "189967", "totalContributions": "282930", "pit": "90680", "salaryNet": "826390"}},
		// R2 top-up, minBaseMode always, full month: 30,000 below 34,571;
		// shortfall 4,571: pension 909.63, health 342.83, injury 22.86,
		// employment 4.57. The employee's figures do not change (R5).
		{"R2 always", `{"grossSalary":"30000","minBaseMode":"always"}`, time.Time{},
			map[string]string{"pensionTopUp": "910", "healthTopUp": "343", "disabilityTopUp": "23", "employmentTopUp": "5", "totalContributions": "8400", "salaryNet": "20533"}},
		// R2 prorated (default) in a full month: no top-up (research E2).
		{"R2 prorated full month", `{"grossSalary":"30000"}`, time.Time{},
			map[string]string{"pensionTopUp": "0", "healthTopUp": "0"}},
		// R2 prorated in a partial month: 88 of 176 hours absent, gross 15,000;
		// minimum 34,571 × 88/176 = 17,285.50 → 17,286; shortfall 2,286:
		// pension 454.91, health 171.45, injury 11.43, employment 2.29.
		// Allowance 10,932 × ½ = 5,466. Contributions 4,200; taxable 5,334;
		// PIT 533.40; net 10,266.60.
		{"R2 prorated partial month", `{"grossSalary":"30000","absentHours":88}`, time.Time{},
			map[string]string{"salaryGross": "15000", "pensionTopUp": "455", "healthTopUp": "171", "disabilityTopUp": "11", "employmentTopUp": "2",
				"personalAllowance": "5466", "taxableIncome": "5334", "pit": "533", "salaryNet": "10267"}},
		{"R2 off", `{"grossSalary":"30000","absentHours":88,"minBaseMode":"off"}`, time.Time{},
			map[string]string{"pensionTopUp": "0", "salaryNet": "10267"}},
		// R2 research E4 (UJP-MPIN-2016 p.37): February 2012, 20 h a week = 92
		// of 184 hours, gross 6,000. Minimum base 15,295.50 × 92/184 =
		// 7,647.75 → 7,648; top-up base 1,648: pension 18% 296.64, health
		// 7.3% 120.30, injury 0.5% 8.24, employment 1.2% 19.78. Contributions
		// on 6,000: 1,080 + 438 + 30 + 72 = 1,620; no allowance (2012's is
		// not in the tables): PIT 438; net 3,942.
		{"R2 E4 part-time 2012", `{"grossSalary":"6000","workingHours":92,"fundHours":184,"noPersonalAllowance":true,"effectiveDate":"2012-02-29"}`, time.Time{},
			map[string]string{"pensionTopUp": "297", "healthTopUp": "120", "disabilityTopUp": "8", "employmentTopUp": "20", "totalContributions": "1620", "pit": "438", "salaryNet": "3942"}},
		// R3 allowance replaced: 30,000 − 8,400 − 5,000 = 16,600; PIT 1,660;
		// net 19,940.
		{"R3 personalAllowance", `{"grossSalary":"30000","personalAllowance":"5000"}`, time.Time{},
			map[string]string{"personalAllowance": "5000", "taxableIncome": "16600", "pit": "1660", "salaryNet": "19940"}},
		// R3 noPersonalAllowance: 21,600 × 10% = 2,160; net 19,440.
		{"R3 noPersonalAllowance", `{"grossSalary":"30000","noPersonalAllowance":true}`, time.Time{},
			map[string]string{"personalAllowance": "0", "taxableIncome": "21600", "pit": "2160", "salaryNet": "19440"}},
		// R3 floor at zero: 10,000 − 2,800 = 7,200 < 10,932: no PIT; the
		// allowance used is 7,200.
		{"R3 floor", `{"grossSalary":"10000"}`, time.Time{},
			map[string]string{"personalAllowance": "7200", "taxableIncome": "0", "pit": "0", "salaryNet": "7200"}},
		// pitExempt: no PIT at all; 30,000 − 8,400.
		{"pitExempt", `{"grossSalary":"30000","pitExempt":true}`, time.Time{},
			map[string]string{"pit": "0", "salaryNet": "21600"}},
		// averageSalary override for 2024 (not published in our sources):
		// 60,000 → minimum 30,000, maximum 16 × 60,000 = 960,000; 2024
		// allowance 9,540 and 28%: 1,000,000 capped: 268,800 contributions;
		// taxable 1,000,000 − 268,800 − 9,540 = 721,660; PIT 72,166; net
		// 659,034.
		{"averageSalary 2024", `{"grossSalary":"1000000","averageSalary":"60000","effectiveDate":"2024-05-31"}`, time.Time{},
			map[string]string{"totalContributions": "268800", "pit": "72166", "salaryNet": "659034"}},
		// rateOverrides: pension 20% → 6,000; total 8,430; allowance 0:
		// taxable 21,570; PIT 2,157; net 19,413.
		{"rateOverrides", `{"grossSalary":"30000","rateOverrides":{"pension":20,"personalAllowance":"0"}}`, time.Time{},
			map[string]string{"pension": "6000", "totalContributions": "8430", "pit": "2157", "salaryNet": "19413"}},
		// R4 contractor: 11,111 × 10% = 1,111.10; net 9,999.90 → 10,000
		// (research E16).
		{"R4 contractor", `{"grossSalary":"11111","contractor":true}`, time.Time{},
			map[string]string{"pit": "1111", "salaryNet": "10000", "totalContributions": "0", "personalAllowance": "0", "taxableIncome": "11111"}},
		{"R4 contractor pitExempt", `{"grossSalary":"11111","contractor":true,"pitExempt":true}`, time.Time{},
			map[string]string{"pit": "0", "salaryNet": "11111"}},
		// R5 exactly as the spec writes it.
		{"R5", `{"grossSalary":"30000","workingHours":176}`, time.Time{},
			map[string]string{"pension": "5970", "health": "2250", "additionalHealth": "150", "employmentContrib": "30", "totalContributions": "8400",
				"personalAllowance": "10932", "taxableIncome": "10668", "pit": "1067", "salaryNet": "20533", "netPaid": "20533"}},
		// R6 default date is today in Europe/Skopje: 21:30 UTC on 30 June is
		// 23:30 in Skopje (June: pension 18.8% = 5,640); 22:30 UTC is already
		// 1 July there (19.9% = 5,970).
		{"R6 June in Skopje", `{"grossSalary":"30000"}`, time.Date(2026, 6, 30, 21, 30, 0, 0, time.UTC),
			map[string]string{"pension": "5640"}},
		{"R6 July in Skopje", `{"grossSalary":"30000"}`, time.Date(2026, 6, 30, 22, 30, 0, 0, time.UTC),
			map[string]string{"pension": "5970"}},
		// R6 with period and no effectiveDate: the period's last day.
		{"R6 period date", `{"grossSalary":"30000","period":{"year":2026,"month":6},"workingHours":176}`, time.Time{},
			map[string]string{"pension": "5640"}},
		// R7 gross bonus: 35,000; contributions 9,800; taxable 14,268; PIT
		// 1,426.80; net 23,773.20.
		{"R7 gross bonus", `{"grossSalary":"30000","bonusAmount":"5000","bonusBasis":"gross"}`, time.Time{},
			map[string]string{"salaryGross": "35000", "bonusAmount": "5000", "bonusBasis": "gross", "salaryNet": "23773"}},
		// R7 net bonus: net 20,533 + 5,000. A gross bonus B nets B × 0.72 ×
		// 0.9 = 0.648 B: 5,000 / 0.648 = 7,716.05; 7,716 nets 20,533.20 +
		// 4,999.97 = 25,533.17 → 25,533; 7,715 nets 25,532.52 → 25,533 too,
		// 7,714 nets 25,531.87 → 25,532. So the bonus is 7,715.
		{"R7 net bonus", `{"grossSalary":"30000","bonusAmount":"5000"}`, time.Time{},
			map[string]string{"salaryGross": "37715", "bonusAmount": "7715", "bonusBasis": "net", "salaryNet": "25533"}},
		// R8 deductions: only netPaid and deductionsTotal change:
		// 20,533.20 − 1,200.50 = 19,332.70.
		{"R8 deductions", `{"grossSalary":"30000","deductions":[{"description":"кредит","amount":"1000.50"},{"description":"синдикат","amount":"200"}]}`, time.Time{},
			map[string]string{"salaryGross": "30000", "totalContributions": "8400", "salaryNet": "20533", "deductionsTotal": "1201", "netPaid": "19333"}},
		// R9 hoursInformational: the hours are reported, the pay is not.
		{"R9 hoursInformational", `{"grossSalary":"30000","nightHours":16,"overtimeHours":10,"hoursInformational":true}`, time.Time{},
			map[string]string{"salaryGross": "30000", "nightHours": "16", "nightPay": "0", "overtimeHours": "10", "overtimePay": "0"}},
		// R9 seniorityInformational: 5% recorded, not paid.
		{"R9 seniorityInformational", `{"grossSalary":"30000","seniorityPercentage":5,"seniorityInformational":true}`, time.Time{},
			map[string]string{"salaryGross": "30000", "seniority": "0", "seniorityPercentage": "5"}},
		// R10 netBased: 16 night hours at 135%. Base net 20,533.20 / 176 =
		// 116.6659 per hour; the premium must add 16 × 35% of that = 653.33;
		// target 21,186.53 → reported 21,187 (TestNetBased checks the gross).
		{"R10 netBased", `{"grossSalary":"30000","nightHours":16,"netBased":true}`, time.Time{},
			map[string]string{"salaryNet": "21187", "nightHours": "16"}},
		// R12 default fund 176: overtime 10 h × 30,000/176 × 135% = 2,301.14.
		{"R12 default fund", `{"grossSalary":"30000","overtimeHours":10}`, time.Time{},
			map[string]string{"workingHours": "176", "overtimePay": "2301", "salaryGross": "32301"}},

		// The hours model, one item each (base 30,000, 176 h: 170.4545 an hour).
		// Inside the fund at the total rate: 16 night hours at 135% =
		// 30,000 × 16 × 1.35 / 176 = 3,681.82; other 160 h 27,272.73;
		// gross 30,954.55.
		{"hours: night inside the fund", `{"grossSalary":"30000","nightHours":16}`, time.Time{},
			map[string]string{"nightPay": "3682", "salaryGross": "30955"}},
		// Every premium kind with its own rate: holiday 8 h at 150% =
		// 2,045.45; Sunday 8 h at 150% = 2,045.45; shift 3 8 h at 135% =
		// 1,840.91; special 8 h at 110% = 1,500; regular 144 h = 24,545.45;
		// gross 31,977.26 (sum of the unrounded cents: 31,977.26).
		{"hours: several premium kinds", `{"grossSalary":"30000","holidayHours":8,"sundayHours":8,"shift3Hours":8,"specialHours":8,"specialRate":110}`, time.Time{},
			map[string]string{"holidayPay": "2045", "sundayPay": "2045", "shift3Pay": "1841", "specialPay": "1500", "specialRate": "110", "salaryGross": "31977"}},
		// Employer sick pay inside the fund: 40 h × 70% = 4,772.73; 136 h =
		// 23,181.82; gross 27,954.55.
		{"hours: sickCompany", `{"grossSalary":"30000","sickCompanyHours":40}`, time.Time{},
			map[string]string{"sickCompanyPay": "4773", "sickCompanyRate": "70", "sickHours": "40", "sickPay": "4773", "salaryGross": "27955"}},
		// Health-fund sick hours: inside the fund, no pay here; paid hours
		// 136 of 176 prorate the allowance: 10,932 × 136/176 = 8,447.45.
		// Gross 23,181.82; minimum base 34,571 × 136/176 = 26,713.95 →
		// 26,714 (a partial month): pension top-up (26,714 − 23,181.82) ×
		// 19.9% = 702.90.
		{"hours: sickFund", `{"grossSalary":"30000","sickFundHours":40}`, time.Time{},
			map[string]string{"sickFundPay": "0", "sickFundHours": "40", "salaryGross": "23182", "personalAllowance": "8447", "pensionTopUp": "703"}},
		{"hours: maternity", `{"grossSalary":"30000","maternityHours":40}`, time.Time{},
			map[string]string{"maternityHours": "40", "salaryGross": "23182", "personalAllowance": "8447"}},
		// Unpaid hours: 16 h unpaid → 160 h paid: 27,272.73.
		{"hours: unpaid", `{"grossSalary":"30000","unpaidHours":16}`, time.Time{},
			map[string]string{"unpaidHours": "16", "salaryGross": "27273"}},
		// Part-time: 88 contracted hours of a 176-hour month, gross 20,000:
		// ratio ½, allowance 5,466; contributions 5,600; taxable 8,934; PIT
		// 893.40; net 13,506.60. Minimum 17,286 < 20,000: no top-up.
		{"hours: part-time fundHours", `{"grossSalary":"20000","workingHours":88,"fundHours":176}`, time.Time{},
			map[string]string{"personalAllowance": "5466", "pit": "893", "salaryNet": "13507", "pensionTopUp": "0"}},

		// Seniority from months: 118 months on 2026-01-15, period March 2026
		// → 120 months = 10 completed years × 0.5% = 5% of 30,000 = 1,500.
		{"seniority months", `{"grossSalary":"30000","seniority":{"months":118,"asOf":"2026-01-15","periodYear":2026,"periodMonth":3}}`, time.Time{},
			map[string]string{"seniorityPercentage": "5", "seniority": "1500", "salaryGross": "31500"}},
		// ratePerYear 0.6: 10 years → 6% = 1,800.
		{"seniority ratePerYear", `{"grossSalary":"30000","seniority":{"months":125,"ratePerYear":0.6}}`, time.Time{},
			map[string]string{"seniorityPercentage": "6", "seniority": "1800"}},
		// Seniority on base pay only: 5% of 30,000 = 1,500; overtime
		// 2,301.14 carries none; gross 33,801.14.
		{"seniority not on premiums", `{"grossSalary":"30000","seniorityPercentage":5,"overtimeHours":10}`, time.Time{},
			map[string]string{"seniority": "1500", "overtimePay": "2301", "salaryGross": "33801"}},
		// Seniority in a partial month: 5% of the 15,000 worked = 750.
		{"seniority partial month", `{"grossSalary":"30000","seniorityPercentage":5,"absentHours":88}`, time.Time{},
			map[string]string{"seniority": "750", "salaryGross": "15750"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := tt.now
			if now.IsZero() {
				now = today
			}
			got, err := calcJSON(t, tt.body, now)
			if err != nil {
				t.Fatalf("%s: %v", tt.body, err)
			}
			for k, w := range tt.want {
				v, ok := got[k]
				if !ok {
					t.Errorf("%s: no field %s", tt.body, k)
					continue
				}
				if wire(v) != w {
					t.Errorf("%s: %s = %s, want %s", tt.body, k, wire(v), w)
				}
			}
		})
	}
}

// TestValidationPaths: every kind of bad input is reported with its path,
// all at once.
func TestValidationPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body  string
		paths []string
	}{
		{`{}`, []string{"grossSalary"}},
		{`{"grossSalary":"1","targetNet":"1"}`, []string{"grossSalary", "targetNet"}},
		{`{"grossSalary":"-5"}`, []string{"grossSalary"}},
		{`{"grossSalary":"12.345"}`, []string{"grossSalary"}},
		{`{"grossSalary":"1e3"}`, []string{"grossSalary"}},
		{`{"grossSalary":"abc"}`, []string{"grossSalary"}},
		{`{"grossSalary":"1000000001"}`, []string{"grossSalary"}},
		{`{"targetNet":" "}`, []string{"targetNet"}},
		{`{"grossSalary":"30000","overtimeHours":-1,"nightHoursRate":1001,"unpaidHours":745}`, []string{"overtimeHours", "nightHoursRate", "unpaidHours"}},
		{`{"grossSalary":"30000","nightHours":100,"sundayHours":100}`, []string{"workingHours"}},
		{`{"grossSalary":"30000","workingHours":0}`, []string{"workingHours"}},
		{`{"grossSalary":"30000","workingHours":100,"fundHours":50}`, []string{"fundHours"}},
		{`{"grossSalary":"30000","rateOverrides":{"nope":1,"pension":101,"maxBaseMultiplier":1000,"health":"x"}}`,
			[]string{"rateOverrides.nope", "rateOverrides.pension", "rateOverrides.maxBaseMultiplier", "rateOverrides.health"}},
		{`{"grossSalary":"30000","rateOverrides":{"pension":60,"health":40}}`, []string{"rateOverrides"}},
		{`{"grossSalary":"30000","effectiveDate":"2026-13-01"}`, []string{"effectiveDate"}},
		{`{"grossSalary":"30000","effectiveDate":"22.11.2026"}`, []string{"effectiveDate"}},
		{`{"grossSalary":"30000","effectiveDate":"2008-12-31"}`, []string{"effectiveDate"}},
		{`{"grossSalary":"30000","minBaseMode":"sometimes","bonusBasis":"both"}`, []string{"minBaseMode", "bonusBasis"}},
		{`{"grossSalary":"30000","deductions":[{"description":"x","amount":"1"},{"description":"","amount":"-2"}]}`, []string{"deductions[1].description", "deductions[1].amount"}},
		{`{"grossSalary":"30000","deductions":[{"description":"x","amount":"30000"}]}`, []string{"deductions"}},
		{`{"grossSalary":"30000","period":{"year":2026,"month":3},"placements":[{"startDate":"2026-04-02"},{"startDate":"2026-02-01","endDate":"2026-02-27"},{"startDate":"2026-03-10","endDate":"2026-03-09"},{"startDate":"3/3/2026"}]}`,
			[]string{"placements[0].startDate", "placements[1].endDate", "placements[2].endDate", "placements[3].startDate"}},
		{`{"grossSalary":"30000","placements":[{"startDate":"2026-03-02"}]}`, []string{"placements"}},
		{`{"grossSalary":"30000","period":{"year":2026,"month":13}}`, []string{"period"}},
		{`{"grossSalary":"30000","period":{"year":2026,"month":3},"placements":[{"startDate":"2026-03-02"}],"absentHours":8}`, []string{"absentHours"}},
		{`{"grossSalary":"30000","seniorityPercentage":5,"seniority":{"months":10}}`, []string{"seniority"}},
		{`{"grossSalary":"30000","seniority":{"months":-1,"asOf":"x","periodYear":2026,"ratePerYear":11}}`,
			[]string{"seniority.months", "seniority.asOf", "seniority.periodMonth", "seniority.ratePerYear"}},
		{`{"grossSalary":"30000","averageSalary":"0"}`, []string{"averageSalary"}},
		{`{"grossSalary":"30000","personalAllowance":"1","rateOverrides":{"personalAllowance":2}}`, []string{"personalAllowance"}},
		// Figures the service does not know: asked for, never invented.
		{`{"grossSalary":"30000","effectiveDate":"2023-05-31"}`, []string{"averageSalary"}},
		{`{"grossSalary":"30000","effectiveDate":"2024-05-31"}`, []string{"averageSalary"}},
		{`{"grossSalary":"30000","effectiveDate":"2014-05-31","averageSalary":"30902","personalAllowance":"6000"}`, []string{"rateOverrides.maxBaseMultiplier"}},
		{`{"grossSalary":"30000","effectiveDate":"2017-05-31","averageSalary":"32877","rateOverrides":{"maxBaseMultiplier":12}}`, []string{"personalAllowance"}},
		// A period and an effectiveDate of another month: which month's
		// rates apply is unclear (issue 16, defect 7).
		{`{"grossSalary":"30000","period":{"year":2026,"month":3},"effectiveDate":"2026-07-01"}`, []string{"effectiveDate"}},
		// A contractor (R4) has no hours model and no seniority.
		{`{"grossSalary":"30000","contractor":true,"overtimeHours":8,"nightHoursRate":150,"workingHours":160,"seniorityPercentage":5,"seniority":{"months":10}}`,
			[]string{"overtimeHours", "nightHoursRate", "workingHours", "seniorityPercentage", "seniority"}},
		{`{"grossSalary":"100000","effectiveDate":"2019-05-31"}`, []string{"effectiveDate"}},
		// The month's gross is bounded even when the base is not.
		{`{"grossSalary":"999999999","overtimeHours":744,"overtimeRate":1000}`, []string{"grossSalary"}},
		// Strict decoding: unknown fields and wrong JSON types.
		{`{"grossSalary":"30000","grosSalary":"1"}`, []string{"grosSalary"}},
		{`{"grossSalary":30000}`, []string{"grossSalary"}},
		{`{"grossSalary":"30000","overtimeHours":"10"}`, []string{"overtimeHours"}},
		{`{"grossSalary":"30000","deductions":[{"description":"x","amount":"1","note":"y"}]}`, []string{"deductions[0].note"}},
		{`{"grossSalary":"30000","deductions":[{"description":5,"amount":"1"}]}`, []string{"deductions[0].description"}},
		{`{"grossSalary":"30000","period":{"year":"2026","month":3}}`, []string{"period.year"}},
	}
	for _, tt := range tests {
		var err error
		in, derr := payroll.DecodeInput([]byte(tt.body))
		if derr != nil {
			err = derr
		} else {
			_, err = payroll.Calculate(in, today)
		}
		var e *denar.Error
		if err == nil || !asDenar(err, &e) || e.Code != denar.ECodeValidation {
			t.Errorf("%s: error %v, want validation_failed", tt.body, err)
			continue
		}
		got := map[string]bool{}
		for _, f := range e.Fields {
			got[f.Path] = true
		}
		for _, p := range tt.paths {
			if !got[p] {
				t.Errorf("%s: no error at %q; got %v", tt.body, p, e.Fields)
			}
		}
	}
}

func asDenar(err error, target **denar.Error) bool {
	e, ok := err.(*denar.Error)
	if ok {
		*target = e
	}
	return ok
}

// TestEveryInputFieldIsUsed guards "no field accepted and ignored": each
// field of CalculationInput, set on its own over the R5 case, changes the
// result (or, for the fields that only select or record, is reported back).
func TestEveryInputFieldIsUsed(t *testing.T) {
	t.Parallel()
	base, err := calcJSON(t, `{"grossSalary":"30000"}`, today)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{
		"targetNet":              `{"targetNet":"20000"}`,
		"netBased":               `{"grossSalary":"30000","nightHours":16,"netBased":true}`,
		"contractor":             `{"grossSalary":"30000","contractor":true}`,
		"workingHours":           `{"grossSalary":"30000","workingHours":160}`,
		"seniorityPercentage":    `{"grossSalary":"30000","seniorityPercentage":2}`,
		"seniority":              `{"grossSalary":"30000","seniority":{"months":24}}`,
		"unpaidHours":            `{"grossSalary":"30000","unpaidHours":8}`,
		"absentHours":            `{"grossSalary":"30000","absentHours":8}`,
		"maternityHours":         `{"grossSalary":"30000","maternityHours":8}`,
		"fundHours":              `{"grossSalary":"30000","workingHours":88,"fundHours":176}`,
		"minBaseMode":            `{"grossSalary":"30000","minBaseMode":"always"}`,
		"period":                 `{"grossSalary":"30000","period":{"year":2026,"month":5}}`,
		"placements":             `{"grossSalary":"30000","period":{"year":2026,"month":5},"placements":[{"startDate":"2026-05-18"}]}`,
		"hoursInformational":     `{"grossSalary":"30000","hoursInformational":true,"nightHours":8}`,
		"seniorityInformational": `{"grossSalary":"30000","seniorityInformational":true,"seniorityPercentage":5}`,
		"bonusAmount":            `{"grossSalary":"30000","bonusAmount":"100"}`,
		"bonusBasis":             `{"grossSalary":"30000","bonusAmount":"100","bonusBasis":"gross"}`,
		"pitExempt":              `{"grossSalary":"30000","pitExempt":true}`,
		"noPersonalAllowance":    `{"grossSalary":"30000","noPersonalAllowance":true}`,
		"personalAllowance":      `{"grossSalary":"30000","personalAllowance":"1000"}`,
		"averageSalary":          `{"grossSalary":"2000000","averageSalary":"100000"}`,
		"deductions":             `{"grossSalary":"30000","deductions":[{"description":"x","amount":"5"}]}`,
		"rateOverrides":          `{"grossSalary":"30000","rateOverrides":{"health":8}}`,
		"effectiveDate":          `{"grossSalary":"30000","effectiveDate":"2026-01-31"}`,
	}
	for _, k := range []string{"overtime", "night", "holiday", "sunday", "holidayNight", "sundayNight", "sundayHoliday", "sickFund", "sickCompany", "shift1", "shift2", "shift3", "special"} {
		rateField := k + "Rate"
		if k == "night" || k == "holiday" || k == "sunday" {
			rateField = k + "HoursRate"
		}
		fields[k+"Hours"] = fmt.Sprintf(`{"grossSalary":"30000","%sHours":8}`, k)
		fields[rateField] = fmt.Sprintf(`{"grossSalary":"30000","%sHours":8,"%s":123}`, k, rateField)
	}
	for name, body := range fields {
		got, err := calcJSON(t, body, today)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if fmt.Sprint(got) == fmt.Sprint(base) {
			t.Errorf("%s: the result did not change: %s", name, body)
		}
		if strings.HasSuffix(name, "Rate") {
			// The rate is reported back or changes the pay of the hours
			// against the same hours at the default rate.
			hoursOnly := strings.Replace(body, ",\""+name+"\":123", "", 1)
			ref, err := calcJSON(t, hoursOnly, today)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) == fmt.Sprint(ref) {
				t.Errorf("%s: the rate changed nothing: %s", name, body)
			}
		}
	}
}
