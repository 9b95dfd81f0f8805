// Package filing builds the statutory files a payroll bureau uploads to UJP —
// МПИН (XML, legacy TXT, combined TXT), ПДД-ГИ and е-ППД — and runs the checks
// UJP would run, so that a bad filing is caught before it is uploaded.
//
// Generators format the records they are given and recompute nothing: the
// amounts come from a payroll calculation and are written as they are
// (rounded to whole denars where the form wants whole denars). The exported
// request types are the JSON contract of the HTTP layer.
package filing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/jsontext"
	"github.com/denar-mk/denar/money"
)

// Money is a decimal amount carried in JSON as a string ("36037.00"). A value
// that is not a decimal string does not fail decoding; it is remembered and
// reported with its path by Decode, so that a client learns every bad field.
type Money struct {
	D   money.Amount
	bad *string // why the JSON value was refused; a pointer keeps records small
	Set bool
}

// refusal is why a Money or Num value was refused, kept by pointer.
func refusal(msg string) *string { return &msg }

// M returns a Money from a decimal string; it panics on bad input and is meant
// for tests and constants.
func M(s string) Money { return Money{D: money.MustParse(s), Set: true} }

func (m *Money) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*m = Money{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		*m = Money{bad: refusal("must be a decimal string such as \"1234.50\"")}
		return nil
	}
	d, err := money.Parse(strings.TrimSpace(s))
	if err != nil || strings.ContainsAny(s, "eE") || len(s) > 40 {
		*m = Money{bad: refusal(fmt.Sprintf("%q is not a decimal amount", s))}
		return nil
	}
	*m = Money{D: d, Set: true}
	return nil
}

// MarshalJSON writes the amount as a decimal string: whole denars without
// decimals ("11111"), otherwise exactly, with at least two decimals
// ("11110.99", "11110.50").
func (m Money) MarshalJSON() ([]byte, error) {
	if !m.Set {
		return []byte("null"), nil
	}
	return m.D.MarshalJSON()
}

// Num is a JSON number (hours, rates) parsed exactly from its token, never
// through float64, so 7.1 stays 7.1.
type Num struct {
	D   money.Amount
	bad *string // as Money.bad
	Set bool
}

var maxNum = money.FromInt(1_000_000_000)

// maxMoney bounds every money field of a file request, in either sign (an
// МПИН correction is negative): docs/payroll.md ("Limits") caps money at
// 1,000,000,000 denars and the calculations refuse more (payroll's
// parseMoney, in the same words). A file then holds only figures a
// calculation could have produced, and every whole-denar figure of a record
// and every sum of them fits the files' integers with room to spare.
var (
	maxMoney = money.FromInt(1_000_000_000)
	minMoney = maxMoney.Neg()
)

// N returns a Num from a decimal literal (tests and constants).
func N(s string) Num { return Num{D: money.MustParse(s), Set: true} }

func (n *Num) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*n = Num{}
		return nil
	}
	if len(b) == 0 || b[0] == '"' || b[0] == '{' || b[0] == '[' || b[0] == 't' || b[0] == 'f' {
		*n = Num{bad: refusal("must be a JSON number")}
		return nil
	}
	d, err := money.Parse(string(b))
	if err != nil {
		*n = Num{bad: refusal("must be a JSON number")}
		return nil
	}
	// No hour count needs more than twelve decimals or more than a
	// billion.
	if d.Trim().Scale() > 12 || d.Abs().GreaterThan(maxNum) {
		*n = Num{bad: refusal("is out of range")}
		return nil
	}
	*n = Num{D: d, Set: true}
	return nil
}

func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Set {
		return []byte("null"), nil
	}
	return []byte(n.D.String()), nil
}

// Company is the payer of an МПИН filing (Part 2 of the form).
type Company struct {
	Name               string  `json:"name" example:"Дизајнија ДООЕЛ" doc:"The payer's name as registered (Latin or Cyrillic); the files take nameCyr when given."`
	TaxID              *string `json:"taxId" required:"false" example:"4030000000001" doc:"МПИН 2.1, the payer's ЕДБ: 13 digits, the 13th the mod-11 check digit of the first 12 (an individual's ЕМБГ passes the same check). Missing, another length or a wrong check digit is the blocking issue edb_invalid."`
	RegistrationNumber *string `json:"registrationNumber" required:"false" example:"7654321" doc:"The payer's registration number (ЕМБС) in the Central Register."`
	NameCyr            *string `json:"nameCyr" required:"false" example:"Дизајнија ДООЕЛ Скопје" doc:"The payer's name in Cyrillic, written to the files instead of name."`
	Address            *string `json:"address" required:"false" example:"бул. Илинден 10, Скопје" doc:"The payer's address as one line, when it is not given in parts."`
	AddressStreet      *string `json:"addressStreet" required:"false" example:"бул. Илинден" doc:"Street of the payer's address."`
	AddressNumber      *string `json:"addressNumber" required:"false" example:"10" doc:"House number of the payer's address."`
	AddressArea        *string `json:"addressArea" required:"false" example:"Карпош" doc:"Area or settlement of the payer's address."`
	PostalCode         *string `json:"postalCode" required:"false" example:"1000" doc:"Postal code of the payer's address."`
	Fax                *string `json:"fax" required:"false" example:"02 3111 112" doc:"The payer's fax number."`
	City               *string `json:"city" required:"false" example:"Скопје" doc:"The payer's city; the ФЗОМ unit (fzomBranch) and dialling code (areaCode) are derived from it when not given."`
	MunicipalityCode   *string `json:"municipalityCode" required:"false" example:"182" doc:"The payer's municipality, a code of UJP's municipality list (101 to 185, or 999); another is blocking (check 66)."`
	ManagerName        *string `json:"managerName" required:"false" example:"Ана Ангеловска" doc:"The payer's responsible person."`
	Phone              *string `json:"phone" required:"false" example:"02 3111 111" doc:"The payer's phone number."`
	Email              *string `json:"email" required:"false" example:"plati@dizajnija.mk" doc:"The payer's e-mail address."`
	AreaCode           *string `json:"areaCode" required:"false" example:"02" doc:"МПИН 2.3, the dialling code of the payer's seat; derived from city when absent."`
	FzomBranch         *string `json:"fzomBranch" required:"false" example:"4061" doc:"МПИН 3.4б, the health fund's (ФЗОМ) area unit: 4 digits, or 6 for a business unit within one; derived from city when absent."`
}

// Filing variants (spec "Filing batch").
const (
	VariantRegular           = "regular"
	VariantNoPaymentDeclared = "no_payment_declared"
	VariantVid700            = "vid_700"
)

// Batch is the period and kind of an МПИН filing (Part 1).
type Batch struct {
	PeriodMonth   int     `json:"periodMonth" example:"10" doc:"The month the salaries are for, 1 to 12."`
	PeriodYear    int     `json:"periodYear" example:"2026" doc:"The year, four digits."`
	WorkingHours  Num     `json:"workingHours" required:"false" example:"176" doc:"The month's fund of hours for every record that gives none (weekdays × 8, public holidays included); default 176."`
	VidObvrska    *string `json:"vidObvrska" required:"false" example:"101" doc:"МПИН 1.3, вид на обврска: the kind of obligation; default 101 (salary). Another code of UJP's list is accepted (100, 102, 103, …)."`
	VidObvrznik   *string `json:"vidObvrznik" required:"false" example:"110" doc:"МПИН 1.4, вид на обврзник: the kind of payer (110 legal entity, 111 self-employed, …); a code not among the public ones is a warning only."`
	FilingVariant *string `json:"filingVariant" required:"false" example:"regular" doc:"regular (default); no_payment_declared: the salaries are calculated but not paid (the paid net is written as 0); vid_700: a filing with obligation kind 700."`
}

// Employee names the insured person of a record.
type Employee struct {
	FirstName        string  `json:"firstName" example:"Ана" doc:"The employee's first name."`
	LastName         string  `json:"lastName" example:"Ангеловска" doc:"The employee's last name."`
	EMBG             *string `json:"embg" required:"false" example:"1505985412349" doc:"The employee's ЕМБГ: 13 digits, with a valid date and mod-11 check digit (embg_invalid otherwise)."`
	FirstNameCyr     *string `json:"firstNameCyr" required:"false" example:"Ана" doc:"The first name in Cyrillic, written to the files instead of firstName."`
	LastNameCyr      *string `json:"lastNameCyr" required:"false" example:"Ангеловска" doc:"The last name in Cyrillic."`
	BankAccount      *string `json:"bankAccount" required:"false" example:"300000000012355" doc:"The employee's bank account: 15 digits, ISO 7064 mod 97-10 (bank_account_invalid otherwise)."`
	MunicipalityCode *string `json:"municipalityCode" required:"false" example:"182" doc:"The employee's municipality of residence, a code of UJP's municipality list."`
	FzomBranch       *string `json:"fzomBranch" required:"false" example:"4061" doc:"The ФЗОМ unit of the employee, when it differs from the payer's."`
}

// Record is one employee's row of an МПИН filing: normally the matching fields
// of a payroll calculation result, copied field for field (a result's
// other fields are not part of a record). Zero hours and zero amounts mean
// "none".
type Record struct {
	SalaryGross       Money    `json:"salaryGross" example:"30000" doc:"МПИН gross salary, in denars, a decimal string (the calculation's salaryGross)."`
	SalaryNet         Money    `json:"salaryNet" example:"20533" doc:"Net salary (salaryNet)."`
	Pension           Money    `json:"pension" example:"5970" doc:"Pension and disability contribution (pension)."`
	Health            Money    `json:"health" example:"2250" doc:"Health insurance contribution (health)."`
	AdditionalHealth  Money    `json:"additionalHealth" example:"150" doc:"Work-injury contribution (additionalHealth)."`
	EmploymentContrib Money    `json:"employmentContrib" example:"30" doc:"Unemployment contribution (employmentContrib)."`
	PIT               Money    `json:"pit" example:"1067" doc:"Personal income tax (pit)."`
	Employee          Employee `json:"employee" doc:"The insured person."`

	PersonalAllowance Money `json:"personalAllowance" required:"false" example:"10932" doc:"The personal allowance applied; default the allowance in force, prorated by paid hours."`
	OvertimePay       Money `json:"overtimePay" required:"false" example:"0" doc:"Pay for overtime hours (row 005)."`
	NightPay          Money `json:"nightPay" required:"false" example:"0" doc:"Pay for night hours (row 003)."`
	HolidayPay        Money `json:"holidayPay" required:"false" example:"0" doc:"Pay for holiday hours (row 007)."`
	SundayPay         Money `json:"sundayPay" required:"false" example:"0" doc:"Pay for Sunday hours (row 044)."`
	HolidayNightPay   Money `json:"holidayNightPay" required:"false" example:"0" doc:"Pay for holiday night hours (row 045)."`
	SundayNightPay    Money `json:"sundayNightPay" required:"false" example:"0" doc:"Pay for Sunday night hours (row 047)."`
	SundayHolidayPay  Money `json:"sundayHolidayPay" required:"false" example:"0" doc:"Pay for Sunday-holiday hours (row 007)."`
	Shift1Pay         Money `json:"shift1Pay" required:"false" example:"0" doc:"Pay for first-shift hours (row 100)."`
	Shift2Pay         Money `json:"shift2Pay" required:"false" example:"0" doc:"Pay for second-shift hours (row 100)."`
	Shift3Pay         Money `json:"shift3Pay" required:"false" example:"0" doc:"Pay for third-shift hours (row 100)."`
	SpecialPay        Money `json:"specialPay" required:"false" example:"0" doc:"Pay for special hours (row specialCode)."`
	Seniority         Money `json:"seniority" required:"false" example:"0" doc:"Seniority pay (row 037)."`
	BonusAmount       Money `json:"bonusAmount" required:"false" example:"0" doc:"Bonus (row 099)."`
	SickFundPay       Money `json:"sickFundPay" required:"false" example:"0" doc:"Sick pay by the health fund (row sickFundCode)."`
	SickCompanyPay    Money `json:"sickCompanyPay" required:"false" example:"0" doc:"Employer-paid sick pay (row 125 to 128 by sickCompanyRate)."`
	PensionTopUp      Money `json:"pensionTopUp" required:"false" example:"0" doc:"Pension contribution of the minimum-base shortfall (employer cost)."`
	HealthTopUp       Money `json:"healthTopUp" required:"false" example:"0" doc:"Health contribution of the minimum-base shortfall."`
	DisabilityTopUp   Money `json:"disabilityTopUp" required:"false" example:"0" doc:"Work-injury contribution of the minimum-base shortfall."`
	EmploymentTopUp   Money `json:"employmentTopUp" required:"false" example:"0" doc:"Unemployment contribution of the minimum-base shortfall."`
	SickFundBase      Money `json:"sickFundBase" required:"false" example:"0" doc:"The base the health fund pays sick leave on."`
	MaternityBase     Money `json:"maternityBase" required:"false" example:"0" doc:"The health fund's base of maternity leave (row 128; not part of the gross)."`
	NetPaid           Money `json:"netPaid" required:"false" example:"20533" doc:"The net actually paid (EfektivnoNeto); default salaryNet."`

	OvertimeHours         Num `json:"overtimeHours" required:"false" example:"0" doc:"Overtime hours, on top of the fund."`
	NightHours            Num `json:"nightHours" required:"false" example:"0" doc:"Night hours."`
	HolidayHours          Num `json:"holidayHours" required:"false" example:"0" doc:"Hours worked on public holidays."`
	SundayHours           Num `json:"sundayHours" required:"false" example:"0" doc:"Hours worked on Sundays."`
	HolidayNightHours     Num `json:"holidayNightHours" required:"false" example:"0" doc:"Night hours on public holidays."`
	SundayNightHours      Num `json:"sundayNightHours" required:"false" example:"0" doc:"Night hours on Sundays."`
	SundayHolidayHours    Num `json:"sundayHolidayHours" required:"false" example:"0" doc:"Hours on a public holiday falling on a Sunday."`
	Shift1Hours           Num `json:"shift1Hours" required:"false" example:"0" doc:"First-shift hours."`
	Shift2Hours           Num `json:"shift2Hours" required:"false" example:"0" doc:"Second-shift hours."`
	Shift3Hours           Num `json:"shift3Hours" required:"false" example:"0" doc:"Third-shift hours."`
	SpecialHours          Num `json:"specialHours" required:"false" example:"0" doc:"Special hours."`
	WorkingHours          Num `json:"workingHours" required:"false" nullable:"true" example:"176" doc:"The record's fund of hours (the calculation's workingHours); default the batch's."`
	FundHours             Num `json:"fundHours" required:"false" nullable:"true" example:"176" doc:"The full-time fund the paid-hours ratio is taken of (part-time contracts); default workingHours."`
	SickFundHours         Num `json:"sickFundHours" required:"false" nullable:"true" example:"0" doc:"Sick hours paid by the health fund."`
	SickFundRate          Num `json:"sickFundRate" required:"false" nullable:"true" example:"0" doc:"The health fund's sick-pay rate, in percent."`
	SickCompanyHours      Num `json:"sickCompanyHours" required:"false" nullable:"true" example:"0" doc:"Sick hours paid by the employer."`
	SickCompanyRate       Num `json:"sickCompanyRate" required:"false" nullable:"true" example:"70" doc:"The employer's sick-pay rate: 70, 80, 90 or 100, which picks the row code 125 to 128."`
	UnpaidHours           Num `json:"unpaidHours" required:"false" nullable:"true" example:"0" doc:"Unpaid leave hours (row 023)."`
	ServiceDays           Num `json:"serviceDays" required:"false" nullable:"true" example:"31" doc:"МПИН 3.5: calendar days of service in the month; default the days between the start and end dates."`
	MaternityHours        Num `json:"maternityHours" required:"false" nullable:"true" example:"0" doc:"Maternity leave hours (row 128)."`
	MaternityPartialHours Num `json:"maternityPartialHours" required:"false" nullable:"true" example:"0" doc:"Partial maternity leave hours (row 129)."`
	AbsentHours           Num `json:"absentHours" required:"false" nullable:"true" example:"0" doc:"Hours outside the employment in a partial month (no row)."`

	HireDay    *int `json:"hireDay" required:"false" example:"12" doc:"МПИН 3.27: day of the month the employment started, when inside the month."`
	LeaveDay   *int `json:"leaveDay" required:"false" example:"30" doc:"МПИН 3.28: day of the month the employment ended, when inside the month."`
	ContractNo *int `json:"contractNo" required:"false" example:"1" doc:"The contract number for a second contract of the same employee in the month (a re-hire): 2, 3, …"`

	InsuranceCode *string `json:"insuranceCode" required:"false" example:"0050" doc:"МПИН 3.17, вид на стаж: 0050 full time (default), 0047 part time, or another code of UJP's list."`
	ExemptionCode *string `json:"exemptionCode" required:"false" example:"003" doc:"МПИН 3.17б, exemption code (001 self-employed, 003 pensioner, …), written on every row."`
	SickFundCode  *string `json:"sickFundCode" required:"false" example:"140" doc:"МПИН 3.23, the code of the health fund's sick pay; default 140."`
	SpecialCode   *string `json:"specialCode" required:"false" example:"001" doc:"The row code of special hours; default 001."`
	ClientTaxID   *string `json:"clientTaxId" required:"false" doc:"An ЕДБ, not written to the files; when given, another length or a wrong check digit is the blocking issue edb_invalid."`
}

// MpinRequest is the body of validate, МПИН XML and МПИН TXT.
type MpinRequest struct {
	Company Company  `json:"company" doc:"The payer (Part 2 of the МПИН form)."`
	Batch   Batch    `json:"batch" doc:"The period and kind of the filing (Part 1)."`
	Records []Record `json:"records" maxItems:"100000" doc:"One record per employee (and contract), normally the matching fields of a calculation result copied one for one."`
	Force   bool     `json:"force" required:"false" example:"false" doc:"Build the file despite blocking issues (the validate endpoint's errors); a figure beyond the limits is refused all the same."`
}

// BatchRecords is one batch of a combined filing.
type BatchRecords struct {
	Records []Record `json:"records" maxItems:"100000" doc:"The records of this batch."`
}

// CombinedRequest merges several batches of the same payer and period.
type CombinedRequest struct {
	Company Company        `json:"company" doc:"The payer."`
	Batch   Batch          `json:"batch" doc:"The period and kind of the filing."`
	Batches []BatchRecords `json:"batches" maxItems:"100" doc:"The batches to merge, in order: a record of a later batch replaces one of an earlier batch with the same ЕМБГ and contract number."`
	Force   bool           `json:"force" required:"false" example:"false" doc:"Build the file despite blocking issues."`
}

// Merged returns the combined request as one МПИН request whose records are
// the batches' records in order (sorting happens in the generator), a
// record of a later batch replacing the one of an earlier batch with the
// same ЕМБГ and contract number (a correction replaces the month's data of
// the employees it names).
func (c *CombinedRequest) Merged() *MpinRequest {
	m := &MpinRequest{Company: c.Company, Batch: c.Batch, Force: c.Force}
	at := map[string]int{}
	for _, b := range c.Batches {
		for i := range b.Records {
			r := &b.Records[i]
			if str(r.Employee.EMBG) == "" {
				m.Records = append(m.Records, *r)
				continue
			}
			k := recordKey(r)
			if j, ok := at[k]; ok {
				m.Records[j] = *r
				continue
			}
			at[k] = len(m.Records)
			m.Records = append(m.Records, *r)
		}
	}
	return m
}

// DecodeJSON decodes any request of this package (ПДД-ГИ, е-ППД,
// gross-from-net) and turns malformed JSON into a validation_failed
// *denar.Error; field checks happen in the generator that takes the request.
func DecodeJSON(data []byte, v any) error { return decodeStrict(data, v) }

// decodeStrict decodes JSON into v strictly: unknown fields (a misspelt
// field must not be dropped silently from a statutory filing), wrong JSON
// types and malformed JSON are a validation_failed *denar.Error naming
// every field with its path; so is what jsontext.CheckJSONText refuses (a
// member given twice, NUL, invalid UTF-8), as the streaming decoder does.
func decodeStrict(data []byte, v any) error {
	if fe := jsontext.CheckJSONText(data, "", jsontext.DefaultMaxStringLength); fe != nil {
		return denar.Invalid(*fe)
	}
	return jsontext.DecodeJSON(data, v)
}

// DecodeMpin decodes an МПИН request and reports every field that is missing
// or not of its type, with paths such as "records[3].salaryGross".
func DecodeMpin(data []byte) (*MpinRequest, error) {
	var r MpinRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	var fe denar.FieldErrors
	shapeCompany(&fe, "company", &r.Company)
	shapeBatch(&fe, "batch", &r.Batch)
	shapeRecords(&fe, "records", r.Records)
	return &r, fe.Err()
}

// DecodeCombined decodes a combined-TXT request.
func DecodeCombined(data []byte) (*CombinedRequest, error) {
	var r CombinedRequest
	if err := decodeStrict(data, &r); err != nil {
		return nil, err
	}
	var fe denar.FieldErrors
	shapeCompany(&fe, "company", &r.Company)
	shapeBatch(&fe, "batch", &r.Batch)
	if len(r.Batches) == 0 {
		fe.Add("batches", "at least one batch is required")
	}
	for i, b := range r.Batches {
		shapeRecords(&fe, fmt.Sprintf("batches[%d].records", i), b.Records)
	}
	return &r, fe.Err()
}

func shapeCompany(fe *denar.FieldErrors, p string, c *Company) {
	if strings.TrimSpace(c.Name) == "" {
		fe.Add(p+".name", "is required")
	}
}

func shapeBatch(fe *denar.FieldErrors, p string, b *Batch) {
	if b.PeriodMonth < 1 || b.PeriodMonth > 12 {
		fe.Add(p+".periodMonth", "must be 1 to 12")
	}
	if b.PeriodYear < 2000 || b.PeriodYear > 2100 {
		fe.Add(p+".periodYear", "must be a four-digit year")
	}
	num(fe, p+".workingHours", b.WorkingHours, false)
	if v := b.FilingVariant; v != nil && *v != VariantRegular && *v != VariantNoPaymentDeclared && *v != VariantVid700 {
		fe.Add(p+".filingVariant", "must be regular, no_payment_declared or vid_700")
	}
}

// moneyField reports a money field that was refused on decoding, is
// missing while required, or is beyond the cap.
func moneyField(fe *denar.FieldErrors, p string, m Money, required bool) {
	switch {
	case m.bad != nil:
		fe.Add(p, "%s", *m.bad)
	case required && !m.Set:
		fe.Add(p, "is required")
	default:
		moneyRange(fe, p, m)
	}
}

// moneyInRange reports that moneyRange finds nothing.
func moneyInRange(m Money) bool {
	return !m.Set || (!m.D.GreaterThan(maxMoney) && !m.D.LessThan(minMoney))
}

// moneyRange reports a money field beyond ±1,000,000,000 denars (maxMoney).
func moneyRange(fe *denar.FieldErrors, p string, m Money) {
	switch {
	case !m.Set:
	case m.D.GreaterThan(maxMoney):
		fe.Add(p, "exceeds 1,000,000,000 denars")
	case m.D.LessThan(minMoney):
		fe.Add(p, "is below -1,000,000,000 denars")
	}
}

func num(fe *denar.FieldErrors, p string, n Num, required bool) {
	switch {
	case n.bad != nil:
		fe.Add(p, "%s", *n.bad)
	case required && !n.Set:
		fe.Add(p, "is required")
	case n.Set && n.D.IsNegative():
		fe.Add(p, "must not be negative")
	default:
		numRange(fe, p, n)
	}
}

// numInRange reports that numRange finds nothing.
func numInRange(n Num) bool { return !n.Set || !n.D.Abs().GreaterThan(maxNum) }

// numRange reports hours or a rate beyond a billion (maxNum), as decoding
// does.
func numRange(fe *denar.FieldErrors, p string, n Num) {
	if n.Set && n.D.Abs().GreaterThan(maxNum) {
		fe.Add(p, "is out of range")
	}
}

type namedMoney struct {
	name     string
	m        Money
	required bool
}

// recordMoney is every money field of r with its JSON name.
func recordMoney(r *Record) [30]namedMoney {
	return [30]namedMoney{
		{"salaryGross", r.SalaryGross, true}, {"salaryNet", r.SalaryNet, true}, {"pension", r.Pension, true},
		{"health", r.Health, true}, {"additionalHealth", r.AdditionalHealth, true},
		{"employmentContrib", r.EmploymentContrib, true}, {"pit", r.PIT, true},
		{"personalAllowance", r.PersonalAllowance, false}, {"overtimePay", r.OvertimePay, false},
		{"nightPay", r.NightPay, false}, {"holidayPay", r.HolidayPay, false}, {"sundayPay", r.SundayPay, false},
		{"holidayNightPay", r.HolidayNightPay, false}, {"sundayNightPay", r.SundayNightPay, false},
		{"sundayHolidayPay", r.SundayHolidayPay, false}, {"shift1Pay", r.Shift1Pay, false},
		{"shift2Pay", r.Shift2Pay, false}, {"shift3Pay", r.Shift3Pay, false}, {"specialPay", r.SpecialPay, false},
		{"seniority", r.Seniority, false}, {"bonusAmount", r.BonusAmount, false},
		{"sickFundPay", r.SickFundPay, false}, {"sickCompanyPay", r.SickCompanyPay, false},
		{"pensionTopUp", r.PensionTopUp, false}, {"healthTopUp", r.HealthTopUp, false},
		{"disabilityTopUp", r.DisabilityTopUp, false}, {"employmentTopUp", r.EmploymentTopUp, false},
		{"sickFundBase", r.SickFundBase, false}, {"maternityBase", r.MaternityBase, false}, {"netPaid", r.NetPaid, false},
	}
}

type namedNum struct {
	name string
	n    Num
}

// recordNums is every hours, days and rate field of r with its JSON name.
func recordNums(r *Record) [22]namedNum {
	return [22]namedNum{
		{"overtimeHours", r.OvertimeHours}, {"nightHours", r.NightHours}, {"holidayHours", r.HolidayHours},
		{"sundayHours", r.SundayHours}, {"holidayNightHours", r.HolidayNightHours}, {"sundayNightHours", r.SundayNightHours},
		{"sundayHolidayHours", r.SundayHolidayHours}, {"shift1Hours", r.Shift1Hours}, {"shift2Hours", r.Shift2Hours},
		{"shift3Hours", r.Shift3Hours}, {"specialHours", r.SpecialHours},
		{"workingHours", r.WorkingHours}, {"fundHours", r.FundHours}, {"sickFundHours", r.SickFundHours},
		{"sickFundRate", r.SickFundRate}, {"sickCompanyHours", r.SickCompanyHours}, {"sickCompanyRate", r.SickCompanyRate},
		{"unpaidHours", r.UnpaidHours}, {"serviceDays", r.ServiceDays}, {"maternityHours", r.MaternityHours},
		{"maternityPartialHours", r.MaternityPartialHours}, {"absentHours", r.AbsentHours},
	}
}

// recordPath is the path of a record's fields, p[i].field, made on the
// record's first error: a well-formed record costs no string.
type recordPath struct {
	p  string
	i  int
	rp string
}

func (r *recordPath) field(name string) string {
	if r.rp == "" {
		r.rp = r.p + "[" + strconv.Itoa(r.i) + "]."
	}
	return r.rp + name
}

// rangeRecord reports every figure of record i of p outside the bounds
// decoding enforces (money within ±1,000,000,000 denars, hours within a
// billion), with its path: the generators take requests built in Go too,
// and write no figure they were not given.
func rangeRecord(fe *denar.FieldErrors, p string, i int, r *Record) {
	rp := recordPath{p: p, i: i}
	for _, f := range recordMoney(r) {
		if !moneyInRange(f.m) {
			moneyRange(fe, rp.field(f.name), f.m)
		}
	}
	for _, f := range recordNums(r) {
		if !numInRange(f.n) {
			numRange(fe, rp.field(f.name), f.n)
		}
	}
}

func shapeRecords(fe *denar.FieldErrors, p string, recs []Record) {
	if recs == nil {
		fe.Add(p, "is required")
	}
	for i := range recs {
		shapeRecord(fe, p, i, &recs[i])
	}
}

// shapeRecord is shapeRecords for record i of p.
func shapeRecord(fe *denar.FieldErrors, p string, i int, r *Record) {
	rp := recordPath{p: p, i: i}
	for _, f := range recordMoney(r) {
		if f.m.bad != nil || (f.required && !f.m.Set) || !moneyInRange(f.m) {
			moneyField(fe, rp.field(f.name), f.m, f.required)
		}
	}
	for _, f := range recordNums(r) {
		if f.n.bad != nil || (f.n.Set && f.n.D.IsNegative()) || !numInRange(f.n) {
			num(fe, rp.field(f.name), f.n, false)
		}
	}
	if strings.TrimSpace(r.Employee.FirstName) == "" {
		fe.Add(rp.field("employee.firstName"), "is required")
	}
	if strings.TrimSpace(r.Employee.LastName) == "" {
		fe.Add(rp.field("employee.lastName"), "is required")
	}
}
