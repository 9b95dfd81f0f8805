package payroll

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/money"
)

// Upper bounds of the input. They are far above any real payroll.
const (
	maxHours          = 744  // hours of any kind: 31 days × 24 h
	minWorkingHours   = 1    // workingHours below one hour would make the hourly rate absurd
	maxPremiumRate    = 1000 // total rate of a premium or sick pay, percent
	maxSeniorityPct   = 100  // seniorityPercentage, percent
	maxRatePerYear    = 10   // seniority.ratePerYear, percent
	maxSeniorityMonth = 900  // 75 years of service
	maxMultiplier     = 100  // maxBaseMultiplier override
	maxDeductions     = 50   // deductions per calculation
)

// 2019 taxed monthly income above 90,000 denars at 18% (research §1); the
// engine does not model that band and refuses such months.
var progressive2019 = money.FromInt(90_000)

// plan is a validated Input.
type plan struct {
	date                time.Time
	st                  statutory
	contractor          bool
	pitExempt           bool
	pitOverridden       bool
	noAllowance         bool
	hoursInfo, senInfo  bool
	netBased            bool
	gross               money.Amount // the contracted base gross (0 when solving for it)
	target              money.Amount // targetNet
	hasTarget           bool
	wh, fundRef         money.Amount // hours
	hours, rates        [numKinds]money.Amount
	unpaid, absent, mat money.Amount
	seniorityPct        money.Amount // percent
	bonus               money.Amount
	bonusNet            bool
	mode                string
	deductions          money.Amount
	over                map[string]money.Amount // the request's statutory overrides
	// From period and placements: МПИН days of the record (0 = none).
	hireDay, leaveDay, serviceDays int
	weekdays, coveredWeekdays      int // of the period, for explain
}

// Validate checks in and reports every problem at once, with the JSON path
// of each (a *denar.Error with code validation_failed). now is the current
// instant; it gives the default effectiveDate.
func Validate(in *Input, now time.Time) error {
	var p plan
	return p.prepare(in, now)
}

// EffectiveDate is the date whose statutory values a calculation of in
// uses (R6): effectiveDate; else, with period, the period's last day (the
// month the salary is for, research §1); else today in Europe/Skopje. ok is
// false when effectiveDate or period is malformed.
func EffectiveDate(in *Input, now time.Time) (date time.Time, ok bool) {
	if in.EffectiveDate != nil {
		d, err := time.Parse(time.DateOnly, *in.EffectiveDate)
		return d, err == nil
	}
	if p := in.Period; p != nil {
		if p.Month < 1 || p.Month > 12 || p.Year < 2009 || p.Year > 2100 {
			return Today(now), false
		}
		return time.Date(p.Year, time.Month(p.Month)+1, 0, 0, 0, 0, 0, time.UTC), true
	}
	return Today(now), true
}

// prepare validates in into p.
func (p *plan) prepare(in *Input, now time.Time) error {
	var fe denar.FieldErrors
	*p = plan{contractor: in.Contractor, pitExempt: in.PitExempt, noAllowance: in.NoPersonalAllowance,
		hoursInfo: in.HoursInformational, senInfo: in.SeniorityInformational, netBased: in.NetBased, mode: "prorated"}

	amount := func(path string, s *string) (money.Amount, bool) {
		if s == nil {
			return money.Amount{}, false
		}
		v, err := parseMoney(*s)
		if err != nil {
			fe.Add(path, "%v", err)
			return money.Amount{}, false
		}
		return v, true
	}
	switch {
	case in.GrossSalary != nil && in.TargetNet != nil:
		fe.Add("grossSalary", "give either grossSalary or targetNet, not both")
		fe.Add("targetNet", "give either grossSalary or targetNet, not both")
	case in.GrossSalary == nil && in.TargetNet == nil:
		fe.Add("grossSalary", "one of grossSalary or targetNet is required")
	case in.GrossSalary != nil:
		p.gross, _ = amount("grossSalary", in.GrossSalary)
	default:
		p.target, p.hasTarget = amount("targetNet", in.TargetNet)
	}

	date, ok := EffectiveDate(in, now)
	switch {
	case !ok && in.EffectiveDate != nil:
		fe.Add("effectiveDate", "must be a date YYYY-MM-DD")
	case date.Year() < 2009 || date.Year() > 2100:
		fe.Add("effectiveDate", "rates are known from 2009 on; give a date 2009-01-01 to 2100-12-31")
	case ok && in.EffectiveDate != nil && in.Period != nil && (date.Year() != in.Period.Year || int(date.Month()) != in.Period.Month):
		// effectiveDate means the month the salary is for (R6); a period
		// naming another month leaves it unclear which month's rates apply.
		fe.Add("effectiveDate", "%s is not in the period %04d-%02d; give a date of that month or leave effectiveDate out (the period's last day is used)",
			*in.EffectiveDate, in.Period.Year, in.Period.Month)
	}
	p.date = date

	var over map[string]money.Amount
	if len(in.RateOverrides) > 0 || in.PersonalAllowance != nil || in.AverageSalary != nil {
		over = make(map[string]money.Amount, len(in.RateOverrides)+2)
	}
	for _, k := range sortedKeys(in.RateOverrides) {
		raw := in.RateOverrides[k]
		path := "rateOverrides." + k
		kind, ok := keyKinds[k]
		if !ok {
			fe.Add(path, "unknown rate key; known keys: %s", strings.Join(Keys(), ", "))
			continue
		}
		text := strings.TrimSpace(string(raw))
		var str string
		if json.Unmarshal(raw, &str) == nil {
			text = str
		}
		v, err := scaleOf(k, text)
		switch {
		case err != nil || v.IsNegative():
			fe.Add(path, "must be a non-negative decimal (%s)", kindDescription[kind])
			continue
		case kind == "percent" && v.GreaterThan(hundred):
			fe.Add(path, "a percentage must be at most 100")
			continue
		case kind == "number" && v.GreaterThan(money.FromInt(maxMultiplier)):
			fe.Add(path, "must be at most %d", maxMultiplier)
			continue
		}
		over[k] = v
	}
	if _, dup := in.RateOverrides[KeyPersonalAllowance]; dup && in.PersonalAllowance != nil {
		fe.Add("personalAllowance", "give personalAllowance or rateOverrides.personalAllowance, not both")
	}
	if _, dup := in.RateOverrides[KeyAverageSalary]; dup && in.AverageSalary != nil {
		fe.Add("averageSalary", "give averageSalary or rateOverrides.averageSalary, not both")
	}
	if v, ok := amount("personalAllowance", in.PersonalAllowance); ok {
		over[KeyPersonalAllowance] = v
	}
	if v, ok := amount("averageSalary", in.AverageSalary); ok {
		over[KeyAverageSalary] = v
	}
	if v, ok := over[KeyAverageSalary]; ok && v.IsZero() {
		fe.Add("averageSalary", "must be positive")
	}
	_, p.pitOverridden = over[KeyPIT]
	p.over = over

	num := func(path string, n Number, max int64) money.Amount {
		if !n.set {
			return money.Amount{}
		}
		if n.a.IsNegative() {
			fe.Add(path, "must not be negative")
			return money.Amount{}
		}
		if n.a.GreaterThan(money.FromInt(max)) {
			fe.Add(path, "must be at most %d", max)
			return money.Amount{}
		}
		return n.a
	}

	// The month's fund: workingHours, else the period's weekdays × 8
	// (holidays are paid hours of the fund, as UJP counts them), else 176
	// (R12).
	p.wh = money.FromInt(176)
	var periodStart time.Time
	if in.Period != nil {
		if in.Period.Month < 1 || in.Period.Month > 12 || in.Period.Year < 2009 || in.Period.Year > 2100 {
			fe.Add("period", "year must be 2009–2100 and month 1–12")
		} else {
			periodStart = time.Date(in.Period.Year, time.Month(in.Period.Month), 1, 0, 0, 0, 0, time.UTC)
			if !in.WorkingHours.set {
				p.wh = MonthFundHours(in.Period.Year, time.Month(in.Period.Month)).a
			}
		}
	}
	if in.WorkingHours.set {
		p.wh = num("workingHours", in.WorkingHours, maxHours)
		if p.wh.LessThan(money.FromInt(minWorkingHours)) {
			if !in.WorkingHours.a.IsNegative() {
				fe.Add("workingHours", "must be at least %d", minWorkingHours)
			}
			p.wh = money.FromInt(176)
		}
	}
	p.fundRef = p.wh
	if in.FundHours.set {
		p.fundRef = num("fundHours", in.FundHours, maxHours)
		if p.fundRef.LessThan(p.wh) {
			fe.Add("fundHours", "must be at least workingHours (it is the full-time fund of the month)")
			p.fundRef = p.wh
		}
	}

	pairs := in.pairs()
	for k := range numKinds {
		info := kindInfo[k]
		p.hours[k] = num(info.hours, *pairs[k][0], maxHours)
		p.rates[k] = info.def
		if pairs[k][1].set {
			p.rates[k] = num(info.rate, *pairs[k][1], maxPremiumRate)
		}
	}
	p.unpaid = num("unpaidHours", in.UnpaidHours, maxHours)
	p.mat = num("maternityHours", in.MaternityHours, maxHours)
	p.absent = num("absentHours", in.AbsentHours, maxHours)

	if len(in.Placements) > 0 {
		switch {
		case in.Period == nil:
			fe.Add("placements", "placements need period")
		case len(in.Placements) > 31:
			fe.Add("placements", "at most 31 placements in a month")
		case !periodStart.IsZero():
			if in.AbsentHours.set {
				fe.Add("absentHours", "give absentHours or placements, not both")
			}
			emp, errs := fromPlacements(in.Placements, periodStart, p.wh)
			fe = append(fe, errs...)
			p.absent = emp.absent
			p.hireDay, p.leaveDay, p.serviceDays = emp.hireDay, emp.leaveDay, emp.serviceDays
			p.weekdays, p.coveredWeekdays = emp.of, emp.coveredWeekdays
		}
	}

	inside := p.unpaid.Add(p.mat).Add(p.absent).Add(p.hours[kSickCompany]).Add(p.hours[kSickFund])
	for k := range numKinds {
		if kindInfo[k].premium {
			inside = inside.Add(p.hours[k])
		}
	}
	if inside.GreaterThan(p.wh) {
		fe.Add("workingHours", "the hours inside the fund (premium, sick, maternity, unpaid and absent: %s) exceed the fund of %s hours", inside, p.wh)
	}

	if in.SeniorityPercentage.set && in.Seniority != nil {
		fe.Add("seniority", "give seniorityPercentage or seniority, not both")
	}
	p.seniorityPct = num("seniorityPercentage", in.SeniorityPercentage, maxSeniorityPct)
	if s := in.Seniority; s != nil {
		p.seniorityPct = seniorityPercent(s, in.Period, now, &fe)
	}

	if v, ok := amount("bonusAmount", in.BonusAmount); ok {
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
	if len(in.Deductions) > maxDeductions {
		fe.Add("deductions", "at most %d deductions", maxDeductions)
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
		p.deductions = p.deductions.Add(v)
	}
	if p.contractor {
		contractorInputs(in, &fe)
	}
	if len(fe) > 0 {
		return fe.Err()
	}
	st, err := resolve(p.date, over)
	if err != nil {
		return denar.Invalid(denar.FieldError{Path: "effectiveDate", Message: err.Error()})
	}
	if sum := st.rates[0].Add(st.rates[1]).Add(st.rates[2]).Add(st.rates[3]); !sum.LessThan(hundred) {
		// Contributions of 100% or more would leave a negative net.
		fe.Add("rateOverrides", "the four contribution rates add up to %s%%; they must stay below 100%%", sum)
	}
	if !p.contractor {
		year := p.date.Year()
		switch {
		case st.noMultiplier:
			fe.Add("rateOverrides.maxBaseMultiplier", "the maximum-base multiplier for %d is not known to the service, so the maximum contribution base cannot be derived from averageSalary; pass rateOverrides.maxBaseMultiplier (for example 16) or rateOverrides.maxBase", year)
		case !st.hasMax || (!st.hasMin && p.mode != "off"):
			var missing []string
			if !st.hasMin && p.mode != "off" {
				missing = append(missing, "the minimum contribution base (minBase)")
			}
			if !st.hasMax {
				missing = append(missing, "the maximum contribution base (maxBase)")
			}
			avg := "the average salary of that year is not known either"
			if a, ok := RatesOn(p.date)[KeyAverageSalary]; ok {
				avg = "the published average salary of that year is " + a + ", but the published bases were not found"
			}
			fe.Add("averageSalary", "%s for %d %s not known to the service (%s); pass averageSalary (denars, the State Statistical Office figure UJP uses for that year: the bases are derived from it) or rateOverrides.minBase and rateOverrides.maxBase",
				strings.Join(missing, " and "), year, map[bool]string{true: "are", false: "is"}[len(missing) > 1], avg)
		}
		if !st.hasAllowance && !p.noAllowance {
			fe.Add("personalAllowance", "the monthly personal allowance (personalAllowance) for %d is not known to the service; pass personalAllowance (denars per month)", year)
		}
	}
	if len(fe) > 0 {
		return fe.Err()
	}
	p.st = st
	return nil
}

// contractorInputs refuses, for a contractor (R4: flat tax on the gross,
// no hours model), every hour, rate and seniority input: the engine would
// otherwise have to ignore them silently.
func contractorInputs(in *Input, fe *denar.FieldErrors) {
	const msg = "does not apply to a contractor (contractor: true): the payment is a flat gross with no hours model"
	nums := []struct {
		path string
		n    Number
	}{{"workingHours", in.WorkingHours}, {"fundHours", in.FundHours}, {"unpaidHours", in.UnpaidHours},
		{"absentHours", in.AbsentHours}, {"maternityHours", in.MaternityHours}, {"seniorityPercentage", in.SeniorityPercentage}}
	pairs := in.pairs()
	for k := range numKinds {
		nums = append(nums, struct {
			path string
			n    Number
		}{kindInfo[k].hours, *pairs[k][0]}, struct {
			path string
			n    Number
		}{kindInfo[k].rate, *pairs[k][1]})
	}
	for _, x := range nums {
		if x.n.set && !x.n.a.IsZero() {
			fe.Add(x.path, "%s", msg)
		}
	}
	if in.Seniority != nil {
		fe.Add("seniority", "%s", msg)
	}
	if len(in.Placements) > 0 {
		fe.Add("placements", "%s", msg)
	}
	if in.NetBased {
		fe.Add("netBased", "%s", msg)
	}
}

// seniorityPercent turns months of service into completed years × rate.
// months are counted on asOf (default: today); periodYear/periodMonth
// (default: the input's period) carry them forward, or back, to the end of
// that month.
func seniorityPercent(s *Seniority, period *Period, now time.Time, fe *denar.FieldErrors) money.Amount {
	months := s.Months
	if months < 0 || months > maxSeniorityMonth {
		fe.Add("seniority.months", "must be 0–%d", maxSeniorityMonth)
		months = 0
	}
	asOf := Today(now)
	if s.AsOf != nil {
		d, err := time.Parse(time.DateOnly, *s.AsOf)
		if err != nil {
			fe.Add("seniority.asOf", "must be a date YYYY-MM-DD")
		} else {
			asOf = d
		}
	}
	py, pm := s.PeriodYear, s.PeriodMonth
	if (py == nil) != (pm == nil) {
		fe.Add("seniority.periodMonth", "give periodYear and periodMonth together")
		py, pm = nil, nil
	}
	if py == nil && period != nil {
		py, pm = &period.Year, &period.Month
	}
	if py != nil {
		switch {
		case *pm < 1 || *pm > 12:
			fe.Add("seniority.periodMonth", "must be 1–12")
		case *py < 1950 || *py > 2100:
			fe.Add("seniority.periodYear", "must be 1950–2100")
		default:
			end := time.Date(*py, time.Month(*pm)+1, 0, 0, 0, 0, 0, time.UTC)
			months += (end.Year()-asOf.Year())*12 + int(end.Month()-asOf.Month())
			months = max(0, months)
		}
	}
	rate := money.New(5, 1) // 0.5% per completed year (research §6, lblaw)
	if s.RatePerYear.set {
		rate = money.Amount{}
		switch {
		case s.RatePerYear.a.IsNegative():
			fe.Add("seniority.ratePerYear", "must not be negative")
		case s.RatePerYear.a.GreaterThan(money.FromInt(maxRatePerYear)):
			fe.Add("seniority.ratePerYear", "must be at most %d", maxRatePerYear)
		default:
			rate = s.RatePerYear.a
		}
	}
	return money.Min(money.FromInt(int64(months/12)).Mul(rate), money.FromInt(maxSeniorityPct))
}
