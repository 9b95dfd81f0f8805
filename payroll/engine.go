package payroll

import (
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar"
)

// Hour kinds in the order of Input's premium pairs. inside: the hours are
// part of the contracted fund (paid at their total rate instead of 100%);
// otherwise they come on top of it (overtime).
type hourKind int

const (
	kOvertime hourKind = iota
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
	kSickCompany
	kSickFund
	numKinds
)

var kindInfo = [numKinds]struct {
	hours, rate string
	def         int64 // default total rate, percent × numScale
	premium     bool  // a premium kind inside the fund
}{
	kOvertime:      {"overtimeHours", "overtimeRate", 135 * numScale, false},
	kNight:         {"nightHours", "nightHoursRate", 135 * numScale, true},
	kHoliday:       {"holidayHours", "holidayHoursRate", 150 * numScale, true},
	kSunday:        {"sundayHours", "sundayHoursRate", 150 * numScale, true},
	kHolidayNight:  {"holidayNightHours", "holidayNightRate", 185 * numScale, true},
	kSundayNight:   {"sundayNightHours", "sundayNightRate", 185 * numScale, true},
	kSundayHoliday: {"sundayHolidayHours", "sundayHolidayRate", 200 * numScale, true},
	kShift1:        {"shift1Hours", "shift1Rate", 100 * numScale, true},
	kShift2:        {"shift2Hours", "shift2Rate", 100 * numScale, true},
	kShift3:        {"shift3Hours", "shift3Rate", 135 * numScale, true},
	kSpecial:       {"specialHours", "specialRate", 100 * numScale, true},
	kSickCompany:   {"sickCompanyHours", "sickCompanyRate", 70 * numScale, false},
	kSickFund:      {"sickFundHours", "sickFundRate", 70 * numScale, false},
}

func (in *Input) pairs() [numKinds][2]*Number {
	return [numKinds][2]*Number{
		kOvertime: {&in.OvertimeHours, &in.OvertimeRate}, kNight: {&in.NightHours, &in.NightHoursRate},
		kHoliday: {&in.HolidayHours, &in.HolidayHoursRate}, kSunday: {&in.SundayHours, &in.SundayHoursRate},
		kHolidayNight: {&in.HolidayNightHours, &in.HolidayNightRate}, kSundayNight: {&in.SundayNightHours, &in.SundayNightRate},
		kSundayHoliday: {&in.SundayHolidayHours, &in.SundayHolidayRate}, kShift1: {&in.Shift1Hours, &in.Shift1Rate},
		kShift2: {&in.Shift2Hours, &in.Shift2Rate}, kShift3: {&in.Shift3Hours, &in.Shift3Rate},
		kSpecial: {&in.SpecialHours, &in.SpecialRate}, kSickCompany: {&in.SickCompanyHours, &in.SickCompanyRate},
		kSickFund: {&in.SickFundHours, &in.SickFundRate},
	}
}

// amounts is one computed month in cents.
type amounts struct {
	gross, baseGross             int64
	pays                         [numKinds]int64
	seniority, bonus             int64
	contrib, topUp               [4]int64
	totalContrib                 int64
	allowance, taxBase, pit, net int64
}

// applyRate returns v × rate (a fraction in millionths), half-up, in cents.
// 128-bit intermediate: v may be far above any real salary while a search
// probes the limits.
func applyRate(v, rate int64) int64 { return mulDivRound(v, rate, 1, rateScale) }

// compute runs the month for a base gross and a gross bonus, at two
// decimals. extra, when not nil, replaces the premium and overtime pays
// (netBased).
func (p *plan) compute(base, bonus int64, extra *[numKinds]int64) amounts {
	var a amounts
	a.baseGross = base
	den := p.wh * 1_000_000 // hours×1e4 × percent×1e4 / 100 → cents
	pay := func(h, r int64) int64 { return mulDivRound(base, h, r, den) }
	nonWorked := p.unpaid + p.mat + p.absent + p.hours[kSickCompany] + p.hours[kSickFund]
	premiumHours := int64(0)
	for k := range numKinds {
		if kindInfo[k].premium {
			premiumHours += p.hours[k]
		}
	}
	regular := p.wh - nonWorked
	if !p.hoursInfo {
		regular -= premiumHours
		for k := range numKinds {
			if kindInfo[k].premium || k == kOvertime {
				if extra != nil {
					a.pays[k] = extra[k]
				} else {
					a.pays[k] = pay(p.hours[k], p.rates[k])
				}
			}
		}
	}
	a.pays[kSickCompany] = pay(p.hours[kSickCompany], p.rates[kSickCompany])
	// Seniority applies to the base pay of the hours worked inside the fund,
	// at 100%: never to premiums, overtime, sick pay or the bonus.
	if !p.senInfo && p.seniorityPct > 0 {
		worked := pay(p.wh-nonWorked, 100*numScale)
		a.seniority = mulDivRound(worked, p.seniorityPct, 1, 100*numScale)
	}
	a.bonus = bonus
	a.gross = pay(regular, 100*numScale) + a.seniority + a.bonus
	for k := range numKinds {
		a.gross += a.pays[k]
	}
	if p.contractor {
		// R4: flat PIT on the gross; no contributions, no allowance.
		if !p.pitExempt {
			a.pit = applyRate(a.gross, p.st.pit)
		}
		a.taxBase = a.gross
		a.net = a.gross - a.pit
		return a
	}
	// Paid hours over the fund prorate the allowance and both bases.
	paid := p.wh - p.unpaid - p.absent - p.hours[kSickFund] - p.mat
	ratio := func(v int64) int64 { return mulDivRound(v, paid, 1, p.fundRef) }
	maxBase := ratio(p.st.maxBase)
	cb := min(a.gross, maxBase)
	for i, r := range p.st.rates {
		a.contrib[i] = applyRate(cb, r)
		a.totalContrib += a.contrib[i]
	}
	topUp := p.mode == "always" || (p.mode == "prorated" && paid < p.fundRef)
	if topUp {
		// The prorated minimum base is rounded to a whole denar, as UJP's
		// example does (research §5 E4: 15,296 / 184 × 92 = 7,648).
		minBase := divRound(ratio(p.st.minBase), centsPerDenar) * centsPerDenar
		if a.gross < minBase {
			short := minBase - a.gross
			for i, r := range p.st.rates {
				a.topUp[i] = applyRate(short, r)
			}
		}
	}
	if !p.noAllowance {
		a.allowance = ratio(p.st.allowance)
	}
	a.taxBase = max(0, a.gross-a.totalContrib-a.allowance)
	if a.taxBase == 0 {
		// Report the allowance actually used (МПИН's DanocnoOslob).
		a.allowance = min(a.allowance, max(0, a.gross-a.totalContrib))
	}
	if !p.pitExempt {
		a.pit = applyRate(a.taxBase, p.st.pit)
	}
	a.net = a.gross - a.totalContrib - a.pit
	return a
}

// reportedAtLeast turns a net target into the least net in cents whose
// reported (whole-denar, half-up) figure reaches it: the target rounded up
// to a whole denar, less half a denar.
func reportedAtLeast(target int64) int64 {
	whole := (target + centsPerDenar - 1) / centsPerDenar
	return whole*centsPerDenar - centsPerDenar/2
}

var errNoSolution = errors.New("payroll: no gross reaches the target net")

// solve returns the smallest whole-denar x ≥ 0 with f(x) ≥ target, where f
// is non-decreasing; guess is a closed-form estimate. Each step is a secant
// step through the last two points, so on the piecewise-linear net curve it
// lands on the answer or next to it; a short walk settles the last denar.
// A bisection is the fallback should the walk not settle.
func solve(target int64, guess int64, f func(x int64) int64) (int64, error) {
	const limit = maxMoneyCents / centsPerDenar
	px, pn := int64(0), f(0) // the previous point; f(0) is rarely 0 for a bonus or a premium
	if pn >= target {
		return 0, nil
	}
	x := max(1, min(guess, limit))
	for range 64 {
		n := f(x * centsPerDenar)
		// Cents of net per denar of x between the last two points.
		slope := int64(1)
		if x != px {
			slope = max(1, (n-pn)/(x-px))
		}
		px, pn = x, n
		if n < target {
			if x >= limit {
				return 0, errNoSolution
			}
			x = min(limit, x+max(1, (target-n)/slope))
			continue
		}
		if f((x-1)*centsPerDenar) < target {
			return x, nil
		}
		x = max(1, x-max(1, (n-target)/slope))
	}
	lo, hi := int64(0), limit
	if f(hi*centsPerDenar) < target {
		return 0, errNoSolution
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if f(mid*centsPerDenar) >= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// estimate is the closed-form gross for net n in the normal band
// (research §3.2): G = (N − t·A) / ((1 − t)(1 − c)), in whole denars.
func (p *plan) estimate(net int64) int64 {
	if p.contractor {
		return mulDivRound(net, rateScale, 1, max(1, rateScale-p.st.pit)) / centsPerDenar
	}
	c := p.st.rates[0] + p.st.rates[1] + p.st.rates[2] + p.st.rates[3]
	a := max(p.st.allowance, 0)
	num := net*rateScale - p.st.pit*a
	den := (rateScale - p.st.pit) * (rateScale - c) / rateScale
	if den <= 0 || num <= 0 {
		return net / centsPerDenar
	}
	return num / den / centsPerDenar
}

// Calculate computes one month (CalculationInput → CalculationResult).
// now is the current instant; it gives the default effectiveDate (R6).
// Invalid input returns a *denar.Error with code validation_failed and
// every problem's path.
func Calculate(in *Input, now time.Time) (*Result, error) {
	p, err := prepare(in, now)
	if err != nil {
		return nil, err
	}
	return p.run()
}

// monthNet is the net of the month for base gross g without the bonus:
// the function net-first inverts.
func (p *plan) monthNet(g int64) int64 {
	if p.netBased && !p.hoursInfo {
		extra, ok := p.netBasedPays(g)
		if !ok {
			return -1
		}
		return p.compute(g, 0, &extra).net
	}
	return p.compute(g, 0, nil).net
}

func (p *plan) run() (*Result, error) {
	base := p.gross
	moneyPath := "grossSalary"
	if p.hasTarget {
		// targetNet is the month's net before any bonus: the smallest
		// whole-denar base gross whose month nets at least the target.
		moneyPath = "targetNet"
		x, err := solve(reportedAtLeast(p.target), p.estimate(p.target), p.monthNet)
		if err != nil {
			return nil, denar.Invalid(denar.FieldError{Path: "targetNet", Message: "no gross up to 1,000,000,000 denars reaches this net with these rates"})
		}
		base = x * centsPerDenar
	}
	var extra *[numKinds]int64
	if p.netBased && !p.hoursInfo {
		e, ok := p.netBasedPays(base)
		if !ok {
			return nil, denar.Invalid(denar.FieldError{Path: "netBased", Message: "no gross reaches the net-priced premiums with these rates"})
		}
		extra = &e
	}
	bonus := int64(0)
	if p.bonus > 0 {
		if p.bonusNet {
			// R7: the reported net rises by exactly bonusAmount (the smallest
			// whole-denar gross bonus that does so).
			before := divRound(p.compute(base, 0, extra).net, centsPerDenar) * centsPerDenar
			f := func(b int64) int64 { return p.compute(base, b, extra).net }
			x, err := solve(reportedAtLeast(before+p.bonus), p.bonus*100/65/centsPerDenar, f)
			if err != nil {
				return nil, denar.Invalid(denar.FieldError{Path: "bonusAmount", Message: "no gross bonus up to 1,000,000,000 denars reaches this net bonus with these rates"})
			}
			bonus = x * centsPerDenar
		} else {
			bonus = p.bonus
		}
	}
	a := p.compute(base, bonus, extra)
	if a.gross > maxMoneyCents {
		return nil, denar.Invalid(denar.FieldError{Path: moneyPath, Message: fmt.Sprintf("the month's gross with premiums, seniority and bonus would exceed %s denars", wholeDenars(maxMoneyCents))})
	}
	if p.date.Year() == 2019 && !p.contractor && !p.pitExempt && !p.pitOverridden && a.gross > progressive2019Cents {
		return nil, denar.Invalid(denar.FieldError{Path: "effectiveDate", Message: "in 2019 monthly income above 90,000 denars was taxed at 18% on the excess; the service does not model that band"})
	}
	if p.deductions > a.net {
		return nil, denar.Invalid(denar.FieldError{Path: "deductions", Message: fmt.Sprintf("deductions (%s) exceed the net salary (%s)", wholeDenars(p.deductions), wholeDenars(a.net))})
	}
	return p.result(a), nil
}

// netBasedPays prices premium and overtime hours off the net hourly rate
// (R10): the premiums must raise the net by net-hourly × hours × (rate −
// 100% inside the fund, or rate on top of it); the gross that does so is
// found by inversion and split over the kinds in proportion. ok is false
// when no gross reaches that net (only with absurd rate overrides).
func (p *plan) netBasedPays(base int64) (pays [numKinds]int64, ok bool) {
	// The base net: the month as if every premium hour were an ordinary one.
	q := *p
	q.netBased = false
	q.hours = [numKinds]int64{}
	q.hours[kSickCompany], q.hours[kSickFund] = p.hours[kSickCompany], p.hours[kSickFund]
	baseNet := q.compute(base, 0, nil).net
	var want [numKinds]int64 // net amount each kind must add
	total := int64(0)
	for k := range numKinds {
		if !(kindInfo[k].premium || k == kOvertime) || p.hours[k] == 0 {
			continue
		}
		rate := p.rates[k]
		if kindInfo[k].premium {
			rate -= 100 * numScale // the hour itself is already in the base net
		}
		rate = max(rate, 0)
		want[k] = mulDivRound(max(baseNet, 0), p.hours[k], rate, p.wh*1_000_000)
		total += want[k]
	}
	// Inside hours at 100% are part of the base: each premium kind gets its
	// 100% share first, then the extra gross for the net uplift.
	var share [numKinds]int64
	den := p.wh * 1_000_000
	for k := range numKinds {
		if kindInfo[k].premium {
			share[k] = mulDivRound(base, p.hours[k], 100*numScale, den)
		}
	}
	if total == 0 {
		return share, true
	}
	split := func(extraGross int64) [numKinds]int64 {
		out := share
		rest := extraGross
		last := -1
		for k := range numKinds {
			if want[k] == 0 {
				continue
			}
			part := mulDivRound(extraGross, want[k], 1, total)
			out[k] += part
			rest -= part
			last = int(k)
		}
		if last >= 0 {
			out[last] += rest
		}
		return out
	}
	target := reportedAtLeast(baseNet + total)
	f := func(x int64) int64 { s := split(x); return p.compute(base, 0, &s).net }
	x, err := solve(target, total*100/60/centsPerDenar, f)
	if err != nil {
		return pays, false
	}
	return split(x * centsPerDenar), true
}

func (p *plan) result(a amounts) *Result {
	num := func(v int64) Number { return Number{v: v, set: true} }
	w := wholeDenars
	r := &Result{
		SalaryGross: w(a.gross), BaseGross: w(a.baseGross),
		Pension: w(a.contrib[0]), Health: w(a.contrib[1]), AdditionalHealth: w(a.contrib[2]), EmploymentContrib: w(a.contrib[3]),
		TotalContributions: w(a.totalContrib),
		PensionTopUp:       w(a.topUp[0]), HealthTopUp: w(a.topUp[1]), DisabilityTopUp: w(a.topUp[2]), EmploymentTopUp: w(a.topUp[3]),
		PersonalAllowance: w(a.allowance), TaxableIncome: w(a.taxBase), PIT: w(a.pit), SalaryNet: w(a.net),
		DeductionsTotal: w(p.deductions), NetPaid: w(a.net - p.deductions),
		Seniority: w(a.seniority), BonusAmount: w(a.bonus), BonusBasis: "net",
		WorkingHours: num(p.wh), SeniorityPercentage: num(p.seniorityPct),
		UnpaidHours: num(p.unpaid), AbsentHours: num(p.absent), MaternityHours: num(p.mat),
	}
	if !p.bonusNet {
		r.BonusBasis = "gross"
	}
	h := func(k hourKind) Number { return num(p.hours[k]) }
	rt := func(k hourKind) Number { return num(p.rates[k]) }
	pay := func(k hourKind) string { return w(a.pays[k]) }
	r.OvertimeHours, r.OvertimePay = h(kOvertime), pay(kOvertime)
	r.NightHours, r.NightPay = h(kNight), pay(kNight)
	r.HolidayHours, r.HolidayPay = h(kHoliday), pay(kHoliday)
	r.SundayHours, r.SundayPay = h(kSunday), pay(kSunday)
	r.SickCompanyHours, r.SickCompanyRate, r.SickCompanyPay = h(kSickCompany), rt(kSickCompany), pay(kSickCompany)
	// The health fund pays sickFundHours directly: no pay in this payroll.
	r.SickFundHours, r.SickFundRate, r.SickFundPay = h(kSickFund), rt(kSickFund), "0"
	// sick: every sick hour; the pay and rate are the employer's part.
	r.SickHours = num(p.hours[kSickCompany] + p.hours[kSickFund])
	r.SickRate, r.SickPay = rt(kSickCompany), pay(kSickCompany)
	r.Shift1Hours, r.Shift1Rate, r.Shift1Pay = h(kShift1), rt(kShift1), pay(kShift1)
	r.Shift2Hours, r.Shift2Rate, r.Shift2Pay = h(kShift2), rt(kShift2), pay(kShift2)
	r.Shift3Hours, r.Shift3Rate, r.Shift3Pay = h(kShift3), rt(kShift3), pay(kShift3)
	r.SpecialHours, r.SpecialRate, r.SpecialPay = h(kSpecial), rt(kSpecial), pay(kSpecial)
	r.HolidayNightHours, r.HolidayNightRate, r.HolidayNightPay = h(kHolidayNight), rt(kHolidayNight), pay(kHolidayNight)
	r.SundayNightHours, r.SundayNightRate, r.SundayNightPay = h(kSundayNight), rt(kSundayNight), pay(kSundayNight)
	r.SundayHolidayHours, r.SundayHolidayRate, r.SundayHolidayPay = h(kSundayHoliday), rt(kSundayHoliday), pay(kSundayHoliday)
	r.FundHours = num(p.fundRef)
	day := func(d int) *int {
		if d == 0 {
			return nil
		}
		return &d
	}
	r.HireDay, r.LeaveDay, r.ServiceDays = day(p.hireDay), day(p.leaveDay), day(p.serviceDays)
	r.InsuranceCode = "0050"
	if p.fundRef > p.wh {
		r.InsuranceCode = "0047"
	}
	r.ProvisionalFigures = p.provisionalUsed()
	r.Provisional = len(r.ProvisionalFigures) > 0
	r.Warnings = []Warning{}
	for _, f := range r.ProvisionalFigures {
		r.Warnings = append(r.Warnings, Warning{Code: "provisional_figure", Path: f.Key,
			Message: fmt.Sprintf("%s for %d is not published yet; the figure in force from %s (%s) is used: %s", f.Key, p.date.Year(), f.CarriedFrom, f.Source, f.Value)})
	}
	return r
}

// provisionalUsed lists the carried-forward figures this calculation used:
// the bases and the allowance, unless overridden or not needed.
func (p *plan) provisionalUsed() []Provisional {
	out := []Provisional{}
	if p.contractor || len(p.st.prov) == 0 {
		return out
	}
	for _, k := range Keys() {
		f := p.st.prov[k]
		if f == nil {
			continue
		}
		switch k {
		case KeyPersonalAllowance:
			if p.noAllowance {
				continue
			}
		case KeyMinBase:
			if p.mode == "off" {
				continue
			}
		case KeyAverageSalary:
			continue // used only through the bases, reported as such
		}
		out = append(out, *f)
	}
	return out
}
