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
	code     func(r *Record) string
	hours    func(r *Record) *Num
	pay      func(r *Record) *Money
	inside   bool // hours inside the fund
	inGross  bool // amount part of salaryGross
	employer bool // hours paid by the employer (for the paid-hours ratio)
}

func fixed(c string) func(*Record) string { return func(*Record) string { return c } }

// kinds in the order their rows are written after the regular row (001).
// Codes: 005 overtime, 003 night, 007 work on a public holiday, 044 work on
// Sunday, 045 public holiday night work, 047 night work on a non-working
// day (Sunday), 100 hours in shifts, 037 seniority (минат труд), 099 bonus
// on the salary, 125–128 sick pay by the employer at 70/80/90/100 %, 023
// unpaid leave (rab_cas.json and vid_nadomestoci.json of UJP's МПИН
// client, via the TAMI repository, research §4.2); 140, 128 and 129 are
// МПИН 3.23 codes of the health fund. Sunday-holiday work has no code of its
// own: it is work on a public holiday (007). Special hours have none
// either: the record names one in specialCode (default 001).
var kinds = []kind{
	{name: "overtimeHours", code: fixed("005"), hours: func(r *Record) *Num { return &r.OvertimeHours }, pay: func(r *Record) *Money { return &r.OvertimePay }, inGross: true, employer: true},
	{name: "nightHours", code: fixed("003"), hours: func(r *Record) *Num { return &r.NightHours }, pay: func(r *Record) *Money { return &r.NightPay }, inside: true, inGross: true, employer: true},
	{name: "holidayHours", code: fixed("007"), hours: func(r *Record) *Num { return &r.HolidayHours }, pay: func(r *Record) *Money { return &r.HolidayPay }, inside: true, inGross: true, employer: true},
	{name: "sundayHours", code: fixed("044"), hours: func(r *Record) *Num { return &r.SundayHours }, pay: func(r *Record) *Money { return &r.SundayPay }, inside: true, inGross: true, employer: true},
	{name: "holidayNightHours", code: fixed("045"), hours: func(r *Record) *Num { return &r.HolidayNightHours }, pay: func(r *Record) *Money { return &r.HolidayNightPay }, inside: true, inGross: true, employer: true},
	{name: "sundayNightHours", code: fixed("047"), hours: func(r *Record) *Num { return &r.SundayNightHours }, pay: func(r *Record) *Money { return &r.SundayNightPay }, inside: true, inGross: true, employer: true},
	{name: "sundayHolidayHours", code: fixed("007"), hours: func(r *Record) *Num { return &r.SundayHolidayHours }, pay: func(r *Record) *Money { return &r.SundayHolidayPay }, inside: true, inGross: true, employer: true},
	{name: "shift1Hours", code: fixed("100"), hours: func(r *Record) *Num { return &r.Shift1Hours }, pay: func(r *Record) *Money { return &r.Shift1Pay }, inside: true, inGross: true, employer: true},
	{name: "shift2Hours", code: fixed("100"), hours: func(r *Record) *Num { return &r.Shift2Hours }, pay: func(r *Record) *Money { return &r.Shift2Pay }, inside: true, inGross: true, employer: true},
	{name: "shift3Hours", code: fixed("100"), hours: func(r *Record) *Num { return &r.Shift3Hours }, pay: func(r *Record) *Money { return &r.Shift3Pay }, inside: true, inGross: true, employer: true},
	{name: "specialHours", code: func(r *Record) string { return defaulted(r.SpecialCode, "001") }, hours: func(r *Record) *Num { return &r.SpecialHours }, pay: func(r *Record) *Money { return &r.SpecialPay }, inside: true, inGross: true, employer: true},
	{name: "seniority", code: fixed("037"), hours: func(*Record) *Num { return nil }, pay: func(r *Record) *Money { return &r.Seniority }, inGross: true},
	{name: "bonusAmount", code: fixed("099"), hours: func(*Record) *Num { return nil }, pay: func(r *Record) *Money { return &r.BonusAmount }, inGross: true},
	{name: "sickCompanyHours", code: func(r *Record) string { return sickCompanyCode(r.SickCompanyRate) }, hours: func(r *Record) *Num { return &r.SickCompanyHours }, pay: func(r *Record) *Money { return &r.SickCompanyPay }, inside: true, inGross: true, employer: true},
	{name: "sickFundHours", code: func(r *Record) string { return defaulted(r.SickFundCode, "140") }, hours: func(r *Record) *Num { return &r.SickFundHours }, pay: func(r *Record) *Money { return &r.SickFundPay }, inside: true, inGross: true},
	{name: "maternityHours", code: fixed("128"), hours: func(r *Record) *Num { return &r.MaternityHours }, pay: func(r *Record) *Money { return &r.MaternityBase }, inside: true},
	{name: "maternityPartialHours", code: fixed("129"), hours: func(r *Record) *Num { return &r.MaternityPartialHours }, pay: func(*Record) *Money { return nil }, inside: true, employer: true},
	{name: "unpaidHours", code: fixed("023"), hours: func(r *Record) *Num { return &r.UnpaidHours }, pay: func(*Record) *Money { return nil }, inside: true},
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
	for i := range kinds {
		k := &kinds[i]
		if !k.inside {
			continue
		}
		v := hoursOfKind(k.hours(r))
		h.inside = h.inside.Add(v)
		if !k.employer {
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
