package filing

import (
	"time"

	"github.com/denar-mk/denar/money"
)

// kind is one kind of hours or pay of a record and the МПИН level-3 row it
// is filed in: its type code (SifraTipRabotenCas, UJP's rab_cas and
// VID_NADOMESTOCI lists), whether its hours are part of the record's fund
// of hours (overtime is on top of it), and whether its amount is part of
// the gross (the health fund's maternity base is not).
type kind struct {
	name     string // JSON name of the hours field, for messages
	code     string // "" when the record decides (kindCode)
	inside   bool   // hours inside the fund
	inGross  bool   // amount part of salaryGross
	employer bool   // hours paid by the employer (for the paid-hours ratio)
}

// The kinds, in the order their rows are written after the regular row.
const (
	kOvertime = iota
	kNight
	kHoliday
	kSunday
	kHolidayNight
	kSundayNight
	kSundayHoliday
	kShift1
	kShift2
	kShift3
	kSpecial
	kSeniority
	kBonus
	kSickCompany
	kSickFund
	kMaternity
	kMaternityPartial
	kUnpaid
	numKinds
)

// kinds describes each kind. Codes: 005 overtime, 003 night, 007 work on a
// public holiday, 044 work on Sunday, 045 public holiday night work, 047
// night work on a non-working day (Sunday), 100 hours in shifts, 037
// seniority (минат труд), 099 bonus on the salary, 125–128 sick pay by the
// employer at 70/80/90/100 %, 023 unpaid leave (rab_cas.json and
// vid_nadomestoci.json of UJP's МПИН client, via the TAMI repository,
// research §4.2); 140, 128 and 129 are МПИН 3.23 codes of the health fund.
// Sunday-holiday work has no code of its own: it is work on a public
// holiday (007). Special hours have none either: the record names one in
// specialCode (default 001).
var kinds = [numKinds]kind{
	kOvertime:         {name: "overtimeHours", code: "005", inGross: true, employer: true},
	kNight:            {name: "nightHours", code: "003", inside: true, inGross: true, employer: true},
	kHoliday:          {name: "holidayHours", code: "007", inside: true, inGross: true, employer: true},
	kSunday:           {name: "sundayHours", code: "044", inside: true, inGross: true, employer: true},
	kHolidayNight:     {name: "holidayNightHours", code: "045", inside: true, inGross: true, employer: true},
	kSundayNight:      {name: "sundayNightHours", code: "047", inside: true, inGross: true, employer: true},
	kSundayHoliday:    {name: "sundayHolidayHours", code: "007", inside: true, inGross: true, employer: true},
	kShift1:           {name: "shift1Hours", code: "100", inside: true, inGross: true, employer: true},
	kShift2:           {name: "shift2Hours", code: "100", inside: true, inGross: true, employer: true},
	kShift3:           {name: "shift3Hours", code: "100", inside: true, inGross: true, employer: true},
	kSpecial:          {name: "specialHours", inside: true, inGross: true, employer: true},
	kSeniority:        {name: "seniority", code: "037", inGross: true},
	kBonus:            {name: "bonusAmount", code: "099", inGross: true},
	kSickCompany:      {name: "sickCompanyHours", inside: true, inGross: true, employer: true},
	kSickFund:         {name: "sickFundHours", inside: true, inGross: true},
	kMaternity:        {name: "maternityHours", code: "128", inside: true},
	kMaternityPartial: {name: "maternityPartialHours", code: "129", inside: true, employer: true},
	kUnpaid:           {name: "unpaidHours", code: "023", inside: true},
}

// kindCode is the type code of kind k of r.
func kindCode(r *Record, k int) string {
	switch k {
	case kSpecial:
		return defaulted(r.SpecialCode, "001")
	case kSickCompany:
		return sickCompanyCode(r.SickCompanyRate)
	case kSickFund:
		return defaulted(r.SickFundCode, "140")
	}
	return kinds[k].code
}

// kindFields are the hours and pay fields of each kind of r (nil where a
// kind has none).
func kindFields(r *Record) (hours [numKinds]*Num, pays [numKinds]*Money) {
	hours = [numKinds]*Num{&r.OvertimeHours, &r.NightHours, &r.HolidayHours, &r.SundayHours, &r.HolidayNightHours,
		&r.SundayNightHours, &r.SundayHolidayHours, &r.Shift1Hours, &r.Shift2Hours, &r.Shift3Hours, &r.SpecialHours,
		nil, nil, &r.SickCompanyHours, &r.SickFundHours, &r.MaternityHours, &r.MaternityPartialHours, &r.UnpaidHours}
	pays = [numKinds]*Money{&r.OvertimePay, &r.NightPay, &r.HolidayPay, &r.SundayPay, &r.HolidayNightPay,
		&r.SundayNightPay, &r.SundayHolidayPay, &r.Shift1Pay, &r.Shift2Pay, &r.Shift3Pay, &r.SpecialPay,
		&r.Seniority, &r.BonusAmount, &r.SickCompanyPay, &r.SickFundPay, &r.MaternityBase, nil, nil}
	return hours, pays
}

// hoursOfKind is the hours of a kind's field (nil: a kind without hours).
func hoursOfKind(n *Num) money.Amount {
	if n == nil || !n.Set {
		return money.Amount{}
	}
	return n.D
}

// payOfKind is the amount of a kind's field (nil: a kind without pay).
func payOfKind(m *Money) money.Amount {
	if m == nil || !m.Set {
		return money.Amount{}
	}
	return m.D
}

// hoursOf is what a record says about its hours.
type hoursOf struct {
	fund    money.Amount // the record's fund: workingHours, else the batch's
	fundRef money.Amount // the full-time fund the paid share is taken of: fundHours, else fund
	inside  money.Amount // hours of every kind inside the fund, absent hours included
	absent  money.Amount
	paid    money.Amount // fund less unpaid, absent, health-fund sick and maternity hours
}

var hours176 = money.FromInt(176)

// batchFund is the batch's fund of hours (spec "Filing batch": default 176).
func batchFund(b *Batch) money.Amount {
	if b.WorkingHours.Set {
		return b.WorkingHours.D
	}
	return hours176
}

// recordHours works out the hours of r in batch b. It mirrors the payroll
// engine: the paid hours over the full-time fund prorate the maximum base
// and the allowance.
func recordHours(r *Record, b *Batch) hoursOf {
	var h hoursOf
	h.fund = batchFund(b)
	if r.WorkingHours.Set {
		h.fund = r.WorkingHours.D
	}
	h.fundRef = h.fund
	if r.FundHours.Set && r.FundHours.D.GreaterThan(h.fund) {
		h.fundRef = r.FundHours.D
	}
	h.absent = hrs(r.AbsentHours)
	h.inside = h.absent
	h.paid = h.fund.Sub(h.absent)
	hours, _ := kindFields(r)
	for k := range kinds {
		if !kinds[k].inside {
			continue
		}
		v := hoursOfKind(hours[k])
		h.inside = h.inside.Add(v)
		if !kinds[k].employer {
			h.paid = h.paid.Sub(v)
		}
	}
	if h.paid.IsNegative() {
		h.paid = money.Amount{}
	}
	return h
}

// calendarFund is the fund of hours of a month as UJP's МПИН client counts
// it: every weekday × 8, public holidays included (research §4.1: field
// 3.6 includes holidays).
func calendarFund(year, month int) money.Amount {
	n := 0
	for d := time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC); d.Month() == time.Month(month); d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			n++
		}
	}
	return money.FromInt(int64(8 * n))
}
