package payroll

import (
	"fmt"
	"time"

	"github.com/denar-mk/denar"
)

// Public holidays that are non-working days for everyone, by the Law on
// holidays of North Macedonia (Закон за празниците на Република Северна
// Македонија, with the 2021 amendment adding 8 December). When a holiday
// falls on a Sunday, the next working day is free.
var fixedHolidays = []struct {
	month time.Month
	day   int
	name  string
}{
	{time.January, 1, "Нова година"},
	{time.January, 7, "Божиќ (православен)"},
	{time.May, 1, "Ден на трудот"},
	{time.May, 24, "Св. Кирил и Методиј"},
	{time.August, 2, "Илинден"},
	{time.September, 8, "Ден на независноста"},
	{time.October, 11, "Ден на народното востание"},
	{time.October, 23, "Ден на македонската револуционерна борба"},
	{time.December, 8, "Св. Климент Охридски"},
}

// ramazanBajram is the first day of Ramazan Bajram (Eid al-Fitr), a
// non-working day for all citizens. It follows the lunar calendar and the
// Government announces it each year, so each year is data. Source: the
// Government's yearly list of non-working days (vlada.mk), matching the
// astronomical date of Eid al-Fitr.
var ramazanBajram = map[int]string{
	2024: "2024-04-10",
	2025: "2025-03-30",
	2026: "2026-03-20",
	2027: "2027-03-10",
}

// orthodoxEasterMonday computes Easter Monday of the Orthodox church:
// Meeus' Julian computus, converted to the Gregorian calendar (13 days from
// 1900 to 2099).
func orthodoxEasterMonday(year int) time.Time {
	a, b, c := year%4, year%7, year%19
	d := (19*c + 15) % 30
	e := (2*a + 4*b - d + 34) % 7
	month := (d + e + 114) / 31
	day := (d+e+114)%31 + 1
	julian := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	return julian.AddDate(0, 0, 13+1)
}

// Holidays returns the non-working weekdays of year (holidays, and the
// Monday after a holiday that falls on a Sunday).
func Holidays(year int) (map[time.Time]bool, error) {
	rb, ok := ramazanBajram[year]
	if !ok {
		return nil, fmt.Errorf("the date of Ramazan Bajram %d is not in the service's calendar (known: 2024–2027)", year)
	}
	days := map[time.Time]bool{}
	add := func(d time.Time) {
		if d.Weekday() == time.Sunday {
			d = d.AddDate(0, 0, 1)
		}
		for days[d] || d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			d = d.AddDate(0, 0, 1)
		}
		days[d] = true
	}
	for _, h := range fixedHolidays {
		add(time.Date(year, h.month, h.day, 0, 0, 0, 0, time.UTC))
	}
	add(orthodoxEasterMonday(year))
	d, _ := time.Parse(time.DateOnly, rb)
	add(d)
	return days, nil
}

// workingDays lists the working days between from and to inclusive.
func workingDays(from, to time.Time, hol map[time.Time]bool) int {
	n := 0
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday && !hol[d] {
			n++
		}
	}
	return n
}

// MonthFundHours is the month's fund of hours: working days × 8, as Number
// scale (hours × 10^4).
func MonthFundHours(year int, month time.Month) (int64, error) {
	hol, err := Holidays(year)
	if err != nil {
		return 0, err
	}
	start := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	return int64(workingDays(start, start.AddDate(0, 1, -1), hol)) * 8 * numScale, nil
}

// absentFromPlacements turns employment windows into absent hours: the
// working days of the month no placement covers, as a share of the fund wh.
func absentFromPlacements(pl []Placement, start, end time.Time, wh int64) (int64, denar.FieldErrors) {
	var fe denar.FieldErrors
	hol, err := Holidays(start.Year())
	if err != nil {
		fe.Add("period", "%v", err)
		return 0, fe
	}
	covered := map[time.Time]bool{}
	for i, p := range pl {
		s, err := time.Parse(time.DateOnly, p.StartDate)
		if err != nil {
			fe.Add(fmt.Sprintf("placements[%d].startDate", i), "must be a date YYYY-MM-DD")
			continue
		}
		e := end
		if p.EndDate != nil {
			e, err = time.Parse(time.DateOnly, *p.EndDate)
			if err != nil {
				fe.Add(fmt.Sprintf("placements[%d].endDate", i), "must be a date YYYY-MM-DD")
				continue
			}
		}
		switch {
		case s.After(end) || e.Before(start):
			fe.Add(fmt.Sprintf("placements[%d]", i), "lies outside the period %s", start.Format("2006-01"))
			continue
		case e.Before(s):
			fe.Add(fmt.Sprintf("placements[%d].endDate", i), "is before startDate")
			continue
		}
		s, e = maxTime(s, start), minTime(e, end)
		for d := s; !d.After(e); d = d.AddDate(0, 0, 1) {
			covered[d] = true
		}
	}
	total := workingDays(start, end, hol)
	if total == 0 {
		return 0, fe
	}
	uncovered := 0
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday && !hol[d] && !covered[d] {
			uncovered++
		}
	}
	return wh * int64(uncovered) / int64(total), fe
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
