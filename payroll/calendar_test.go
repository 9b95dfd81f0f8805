package payroll_test

import (
	"testing"
	"time"

	"github.com/denar-mk/denar/payroll"
)

// TestMonthFundHours: the fund is every weekday × 8, holidays included, as
// UJP's МПИН client counts it (issue 16). The 2026 figures of the client:
// Jan 176, Feb 160, Mar 176, Apr 176, May 168, Jun 176, Jul 184, Aug 168,
// Sep 176, Oct 176, Nov 168, Dec 184. May 2026 is the month of the
// UJP-accepted file with 168 hours.
func TestMonthFundHours(t *testing.T) {
	t.Parallel()
	want := map[int][12]int64{
		2026: {176, 160, 176, 176, 168, 176, 184, 168, 176, 176, 168, 184},
		// 2027 needs no holiday calendar: February has 20 weekdays, March 23.
		2027: {168, 160, 184, 176, 168, 176, 176, 176, 176, 168, 176, 184},
	}
	for year, hours := range want {
		for m, h := range hours {
			if got := payroll.MonthFundHours(year, time.Month(m+1)); got != payroll.NewNumber(h) {
				t.Errorf("%d-%02d: fund %s h, want %d", year, m+1, got, h)
			}
		}
	}
}

// TestPlacementsPartialMonths: a partial month is the share of the month's
// weekdays (holidays included) that the placements cover, and the result
// names the МПИН days of the record.
func TestPlacementsPartialMonths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                       string
		body                       string
		fund, absent, gross        string
		hire, leave, service, code string
	}{
		// March 2026: 22 weekdays (176 h); 20 March (Ramazan Bajram) is a paid
		// hour like any weekday. Employed 1–13 and from 23 March: 16–20 March
		// uncovered, 5 days = 40 of 176 h. 30,000 × 136/176 = 23,181.82.
		{"two placements", `{"grossSalary":"30000","period":{"year":2026,"month":3},"placements":[{"startDate":"2026-03-01","endDate":"2026-03-13"},{"startDate":"2026-03-23"}]}`,
			"176", "40", "23182", "null", "null", "22", "0050"},
		// Hired on a public holiday: 1 May 2026 (Friday, Labour Day) is covered,
		// so the whole month is: absent 0 of 168.
		{"start on a holiday", `{"grossSalary":"33600","period":{"year":2026,"month":5},"placements":[{"startDate":"2026-05-01"}]}`,
			"168", "0", "33600", "null", "null", "31", "0050"},
		// Hired on Monday 25 May 2026 (the day in lieu of Sunday 24 May, paid):
		// 25–29 May covered, 16 of 21 weekdays uncovered = 128 h.
		// 33,600 × 40/168 = 8,000.
		{"start on a day in lieu", `{"grossSalary":"33600","period":{"year":2026,"month":5},"placements":[{"startDate":"2026-05-25"}]}`,
			"168", "128", "8000", "25", "null", "7", "0050"},
		// Overlapping placements count once: 4–15 and 11–22 May cover 15
		// weekdays; 1 May and 25–29 May = 6 uncovered = 48 h.
		// 33,600 × 120/168 = 24,000.
		{"overlapping placements", `{"grossSalary":"33600","period":{"year":2026,"month":5},"placements":[{"startDate":"2026-05-04","endDate":"2026-05-15"},{"startDate":"2026-05-11","endDate":"2026-05-22"}]}`,
			"168", "48", "24000", "4", "22", "19", "0050"},
		// Left on Wednesday 15 April 2026: April has 22 weekdays (176 h, Easter
		// Monday 13 April paid); 16–30 April = 11 uncovered = 88 h.
		// 35,200 × 88/176 = 17,600.
		{"leaver", `{"grossSalary":"35200","period":{"year":2026,"month":4},"placements":[{"startDate":"2020-01-01","endDate":"2026-04-15"}]}`,
			"176", "88", "17600", "null", "15", "15", "0050"},
		// Explicit workingHours with period: the uncovered share applies to
		// the contracted hours: 160 × 5/22 = 36.3636; part-time of a 176 fund.
		{"workingHours with placements", `{"grossSalary":"30000","workingHours":160,"fundHours":176,"period":{"year":2026,"month":3},"placements":[{"startDate":"2026-03-01","endDate":"2026-03-13"},{"startDate":"2026-03-23"}]}`,
			"160", "36.3636", "", "null", "null", "22", "0047"},
	}
	for _, tt := range tests {
		r, err := calcJSON(t, tt.body, today)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := []string{wire(r["workingHours"]), wire(r["absentHours"]), wire(r["salaryGross"]), wire(r["hireDay"]), wire(r["leaveDay"]), wire(r["serviceDays"]), wire(r["insuranceCode"])}
		want := []string{tt.fund, tt.absent, tt.gross, tt.hire, tt.leave, tt.service, tt.code}
		if tt.gross == "" {
			want[2] = got[2]
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: workingHours, absentHours, salaryGross, hireDay, leaveDay, serviceDays, insuranceCode = %v, want %v", tt.name, got, want)
				break
			}
		}
	}
}

// TestCalendarDrivesMoney has the worked examples of issue 16, defect 2:
// proration and the hourly divisor follow the same rule as the fund —
// weekdays × 8 with holidays counted as paid hours. Before, holidays were
// left out of both the worked and the full month.
//
//	March 2026 leaver, last day Friday 13 March, gross 51,000: 10 of 22
//	weekdays covered → 51,000 × 10/22 = 23,181.82 → 23,182. Counting
//	only working days (10 of 21, Ramazan Bajram on 20 March left out) paid
//	24,285.71: 1,103.90 too much.
//
//	October 2026 joiner, first day Monday 12 October (the day in lieu of
//	Sunday 11 October, a paid holiday), gross 40,000: 15 of 22 weekdays →
//	27,272.73 → 27,273. Counting only working days (13 of 20, 12 and 23
//	October left out) paid 26,000: 1,272.73 too little.
//
//	October 2026 with period and no workingHours, gross 30,000, 16 night
//	hours at 135 %: the divisor is the fund, 22 × 8 = 176 (R12's figure),
//	so 30,000 / 176 × 16 × 1.35 = 3,681.82 → 3,682. With working days only
//	(160) it was 4,050, 10 % high.
func TestCalendarDrivesMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       map[string]string
	}{
		{"March 2026 leaver", `{"grossSalary":"51000","period":{"year":2026,"month":3},"placements":[{"startDate":"2024-02-01","endDate":"2026-03-13"}]}`,
			map[string]string{"workingHours": "176", "absentHours": "96", "salaryGross": "23182", "leaveDay": "13", "serviceDays": "13"}},
		{"October 2026 joiner", `{"grossSalary":"40000","period":{"year":2026,"month":10},"placements":[{"startDate":"2026-10-12"}]}`,
			map[string]string{"workingHours": "176", "absentHours": "56", "salaryGross": "27273", "hireDay": "12", "serviceDays": "20"}},
		{"October 2026 premiums", `{"grossSalary":"30000","period":{"year":2026,"month":10},"nightHours":16}`,
			map[string]string{"workingHours": "176", "nightPay": "3682", "salaryGross": "30955"}},
		{"the same premiums without period (R12)", `{"grossSalary":"30000","effectiveDate":"2026-10-31","nightHours":16}`,
			map[string]string{"workingHours": "176", "nightPay": "3682", "salaryGross": "30955"}},
		// May 2026 has 21 weekdays: 168 hours, the fund of the UJP-accepted file.
		{"May 2026 fund", `{"grossSalary":"38507","period":{"year":2026,"month":5}}`,
			map[string]string{"workingHours": "168", "fundHours": "168", "salaryNet": "26046", "hireDay": "null", "leaveDay": "null", "serviceDays": "null"}},
	}
	for _, tt := range tests {
		r, err := calcJSON(t, tt.body, today)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		for k, v := range tt.want {
			if got := wire(r[k]); got != v {
				t.Errorf("%s: %s = %s, want %s", tt.name, k, got, v)
			}
		}
	}
}
