package payroll_test

import (
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/payroll"
)

// TestMonthFundHours checks the working days of every month of 2024–2026
// against the Ministry of Labour's programmes. Non-working weekdays:
//
//	2024: 1 Jan; 8 Jan (Christmas on Sunday 7 Jan); 10 Apr Ramazan Bajram;
//	      24 Apr and 8 May election days; 1 May; 6 May Easter Monday; 24 May;
//	      2 Aug; 9 Sep (8 Sep a Sunday); 11 Oct; 23 Oct; 9 Dec (8 Dec a Sunday).
//	2025: 1 Jan; 7 Jan; 31 Mar (Bajram on Sunday 30 Mar); 21 Apr; 1 May;
//	      8 Sep; 23 Oct; 8 Dec. 24 May, 2 Aug and 11 Oct fall on a Saturday
//	      and are not moved.
//	2026: 1 Jan; 7 Jan; 20 Mar; 13 Apr; 1 May; 25 May (24 May a Sunday);
//	      3 Aug (2 Aug a Sunday); 8 Sep; 12 Oct (11 Oct a Sunday); 23 Oct; 8 Dec.
//
// Working days = weekdays of the month − those days.
func TestMonthFundHours(t *testing.T) {
	t.Parallel()
	want := map[int][12]int64{
		2024: {21, 21, 21, 20, 19, 20, 23, 21, 20, 21, 21, 21},
		2025: {21, 20, 20, 21, 21, 21, 23, 21, 21, 22, 20, 22},
		2026: {20, 20, 21, 21, 19, 22, 23, 20, 21, 20, 21, 22},
	}
	for year, days := range want {
		for m, d := range days {
			got, err := payroll.MonthFundHours(year, time.Month(m+1))
			if err != nil {
				t.Fatalf("%d-%02d: %v", year, m+1, err)
			}
			if got != d*8*10000 {
				t.Errorf("%d-%02d: fund %d h, want %d days × 8 = %d h", year, m+1, got/10000, d, d*8)
			}
		}
	}
}

func TestNonWorkingDays(t *testing.T) {
	t.Parallel()
	days, err := payroll.NonWorkingDays(2025, time.March)
	if err != nil || len(days) != 1 || days[0].Format(time.DateOnly) != "2025-03-31" {
		t.Errorf("March 2025: %v %v, want Monday 31 March (Ramazan Bajram on Sunday 30 March)", days, err)
	}
	days, err = payroll.NonWorkingDays(2025, time.August)
	if err != nil || len(days) != 0 {
		t.Errorf("August 2025: %v %v, want none (2 August is a Saturday)", days, err)
	}
	// 2027: Easter Monday is known, Ramazan Bajram is not confirmed yet.
	days, err = payroll.NonWorkingDays(2027, time.May)
	if err != nil || len(days) != 2 {
		t.Errorf("May 2027: %v %v, want 3 May and 24 May (1 May is a Saturday)", days, err)
	}
	if _, err := payroll.MonthFundHours(2027, time.March); err == nil || !strings.Contains(err.Error(), "Ramazan Bajram") {
		t.Errorf("March 2027: %v, want an error naming the unconfirmed Ramazan Bajram", err)
	}
	if _, err := payroll.MonthFundHours(2027, time.April); err != nil {
		t.Errorf("April 2027: %v", err)
	}
	for _, y := range []int{2008, 2022, 2028} {
		if _, err := payroll.MonthFundHours(y, time.June); err == nil {
			t.Errorf("%d: no error for a year outside the calendar", y)
		}
	}
}

// TestPlacementsPartialMonths covers the partial-month cases.
func TestPlacementsPartialMonths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		body       string
		fund       string
		absent     string
		gross, net string
	}{
		// March 2026: 21 working days (20 March Ramazan Bajram). Employed 1–13
		// and from 23 March: 16–19 March uncovered, 4 days = 32 of 168 h.
		// Gross 30,000 × 136/168 = 24,285.71.
		{"two placements", `{"grossSalary":"30000","period":{"year":2026,"month":3},"placements":[{"startDate":"2026-03-01","endDate":"2026-03-13"},{"startDate":"2026-03-23"}]}`,
			"168", "32", "24286", ""},
		// Hired on a public holiday: 1 May 2026 (Friday) is Labour Day, so a
		// start on 1 May loses no working day: absent 0, fund 19 × 8 = 152.
		{"start on a holiday", `{"grossSalary":"30400","period":{"year":2026,"month":5},"placements":[{"startDate":"2026-05-01"}]}`,
			"152", "0", "30400", ""},
		// Hired on Monday 25 May 2026, the day in lieu of 24 May: works 26–29
		// May; 15 of 19 working days uncovered = 120 h. 30,400 × 32/152 = 6,400.
		{"start on a day in lieu", `{"grossSalary":"30400","period":{"year":2026,"month":5},"placements":[{"startDate":"2026-05-25"}]}`,
			"152", "120", "6400", ""},
		// Two placements in one month that overlap count once: 4–15 May and
		// 11–22 May cover the working days 4–8, 11–15 and 18–22 May (15);
		// uncovered: 26–29 May = 4 days (1 and 25 May are free) = 32 h.
		// Gross 30,400 × 120/152 = 24,000.
		{"overlapping placements", `{"grossSalary":"30400","period":{"year":2026,"month":5},"placements":[{"startDate":"2026-05-04","endDate":"2026-05-15"},{"startDate":"2026-05-11","endDate":"2026-05-22"}]}`,
			"152", "32", "24000", ""},
		// A placement that began before the month and ends inside it.
		// Left on 15 April 2026 (Wednesday): April has 21 working days (13
		// April Easter Monday); 16–30 April = 11 working days uncovered = 88 h.
		// Gross 33,600 × 80/168 = 16,000.
		{"leaver", `{"grossSalary":"33600","period":{"year":2026,"month":4},"placements":[{"startDate":"2020-01-01","endDate":"2026-04-15"}]}`,
			"168", "88", "16000", ""},
		// Explicit workingHours with period: the share of uncovered working
		// days applies to the contracted hours: 176 × 4/21 = 33.5238.
		{"workingHours with placements", `{"grossSalary":"30000","workingHours":176,"period":{"year":2026,"month":3},"placements":[{"startDate":"2026-03-01","endDate":"2026-03-13"},{"startDate":"2026-03-23"}]}`,
			"176", "33.5238", "", ""},
	}
	for _, tt := range tests {
		r, err := calcJSON(t, tt.body, today)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if wire(r["workingHours"]) != tt.fund || wire(r["absentHours"]) != tt.absent || (tt.gross != "" && r["salaryGross"] != tt.gross) {
			t.Errorf("%s: fund %s absent %s gross %s; want %s %s %s", tt.name, wire(r["workingHours"]), wire(r["absentHours"]), r["salaryGross"], tt.fund, tt.absent, tt.gross)
		}
	}
}
