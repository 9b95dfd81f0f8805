package payroll

import (
	"fmt"
	"time"

	"github.com/denar-mk/denar"
)

// The working-day calendar of North Macedonia. A month's fund of hours is
// its working days × 8; a working day is Monday to Friday and not a
// non-working day for all citizens.
//
// Law on holidays (Закон за празниците на Република Македонија, Сл. весник
// 21/98 and 18/07), articles 2 and 3: the holidays below are non-working
// days for all citizens, and "if a holiday falls on a Sunday, the next day
// is a non-working day". A holiday on a Saturday is not moved (the Ministry
// of Labour's programmes: 8 December 2018, 24 May and 2 August 2025 on a
// Saturday, no day in lieu). Days that are non-working only for one faith
// or community (Бадник, Водици, Велики петок, Курбан Бајрам, …) do not
// change the fund and are left out.
var fixedHolidays = [...]struct {
	month time.Month
	day   int
	name  string
}{
	{time.January, 1, "Нова година"},
	{time.January, 7, "Божиќ (православен)"},
	{time.May, 1, "Ден на трудот"},
	{time.May, 24, "Св. Кирил и Методиј"},
	{time.August, 2, "Ден на Републиката (Илинден)"},
	{time.September, 8, "Ден на независноста"},
	{time.October, 11, "Ден на народното востание"},
	{time.October, 23, "Ден на македонската револуционерна борба"},
	{time.December, 8, "Св. Климент Охридски"},
}

// movableYear holds one year's movable non-working days for all citizens,
// as published in the Ministry of Labour and Social Policy's programme of
// non-working days (Програма на неработни денови) for that year. Nothing
// here is computed: a year that is not listed has no calendar, and a month
// touched by an unconfirmed date has none either.
type movableYear struct {
	easterMonday  string    // второт ден на Велигден (Orthodox)
	ramazanBajram string    // first day of Рамазан Бајрам; "" while unconfirmed
	bajramWindow  [2]string // when unconfirmed: the earliest and latest possible date
	extra         []string  // one-off non-working days declared by the Government
	source        string
}

var movableDays = map[int]movableYear{
	2021: {easterMonday: "2021-05-03", ramazanBajram: "2021-05-13",
		source: "МТСП programme of non-working days 2021 (faktor.mk, 30 Dec 2020)"},
	2023: {easterMonday: "2023-04-17", ramazanBajram: "2023-04-21",
		source: "МТСП programme of non-working days 2023 (femina.mk)"},
	2024: {easterMonday: "2024-05-06", ramazanBajram: "2024-04-10",
		extra:  []string{"2024-04-24", "2024-05-08"}, // presidential and parliamentary election days
		source: "МТСП programme 2024 (fibula.com.mk calendar; republika.mk 'осум продолжени викенди во 2024'); election days: Government decision (centar.mk, 14 Feb 2024)"},
	2025: {easterMonday: "2025-04-21", ramazanBajram: "2025-03-30",
		source: "МТСП programme of non-working days 2025 (apliciraj.mk): Ramazan Bajram on Sunday 30 March, so Monday 31 March is free"},
	2026: {easterMonday: "2026-04-13", ramazanBajram: "2026-03-20",
		source: "МТСП programme of non-working days 2026 (sitel.com.mk; republika.mk, 1 Nov 2025)"},
	// The 2027 programme is not published yet. Orthodox Easter 2027 is on
	// 2 May (Julian computus; public-holidays.us lists Orthodox Easter
	// Monday 3 May 2027). Eid al-Fitr 2027 is expected on 9 or 10 March; until
	// the programme confirms it, March 2027 has no calendar.
	2027: {easterMonday: "2027-05-03", bajramWindow: [2]string{"2027-03-09", "2027-03-10"},
		source: "Orthodox Easter by the Julian computus; Ramazan Bajram unconfirmed"},
}

// CalendarYears lists the years whose movable holidays the service knows.
func CalendarYears() []int { return []int{2021, 2023, 2024, 2025, 2026, 2027} }

// dayMask is a set of days of one month: bit d is day d.
type dayMask uint64

func (m dayMask) has(day int) bool { return m&(1<<uint(day)) != 0 }

// nonWorking returns the weekdays of the month that are non-working for all
// citizens, as a set of days of the month.
func nonWorking(year int, month time.Month) (dayMask, error) {
	mv, ok := movableDays[year]
	if !ok {
		return 0, fmt.Errorf("the service's calendar has no movable holidays for %d (known years: %v); pass workingHours and absentHours instead of period", year, CalendarYears())
	}
	var mask dayMask
	add := func(d time.Time) {
		switch d.Weekday() {
		case time.Saturday:
			return // not moved (Law on holidays art. 3 moves Sunday only)
		case time.Sunday:
			d = d.AddDate(0, 0, 1)
		}
		if d.Year() == year && d.Month() == month {
			mask |= 1 << uint(d.Day())
		}
	}
	for _, h := range fixedHolidays {
		add(time.Date(year, h.month, h.day, 0, 0, 0, 0, time.UTC))
	}
	dates := append([]string{mv.easterMonday, mv.ramazanBajram}, mv.extra...)
	for _, s := range dates {
		if s == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return 0, fmt.Errorf("payroll calendar: bad date %q for %d", s, year)
		}
		add(d)
	}
	if mv.ramazanBajram == "" {
		lo, _ := time.Parse(time.DateOnly, mv.bajramWindow[0])
		hi, _ := time.Parse(time.DateOnly, mv.bajramWindow[1])
		first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
		last := first.AddDate(0, 1, 0) // exclusive; a Sunday Bajram moves into the next day
		if !hi.AddDate(0, 0, 1).Before(first) && lo.Before(last) {
			return 0, fmt.Errorf("the date of Ramazan Bajram %d is not confirmed yet (expected %s or %s), so %s %d has no calendar; pass workingHours and absentHours instead of period",
				year, mv.bajramWindow[0], mv.bajramWindow[1], month, year)
		}
	}
	return mask, nil
}

// NonWorkingDays lists the weekdays of the month that are non-working for
// all citizens (holidays, and the Monday after a holiday on a Sunday).
func NonWorkingDays(year int, month time.Month) ([]time.Time, error) {
	mask, err := nonWorking(year, month)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for d := 1; d <= 31; d++ {
		if mask.has(d) {
			out = append(out, time.Date(year, month, d, 0, 0, 0, 0, time.UTC))
		}
	}
	return out, nil
}

// isWorkingDay reports whether d (a day of the month of mask) is worked.
func isWorkingDay(d time.Time, mask dayMask) bool {
	wd := d.Weekday()
	return wd != time.Saturday && wd != time.Sunday && !mask.has(d.Day())
}

// MonthFundHours is the month's fund of hours, working days × 8, in the
// scale of Number (hours × 10^4).
func MonthFundHours(year int, month time.Month) (int64, error) {
	mask, err := nonWorking(year, month)
	if err != nil {
		return 0, err
	}
	start := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	days := 0
	for d := start; d.Month() == month; d = d.AddDate(0, 0, 1) {
		if isWorkingDay(d, mask) {
			days++
		}
	}
	return int64(days) * 8 * numScale, nil
}

// absentFromPlacements turns employment windows into absent hours: the
// working days of the period that no placement covers, as a share of the
// fund wh (rounded half-up to 1/10^4 hour). A placement may start on a
// holiday or a weekend; overlapping placements count once.
func absentFromPlacements(pl []Placement, start time.Time, wh int64) (int64, denar.FieldErrors) {
	var fe denar.FieldErrors
	mask, err := nonWorking(start.Year(), start.Month())
	if err != nil {
		fe.Add("period", "%v", err)
		return 0, fe
	}
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
	total, uncovered := 0, 0
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		if isWorkingDay(d, mask) {
			total++
			if !covered.has(d.Day()) {
				uncovered++
			}
		}
	}
	if total == 0 {
		return 0, fe
	}
	return divRound(wh*int64(uncovered), int64(total)), fe
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
