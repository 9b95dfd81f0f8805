package payroll

import (
	"fmt"
	"time"

	"github.com/denar-mk/denar/money"
)

// Explanation is every line of a calculation in the order it was computed:
// what a payroll clerk shows an inspector to account for each denar.
type Explanation struct {
	EffectiveDate string        `json:"effectiveDate" example:"2026-05-31" doc:"The date whose statutory figures were used."`
	Lines         []ExplainLine `json:"lines" doc:"The steps of the computation, in the order they were taken."`
}

// ExplainLine is one step: its formula in words, the figures it took (with
// the effective date and source of every statutory one), its exact value
// and the value kept after the rounding it names.
type ExplainLine struct {
	Step     string         `json:"step" doc:"Stable name of the step, usually the result field it produces."`
	Formula  string         `json:"formula" doc:"The rule, in words."`
	Inputs   []ExplainInput `json:"inputs" doc:"The figures the step took."`
	Exact    string         `json:"exact" doc:"The value before rounding; … when it has more decimals than shown."`
	Value    string         `json:"value" doc:"The value kept."`
	Rounding string         `json:"rounding" doc:"The rounding applied to get value from exact."`
}

// ExplainInput is one figure a step took.
type ExplainInput struct {
	Name          string `json:"name" example:"pension" doc:"The figure's name: a rate key, an input field or an earlier step."`
	Value         string `json:"value" example:"19.9" doc:"Its value, as decimal text."`
	Unit          string `json:"unit" doc:"denars, hours, % or days."`
	EffectiveFrom string `json:"effectiveFrom,omitempty" doc:"For a statutory figure: the date its version took effect."`
	Source        string `json:"source,omitempty" doc:"For a statutory figure: where it comes from; for an override, the request field."`
}

// Roundings named in explanations.
const (
	roundNone   = "none: exact"
	roundCents  = "half up to 2 decimals (the МПИН client computes at 2 decimals)"
	roundWhole  = "half up to whole denars"
	roundSearch = "smallest whole denar that reaches the target"
)

// explainer collects the lines of one calculation.
type explainer struct {
	p     *plan
	lines []ExplainLine
}

func (e *explainer) line(step, formula string, exact, value money.Amount, rounding string, inputs ...ExplainInput) {
	if inputs == nil {
		inputs = []ExplainInput{}
	}
	e.lines = append(e.lines, ExplainLine{Step: step, Formula: formula, Inputs: inputs,
		Exact: exactText(exact), Value: value.Text(), Rounding: rounding})
}

// note is a line whose value is not a money figure (a search, a count).
func (e *explainer) note(step, formula, value, rounding string, inputs ...ExplainInput) {
	if inputs == nil {
		inputs = []ExplainInput{}
	}
	e.lines = append(e.lines, ExplainLine{Step: step, Formula: formula, Inputs: inputs, Exact: value, Value: value, Rounding: rounding})
}

// exactText writes a value in the money format at up to 6 decimals, with
// … when that is not all of it.
func exactText(v money.Amount) string {
	r := v.Round(6)
	if r.Equal(v) {
		return v.Text()
	}
	return r.Trim().Text() + "…"
}

func denarsIn(name string, v money.Amount) ExplainInput {
	return ExplainInput{Name: name, Value: v.String(), Unit: "denars"}
}

func hoursIn(name string, v money.Amount) ExplainInput {
	return ExplainInput{Name: name, Value: v.String(), Unit: "hours"}
}

func pctIn(name string, v money.Amount) ExplainInput {
	return ExplainInput{Name: name, Value: v.String(), Unit: "%"}
}

// statutoryIn is a statutory figure with its version's effective date and
// source, or the override of this request.
func (e *explainer) statutoryIn(key string, v money.Amount) ExplainInput {
	unit := "denars"
	if keyKinds[key] == "percent" {
		unit = "%"
	} else if keyKinds[key] == "number" {
		unit = "×"
	}
	in := ExplainInput{Name: key, Value: v.String(), Unit: unit}
	if _, ok := e.p.over[key]; ok {
		in.Source = "this request (" + overridePath(key) + ")"
		return in
	}
	if f, ok := figuresOn(e.p.date)[key]; ok && f.prov != nil {
		in.EffectiveFrom, in.Source = f.prov.CarriedFrom, "provisional: "+f.prov.Source+"; "+f.prov.Reason
		return in
	}
	in.EffectiveFrom, in.Source = versionOf(e.p.date, key)
	return in
}

func overridePath(key string) string {
	switch key {
	case KeyPersonalAllowance, KeyAverageSalary:
		return key + " or rateOverrides." + key
	}
	return "rateOverrides." + key
}

// versionOf returns the effective date and source of the version of key in
// force on date.
func versionOf(date time.Time, key string) (from, source string) {
	d := date.Format(time.DateOnly)
	for _, v := range tableByDate {
		if v.key == key && v.from <= d && !v.carry {
			from, source = v.from, v.source
		}
	}
	return from, source
}

// kindNames are the result fields of each kind's pay.
var kindNames = [numKinds]string{
	kOvertime: "overtimePay", kNight: "nightPay", kHoliday: "holidayPay", kSunday: "sundayPay",
	kHolidayNight: "holidayNightPay", kSundayNight: "sundayNightPay", kSundayHoliday: "sundayHolidayPay",
	kShift1: "shift1Pay", kShift2: "shift2Pay", kShift3: "shift3Pay", kSpecial: "specialPay",
	kSickCompany: "sickCompanyPay", kSickFund: "sickFundPay",
}

// fundLine explains where the fund of hours came from.
func (e *explainer) fundLine(in *Input) {
	p := e.p
	switch {
	case in.WorkingHours.set:
		e.note("workingHours", "the contracted hours of the month, as given", p.wh.String(), roundNone, hoursIn("workingHours", p.wh))
	case in.Period != nil:
		e.note("workingHours", fmt.Sprintf("the fund of %04d-%02d: weekdays × 8, public holidays counted as paid hours (UJP's МПИН client)", in.Period.Year, in.Period.Month),
			p.wh.String(), roundNone, ExplainInput{Name: "weekdays", Value: p.wh.Div(money.FromInt(8), 0).String(), Unit: "days"})
	default:
		e.note("workingHours", "the default fund of hours (176)", p.wh.String(), roundNone)
	}
	if p.fundRef.GreaterThan(p.wh) {
		e.note("fundHours", "the full-time fund of the month, as given: the paid share is taken of it (part time)", p.fundRef.String(), roundNone, hoursIn("fundHours", p.fundRef))
	}
	if len(in.Placements) > 0 {
		e.note("absentHours", "workingHours × weekdays no placement covers ÷ weekdays of the month (public holidays are weekdays: paid hours)",
			p.absent.String(), "half up to 4 decimals", hoursIn("workingHours", p.wh),
			ExplainInput{Name: "weekdays of the month", Value: fmt.Sprint(p.weekdays), Unit: "days"},
			ExplainInput{Name: "weekdays covered by placements", Value: fmt.Sprint(p.coveredWeekdays), Unit: "days"})
	}
}
