package payroll

import (
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/money"
)

// The fund of hours of a month, as UJP's МПИН client counts it: every
// weekday (Monday to Friday) × 8 hours, public holidays included. МПИН
// field 3.6 "effective hours" includes holidays, annual leave and paid
// leave (research/payroll.md §4.1), so a holiday is a paid hour of the
// fund, not a gap in it: 2026 gives January 176, February 160, March 176,
// April 176, May 168, June 176, July 184, August 168, September 176,
// October 176, November 168, December 184 — the figures of the МПИН client
// and of the UJP-accepted May 2026 file (168 hours).
//
// The same rule drives money and filing: the hourly rate of a month given
// by period is the monthly gross over this fund, and a partial month is
// the share of its weekdays that the employment covers.

// weekdays counts Monday–Friday in [from, to] (dates of one month).
func weekdays(from, to time.Time) int {
	n := 0
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			n++
		}
	}
	return n
}

// MonthFundHours is the month's fund of hours: weekdays × 8, holidays
// counted as paid hours.
func MonthFundHours(year int, month time.Month) Number {
	first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	return NewNumber(int64(weekdays(first, first.AddDate(0, 1, -1))) * 8)
}

// dayMask is a set of days of one month: bit d is day d.
type dayMask uint64

func (m dayMask) has(day int) bool { return m&(1<<uint(day)) != 0 }

// employment is what placements say about the period: the absent hours
// (weekdays no placement covers, as a share of the fund), and the МПИН
// days of the record — hire day (3.27) and leave day (3.28) when the
// employment starts or ends inside the month, and the calendar days
// covered (3.5).
type employment struct {
	absent              money.Amount // hours
	hireDay, leaveDay   int          // 0: not inside the month
	serviceDays         int
	coveredWeekdays, of int
}

// fromPlacements turns employment windows into absent hours: the weekdays
// of the period that no placement covers, as a share of the fund wh
// (rounded half-up to 1/10^4 hour). Holidays are weekdays like any other:
// an employee in service on a holiday is paid for it. Overlapping
// placements count once.
func fromPlacements(pl []Placement, start time.Time, wh money.Amount) (employment, denar.FieldErrors) {
	var fe denar.FieldErrors
	var emp employment
	end := start.AddDate(0, 1, -1)
	var covered dayMask
	for i, p := range pl {
		path := fmt.Sprintf("placements[%d]", i)
		s, err := time.Parse(time.DateOnly, p.StartDate)
		if err != nil {
			fe.Add(path+".startDate", "must be a date YYYY-MM-DD")
			continue
		}
		e := end
		if p.EndDate != nil {
			if e, err = time.Parse(time.DateOnly, *p.EndDate); err != nil {
				fe.Add(path+".endDate", "must be a date YYYY-MM-DD")
				continue
			}
		}
		switch {
		case s.After(end):
			fe.Add(path+".startDate", "is after the period %s", start.Format("2006-01"))
			continue
		case e.Before(s):
			fe.Add(path+".endDate", "is before startDate %s", p.StartDate)
			continue
		case e.Before(start):
			fe.Add(path+".endDate", "is before the period %s", start.Format("2006-01"))
			continue
		}
		s, e = maxTime(s, start), minTime(e, end)
		for d := s.Day(); d <= e.Day(); d++ {
			covered |= 1 << uint(d)
		}
	}
	first, last := 0, 0
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		day := d.Day()
		if covered.has(day) {
			emp.serviceDays++
			if first == 0 {
				first = day
			}
			last = day
		}
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			emp.of++
			if covered.has(day) {
				emp.coveredWeekdays++
			}
		}
	}
	if first > 1 {
		emp.hireDay = first
	}
	if last != 0 && last < end.Day() {
		emp.leaveDay = last
	}
	if emp.of > 0 {
		emp.absent = wh.MulDiv(money.FromInt(int64(emp.of-emp.coveredWeekdays)), money.FromInt(int64(emp.of)), numberPlaces).Trim()
	}
	return emp, fe
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
