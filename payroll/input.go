package payroll

import (
	"encoding/json"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/money"
)

// Input is CalculationInput of the payroll service: one employee's month.
// Money is a decimal string; hours and rates are exact JSON numbers; dates
// are YYYY-MM-DD.
type Input struct {
	GrossSalary *string `json:"grossSalary,omitempty" nullable:"true" example:"30000" doc:"Contracted monthly gross for the full fund of hours, in denars, a decimal string. One of grossSalary and targetNet is required."`
	TargetNet   *string `json:"targetNet,omitempty" nullable:"true" example:"20533" doc:"Agreed net, in denars: the service derives the smallest whole-denar gross whose net is at least this."`
	NetBased    bool    `json:"netBased,omitempty" example:"false" doc:"Price the special hours (night, holiday, …) off the net hourly rate, then derive the statutory gross from the net so reached."`
	Contractor  bool    `json:"contractor,omitempty" example:"false" doc:"A contract for work (договор за дело): a flat 10% PIT on the gross, no contributions, no allowance, no hours model."`

	WorkingHours           Number                     `json:"workingHours,omitempty" example:"176" doc:"Contracted monthly hours, the divisor of the hourly rate; default 176, or the month's fund (weekdays × 8, public holidays included) when period is given."`
	SeniorityPercentage    Number                     `json:"seniorityPercentage,omitempty" nullable:"true" example:"5" doc:"Percentage of base pay for seniority (минат труд)."`
	Seniority              *Seniority                 `json:"seniority,omitempty" doc:"Months of service, from which the seniority percentage is derived (instead of seniorityPercentage)."`
	UnpaidHours            Number                     `json:"unpaidHours,omitempty" nullable:"true" example:"0" doc:"Unpaid leave hours inside the fund: not paid, and they reduce the paid-hours ratio."`
	AbsentHours            Number                     `json:"absentHours,omitempty" nullable:"true" example:"0" doc:"Hours outside the employment window in a partial month: unpaid, and they reduce the paid-hours ratio (computed from placements when period is given)."`
	MaternityHours         Number                     `json:"maternityHours,omitempty" nullable:"true" example:"0" doc:"Maternity leave paid by the health fund, at no employer cost."`
	FundHours              Number                     `json:"fundHours,omitempty" nullable:"true" example:"176" doc:"Full-time fund of the month for a part-time contract; the ratio paid/fund prorates the allowance and the bases."`
	MinBaseMode            *string                    `json:"minBaseMode,omitempty" nullable:"true" enum:"prorated,always,off" example:"prorated" doc:"When the minimum-base top-up applies: prorated (default: in partial months only), always, or off."`
	Period                 *Period                    `json:"period,omitempty" doc:"The payroll month; with placements, absentHours come from the working-day calendar, and without workingHours the month's fund is the divisor."`
	Placements             []Placement                `json:"placements,omitempty" maxItems:"31" doc:"Employment windows inside the period (a joiner or leaver); the weekdays they do not cover are absent hours."`
	HoursInformational     bool                       `json:"hoursInformational,omitempty" example:"false" doc:"Record the premium hours without paying them (they still appear in the result and the МПИН file)."`
	SeniorityInformational bool                       `json:"seniorityInformational,omitempty" example:"false" doc:"Record the seniority percentage without paying it."`
	BonusAmount            *string                    `json:"bonusAmount,omitempty" nullable:"true" example:"5000" doc:"A bonus, in denars, a decimal string; bonusBasis says whether it is gross or net."`
	BonusBasis             *string                    `json:"bonusBasis,omitempty" enum:"gross,net" example:"net" doc:"net (default): the gross grows so that the net grows by exactly bonusAmount; gross: bonusAmount is added to the gross."`
	PitExempt              bool                       `json:"pitExempt,omitempty" example:"false" doc:"The employee pays no personal income tax."`
	NoPersonalAllowance    bool                       `json:"noPersonalAllowance,omitempty" example:"false" doc:"Do not apply the personal allowance (an employee whose allowance is used at another employer)."`
	PersonalAllowance      *string                    `json:"personalAllowance,omitempty" nullable:"true" example:"10932" doc:"Monthly allowance for the full month, in denars, replacing the statutory one."`
	AverageSalary          *string                    `json:"averageSalary,omitempty" nullable:"true" example:"69141" doc:"Average salary for the bases (minimum 50%, maximum × maxBaseMultiplier), replacing the published figure; needed for a past year whose figures the service does not know."`
	Deductions             []Deduction                `json:"deductions,omitempty" maxItems:"50" doc:"Deductions from the net (garnishments, loans): they change only netPaid and deductionsTotal."`
	RateOverrides          map[string]json.RawMessage `json:"rateOverrides,omitempty" doc:"Statutory rate keys (see GET /v1/rates) to override for this calculation; numbers or decimal strings."`
	EffectiveDate          *string                    `json:"effectiveDate,omitempty" nullable:"true" example:"2026-05-31" doc:"YYYY-MM-DD selecting the statutory rates in force for the month the salary is for; default the period's last day, or today in Europe/Skopje."`

	OvertimeHours      Number `json:"overtimeHours,omitempty" nullable:"true" example:"10" doc:"Overtime hours, on top of the fund, paid at overtimeRate."`
	OvertimeRate       Number `json:"overtimeRate,omitempty" nullable:"true" example:"135" doc:"Total rate of overtime hours, in percent of the hourly rate; default 135."`
	NightHours         Number `json:"nightHours,omitempty" nullable:"true" example:"16" doc:"Night hours inside the fund, paid at nightHoursRate instead of 100%."`
	NightHoursRate     Number `json:"nightHoursRate,omitempty" nullable:"true" example:"135" doc:"Total rate of night hours, in percent; default 135."`
	HolidayHours       Number `json:"holidayHours,omitempty" nullable:"true" example:"8" doc:"Hours worked on public holidays, inside the fund, paid at holidayHoursRate."`
	HolidayHoursRate   Number `json:"holidayHoursRate,omitempty" nullable:"true" example:"150" doc:"Total rate of holiday hours, in percent; default 150."`
	SundayHours        Number `json:"sundayHours,omitempty" nullable:"true" example:"8" doc:"Hours worked on Sundays, inside the fund, paid at sundayHoursRate."`
	SundayHoursRate    Number `json:"sundayHoursRate,omitempty" nullable:"true" example:"150" doc:"Total rate of Sunday hours, in percent; default 150."`
	HolidayNightHours  Number `json:"holidayNightHours,omitempty" nullable:"true" example:"0" doc:"Night hours on a public holiday, inside the fund, paid at holidayNightRate."`
	HolidayNightRate   Number `json:"holidayNightRate,omitempty" nullable:"true" example:"185" doc:"Total rate of holiday night hours, in percent; default 185."`
	SundayNightHours   Number `json:"sundayNightHours,omitempty" nullable:"true" example:"0" doc:"Night hours on a Sunday, inside the fund, paid at sundayNightRate."`
	SundayNightRate    Number `json:"sundayNightRate,omitempty" nullable:"true" example:"185" doc:"Total rate of Sunday night hours, in percent; default 185."`
	SundayHolidayHours Number `json:"sundayHolidayHours,omitempty" nullable:"true" example:"0" doc:"Hours on a public holiday that falls on a Sunday, inside the fund, paid at sundayHolidayRate."`
	SundayHolidayRate  Number `json:"sundayHolidayRate,omitempty" nullable:"true" example:"200" doc:"Total rate of Sunday-holiday hours, in percent; default 200."`
	SickFundHours      Number `json:"sickFundHours,omitempty" nullable:"true" example:"0" doc:"Sick leave paid by the health fund, inside the fund: no pay and no employer cost here."`
	SickFundRate       Number `json:"sickFundRate,omitempty" nullable:"true" example:"90" doc:"The health fund's rate of sick pay, in percent, recorded for the МПИН file."`
	SickCompanyHours   Number `json:"sickCompanyHours,omitempty" nullable:"true" example:"40" doc:"Sick leave paid by the employer (the first 30 days), inside the fund, paid at sickCompanyRate."`
	SickCompanyRate    Number `json:"sickCompanyRate,omitempty" nullable:"true" example:"70" doc:"Rate of employer-paid sick leave, in percent; default 70."`
	Shift1Hours        Number `json:"shift1Hours,omitempty" nullable:"true" example:"0" doc:"First-shift hours, inside the fund, paid at shift1Rate."`
	Shift1Rate         Number `json:"shift1Rate,omitempty" nullable:"true" example:"100" doc:"Total rate of first-shift hours, in percent; default 100."`
	Shift2Hours        Number `json:"shift2Hours,omitempty" nullable:"true" example:"0" doc:"Second-shift hours, inside the fund, paid at shift2Rate."`
	Shift2Rate         Number `json:"shift2Rate,omitempty" nullable:"true" example:"100" doc:"Total rate of second-shift hours, in percent; default 100."`
	Shift3Hours        Number `json:"shift3Hours,omitempty" nullable:"true" example:"0" doc:"Third-shift hours, inside the fund, paid at shift3Rate."`
	Shift3Rate         Number `json:"shift3Rate,omitempty" nullable:"true" example:"135" doc:"Total rate of third-shift hours, in percent; default 135."`
	SpecialHours       Number `json:"specialHours,omitempty" nullable:"true" example:"0" doc:"Other hours with a rate of their own (specialRate), inside the fund."`
	SpecialRate        Number `json:"specialRate,omitempty" nullable:"true" example:"100" doc:"Total rate of special hours, in percent; default 100."`
}

// Seniority derives the seniority percentage from months of service.
type Seniority struct {
	Months      int     `json:"months" minimum:"0" maximum:"900" example:"125" doc:"Completed months of service, 0 to 900."`
	AsOf        *string `json:"asOf,omitempty" doc:"YYYY-MM-DD on which months was counted; with periodYear/periodMonth the months are carried forward to the period's end."`
	RatePerYear Number  `json:"ratePerYear,omitempty" doc:"Percent per completed year; default 0.5."`
	PeriodYear  *int    `json:"periodYear,omitempty" nullable:"true" example:"2026" doc:"Year of the payroll period, to carry months forward from asOf to the period's end."`
	PeriodMonth *int    `json:"periodMonth,omitempty" nullable:"true" example:"5" doc:"Month (1–12) of the payroll period."`
}

// Period is a payroll month.
type Period struct {
	Year  int `json:"year" minimum:"2009" maximum:"2100" example:"2026" doc:"The year, 2009 to 2100."`
	Month int `json:"month" minimum:"1" maximum:"12" example:"5" doc:"The month, 1 to 12."`
}

// Placement is one employment window inside the period.
type Placement struct {
	StartDate string  `json:"startDate" example:"2026-05-11" doc:"First day of the employment window, YYYY-MM-DD."`
	EndDate   *string `json:"endDate,omitempty" nullable:"true" example:"2026-05-29" doc:"Last day of the window, YYYY-MM-DD, inclusive; null while employed."`
}

// Deduction is a post-net deduction (R8).
type Deduction struct {
	Description string `json:"description" minLength:"1" maxLength:"200" example:"Задршка по решение И-123/26" doc:"What the deduction is for, 1 to 200 characters."` // maxDeductionDescription
	Amount      string `json:"amount" example:"2000" doc:"The amount, in denars, a decimal string."`
}

// Result is CalculationResult: every field always present; money in whole
// denars (JSON strings).
type Result struct {
	SalaryGross        money.Amount `json:"salaryGross" example:"30000" doc:"The gross salary: base pay, premiums, seniority and bonus."`
	BaseGross          money.Amount `json:"baseGross" example:"30000" doc:"The gross before premiums, seniority and bonus: the contracted gross for the hours paid at 100%."`
	Pension            money.Amount `json:"pension" example:"5970" doc:"Pension and disability contribution (ПИО), on the contribution base."`
	Health             money.Amount `json:"health" example:"2250" doc:"Health insurance contribution."`
	EmploymentContrib  money.Amount `json:"employmentContrib" example:"30" doc:"Unemployment insurance contribution."`
	AdditionalHealth   money.Amount `json:"additionalHealth" example:"150" doc:"Additional health contribution for work injury and occupational disease."`
	TotalContributions money.Amount `json:"totalContributions" example:"8400" doc:"The sum of the four contributions (top-ups excluded)."`
	PensionTopUp       money.Amount `json:"pensionTopUp" example:"0" doc:"Employer cost when the gross is below the minimum base: the shortfall × the pension rate; not deducted from the employee."`
	HealthTopUp        money.Amount `json:"healthTopUp" example:"0" doc:"The health contribution of the minimum-base shortfall (employer cost)."`
	DisabilityTopUp    money.Amount `json:"disabilityTopUp" example:"0" doc:"The work-injury contribution of the minimum-base shortfall (employer cost)."`
	EmploymentTopUp    money.Amount `json:"employmentTopUp" example:"0" doc:"The unemployment contribution of the minimum-base shortfall (employer cost)."`
	PersonalAllowance  money.Amount `json:"personalAllowance" example:"10932" doc:"The personal allowance applied (prorated by paid hours)."`
	TaxableIncome      money.Amount `json:"taxableIncome" example:"10668" doc:"gross − contributions − allowance, floored at zero: the base of PIT."`
	PIT                money.Amount `json:"pit" example:"1067" doc:"Personal income tax."`
	SalaryNet          money.Amount `json:"salaryNet" example:"20533" doc:"The net salary: gross − contributions − PIT."`
	DeductionsTotal    money.Amount `json:"deductionsTotal" example:"0" doc:"The sum of the deductions."`
	NetPaid            money.Amount `json:"netPaid" example:"20533" doc:"What is paid to the employee: salaryNet − deductionsTotal."`
	Seniority          money.Amount `json:"seniority" example:"0" doc:"Seniority pay (минат труд) included in the gross."`
	BonusAmount        money.Amount `json:"bonusAmount" example:"0" doc:"The bonus included in the gross."`
	BonusBasis         string       `json:"bonusBasis" example:"net" doc:"How the bonus was given: net or gross."`

	WorkingHours        Number `json:"workingHours" example:"176" doc:"The fund of hours used as the divisor of the hourly rate."`
	SeniorityPercentage Number `json:"seniorityPercentage" example:"0" doc:"The seniority percentage applied."`
	UnpaidHours         Number `json:"unpaidHours" example:"0" doc:"Unpaid hours."`
	AbsentHours         Number `json:"absentHours" example:"0" doc:"Hours outside the employment window (unpaid)."`
	MaternityHours      Number `json:"maternityHours" example:"0" doc:"Maternity hours paid by the health fund."`

	OvertimeHours      Number       `json:"overtimeHours" example:"0" doc:"Overtime hours."`
	OvertimePay        money.Amount `json:"overtimePay" example:"0" doc:"Pay for overtime hours."`
	NightHours         Number       `json:"nightHours" example:"0" doc:"Night hours."`
	NightPay           money.Amount `json:"nightPay" example:"0" doc:"Pay for night hours (their whole rate)."`
	HolidayHours       Number       `json:"holidayHours" example:"0" doc:"Holiday hours."`
	HolidayPay         money.Amount `json:"holidayPay" example:"0" doc:"Pay for holiday hours."`
	SundayHours        Number       `json:"sundayHours" example:"0" doc:"Sunday hours."`
	SundayPay          money.Amount `json:"sundayPay" example:"0" doc:"Pay for Sunday hours."`
	SickHours          Number       `json:"sickHours" example:"0" doc:"All sick-leave hours (employer- and fund-paid)."`
	SickRate           Number       `json:"sickRate" example:"70" doc:"The employer sick-pay rate used, in percent."`
	SickPay            money.Amount `json:"sickPay" example:"0" doc:"Employer-paid sick pay."`
	SickFundHours      Number       `json:"sickFundHours" example:"0" doc:"Sick hours paid by the health fund."`
	SickFundRate       Number       `json:"sickFundRate" example:"0" doc:"The health fund rate recorded, in percent."`
	SickFundPay        money.Amount `json:"sickFundPay" example:"0" doc:"Sick pay by the health fund (recorded, not paid here)."`
	SickCompanyHours   Number       `json:"sickCompanyHours" example:"0" doc:"Sick hours paid by the employer."`
	SickCompanyRate    Number       `json:"sickCompanyRate" example:"70" doc:"The employer sick-pay rate, in percent."`
	SickCompanyPay     money.Amount `json:"sickCompanyPay" example:"0" doc:"Employer-paid sick pay."`
	Shift1Hours        Number       `json:"shift1Hours" example:"0" doc:"First-shift hours."`
	Shift1Rate         Number       `json:"shift1Rate" example:"100" doc:"Rate of first-shift hours, in percent."`
	Shift1Pay          money.Amount `json:"shift1Pay" example:"0" doc:"Pay for first-shift hours."`
	Shift2Hours        Number       `json:"shift2Hours" example:"0" doc:"Second-shift hours."`
	Shift2Rate         Number       `json:"shift2Rate" example:"100" doc:"Rate of second-shift hours, in percent."`
	Shift2Pay          money.Amount `json:"shift2Pay" example:"0" doc:"Pay for second-shift hours."`
	Shift3Hours        Number       `json:"shift3Hours" example:"0" doc:"Third-shift hours."`
	Shift3Rate         Number       `json:"shift3Rate" example:"135" doc:"Rate of third-shift hours, in percent."`
	Shift3Pay          money.Amount `json:"shift3Pay" example:"0" doc:"Pay for third-shift hours."`
	SpecialHours       Number       `json:"specialHours" example:"0" doc:"Special hours."`
	SpecialRate        Number       `json:"specialRate" example:"100" doc:"Rate of special hours, in percent."`
	SpecialPay         money.Amount `json:"specialPay" example:"0" doc:"Pay for special hours."`
	HolidayNightHours  Number       `json:"holidayNightHours" example:"0" doc:"Holiday night hours."`
	HolidayNightRate   Number       `json:"holidayNightRate" example:"185" doc:"Rate of holiday night hours, in percent."`
	HolidayNightPay    money.Amount `json:"holidayNightPay" example:"0" doc:"Pay for holiday night hours."`
	SundayNightHours   Number       `json:"sundayNightHours" example:"0" doc:"Sunday night hours."`
	SundayNightRate    Number       `json:"sundayNightRate" example:"185" doc:"Rate of Sunday night hours, in percent."`
	SundayNightPay     money.Amount `json:"sundayNightPay" example:"0" doc:"Pay for Sunday night hours."`
	SundayHolidayHours Number       `json:"sundayHolidayHours" example:"0" doc:"Sunday-holiday hours."`
	SundayHolidayRate  Number       `json:"sundayHolidayRate" example:"200" doc:"Rate of Sunday-holiday hours, in percent."`
	SundayHolidayPay   money.Amount `json:"sundayHolidayPay" example:"0" doc:"Pay for Sunday-holiday hours."`

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
	Code    string `json:"code" example:"provisional_figure" doc:"Stable code: provisional_figure."`
	Path    string `json:"path" example:"averageSalary" doc:"The input field or rate key it concerns."`
	Message string `json:"message" example:"averageSalary for 2027 is not published yet; the 2026 figure 69141 was used." doc:"What was found, in words."`
}

// skopje is the time zone of "today".
var skopje = denar.Skopje

// Today returns the date in Europe/Skopje at now.
func Today(now time.Time) time.Time {
	y, m, d := now.In(skopje).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// maxDeductionDescription is the maxLength of Deduction.Description.
const maxDeductionDescription = 200
