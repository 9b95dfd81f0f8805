package payroll

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// plan is a validated Input in fixed point.
type plan struct {
	date                time.Time
	st                  statutory
	contractor          bool
	pitExempt           bool
	noAllowance         bool
	hoursInfo, senInfo  bool
	netBased            bool
	gross               int64 // cents; the contracted base gross (0 when solving for it)
	target              int64 // cents; targetNet
	hasTarget           bool
	wh, fundRef         int64 // hours × numScale
	hours, rates        [numKinds]int64
	unpaid, absent, mat int64
	seniorityPct        int64 // percent × numScale
	bonus               int64 // cents
	bonusNet            bool
	mode                string
	deductions          int64
}

// Validate checks in and reports every problem at once.
func Validate(in *Input, today time.Time) error {
	_, err := prepare(in, today)
	return err
}

func prepare(in *Input, today time.Time) (*plan, error) {
	var fe denar.FieldErrors
	p := &plan{contractor: in.Contractor, pitExempt: in.PitExempt, noAllowance: in.NoPersonalAllowance,
		hoursInfo: in.HoursInformational, senInfo: in.SeniorityInformational, netBased: in.NetBased, mode: "prorated"}

	money := func(path string, s *string) (int64, bool) {
		if s == nil {
			return 0, false
		}
		v, err := parseMoney(*s)
		if err != nil {
			fe.Add(path, "%v", err)
			return 0, false
		}
		return v, true
	}
	switch {
	case in.GrossSalary != nil && in.TargetNet != nil:
		fe.Add("grossSalary", "give either grossSalary or targetNet, not both")
	case in.GrossSalary == nil && in.TargetNet == nil:
		fe.Add("grossSalary", "one of grossSalary or targetNet is required")
	case in.GrossSalary != nil:
		p.gross, _ = money("grossSalary", in.GrossSalary)
	default:
		p.target, p.hasTarget = money("targetNet", in.TargetNet)
	}

	p.date = Today(today)
	if in.EffectiveDate != nil {
		d, err := time.Parse(time.DateOnly, *in.EffectiveDate)
		if err != nil {
			fe.Add("effectiveDate", "must be a date YYYY-MM-DD")
		} else if d.Year() < 2009 {
			fe.Add("effectiveDate", "rates are known from 2009 on")
		} else {
			p.date = d
		}
	}

	var over map[string]int64
	if len(in.RateOverrides) > 0 || in.PersonalAllowance != nil || in.AverageSalary != nil {
		over = map[string]int64{}
	}
	for k, raw := range in.RateOverrides {
		kind, ok := keyKinds[k]
		if !ok {
			fe.Add("rateOverrides."+k, "unknown rate key; known keys: %s", strings.Join(Keys(), ", "))
			continue
		}
		text := strings.TrimSpace(string(raw))
		var s string
		if json.Unmarshal(raw, &s) == nil {
			text = s
		}
		v, err := scaleOf(k, text)
		if err != nil || v < 0 {
			fe.Add("rateOverrides."+k, "must be a non-negative decimal (%s)", kind)
			continue
		}
		if kind == "percent" && v > 100*numScale {
			fe.Add("rateOverrides."+k, "a percentage must be at most 100")
			continue
		}
		over[k] = v
	}
	if v, ok := money("personalAllowance", in.PersonalAllowance); ok {
		over[KeyPersonalAllowance] = v
	}
	if v, ok := money("averageSalary", in.AverageSalary); ok {
		if v == 0 {
			fe.Add("averageSalary", "must be positive")
		}
		over[KeyAverageSalary] = v
	}

	num := func(path string, n Number, max int64) int64 {
		if !n.set {
			return 0
		}
		if n.v < 0 {
			fe.Add(path, "must not be negative")
			return 0
		}
		if n.v > max*numScale {
			fe.Add(path, "must be at most %d", max)
			return 0
		}
		return n.v
	}

	// The month's fund: workingHours, else the calendar month of period,
	// else 176 (R12).
	p.wh = 176 * numScale
	var periodStart, periodEnd time.Time
	if in.Period != nil {
		if in.Period.Month < 1 || in.Period.Month > 12 || in.Period.Year < 2009 || in.Period.Year > 2100 {
			fe.Add("period", "year must be 2009–2100 and month 1–12")
		} else {
			periodStart = time.Date(in.Period.Year, time.Month(in.Period.Month), 1, 0, 0, 0, 0, time.UTC)
			periodEnd = periodStart.AddDate(0, 1, -1)
			if fund, err := MonthFundHours(in.Period.Year, time.Month(in.Period.Month)); err != nil {
				fe.Add("period", "%v", err)
			} else if !in.WorkingHours.set {
				p.wh = fund
			}
		}
	}
	if in.WorkingHours.set {
		p.wh = num("workingHours", in.WorkingHours, 744)
		if p.wh == 0 {
			fe.Add("workingHours", "must be positive")
			p.wh = 176 * numScale
		}
	}
	p.fundRef = p.wh
	if in.FundHours.set {
		p.fundRef = num("fundHours", in.FundHours, 744)
		if p.fundRef < p.wh {
			fe.Add("fundHours", "must be at least workingHours (it is the full-time fund of the month)")
			p.fundRef = p.wh
		}
	}

	pairs := in.pairs()
	for k := range numKinds {
		info := kindInfo[k]
		p.hours[k] = num(info.hours, *pairs[k][0], 744)
		p.rates[k] = info.def
		if pairs[k][1].set {
			p.rates[k] = num(info.rate, *pairs[k][1], 1000)
		}
	}
	p.unpaid = num("unpaidHours", in.UnpaidHours, 744)
	p.mat = num("maternityHours", in.MaternityHours, 744)
	p.absent = num("absentHours", in.AbsentHours, 744)

	if len(in.Placements) > 0 {
		if in.Period == nil {
			fe.Add("placements", "placements need period")
		} else if !periodStart.IsZero() {
			if in.AbsentHours.set {
				fe.Add("absentHours", "give absentHours or placements, not both")
			}
			abs, errs := absentFromPlacements(in.Placements, periodStart, periodEnd, p.wh)
			fe = append(fe, errs...)
			p.absent = abs
		}
	}

	inside := p.unpaid + p.mat + p.absent + p.hours[kSickCompany] + p.hours[kSickFund]
	for k := range numKinds {
		if kindInfo[k].premium {
			inside += p.hours[k]
		}
	}
	if inside > p.wh {
		fe.Add("workingHours", "the hours inside the fund (premium, sick, maternity, unpaid and absent: %s) exceed the fund of %s hours",
			formatFixed(inside, 4), formatFixed(p.wh, 4))
	}

	if in.SeniorityPercentage.set && in.Seniority != nil {
		fe.Add("seniority", "give seniorityPercentage or seniority, not both")
	}
	p.seniorityPct = num("seniorityPercentage", in.SeniorityPercentage, 100)
	if s := in.Seniority; s != nil {
		months := s.Months
		if months < 0 || months > 900 {
			fe.Add("seniority.months", "must be 0–900")
			months = 0
		}
		if s.AsOf != nil {
			asOf, err := time.Parse(time.DateOnly, *s.AsOf)
			if err != nil {
				fe.Add("seniority.asOf", "must be a date YYYY-MM-DD")
			} else if s.PeriodYear != nil && s.PeriodMonth != nil {
				if *s.PeriodMonth < 1 || *s.PeriodMonth > 12 {
					fe.Add("seniority.periodMonth", "must be 1–12")
				} else {
					// Carry the months forward to the end of the period.
					end := time.Date(*s.PeriodYear, time.Month(*s.PeriodMonth)+1, 0, 0, 0, 0, 0, time.UTC)
					months += (end.Year()-asOf.Year())*12 + int(end.Month()-asOf.Month())
					if months < 0 {
						months = 0
					}
				}
			}
		} else if (s.PeriodYear == nil) != (s.PeriodMonth == nil) {
			fe.Add("seniority.periodMonth", "give periodYear and periodMonth together")
		}
		rate := int64(numScale / 2) // 0.5% per completed year
		if s.RatePerYear.set {
			rate = num("seniority.ratePerYear", s.RatePerYear, 10)
		}
		p.seniorityPct = int64(months/12) * rate
	}

	if v, ok := money("bonusAmount", in.BonusAmount); ok {
		p.bonus = v
	}
	p.bonusNet = true
	if in.BonusBasis != nil {
		switch *in.BonusBasis {
		case "net":
		case "gross":
			p.bonusNet = false
		default:
			fe.Add("bonusBasis", "must be gross or net")
		}
	}
	if in.MinBaseMode != nil {
		switch *in.MinBaseMode {
		case "prorated", "always", "off":
			p.mode = *in.MinBaseMode
		default:
			fe.Add("minBaseMode", "must be prorated, always or off")
		}
	}
	for i, d := range in.Deductions {
		if strings.TrimSpace(d.Description) == "" {
			fe.Add(fmt.Sprintf("deductions[%d].description", i), "is required")
		}
		v, err := parseMoney(d.Amount)
		if err != nil {
			fe.Add(fmt.Sprintf("deductions[%d].amount", i), "%v", err)
			continue
		}
		p.deductions += v
	}
	if len(fe) > 0 {
		return nil, fe.Err()
	}
	st, err := resolve(p.date, over)
	if err != nil {
		return nil, denar.Invalid(denar.FieldError{Path: "effectiveDate", Message: err.Error()})
	}
	if !p.contractor {
		if st.minBase < 0 || st.maxBase < 0 {
			fe.Add("averageSalary", "the published average salary for %d is not known to the service; pass averageSalary (denars) to compute the contribution bases", p.date.Year())
		}
		if st.allowance < 0 && !p.noAllowance {
			fe.Add("personalAllowance", "the personal allowance for %d is not known to the service; pass personalAllowance (denars per month)", p.date.Year())
		}
	}
	if len(fe) > 0 {
		return nil, fe.Err()
	}
	p.st = st
	return p, nil
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

// compute runs the month for a base gross and a gross bonus. extra, when
// not nil, replaces the premium pays (netBased).
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
				a.pays[k] = pay(p.hours[k], p.rates[k])
			}
		}
		if extra != nil {
			for k := range numKinds {
				if kindInfo[k].premium || k == kOvertime {
					a.pays[k] = extra[k]
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
		if !p.pitExempt {
			a.pit = divRound(a.gross*p.st.pit, rateScale)
		}
		a.taxBase = a.gross
		a.net = a.gross - a.pit
		return a
	}
	// Paid hours over the fund prorate the allowance and both bases.
	paid := p.wh - p.unpaid - p.absent - p.hours[kSickFund] - p.mat
	ratio := func(v int64) int64 { return mulDivRound(v, paid, 1, p.fundRef) }
	maxBase := ratio(p.st.maxBase)
	minBase := divRound(ratio(p.st.minBase), centsPerDenar) * centsPerDenar
	cb := min(a.gross, maxBase)
	for i, r := range p.st.rates {
		a.contrib[i] = divRound(cb*r, rateScale)
		a.totalContrib += a.contrib[i]
	}
	topUp := p.mode == "always" || (p.mode == "prorated" && paid < p.fundRef)
	if topUp && a.gross < minBase {
		short := minBase - a.gross
		for i, r := range p.st.rates {
			a.topUp[i] = divRound(short*r, rateScale)
		}
	}
	if !p.noAllowance {
		a.allowance = ratio(p.st.allowance)
	}
	a.taxBase = max(0, a.gross-a.totalContrib-a.allowance)
	if a.taxBase == 0 {
		a.allowance = min(a.allowance, max(0, a.gross-a.totalContrib))
	}
	if !p.pitExempt {
		a.pit = divRound(a.taxBase*p.st.pit, rateScale)
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
// is non-decreasing; guess is a closed-form estimate. Steps use the average
// slope of f so they approach the answer from one side, then a short walk
// settles the last denar.
func solve(target int64, guess int64, f func(x int64) int64) (int64, error) {
	const limit = maxMoneyCents / centsPerDenar
	x := max(0, min(guess, limit))
	for range 64 {
		n := f(x * centsPerDenar)
		// Average cents of net per denar of x: a safe step size, as f has
		// no steeper part than its average from 0 except near kinks.
		slope := int64(centsPerDenar)
		if n > 0 && x > 0 {
			slope = max(1, n/x)
		}
		if n < target {
			if x >= limit {
				return 0, errNoSolution
			}
			x = min(limit, x+max(1, (target-n)/slope))
			continue
		}
		if x == 0 || f((x-1)*centsPerDenar) < target {
			return x, nil
		}
		x = max(0, x-max(1, (n-target)/slope))
	}
	// Fall back to bisection over [0, limit]; never reached in practice.
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
// (research §3.2): G = (N − t·A) / ((1 − t)(1 − c)).
func (p *plan) estimate(net int64) int64 {
	if p.contractor {
		return net * rateScale / max(1, rateScale-p.st.pit) / centsPerDenar
	}
	c := p.st.rates[0] + p.st.rates[1] + p.st.rates[2] + p.st.rates[3]
	a := max(p.st.allowance, 0)
	num := net*rateScale - p.st.pit*a
	den := (rateScale - p.st.pit) * (rateScale - c) / rateScale
	if den <= 0 {
		return net / centsPerDenar
	}
	return max(0, num/den/centsPerDenar)
}

// Calculate computes one month. today is used when effectiveDate is absent.
func Calculate(in *Input, today time.Time) (*Result, error) {
	p, err := prepare(in, today)
	if err != nil {
		return nil, err
	}
	return p.run()
}

func (p *plan) run() (*Result, error) {
	base := p.gross
	if p.hasTarget {
		// The contracted base gross whose month nets at least the target.
		f := func(g int64) int64 { return p.compute(g, 0, nil).net }
		x, err := solve(reportedAtLeast(p.target), p.estimate(p.target), f)
		if err != nil {
			return nil, denar.Invalid(denar.FieldError{Path: "targetNet", Message: "no gross up to 1,000,000,000 denars reaches this net"})
		}
		base = x * centsPerDenar
	}
	var extra *[numKinds]int64
	if p.netBased && !p.hoursInfo {
		e, err := p.netBasedPays(base)
		if err != nil {
			return nil, err
		}
		extra = e
	}
	bonus := int64(0)
	if p.bonus > 0 {
		if p.bonusNet {
			// R7: net rises by exactly bonusAmount (the smallest gross bonus
			// whose net reaches it).
			before := divRound(p.compute(base, 0, extra).net, centsPerDenar) * centsPerDenar
			f := func(b int64) int64 { return p.compute(base, b, extra).net }
			x, err := solve(reportedAtLeast(before+p.bonus), p.bonus*100/65/centsPerDenar, f)
			if err != nil {
				return nil, denar.Invalid(denar.FieldError{Path: "bonusAmount", Message: "no gross bonus reaches this net bonus"})
			}
			bonus = x * centsPerDenar
		} else {
			bonus = p.bonus
		}
	}
	a := p.compute(base, bonus, extra)
	if p.deductions > a.net {
		return nil, denar.Invalid(denar.FieldError{Path: "deductions", Message: fmt.Sprintf("deductions (%s) exceed the net salary (%s)", wholeDenars(p.deductions), wholeDenars(a.net))})
	}
	return p.result(a), nil
}

// netBasedPays prices premium and overtime hours off the net hourly rate
// (R10): the premiums must raise the net by net-hourly × hours × (rate −
// 100% inside the fund, or rate on top of it); the gross that does so is
// found by inversion and split over the kinds in proportion.
func (p *plan) netBasedPays(base int64) (*[numKinds]int64, error) {
	var zero [numKinds]int64
	// The base net: the month as if every premium hour were an ordinary one.
	q := *p
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
		if rate < 0 {
			rate = 0
		}
		want[k] = mulDivRound(baseNet, p.hours[k], rate, p.wh*1_000_000)
		total += want[k]
	}
	if total == 0 {
		return &zero, nil
	}
	// Inside hours at 100% are part of the base: give each premium kind
	// its 100% share first, then find the extra gross for the net uplift.
	var share [numKinds]int64
	den := p.wh * 1_000_000
	for k := range numKinds {
		if kindInfo[k].premium {
			share[k] = mulDivRound(base, p.hours[k], 100*numScale, den)
		}
	}
	split := func(extraGross int64) [numKinds]int64 {
		out := share
		rest := extraGross
		last := -1
		for k := range numKinds {
			if want[k] == 0 {
				continue
			}
			part := extraGross * want[k] / total
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
		return nil, denar.Invalid(denar.FieldError{Path: "netBased", Message: "no gross reaches the net-priced premiums"})
	}
	s := split(x * centsPerDenar)
	return &s, nil
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
	r.SickFundHours, r.SickFundRate, r.SickFundPay = h(kSickFund), rt(kSickFund), "0"
	// sick: all sick hours; the pay is the employer's part.
	r.SickHours = num(p.hours[kSickCompany] + p.hours[kSickFund])
	r.SickRate, r.SickPay = rt(kSickCompany), pay(kSickCompany)
	r.Shift1Hours, r.Shift1Rate, r.Shift1Pay = h(kShift1), rt(kShift1), pay(kShift1)
	r.Shift2Hours, r.Shift2Rate, r.Shift2Pay = h(kShift2), rt(kShift2), pay(kShift2)
	r.Shift3Hours, r.Shift3Rate, r.Shift3Pay = h(kShift3), rt(kShift3), pay(kShift3)
	r.SpecialHours, r.SpecialRate, r.SpecialPay = h(kSpecial), rt(kSpecial), pay(kSpecial)
	r.HolidayNightHours, r.HolidayNightRate, r.HolidayNightPay = h(kHolidayNight), rt(kHolidayNight), pay(kHolidayNight)
	r.SundayNightHours, r.SundayNightRate, r.SundayNightPay = h(kSundayNight), rt(kSundayNight), pay(kSundayNight)
	r.SundayHolidayHours, r.SundayHolidayRate, r.SundayHolidayPay = h(kSundayHoliday), rt(kSundayHoliday), pay(kSundayHoliday)
	return r
}
