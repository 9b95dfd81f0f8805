package filing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/ident"
	"github.com/shopspring/decimal"
)

// Severities of an Issue. Errors block a generator unless force is set.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Issue is one finding of the checks. Code is UJP's own error number where
// UJP has one (research §4.1), else a stable snake_case code of ours. Field is
// the МПИН field number ("3.17"); Path points into the request.
type Issue struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Field    string `json:"field"`
	Path     string `json:"path"`
	Message  string `json:"message"`
}

// Result is the body of the validate endpoint.
type Result struct {
	OK     bool    `json:"ok"`
	Issues []Issue `json:"issues"`
}

// Issue codes. Numeric codes are UJP's (UJP-MPIN-2016 pp.38–43).
const (
	CodeMunicipality       = "66"  // wrong municipality code
	CodePensionWrong       = "16"  // ПИО not rate × 3.14
	CodeHealthWrong        = "90"  // health not rate × 3.14
	CodeInjuryWrong        = "91"  // injury/additional health not rate × 3.14
	CodeEmploymentWrong    = "94"  // unemployment not rate × 3.14
	CodePITWrong           = "99"  // PIT wrong (UJP: warning)
	CodeHoursWrong         = "105" // hours do not match the month
	CodeNetWrong           = "110" // 3.13 not correctly calculated from 3.14
	CodeDaysWrong          = "8"   // 3.5 does not match the employment period
	CodeRatesUnavailable   = "rates_unavailable"
	CodeEDB                = "edb_invalid"
	CodeEMBG               = "embg_invalid"
	CodeEMBGDuplicate      = "embg_duplicate"
	CodeBankAccount        = "bank_account_invalid"
	CodeFzomBranch         = "fzom_branch_invalid"
	CodeFzomUnknown        = "fzom_branch_underivable"
	CodeAreaCodeUnknown    = "area_code_underivable"
	CodeVidObvrska         = "vid_obvrska_invalid"
	CodeVidObvrznik        = "vid_obvrznik_unknown"
	CodeInsuranceCode      = "insurance_code_invalid"
	CodeDayOutsideMonth    = "day_outside_month"
	CodeContractNo         = "contract_no_without_rehire"
	CodeMaternity          = "maternity_hours_invalid"
	CodeNameCyrillic       = "name_not_cyrillic"
	CodeNameTransliterated = "name_transliterated"
)

// tolerance is the 1-denar slack the checks allow between a record's amount
// and the amount recomputed from it: UJP computes at two decimals and rounds
// only on the form (research §3.1), so rounded fields can differ by one.
var tolerance = decimal.NewFromInt(1)

type checker struct {
	issues []Issue
	ended  map[string]bool // "embg/contract" of contracts ending this month, built on first need
}

// endedContracts indexes the contracts that end inside the month, so that a
// re-hire check is a lookup rather than a scan of every record.
func endedContracts(recs []Record) map[string]bool {
	m := map[string]bool{}
	for i := range recs {
		if recs[i].LeaveDay == nil {
			continue
		}
		n := 1
		if recs[i].ContractNo != nil {
			n = *recs[i].ContractNo
		}
		m[str(recs[i].Employee.EMBG)+"/"+strconv.Itoa(n)] = true
	}
	return m
}

func (c *checker) add(sev, code, field, path, format string, args ...any) {
	c.issues = append(c.issues, Issue{Severity: sev, Code: code, Field: field, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Validate runs every МПИН check on req. It never fails: a problem reaching
// the statutory tables becomes an issue too, because the caller still needs
// to know why a file could not be checked.
func Validate(req *MpinRequest, st Statutory) Result {
	c := &checker{}
	c.company(&req.Company)
	c.batch(&req.Batch)
	var rates Rates
	var fund decimal.Decimal
	haveRates := false
	if req.Batch.PeriodMonth >= 1 && req.Batch.PeriodMonth <= 12 && st != nil {
		var err error
		rates, err = st.On(periodEnd(req.Batch.PeriodYear, req.Batch.PeriodMonth))
		if err == nil {
			fund, err = st.MonthHours(req.Batch.PeriodYear, req.Batch.PeriodMonth)
		}
		if err != nil {
			c.add(SeverityError, CodeRatesUnavailable, "1.2", "batch", "no statutory figures for %02d/%d: %v", req.Batch.PeriodMonth, req.Batch.PeriodYear, err)
		} else {
			haveRates = true
		}
	}
	// Duplicates are the one check across records: find them first, in
	// order, so the per-record checks can run on every core and still
	// report exactly what a single pass would, in the same order.
	dupOf := make([]int, len(req.Records))
	seen := make(map[string]int, len(req.Records))
	for i := range req.Records {
		dupOf[i] = -1
		r := &req.Records[i]
		embg := str(r.Employee.EMBG)
		if embg == "" {
			continue
		}
		contract := 1
		if r.ContractNo != nil {
			contract = *r.ContractNo
		}
		key := embg + "/" + strconv.Itoa(contract)
		if j, dup := seen[key]; dup {
			dupOf[i] = j
		} else {
			seen[key] = i
		}
	}
	ended := endedContracts(req.Records)
	parts := inParallel(len(req.Records), func(lo, hi int) []Issue {
		pc := &checker{ended: ended}
		for i := lo; i < hi; i++ {
			pc.record(req, i, "records["+strconv.Itoa(i)+"]", haveRates, rates, fund, dupOf[i])
		}
		return pc.issues
	})
	for _, is := range parts {
		c.issues = append(c.issues, is...)
	}
	ok := true
	for _, is := range c.issues {
		if is.Severity == SeverityError {
			ok = false
		}
	}
	if c.issues == nil {
		c.issues = []Issue{}
	}
	return Result{OK: ok, Issues: c.issues}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

func (c *checker) company(co *Company) {
	if err := ident.EDB(str(co.TaxID)); err != nil {
		c.add(SeverityError, CodeEDB, "2.1", "company.taxId", "payer ЕДБ: %v", err)
	}
	if m := str(co.MunicipalityCode); m != "" && !municipalityCode(m) {
		c.add(SeverityError, CodeMunicipality, "2.10", "company.municipalityCode", "%q is not in UJP's municipality list (101–185, 999)", m)
	}
	if f := str(co.FzomBranch); f != "" {
		if !fzomBranch(f) {
			c.add(SeverityError, CodeFzomBranch, "3.4б", "company.fzomBranch", "%q is not a ФЗОМ area unit", f)
		}
	} else if DeriveFzomBranch(str(co.City)) == "" {
		c.add(SeverityWarning, CodeFzomUnknown, "3.4б", "company.fzomBranch", "absent and not derivable from city %q", str(co.City))
	}
	if str(co.AreaCode) == "" && DeriveAreaCode(str(co.City)) == "" {
		c.add(SeverityWarning, CodeAreaCodeUnknown, "2.3", "company.areaCode", "absent and not derivable from city %q", str(co.City))
	}
}

func (c *checker) batch(b *Batch) {
	if v := str(b.VidObvrska); v != "" && !vidObvrska[v] {
		c.add(SeverityError, CodeVidObvrska, "1.3", "batch.vidObvrska", "%q is not a вид на обврска", v)
	}
	if v := str(b.VidObvrznik); v != "" && !vidObvrznikKnown[v] {
		c.add(SeverityWarning, CodeVidObvrznik, "1.4", "batch.vidObvrznik", "%q is not among the вид на обврзник codes we know; check it against UJP's list", v)
	}
}

func dec(m Money) decimal.Decimal {
	if !m.Set {
		return decimal.Zero
	}
	return m.D
}

func hrs(n Num) decimal.Decimal {
	if !n.Set {
		return decimal.Zero
	}
	return n.D
}

// effectiveHours returns the record's hours, falling back to the batch's and
// then to 176 (spec "Filing batch").
func effectiveHours(r *Record, b *Batch) decimal.Decimal {
	if r.WorkingHours.Set {
		return r.WorkingHours.D
	}
	if b.WorkingHours.Set {
		return b.WorkingHours.D
	}
	return decimal.NewFromInt(176)
}

func (c *checker) record(req *MpinRequest, i int, p string, haveRates bool, rates Rates, fund decimal.Decimal, dupOf int) {
	r := &req.Records[i]
	e := &r.Employee
	embg := str(e.EMBG)
	if err := ident.EMBG(embg); err != nil {
		c.add(SeverityError, CodeEMBG, "3.1", p+".employee.embg", "%v", err)
	}
	contract := 1
	if r.ContractNo != nil {
		contract = *r.ContractNo
	}
	if dupOf >= 0 {
		c.add(SeverityError, CodeEMBGDuplicate, "3.1", p+".employee.embg", "ЕМБГ %s with contract %d already in records[%d]", embg, contract, dupOf)
	}
	if b := str(e.BankAccount); b != "" {
		if err := ident.BankAccount(b); err != nil {
			c.add(SeverityError, CodeBankAccount, "3.32", p+".employee.bankAccount", "%v", err)
		}
	}
	if m := str(e.MunicipalityCode); m != "" && !municipalityCode(m) {
		c.add(SeverityError, CodeMunicipality, "3.4ц", p+".employee.municipalityCode", "%q is not in UJP's municipality list (101–185, 999)", m)
	}
	if f := str(e.FzomBranch); f != "" && !fzomBranch(f) {
		c.add(SeverityError, CodeFzomBranch, "3.4б", p+".employee.fzomBranch", "%q is not a ФЗОМ area unit", f)
	}
	if ic := str(r.InsuranceCode); ic != "" && !vidStaz[ic] {
		c.add(SeverityError, CodeInsuranceCode, "3.17", p+".insuranceCode", "%q is not a вид на стаж code", ic)
	}
	for _, n := range []struct {
		cyr  *string
		name string
		fld  string
		path string
	}{{e.LastNameCyr, e.LastName, "3.2", p + ".employee.lastNameCyr"}, {e.FirstNameCyr, e.FirstName, "3.3", p + ".employee.firstNameCyr"}} {
		if str(n.cyr) != "" {
			if hasLatin(*n.cyr) {
				c.add(SeverityError, CodeNameCyrillic, n.fld, n.path, "%q contains Latin letters", *n.cyr)
			}
			continue
		}
		if _, ok := cyrName(nil, n.name); !ok {
			c.add(SeverityError, CodeNameCyrillic, n.fld, n.path, "absent and %q cannot be transliterated to Cyrillic", n.name)
		} else if hasLatin(n.name) {
			c.add(SeverityWarning, CodeNameTransliterated, n.fld, n.path, "absent; %q will be transliterated", n.name)
		}
	}

	// Days of the month.
	y, mo := req.Batch.PeriodYear, req.Batch.PeriodMonth
	if mo >= 1 && mo <= 12 {
		days := daysIn(y, mo)
		for _, d := range []struct {
			v    *int
			fld  string
			name string
		}{{r.HireDay, "3.27", "hireDay"}, {r.LeaveDay, "3.28", "leaveDay"}} {
			if d.v != nil && (*d.v < 1 || *d.v > days) {
				c.add(SeverityError, CodeDayOutsideMonth, d.fld, p+"."+d.name, "day %d is outside %02d/%d (1–%d)", *d.v, mo, y, days)
			}
		}
		if r.HireDay != nil && r.LeaveDay != nil && *r.HireDay > *r.LeaveDay {
			c.add(SeverityError, CodeDaysWrong, "3.28", p+".leaveDay", "leave day %d is before hire day %d", *r.LeaveDay, *r.HireDay)
		}
		if r.ServiceDays.Set && (r.ServiceDays.D.LessThan(decimal.Zero) || r.ServiceDays.D.GreaterThan(decimal.NewFromInt(int64(days)))) {
			c.add(SeverityError, CodeDaysWrong, "3.5", p+".serviceDays", "%s days of insurance in a month of %d days", r.ServiceDays.D, days)
		}
	}

	// contractNo ≥ 2 is a second employment in the same month: it needs an
	// earlier contract of the same person that ended this month.
	if r.ContractNo != nil {
		if *r.ContractNo < 1 {
			c.add(SeverityError, CodeContractNo, "3.30", p+".contractNo", "must be 1 or more")
		} else if *r.ContractNo >= 2 {
			if c.ended == nil {
				c.ended = endedContracts(req.Records)
			}
			if !c.ended[embg+"/"+strconv.Itoa(*r.ContractNo-1)] || r.HireDay == nil {
				c.add(SeverityError, CodeContractNo, "3.30", p+".contractNo", "contract %d needs a hire day and contract %d of the same ЕМБГ ending this month", *r.ContractNo, *r.ContractNo-1)
			}
		}
	}

	// Maternity: 3.23 = 128 (FZOM 100 %) with 3.24 hours, or 129 (50 % plus
	// the employer's 100 % after an early return).
	if r.MaternityHours.Set && !r.MaternityHours.D.IsPositive() {
		c.add(SeverityError, CodeMaternity, "3.24", p+".maternityHours", "3.23 = 128 needs a positive number of hours in 3.24")
	}
	if r.MaternityPartialHours.Set && !r.MaternityPartialHours.D.IsPositive() {
		c.add(SeverityError, CodeMaternity, "3.24", p+".maternityPartialHours", "3.23 = 129 needs a positive number of hours in 3.24")
	}

	if haveRates {
		total := effectiveHours(r, &req.Batch).Add(hrs(r.SickFundHours)).Add(hrs(r.SickCompanyHours)).
			Add(hrs(r.MaternityHours)).Add(hrs(r.UnpaidHours))
		if total.GreaterThan(fund) {
			c.add(SeverityError, CodeHoursWrong, "3.6", p+".workingHours", "working, sick, maternity and unpaid hours total %s, more than the month's fund of %s", total, fund)
		}
		if r.UnpaidHours.Set && r.UnpaidHours.D.GreaterThan(decimal.NewFromInt(24)) {
			c.add(SeverityWarning, CodeHoursWrong, "3.6ц", p+".unpaidHours", "more than 24 unpaid hours in a month")
		}
		c.amounts(r, p, rates)
	}
}

// amounts checks contributions, PIT and net against the gross at the
// period's rates, each within 1 denar.
func (c *checker) amounts(r *Record, p string, rates Rates) {
	if !r.SalaryGross.Set || amountsPass(r, rates) {
		return
	}
	c.amountsDecimal(r, p, rates)
}

// amountsDecimal is the amount checks in decimal arithmetic; they write
// every issue.
func (c *checker) amountsDecimal(r *Record, p string, rates Rates) {
	if !r.SalaryGross.Set {
		return
	}
	gross := r.SalaryGross.D
	base := gross
	if rates.MinBase.IsPositive() && base.LessThan(rates.MinBase) && base.IsPositive() {
		base = rates.MinBase
	}
	if rates.MaxBase.IsPositive() && base.GreaterThan(rates.MaxBase) {
		base = rates.MaxBase
	}
	for _, k := range []struct {
		m    Money
		rate decimal.Decimal
		code string
		fld  string
		name string
	}{
		{r.Pension, rates.Pension, CodePensionWrong, "3.15", "pension"},
		{r.Health, rates.Health, CodeHealthWrong, "3.40", "health"},
		{r.AdditionalHealth, rates.Injury, CodeInjuryWrong, "3.42", "additionalHealth"},
		{r.EmploymentContrib, rates.Employment, CodeEmploymentWrong, "3.44", "employmentContrib"},
	} {
		want := base.Mul(k.rate).Round(2)
		if k.m.Set && k.m.D.Sub(want).Abs().GreaterThan(tolerance) {
			c.add(SeverityError, k.code, k.fld, p+"."+k.name, "%s is not %s × %s = %s", k.m.D, k.rate, base, want)
		}
	}
	contrib := dec(r.Pension).Add(dec(r.Health)).Add(dec(r.AdditionalHealth)).Add(dec(r.EmploymentContrib))
	allowance := rates.Allowance
	if r.PersonalAllowance.Set {
		allowance = r.PersonalAllowance.D
	}
	taxBase := gross.Sub(contrib).Sub(allowance)
	if taxBase.IsNegative() {
		taxBase = decimal.Zero
	}
	pit := taxBase.Mul(decimal.RequireFromString("0.10")).Round(2)
	if r.PIT.Set && r.PIT.D.Sub(pit).Abs().GreaterThan(tolerance) {
		c.add(SeverityWarning, CodePITWrong, "3.46", p+".pit", "%s is not 10 %% of (%s − %s − %s) = %s", r.PIT.D, gross, contrib, allowance, pit)
	}
	net := gross.Sub(contrib).Sub(dec(r.PIT))
	if r.SalaryNet.Set && r.SalaryNet.D.Sub(net).Abs().GreaterThan(tolerance) {
		c.add(SeverityError, CodeNetWrong, "3.13", p+".salaryNet", "%s is not gross − contributions − PIT = %s", r.SalaryNet.D, net)
	}
}

// BlockingError is returned by a generator when the checks found errors and
// force was not set. The HTTP layer maps it to 422 mpin_validation_failed.
type BlockingError struct {
	Issues []Issue // the blocking issues only
}

func (e *BlockingError) Error() string {
	return fmt.Sprintf("mpin: %d blocking issue(s), first: %s %s: %s", len(e.Issues), e.Issues[0].Code, e.Issues[0].Path, e.Issues[0].Message)
}

// CodeMpinValidationFailed is the problem code for a BlockingError.
const CodeMpinValidationFailed = "mpin_validation_failed"

// AsDenarError returns the error as the shared *denar.Error with the blocking
// issues in Detail["issues"].
func (e *BlockingError) AsDenarError() *denar.Error {
	return &denar.Error{Code: CodeMpinValidationFailed, Message: e.Error(), Detail: map[string]any{"issues": e.Issues}}
}

// gate runs the checks and returns a *BlockingError when one blocks and
// force is false.
func gate(req *MpinRequest, st Statutory) error {
	res := Validate(req, st)
	if res.OK || req.Force {
		return nil
	}
	var b []Issue
	for _, is := range res.Issues {
		if is.Severity == SeverityError {
			b = append(b, is)
		}
	}
	return &BlockingError{Issues: b}
}
