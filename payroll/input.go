package payroll

import (
	"encoding/json"
	"time"

	"github.com/denar-mk/denar/money"
	_ "time/tzdata" // R6 needs Europe/Skopje even where the system has no tz database
)

// Input is CalculationInput of the payroll service: one employee's month.
// Money is a decimal string; hours and rates are exact JSON numbers; dates
// are YYYY-MM-DD.
type Input struct {
	GrossSalary *string `json:"grossSalary,omitempty" nullable:"true" doc:"Contracted monthly gross for the full fund of hours. One of grossSalary and targetNet is required."`
	TargetNet   *string `json:"targetNet,omitempty" nullable:"true" doc:"Agreed net: the service derives the smallest whole-denar gross whose net is at least this."`
	NetBased    bool    `json:"netBased,omitempty" doc:"R10: price special hours off the net hourly rate, then re-derive the statutory gross."`
	Contractor  bool    `json:"contractor,omitempty" doc:"R4: договор за дело, flat 10% PIT on gross, no contributions, no allowance."`

	WorkingHours           Number                     `json:"workingHours,omitempty" doc:"Contracted monthly hours; default 176 (R12), or the month's fund from period."`
	SeniorityPercentage    Number                     `json:"seniorityPercentage,omitempty" nullable:"true" doc:"Percentage of base pay for seniority (минат труд)."`
	Seniority              *Seniority                 `json:"seniority,omitempty"`
	UnpaidHours            Number                     `json:"unpaidHours,omitempty" nullable:"true"`
	AbsentHours            Number                     `json:"absentHours,omitempty" nullable:"true" doc:"Hours outside the employment window in a partial month: unpaid."`
	MaternityHours         Number                     `json:"maternityHours,omitempty" nullable:"true" doc:"Maternity leave paid by the health fund, at no employer cost."`
	FundHours              Number                     `json:"fundHours,omitempty" nullable:"true" doc:"Full-time fund of the month for a part-time contract; the ratio paid/fund prorates the allowance and the bases."`
	MinBaseMode            *string                    `json:"minBaseMode,omitempty" nullable:"true" enum:"prorated,always,off" doc:"R2: when the minimum-base top-up applies; default prorated (partial months only)."`
	Period                 *Period                    `json:"period,omitempty" doc:"The payroll month; with placements, absentHours come from the working-day calendar."`
	Placements             []Placement                `json:"placements,omitempty" maxItems:"31"`
	HoursInformational     bool                       `json:"hoursInformational,omitempty" doc:"R9: record premium hours without paying them."`
	SeniorityInformational bool                       `json:"seniorityInformational,omitempty" doc:"R9: record seniority without paying it."`
	BonusAmount            *string                    `json:"bonusAmount,omitempty" nullable:"true"`
	BonusBasis             *string                    `json:"bonusBasis,omitempty" enum:"gross,net" doc:"R7: net (default) raises net by exactly bonusAmount; gross adds it to gross."`
	PitExempt              bool                       `json:"pitExempt,omitempty"`
	NoPersonalAllowance    bool                       `json:"noPersonalAllowance,omitempty"`
	PersonalAllowance      *string                    `json:"personalAllowance,omitempty" nullable:"true" doc:"Monthly allowance for the full month, replacing the statutory one."`
	AverageSalary          *string                    `json:"averageSalary,omitempty" nullable:"true" doc:"Average salary for the bases (min 50%, max × multiplier), replacing the published bases."`
	Deductions             []Deduction                `json:"deductions,omitempty" maxItems:"50" doc:"R8: post-net deductions; they change only netPaid and deductionsTotal."`
	RateOverrides          map[string]json.RawMessage `json:"rateOverrides,omitempty" doc:"Statutory rate keys (see GET /v1/rates) to override for this calculation; numbers or decimal strings."`
	EffectiveDate          *string                    `json:"effectiveDate,omitempty" nullable:"true" doc:"YYYY-MM-DD selecting the rates in force (R6); default today in Europe/Skopje."`

	OvertimeHours      Number `json:"overtimeHours,omitempty" nullable:"true"`
	OvertimeRate       Number `json:"overtimeRate,omitempty" nullable:"true"`
	NightHours         Number `json:"nightHours,omitempty" nullable:"true"`
	NightHoursRate     Number `json:"nightHoursRate,omitempty" nullable:"true"`
	HolidayHours       Number `json:"holidayHours,omitempty" nullable:"true"`
	HolidayHoursRate   Number `json:"holidayHoursRate,omitempty" nullable:"true"`
	SundayHours        Number `json:"sundayHours,omitempty" nullable:"true"`
	SundayHoursRate    Number `json:"sundayHoursRate,omitempty" nullable:"true"`
	HolidayNightHours  Number `json:"holidayNightHours,omitempty" nullable:"true"`
	HolidayNightRate   Number `json:"holidayNightRate,omitempty" nullable:"true"`
	SundayNightHours   Number `json:"sundayNightHours,omitempty" nullable:"true"`
	SundayNightRate    Number `json:"sundayNightRate,omitempty" nullable:"true"`
	SundayHolidayHours Number `json:"sundayHolidayHours,omitempty" nullable:"true"`
	SundayHolidayRate  Number `json:"sundayHolidayRate,omitempty" nullable:"true"`
	SickFundHours      Number `json:"sickFundHours,omitempty" nullable:"true"`
	SickFundRate       Number `json:"sickFundRate,omitempty" nullable:"true"`
	SickCompanyHours   Number `json:"sickCompanyHours,omitempty" nullable:"true"`
	SickCompanyRate    Number `json:"sickCompanyRate,omitempty" nullable:"true"`
	Shift1Hours        Number `json:"shift1Hours,omitempty" nullable:"true"`
	Shift1Rate         Number `json:"shift1Rate,omitempty" nullable:"true"`
	Shift2Hours        Number `json:"shift2Hours,omitempty" nullable:"true"`
	Shift2Rate         Number `json:"shift2Rate,omitempty" nullable:"true"`
	Shift3Hours        Number `json:"shift3Hours,omitempty" nullable:"true"`
	Shift3Rate         Number `json:"shift3Rate,omitempty" nullable:"true"`
	SpecialHours       Number `json:"specialHours,omitempty" nullable:"true"`
	SpecialRate        Number `json:"specialRate,omitempty" nullable:"true"`
}

// Seniority derives the seniority percentage from months of service.
type Seniority struct {
	Months      int     `json:"months" minimum:"0" maximum:"900"`
	AsOf        *string `json:"asOf,omitempty" doc:"YYYY-MM-DD on which months was counted; with periodYear/periodMonth the months are carried forward to the period's end."`
	RatePerYear Number  `json:"ratePerYear,omitempty" doc:"Percent per completed year; default 0.5."`
	PeriodYear  *int    `json:"periodYear,omitempty" nullable:"true"`
	PeriodMonth *int    `json:"periodMonth,omitempty" nullable:"true"`
}

// Period is a payroll month.
type Period struct {
	Year  int `json:"year" minimum:"2009" maximum:"2100"`
	Month int `json:"month" minimum:"1" maximum:"12"`
}

// Placement is one employment window inside the period.
type Placement struct {
	StartDate string  `json:"startDate" doc:"YYYY-MM-DD"`
	EndDate   *string `json:"endDate,omitempty" nullable:"true" doc:"YYYY-MM-DD, inclusive; null while employed."`
}

// Deduction is a post-net deduction (R8).
type Deduction struct {
	Description string `json:"description" minLength:"1" maxLength:"200"`
	Amount      string `json:"amount"`
}

// Result is CalculationResult: every field always present; money in whole
// denars (JSON strings).
type Result struct {
	SalaryGross        money.Amount `json:"salaryGross"`
	BaseGross          money.Amount `json:"baseGross"`
	Pension            money.Amount `json:"pension"`
	Health             money.Amount `json:"health"`
	EmploymentContrib  money.Amount `json:"employmentContrib"`
	AdditionalHealth   money.Amount `json:"additionalHealth"`
	TotalContributions money.Amount `json:"totalContributions"`
	PensionTopUp       money.Amount `json:"pensionTopUp"`
	HealthTopUp        money.Amount `json:"healthTopUp"`
	DisabilityTopUp    money.Amount `json:"disabilityTopUp"`
	EmploymentTopUp    money.Amount `json:"employmentTopUp"`
	PersonalAllowance  money.Amount `json:"personalAllowance"`
	TaxableIncome      money.Amount `json:"taxableIncome"`
	PIT                money.Amount `json:"pit"`
	SalaryNet          money.Amount `json:"salaryNet"`
	DeductionsTotal    money.Amount `json:"deductionsTotal"`
	NetPaid            money.Amount `json:"netPaid"`
	Seniority          money.Amount `json:"seniority"`
	BonusAmount        money.Amount `json:"bonusAmount"`
	BonusBasis         string       `json:"bonusBasis"`

	WorkingHours        Number `json:"workingHours"`
	SeniorityPercentage Number `json:"seniorityPercentage"`
	UnpaidHours         Number `json:"unpaidHours"`
	AbsentHours         Number `json:"absentHours"`
	MaternityHours      Number `json:"maternityHours"`

	OvertimeHours      Number       `json:"overtimeHours"`
	OvertimePay        money.Amount `json:"overtimePay"`
	NightHours         Number       `json:"nightHours"`
	NightPay           money.Amount `json:"nightPay"`
	HolidayHours       Number       `json:"holidayHours"`
	HolidayPay         money.Amount `json:"holidayPay"`
	SundayHours        Number       `json:"sundayHours"`
	SundayPay          money.Amount `json:"sundayPay"`
	SickHours          Number       `json:"sickHours"`
	SickRate           Number       `json:"sickRate"`
	SickPay            money.Amount `json:"sickPay"`
	SickFundHours      Number       `json:"sickFundHours"`
	SickFundRate       Number       `json:"sickFundRate"`
	SickFundPay        money.Amount `json:"sickFundPay"`
	SickCompanyHours   Number       `json:"sickCompanyHours"`
	SickCompanyRate    Number       `json:"sickCompanyRate"`
	SickCompanyPay     money.Amount `json:"sickCompanyPay"`
	Shift1Hours        Number       `json:"shift1Hours"`
	Shift1Rate         Number       `json:"shift1Rate"`
	Shift1Pay          money.Amount `json:"shift1Pay"`
	Shift2Hours        Number       `json:"shift2Hours"`
	Shift2Rate         Number       `json:"shift2Rate"`
	Shift2Pay          money.Amount `json:"shift2Pay"`
	Shift3Hours        Number       `json:"shift3Hours"`
	Shift3Rate         Number       `json:"shift3Rate"`
	Shift3Pay          money.Amount `json:"shift3Pay"`
	SpecialHours       Number       `json:"specialHours"`
	SpecialRate        Number       `json:"specialRate"`
	SpecialPay         money.Amount `json:"specialPay"`
	HolidayNightHours  Number       `json:"holidayNightHours"`
	HolidayNightRate   Number       `json:"holidayNightRate"`
	HolidayNightPay    money.Amount `json:"holidayNightPay"`
	SundayNightHours   Number       `json:"sundayNightHours"`
	SundayNightRate    Number       `json:"sundayNightRate"`
	SundayNightPay     money.Amount `json:"sundayNightPay"`
	SundayHolidayHours Number       `json:"sundayHolidayHours"`
	SundayHolidayRate  Number       `json:"sundayHolidayRate"`
	SundayHolidayPay   money.Amount `json:"sundayHolidayPay"`

	// What an МПИН record needs beyond the figures above.
	FundHours     Number `json:"fundHours" doc:"The full-time fund of the month the ratio of paid hours is taken against (fundHours of the input, else workingHours)."`
	HireDay       *int   `json:"hireDay" doc:"МПИН 3.27: day of the month the employment started, from placements; null when it started before the month."`
	LeaveDay      *int   `json:"leaveDay" doc:"МПИН 3.28: day of the month the employment ended, from placements; null when it continues."`
	ServiceDays   *int   `json:"serviceDays" doc:"МПИН 3.5: calendar days of the month covered by placements; null without placements (the whole month)."`
	InsuranceCode string `json:"insuranceCode" doc:"МПИН 3.17 вид на стаж the hours suggest: 0047 part-time when fundHours is above workingHours, else 0050 full-time."`

	Provisional        bool          `json:"provisional" doc:"True when a statutory figure of the month is not published yet and the last published one was used."`
	ProvisionalFigures []Provisional `json:"provisionalFigures" doc:"The carried-forward figures the calculation used, with their sources."`
	Warnings           []Warning     `json:"warnings" doc:"Findings that do not stop the calculation."`

	Explain *Explanation `json:"explain,omitempty" doc:"Every line of the computation, with ?explain=true only."`
}

// Warning is a finding that does not stop a calculation.
type Warning struct {
	Code    string `json:"code" doc:"Stable code: provisional_figure."`
	Path    string `json:"path" doc:"The input field or rate key it concerns."`
	Message string `json:"message"`
}

// skopje is the time zone of "today" (R6). time/tzdata embeds the tz
// database, so the zone (with its summer time) never falls back to UTC.
var skopje = func() *time.Location {
	l, err := time.LoadLocation("Europe/Skopje")
	if err != nil {
		panic("payroll: the embedded tz database has no Europe/Skopje: " + err.Error())
	}
	return l
}()

// Today returns the date in Europe/Skopje at now.
func Today(now time.Time) time.Time {
	y, m, d := now.In(skopje).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
