package payroll

import (
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/money"
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
	def         money.Amount // default total rate, percent
	premium     bool         // a premium kind inside the fund
}{
	kOvertime:      {"overtimeHours", "overtimeRate", money.FromInt(135), false},
	kNight:         {"nightHours", "nightHoursRate", money.FromInt(135), true},
	kHoliday:       {"holidayHours", "holidayHoursRate", money.FromInt(150), true},
	kSunday:        {"sundayHours", "sundayHoursRate", money.FromInt(150), true},
	kHolidayNight:  {"holidayNightHours", "holidayNightRate", money.FromInt(185), true},
	kSundayNight:   {"sundayNightHours", "sundayNightRate", money.FromInt(185), true},
	kSundayHoliday: {"sundayHolidayHours", "sundayHolidayRate", money.FromInt(200), true},
	kShift1:        {"shift1Hours", "shift1Rate", money.FromInt(100), true},
	kShift2:        {"shift2Hours", "shift2Rate", money.FromInt(100), true},
	kShift3:        {"shift3Hours", "shift3Rate", money.FromInt(135), true},
	kSpecial:       {"specialHours", "specialRate", money.FromInt(100), true},
	kSickCompany:   {"sickCompanyHours", "sickCompanyRate", money.FromInt(70), false},
	kSickFund:      {"sickFundHours", "sickFundRate", money.FromInt(70), false},
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

// amounts is one computed month at two decimals.
type amounts struct {
	gross, baseGross             money.Amount
	pays                         [numKinds]money.Amount
	seniority, bonus             money.Amount
	contrib, topUp               [4]money.Amount
	totalContrib                 money.Amount
	allowance, taxBase, pit, net money.Amount
}

// zero is 0 at the engine's money scale: sums of amounts of one scale add
// without rescaling.
var zero = money.New(0, 2)

// applyRate returns v × pct %, rounded half-up to cents; nothing for v ≤ 0.
func applyRate(v, pct money.Amount) money.Amount {
	if !v.IsPositive() || !pct.IsPositive() {
		return zero
	}
	return v.MulDiv(pct, hundred, 2)
}

// share returns v × num / den, rounded half-up to cents; nothing unless
// all three are positive.
func share(v, num, den money.Amount) money.Amount {
	if !v.IsPositive() || !num.IsPositive() || !den.IsPositive() {
		return zero
	}
	return v.MulDiv(num, den, 2)
}

// compute runs the month for a base gross and a gross bonus, at two
// decimals. extra, when not nil, replaces the premium and overtime pays
// (netBased). e, when not nil, records every step (explain).
func (p *plan) compute(base, bonus money.Amount, extra *[numKinds]money.Amount, e *explainer) amounts {
	a := amounts{seniority: zero, totalContrib: zero, allowance: zero, pit: zero}
	for k := range a.pays {
		a.pays[k] = zero
	}
	a.baseGross = base
	den := p.wh.Mul(hundred) // pay = base × hours × rate % / fund
	pay := func(h, r money.Amount) money.Amount {
		if !h.IsPositive() || !r.IsPositive() {
			return zero
		}
		return share(base, h.Mul(r), den)
	}
	payLine := func(step, what string, h, r, v money.Amount) {
		if e == nil || !v.IsPositive() {
			return
		}
		e.line(step, "baseGross × "+what+" × rate ÷ workingHours", base.Mul(h).Mul(r).Div(den, 12), v, roundCents,
			denarsIn("baseGross", base), hoursIn(what, h), pctIn("rate", r), hoursIn("workingHours", p.wh))
	}
	nonWorked := p.unpaid.Add(p.mat).Add(p.absent).Add(p.hours[kSickCompany]).Add(p.hours[kSickFund])
	var premiumHours money.Amount
	for k := range numKinds {
		if kindInfo[k].premium {
			premiumHours = premiumHours.Add(p.hours[k])
		}
	}
	regular := p.wh.Sub(nonWorked)
	if !p.hoursInfo {
		regular = regular.Sub(premiumHours)
		for k := range numKinds {
			if kindInfo[k].premium || k == kOvertime {
				if extra != nil {
					a.pays[k] = extra[k]
					if e != nil && a.pays[k].IsPositive() {
						e.line(kindNames[k], "priced off the net hourly rate: the gross that raises the net by net ÷ workingHours × "+kindInfo[k].hours+" × its premium, split over the kinds in proportion",
							a.pays[k], a.pays[k], roundCents, hoursIn(kindInfo[k].hours, p.hours[k]), pctIn(kindInfo[k].rate, p.rates[k]))
					}
				} else {
					a.pays[k] = pay(p.hours[k], p.rates[k])
					payLine(kindNames[k], kindInfo[k].hours, p.hours[k], p.rates[k], a.pays[k])
				}
			}
		}
	}
	a.pays[kSickCompany] = pay(p.hours[kSickCompany], p.rates[kSickCompany])
	payLine(kindNames[kSickCompany], kindInfo[kSickCompany].hours, p.hours[kSickCompany], p.rates[kSickCompany], a.pays[kSickCompany])
	// Seniority applies to the base pay of the hours worked inside the fund,
	// at 100%: never to premiums, overtime, sick pay or the bonus.
	if !p.senInfo && p.seniorityPct.IsPositive() {
		worked := pay(p.wh.Sub(nonWorked), hundred)
		a.seniority = applyRate(worked, p.seniorityPct)
		if e != nil {
			e.line("seniority", "baseGross × hours worked inside the fund ÷ workingHours (at 100 %), × seniorityPercentage",
				worked.Mul(p.seniorityPct).Div(hundred, 12), a.seniority, roundCents,
				denarsIn("base pay of the hours worked", worked), pctIn("seniorityPercentage", p.seniorityPct))
		}
	}
	a.bonus = bonus
	regularPay := pay(regular, hundred)
	a.gross = regularPay.Add(a.seniority).Add(a.bonus)
	for k := range numKinds {
		a.gross = a.gross.Add(a.pays[k])
	}
	if e != nil {
		e.line("regularPay", "baseGross × regular hours ÷ workingHours; regular hours = workingHours − premium, sick, maternity, unpaid and absent hours",
			base.Mul(regular).Div(p.wh, 12), regularPay, roundCents, denarsIn("baseGross", base), hoursIn("regular hours", regular), hoursIn("workingHours", p.wh))
		if a.bonus.IsPositive() {
			e.line("bonusAmount", "the gross bonus", a.bonus, a.bonus, roundNone, denarsIn("bonusAmount", a.bonus))
		}
		e.line("salaryGross", "regular pay + premium and overtime pays + sick pay by the employer + seniority + bonus", a.gross, a.gross, roundNone)
	}
	if p.contractor {
		// R4: flat PIT on the gross; no contributions, no allowance.
		if !p.pitExempt {
			a.pit = applyRate(a.gross, p.st.pit)
		}
		a.taxBase = a.gross
		a.net = a.gross.Sub(a.pit)
		if e != nil {
			e.line("pit", "contractor: salaryGross × pit; no contributions, no allowance", a.gross.Mul(p.st.pit).Div(hundred, 12), a.pit, roundCents,
				denarsIn("salaryGross", a.gross), e.statutoryIn(KeyPIT, p.st.pit))
			e.line("salaryNet", "salaryGross − pit", a.net, a.net, roundNone)
		}
		return a
	}
	// Paid hours over the fund prorate the allowance and both bases.
	paid := p.wh.Sub(p.unpaid).Sub(p.absent).Sub(p.hours[kSickFund]).Sub(p.mat)
	ratio := func(v money.Amount) money.Amount { return share(v, paid, p.fundRef) }
	maxBase := ratio(p.st.maxBase)
	cb := money.Min(a.gross, maxBase)
	if e != nil {
		e.line("paidHours", "workingHours − unpaid, absent, health-fund sick and maternity hours", paid, paid, roundNone, hoursIn("workingHours", p.wh))
		e.line("maxBase", "maximum contribution base × paidHours ÷ fund (prorated by hours)", p.st.maxBase.Mul(paid).Div(p.fundRef, 12), maxBase, roundCents,
			e.statutoryIn(KeyMaxBase, p.st.maxBase), hoursIn("paidHours", paid), hoursIn("fund", p.fundRef))
		e.line("contributionBase", "the smaller of salaryGross and the maximum base", cb, cb, roundNone, denarsIn("salaryGross", a.gross), denarsIn("prorated maximum base", maxBase))
	}
	keys := [4]string{KeyPension, KeyHealth, KeyAdditionalHealth, KeyEmployment}
	fields := [4]string{"pension", "health", "additionalHealth", "employmentContrib"}
	for i, r := range p.st.rates {
		a.contrib[i] = applyRate(cb, r)
		a.totalContrib = a.totalContrib.Add(a.contrib[i])
		if e != nil {
			e.line(fields[i], "contribution base × "+keys[i]+" rate", cb.Mul(r).Div(hundred, 12), a.contrib[i], roundCents,
				denarsIn("contributionBase", cb), e.statutoryIn(keys[i], r))
		}
	}
	if e != nil {
		e.line("totalContributions", "pension + health + additionalHealth + employmentContrib, at 2 decimals (not the sum of the rounded figures)", a.totalContrib, a.totalContrib, roundNone)
	}
	topUp := p.mode == "always" || (p.mode == "prorated" && paid.LessThan(p.fundRef))
	if topUp {
		// The prorated minimum base is rounded to a whole denar, as UJP's
		// example does (research §5 E4: 15,296 / 184 × 92 = 7,648).
		minBase := ratio(p.st.minBase).Round(0).Round(2)
		if e != nil {
			e.line("minBase", "minimum contribution base × paidHours ÷ fund, in whole denars (as UJP's own example rounds it); minBaseMode "+p.mode,
				p.st.minBase.Mul(paid).Div(p.fundRef, 12), minBase, roundWhole, e.statutoryIn(KeyMinBase, p.st.minBase), hoursIn("paidHours", paid), hoursIn("fund", p.fundRef))
		}
		if a.gross.LessThan(minBase) {
			short := minBase.Sub(a.gross)
			for i, r := range p.st.rates {
				a.topUp[i] = applyRate(short, r)
				if e != nil {
					e.line([4]string{"pensionTopUp", "healthTopUp", "disabilityTopUp", "employmentTopUp"}[i],
						"(minimum base − salaryGross) × "+keys[i]+" rate: the employer's top-up, not deducted from the employee",
						short.Mul(r).Div(hundred, 12), a.topUp[i], roundCents, denarsIn("shortfall", short), e.statutoryIn(keys[i], r))
				}
			}
		}
	}
	if !p.noAllowance {
		a.allowance = ratio(p.st.allowance)
		if e != nil {
			e.line("personalAllowance", "monthly personal allowance × paidHours ÷ fund", p.st.allowance.Mul(paid).Div(p.fundRef, 12), a.allowance, roundCents,
				e.statutoryIn(KeyPersonalAllowance, p.st.allowance), hoursIn("paidHours", paid), hoursIn("fund", p.fundRef))
		}
	}
	a.taxBase = money.Max(zero, a.gross.Sub(a.totalContrib).Sub(a.allowance))
	if a.taxBase.IsZero() {
		// Report the allowance actually used (МПИН's DanocnoOslob).
		a.allowance = money.Min(a.allowance, money.Max(zero, a.gross.Sub(a.totalContrib)))
	}
	if !p.pitExempt {
		a.pit = applyRate(a.taxBase, p.st.pit)
	}
	a.net = a.gross.Sub(a.totalContrib).Sub(a.pit)
	if e != nil {
		e.line("taxableIncome", "salaryGross − totalContributions − personalAllowance, at least 0", a.taxBase, a.taxBase, roundNone,
			denarsIn("salaryGross", a.gross), denarsIn("totalContributions", a.totalContrib), denarsIn("allowance used", a.allowance))
		formula := "taxableIncome × pit"
		if p.pitExempt {
			formula = "pitExempt: no PIT"
		}
		e.line("pit", formula, a.taxBase.Mul(p.st.pit).Div(hundred, 12), a.pit, roundCents, denarsIn("taxableIncome", a.taxBase), e.statutoryIn(KeyPIT, p.st.pit))
		e.line("salaryNet", "salaryGross − totalContributions − pit", a.net, a.net, roundNone)
	}
	return a
}

// reportedAtLeast turns a net target in cents into the least net in cents
// whose reported (whole-denar, half-up) figure reaches it: the target
// rounded up to a whole denar, less half a denar.
func reportedAtLeast(target int64) int64 {
	whole := (target + 99) / 100
	return whole*100 - 50
}

var errNoSolution = errors.New("payroll: no gross reaches the target net")

// solve returns the smallest whole-denar x ≥ 0 with f(x) ≥ target (cents),
// where f is non-decreasing; guess is a closed-form estimate. Each step is
// a secant step through the last two points, so on the piecewise-linear
// net curve it lands on the answer or next to it; a short walk settles the
// last denar. A bisection is the fallback should the walk not settle.
func solve(target int64, guess int64, f func(x int64) int64) (int64, error) {
	const limit = maxMoneyDenars
	px, pn := int64(0), f(0) // the previous point; f(0) is rarely 0 for a bonus or a premium
	if pn >= target {
		return 0, nil
	}
	x := max(1, min(guess, limit))
	for range 64 {
		n := f(x)
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
		if f(x-1) < target {
			return x, nil
		}
		x = max(1, x-max(1, (n-target)/slope))
	}
	lo, hi := int64(0), int64(limit)
	if f(hi) < target {
		return 0, errNoSolution
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if f(mid) >= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// estimate is the closed-form gross in whole denars for net (research
// §3.2): G = (N − t·A) / ((1 − t)(1 − c)).
func (p *plan) estimate(net money.Amount) int64 {
	one := money.FromInt(1)
	t := p.st.pit.Div(hundred, 6)
	if p.contractor {
		if d := one.Sub(t); d.IsPositive() {
			return net.Div(d, 0).Whole()
		}
		return net.Whole()
	}
	c := p.st.rates[0].Add(p.st.rates[1]).Add(p.st.rates[2]).Add(p.st.rates[3]).Div(hundred, 6)
	a := p.st.allowance
	if !p.st.hasAllowance {
		a = money.Amount{}
	}
	num := net.Sub(t.Mul(a))
	den := one.Sub(t).Mul(one.Sub(c))
	if !den.IsPositive() || !num.IsPositive() {
		return net.Whole()
	}
	return num.Div(den, 0).Whole()
}

// Calculate computes one month (CalculationInput → CalculationResult).
// now is the current instant; it gives the default effectiveDate (R6).
// Invalid input returns a *denar.Error with code validation_failed and
// every problem's path.
func Calculate(in *Input, now time.Time) (*Result, error) {
	return calculate(in, now, false)
}

// CalculateExplained is Calculate with the result's Explain filled: every
// line of the computation in order (POST /v1/calculations?explain=true).
func CalculateExplained(in *Input, now time.Time) (*Result, error) {
	return calculate(in, now, true)
}

func calculate(in *Input, now time.Time, explain bool) (*Result, error) {
	var p plan
	if err := p.prepare(in, now); err != nil {
		return nil, err
	}
	var ex *explainer
	if explain {
		ex = &explainer{p: &p}
		ex.fundLine(in)
	}
	r := new(Result)
	if err := p.run(r, ex); err != nil {
		return nil, err
	}
	return r, nil
}

// AppendCalculation calculates in and appends the result's JSON object to
// b: what Calculate (or CalculateExplained) and Result.AppendJSON do,
// without keeping the result.
func AppendCalculation(b []byte, in *Input, now time.Time, explain bool) ([]byte, error) {
	if explain {
		r, err := CalculateExplained(in, now)
		if err != nil {
			return b, err
		}
		return r.AppendJSON(b), nil
	}
	var p plan
	if err := p.prepare(in, now); err != nil {
		return b, err
	}
	var r Result
	if err := p.run(&r, nil); err != nil {
		return b, err
	}
	return r.AppendJSON(b), nil
}

// monthNet is the net in cents of the month for base gross g (whole
// denars) without the bonus: the function net-first inverts.
func (p *plan) monthNet(g int64) int64 {
	base := denars(g)
	if p.netBased && !p.hoursInfo {
		extra, ok := p.netBasedPays(base)
		if !ok {
			return -1
		}
		return cents(p.compute(base, zero, &extra, nil).net)
	}
	return cents(p.compute(base, zero, nil, nil).net)
}

func (p *plan) run(r *Result, ex *explainer) error {
	base := p.gross
	moneyPath := "grossSalary"
	if p.hasTarget {
		// targetNet is the month's net before any bonus: the smallest
		// whole-denar base gross whose month nets at least the target.
		moneyPath = "targetNet"
		x, err := solve(reportedAtLeast(cents(p.target)), p.estimate(p.target), p.monthNet)
		if err != nil {
			return denar.Invalid(denar.FieldError{Path: "targetNet", Message: "no gross up to 1,000,000,000 denars reaches this net with these rates"})
		}
		base = denars(x)
		if ex != nil {
			ex.note("baseGross", "targetNet (net first): the smallest whole-denar base gross whose net, rounded to whole denars, reaches targetNet; found by a secant search from (N − pit × A) ÷ ((1 − pit)(1 − contributions))",
				base.String(), roundSearch, denarsIn("targetNet", p.target),
				denarsIn("net at this gross", p.compute(base, zero, nil, nil).net), denarsIn("net one denar lower", p.compute(denars(x-1), zero, nil, nil).net))
		}
	} else if ex != nil {
		ex.note("baseGross", "grossSalary, as given", base.String(), roundNone, denarsIn("grossSalary", base))
	}
	var extra *[numKinds]money.Amount
	if p.netBased && !p.hoursInfo {
		e, ok := p.netBasedPays(base)
		if !ok {
			return denar.Invalid(denar.FieldError{Path: "netBased", Message: "no gross reaches the net-priced premiums with these rates"})
		}
		extra = &e
	}
	bonus := zero
	if p.bonus.IsPositive() {
		if p.bonusNet {
			// R7: the reported net rises by exactly bonusAmount (the smallest
			// whole-denar gross bonus that does so).
			before := cents(p.compute(base, zero, extra, nil).net.Round(0))
			f := func(b int64) int64 { return cents(p.compute(base, denars(b), extra, nil).net) }
			x, err := solve(reportedAtLeast(before+cents(p.bonus)), p.bonus.MulDiv(hundred, money.FromInt(65), 0).Whole(), f)
			if err != nil {
				return denar.Invalid(denar.FieldError{Path: "bonusAmount", Message: "no gross bonus up to 1,000,000,000 denars reaches this net bonus with these rates"})
			}
			bonus = denars(x)
			if ex != nil {
				ex.note("bonusAmount", "bonusBasis net: the smallest whole-denar gross bonus that raises the reported net by bonusAmount",
					bonus.String(), roundSearch, denarsIn("bonusAmount (net)", p.bonus), denarsIn("reported net without the bonus", denars(before/100)))
			}
		} else {
			bonus = p.bonus
		}
	}
	a := p.compute(base, bonus, extra, ex)
	if a.gross.GreaterThan(maxMoney) {
		return denar.Invalid(denar.FieldError{Path: moneyPath, Message: "the month's gross with premiums, seniority and bonus would exceed 1000000000 denars"})
	}
	if p.date.Year() == 2019 && !p.contractor && !p.pitExempt && !p.pitOverridden && a.gross.GreaterThan(progressive2019) {
		return denar.Invalid(denar.FieldError{Path: "effectiveDate", Message: "in 2019 monthly income above 90,000 denars was taxed at 18% on the excess; the service does not model that band"})
	}
	if p.deductions.GreaterThan(a.net) {
		return denar.Invalid(denar.FieldError{Path: "deductions", Message: fmt.Sprintf("deductions (%s) exceed the net salary (%s)", p.deductions.Round(0), a.net.Round(0))})
	}
	p.result(a, r)
	if ex != nil {
		if p.deductions.IsPositive() {
			ex.line("deductionsTotal", "the sum of deductions: they reduce only netPaid", p.deductions, p.deductions, roundNone)
		}
		ex.line("netPaid", "salaryNet − deductionsTotal", a.net.Sub(p.deductions), a.net.Sub(p.deductions), roundNone)
		ex.note("reported", "every money figure of the result is the 2-decimal figure above rounded on its own to whole denars, half up (the rule of UJP's МПИН client): totals are not re-summed from rounded parts",
			r.SalaryNet.String(), roundWhole)
		r.Explain = &Explanation{EffectiveDate: p.date.Format(time.DateOnly), Lines: ex.lines}
	}
	return nil
}

// netBasedPays prices premium and overtime hours off the net hourly rate
// (R10): the premiums must raise the net by net-hourly × hours × (rate −
// 100% inside the fund, or rate on top of it); the gross that does so is
// found by inversion and split over the kinds in proportion. ok is false
// when no gross reaches that net (only with absurd rate overrides).
func (p *plan) netBasedPays(base money.Amount) (pays [numKinds]money.Amount, ok bool) {
	// The base net: the month as if every premium hour were an ordinary one.
	q := *p
	q.netBased = false
	q.hours = [numKinds]money.Amount{}
	q.hours[kSickCompany], q.hours[kSickFund] = p.hours[kSickCompany], p.hours[kSickFund]
	baseNet := money.Max(q.compute(base, zero, nil, nil).net, zero)
	den := p.wh.Mul(hundred)
	var want [numKinds]money.Amount // net amount each kind must add
	total := zero
	for k := range numKinds {
		if !(kindInfo[k].premium || k == kOvertime) || p.hours[k].IsZero() {
			continue
		}
		rate := p.rates[k]
		if kindInfo[k].premium {
			rate = rate.Sub(hundred) // the hour itself is already in the base net
		}
		want[k] = share(baseNet, p.hours[k].Mul(rate), den)
		total = total.Add(want[k])
	}
	// Inside hours at 100% are part of the base: each premium kind gets its
	// 100% share first, then the extra gross for the net uplift.
	var split0 [numKinds]money.Amount
	for k := range numKinds {
		split0[k] = zero
		if kindInfo[k].premium {
			split0[k] = share(base, p.hours[k], p.wh)
		}
	}
	if total.IsZero() {
		return split0, true
	}
	split := func(extraGross money.Amount) [numKinds]money.Amount {
		out := split0
		rest := extraGross
		last := -1
		for k := range numKinds {
			if want[k].IsZero() {
				continue
			}
			part := share(extraGross, want[k], total)
			out[k] = out[k].Add(part)
			rest = rest.Sub(part)
			last = int(k)
		}
		if last >= 0 {
			out[last] = out[last].Add(rest)
		}
		return out
	}
	target := reportedAtLeast(cents(baseNet.Add(total)))
	f := func(x int64) int64 {
		s := split(money.FromInt(x))
		return cents(p.compute(base, zero, &s, nil).net)
	}
	x, err := solve(target, total.MulDiv(hundred, money.FromInt(60), 0).Whole(), f)
	if err != nil {
		return pays, false
	}
	return split(denars(x)), true
}

func (p *plan) result(a amounts, r *Result) {
	num := func(v money.Amount) Number { return Number{a: v, set: true} }
	w := func(v money.Amount) money.Amount { return v.Round(0) }
	*r = Result{
		SalaryGross: w(a.gross), BaseGross: w(a.baseGross),
		Pension: w(a.contrib[0]), Health: w(a.contrib[1]), AdditionalHealth: w(a.contrib[2]), EmploymentContrib: w(a.contrib[3]),
		TotalContributions: w(a.totalContrib),
		PensionTopUp:       w(a.topUp[0]), HealthTopUp: w(a.topUp[1]), DisabilityTopUp: w(a.topUp[2]), EmploymentTopUp: w(a.topUp[3]),
		PersonalAllowance: w(a.allowance), TaxableIncome: w(a.taxBase), PIT: w(a.pit), SalaryNet: w(a.net),
		DeductionsTotal: w(p.deductions), NetPaid: w(a.net.Sub(p.deductions)),
		Seniority: w(a.seniority), BonusAmount: w(a.bonus), BonusBasis: "net",
		WorkingHours: num(p.wh), SeniorityPercentage: num(p.seniorityPct),
		UnpaidHours: num(p.unpaid), AbsentHours: num(p.absent), MaternityHours: num(p.mat),
	}
	if !p.bonusNet {
		r.BonusBasis = "gross"
	}
	h := func(k hourKind) Number { return num(p.hours[k]) }
	rt := func(k hourKind) Number { return num(p.rates[k]) }
	pay := func(k hourKind) money.Amount { return w(a.pays[k]) }
	r.OvertimeHours, r.OvertimePay = h(kOvertime), pay(kOvertime)
	r.NightHours, r.NightPay = h(kNight), pay(kNight)
	r.HolidayHours, r.HolidayPay = h(kHoliday), pay(kHoliday)
	r.SundayHours, r.SundayPay = h(kSunday), pay(kSunday)
	r.SickCompanyHours, r.SickCompanyRate, r.SickCompanyPay = h(kSickCompany), rt(kSickCompany), pay(kSickCompany)
	// The health fund pays sickFundHours directly: no pay in this payroll.
	r.SickFundHours, r.SickFundRate, r.SickFundPay = h(kSickFund), rt(kSickFund), money.FromInt(0)
	// sick: every sick hour; the pay and rate are the employer's part.
	r.SickHours = num(p.hours[kSickCompany].Add(p.hours[kSickFund]))
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
		v := d
		return &v
	}
	r.HireDay, r.LeaveDay, r.ServiceDays = day(p.hireDay), day(p.leaveDay), day(p.serviceDays)
	r.InsuranceCode = "0050"
	if p.fundRef.GreaterThan(p.wh) {
		r.InsuranceCode = "0047"
	}
	r.ProvisionalFigures = p.provisionalUsed()
	r.Provisional = len(r.ProvisionalFigures) > 0
	r.Warnings = []Warning{}
	for _, f := range r.ProvisionalFigures {
		r.Warnings = append(r.Warnings, Warning{Code: "provisional_figure", Path: f.Key,
			Message: fmt.Sprintf("%s for %d is not published yet; the figure in force from %s (%s) is used: %s", f.Key, p.date.Year(), f.CarriedFrom, f.Source, f.Value)})
	}
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
