package filing

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/money"
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
	Severity string `json:"severity" example:"error" doc:"error: blocks the file (unless force); warning: check it, the file is built."`
	Code     string `json:"code" example:"embg_invalid" doc:"A stable code: UJP's numeric МПИН check codes (66, 16, …) or ours (edb_invalid, embg_invalid, …); docs/filing-formats.md lists them."`
	Field    string `json:"field" example:"3.1" doc:"The МПИН form field it concerns (3.1, 2.1, …)."`
	Path     string `json:"path" example:"records[3].employee.embg" doc:"The request field, with its index (records[3].employee.embg)."`
	Message  string `json:"message" example:"embg: check digit does not match" doc:"What is wrong, in words."`
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
	CodeProvisional        = "provisional_figure"
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
	CodeNetPaidAboveNet    = "109" // 3.31 effective net above 3.13 net
	CodeNoRecords          = "no_records"
	CodeSickFundCode       = "sick_fund_code_invalid"
	CodeExemptionCode      = "exemption_code_invalid"
	CodePaysAboveGross     = "pays_above_gross"
	CodeSelfEmployed       = "self_employed_net_paid"
)

// tolerance is the 1-denar slack the checks allow between a record's amount
// and the amount recomputed from it: UJP computes at two decimals and rounds
// only on the form (research §3.1), so rounded fields can differ by one.
var tolerance = money.FromInt(1)

// netTolerance is the slack of the net check. The net is gross less four
// contributions less PIT: seven figures, each rounded to whole denars on
// its own from a two-decimal calculation, so the rounded figures can miss
// the identity by up to 7 × 0.5 denars (research §3.1: 38,507 − 10,783 −
// 1,679 = 26,045 against the accepted net 26,046). UJP's own tolerance for
// error 110 is not published (research §7.7).
var netTolerance = money.MustParse("3.5")

// checker collects the issues of a run of records in order.
type checker struct {
	issues []Issue
	// errorsOnly keeps only the blocking issues (a file generator needs
	// no warnings: it reports the errors when they block, nothing when not).
	errorsOnly bool
	// pending are the re-hire checks, which need every record of the batch
	// (the contract before may end later in the request): resolved when
	// the batch is complete (resolveContracts).
	pending []pendingContract
}

// pendingContract is a re-hire check waiting for the whole batch: its
// issue goes at index at of the issues if the contract before did not end
// this month, or the record has no hire day.
type pendingContract struct {
	at     int
	key    string // "embg/contract" of the contract that must end this month
	noHire bool
	issue  Issue
}

func (c *checker) add(sev, code, field, path, format string, args ...any) {
	if c.errorsOnly && sev != SeverityError {
		return
	}
	c.issues = append(c.issues, Issue{Severity: sev, Code: code, Field: field, Path: path, Message: fmt.Sprintf(format, args...)})
}

// resolveContracts returns issues with the pending re-hire checks that
// fail inserted where they belong; ended holds the "embg/contract" of the
// batch's contracts that end inside the month.
func resolveContracts(issues []Issue, pending []pendingContract, ended map[string]bool) []Issue {
	var fail []pendingContract
	for _, pc := range pending {
		if !ended[pc.key] || pc.noHire {
			fail = append(fail, pc)
		}
	}
	if len(fail) == 0 {
		return issues
	}
	out := make([]Issue, 0, len(issues)+len(fail))
	from := 0
	for _, pc := range fail {
		out = append(out, issues[from:pc.at]...)
		out = append(out, pc.issue)
		from = pc.at
	}
	return append(out, issues[from:]...)
}

// Validate runs every МПИН check on req. It never fails: a problem reaching
// the statutory tables becomes an issue too, because the caller still needs
// to know why a file could not be checked.
func Validate(req *MpinRequest, st Statutory) Result { return validate(req, st, parallelMin) }

func validate(req *MpinRequest, st Statutory, from int) Result {
	b := newMpinBuild(&req.Company, &req.Batch, st, buildOptions{from: from})
	b.add(req.Records)
	return b.result()
}

// checkHeader adds the issues of the company and the batch.
func (c *checker) checkHeader(co *Company, b *Batch) {
	c.company(co)
	c.batch(b)
}

// ratesFor looks up the statutory figures of the batch's period, adding
// an issue when they are missing or carried forward.
func (c *checker) ratesFor(b *Batch, st Statutory) (Rates, bool) {
	if b.PeriodMonth < 1 || b.PeriodMonth > 12 || st == nil {
		return Rates{}, false
	}
	rates, err := st.On(periodEnd(b.PeriodYear, b.PeriodMonth))
	if err != nil {
		c.add(SeverityError, CodeRatesUnavailable, "1.2", "batch", "no statutory figures for %02d/%d: %v", b.PeriodMonth, b.PeriodYear, err)
		return Rates{}, false
	}
	if len(rates.Provisional) > 0 {
		c.add(SeverityWarning, CodeProvisional, "1.2", "batch",
			"the %02d/%d figures %s are not published yet: the checks used the last published ones, carried forward",
			b.PeriodMonth, b.PeriodYear, strings.Join(rates.Provisional, ", "))
	}
	return rates, true
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
	// The fund is the batch's figure; the calendar only warns (issue 16):
	// UJP's МПИН client counts every weekday × 8, holidays included.
	if b.PeriodMonth >= 1 && b.PeriodMonth <= 12 {
		if cal, fund := calendarFund(b.PeriodYear, b.PeriodMonth), batchFund(b); !fund.Equal(cal) {
			how := "declared"
			if !b.WorkingHours.Set {
				how = "defaulted to"
			}
			c.add(SeverityWarning, CodeHoursWrong, "3.6", "batch.workingHours", "the fund of hours is %s %s, but %02d/%d has %s (weekdays × 8, holidays included, as UJP's МПИН client counts)",
				how, fund, b.PeriodMonth, b.PeriodYear, cal)
		}
	}
}

func dec(m Money) money.Amount {
	if !m.Set {
		return money.Amount{}
	}
	return m.D
}

func hrs(n Num) money.Amount {
	if !n.Set {
		return money.Amount{}
	}
	return n.D
}

// record checks one record at path p; dupOf is the index of an earlier
// record of the batch with the same ЕМБГ and contract, or -1. It returns
// the record's hours, which the file is built from.
func (c *checker) record(batch *Batch, r *Record, p string, haveRates bool, rates Rates, dupOf int) hoursOf {
	e := &r.Employee
	embg := str(e.EMBG)
	if e.EMBG == nil || embg == "" {
		// An МПИН record is one person's: the ЕМБГ is what UJP files it by.
		c.add(SeverityError, CodeEMBG, "3.1", p+".employee.embg", "is required: the 13-digit ЕМБГ of the employee")
	} else if err := ident.EMBG(embg); err != nil {
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
	if t := str(r.ClientTaxID); t != "" {
		// Not written to any file, but an ЕДБ that cannot exist is still
		// refused rather than kept.
		if err := ident.EDB(t); err != nil {
			c.add(SeverityError, CodeEDB, "", p+".clientTaxId", "client ЕДБ: %v", err)
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
	if ec := str(r.ExemptionCode); ec != "" && !exemptionCodes[ec] {
		c.add(SeverityError, CodeExemptionCode, "3.17б", p+".exemptionCode", "%q is not an exemption code (UJP's list: 001, 002, 003, 004, 009, 015, 017, 034, 050, 060)", ec)
	}
	if sc := str(r.SickFundCode); sc != "" && !competentBodyCodes[sc] {
		c.add(SeverityError, CodeSickFundCode, "3.23", p+".sickFundCode", "%q is not a competent-body code of МПИН 3.23 (140 health fund sick pay, 128 and 129 health fund 100 %% and 50 %%, …)", sc)
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
	y, mo := batch.PeriodYear, batch.PeriodMonth
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
		if r.ServiceDays.Set && (r.ServiceDays.D.LessThan(money.Amount{}) || r.ServiceDays.D.GreaterThan(money.FromInt(int64(days)))) {
			c.add(SeverityError, CodeDaysWrong, "3.5", p+".serviceDays", "%s days of insurance in a month of %d days", r.ServiceDays.D, days)
		}
	}

	// contractNo ≥ 2 is a second employment in the same month: it needs an
	// earlier contract of the same person that ended this month.
	if r.ContractNo != nil {
		if *r.ContractNo < 1 {
			c.add(SeverityError, CodeContractNo, "3.30", p+".contractNo", "must be 1 or more")
		} else if *r.ContractNo >= 2 {
			c.pending = append(c.pending, pendingContract{at: len(c.issues), key: embg + "/" + strconv.Itoa(*r.ContractNo-1), noHire: r.HireDay == nil,
				issue: Issue{Severity: SeverityError, Code: CodeContractNo, Field: "3.30", Path: p + ".contractNo",
					Message: fmt.Sprintf("contract %d needs a hire day and contract %d of the same ЕМБГ ending this month", *r.ContractNo, *r.ContractNo-1)}})
		}
	}

	// Hours: every kind inside the fund, absent hours included, must fit
	// the record's fund, and the record's fund the batch's.
	h := recordHours(r, batch)
	bf := batchFund(batch)
	switch {
	case h.fund.GreaterThan(bf):
		c.add(SeverityError, CodeHoursWrong, "3.6", p+".workingHours", "the record's fund of %s hours is more than the month's fund of %s (batch.workingHours); overtime goes in overtimeHours", h.fund, bf)
	case h.inside.GreaterThan(h.fund):
		c.add(SeverityError, CodeHoursWrong, "3.6", p+".workingHours", "premium, sick, maternity, unpaid and absent hours total %s, more than the record's fund of %s", h.inside, h.fund)
	case defaulted(r.InsuranceCode, "0050") == "0050" && r.HireDay == nil && r.LeaveDay == nil && !h.absent.IsPositive() &&
		h.fund.LessThan(bf.Sub(money.FromInt(8))):
		c.add(SeverityWarning, CodeHoursWrong, "3.6", p+".workingHours", "%s hours in a month of %s for вид на стаж 0050 (full time) without a hire or leave day; part-time work is 0047", h.fund, bf)
	}
	if r.UnpaidHours.Set && r.UnpaidHours.D.GreaterThan(money.FromInt(24)) {
		c.add(SeverityWarning, CodeHoursWrong, "3.6ц", p+".unpaidHours", "more than 24 unpaid hours in a month")
	}
	var employerPays money.Amount
	pays := 0
	_, payFields := kindFields(r)
	for k := range kinds {
		if kinds[k].inGross {
			if v := payOfKind(payFields[k]); !v.IsZero() {
				employerPays = employerPays.Add(v)
				pays++
			}
		}
	}
	// Each pay and the gross are rounded on their own: their sum may pass
	// the gross by the rounding slack without any pay being wrong.
	if r.SalaryGross.Set && employerPays.Sub(r.SalaryGross.D).GreaterThan(roundingSlack(pays+1)) {
		c.add(SeverityError, CodePaysAboveGross, "3.14", p+".salaryGross", "the pays of the kinds of hours, seniority and bonus total %s, more than the gross %s", employerPays, r.SalaryGross.D)
	}
	if r.NetPaid.Set && r.SalaryNet.Set && r.NetPaid.D.GreaterThan(r.SalaryNet.D) {
		c.add(SeverityError, CodeNetPaidAboveNet, "3.31", p+".netPaid", "the net paid %s is more than the net %s", r.NetPaid.D, r.SalaryNet.D)
	}
	if selfEmployed(batch) && r.NetPaid.Set && !r.NetPaid.D.IsZero() {
		c.add(SeverityWarning, CodeSelfEmployed, "3.31", p+".netPaid", "a self-employed payer (вид на обврзник 111) files the effective net as 0 (the UJP-accepted January 2026 filing); netPaid is %s", r.NetPaid.D)
	}
	if haveRates {
		c.amounts(r, p, rates, h, selfEmployed(batch))
	}
	return h
}

// selfEmployed reports a payer of вид на обврзник 111 (self-employed,
// intellectual activity): the UJP-accepted January 2026 filing of one
// carries no PIT, no allowance and an effective net of 0 (research §4.2).
func selfEmployed(b *Batch) bool { return str(b.VidObvrznik) == "111" }

// share returns v × paid / fundRef at two decimals: the engine's proration
// of the maximum base and of the allowance by paid hours (research §2.1).
func share(v money.Amount, h hoursOf) money.Amount {
	if !h.fundRef.IsPositive() || h.paid.Cmp(h.fundRef) >= 0 {
		return v
	}
	return v.Mul(h.paid).Div(h.fundRef, 2)
}

// allowanceOf is the monthly allowance a record's PIT is taken with: its
// personalAllowance, else the statutory one prorated by paid hours (none
// for a self-employed payer).
func allowanceOf(r *Record, rates Rates, h hoursOf, self bool) money.Amount {
	switch {
	case r.PersonalAllowance.Set:
		return r.PersonalAllowance.D
	case self:
		return money.Amount{}
	}
	return share(rates.Allowance, h)
}

// amounts checks contributions, PIT and net against the gross at the
// period's rates: each contribution within 1 denar of rate × base, where
// the base is the gross capped at the maximum base prorated by paid hours
// (as the engine computes it); PIT within 1 denar; the net within the
// rounding slack of its seven figures.
func (c *checker) amounts(r *Record, p string, rates Rates, h hoursOf, self bool) {
	if !r.SalaryGross.Set {
		return
	}
	gross := r.SalaryGross.D
	base := gross
	if rates.MaxBase.IsPositive() {
		if maxBase := share(rates.MaxBase, h); base.GreaterThan(maxBase) {
			base = maxBase
		}
	}
	employment := rates.Employment
	if str(r.ExemptionCode) == "001" {
		employment = money.Amount{} // 3.17б 001: not liable for the employment contribution
	}
	for _, k := range []struct {
		m    Money
		rate money.Amount
		code string
		fld  string
		name string
	}{
		{r.Pension, rates.Pension, CodePensionWrong, "3.15", "pension"},
		{r.Health, rates.Health, CodeHealthWrong, "3.40", "health"},
		{r.AdditionalHealth, rates.Injury, CodeInjuryWrong, "3.42", "additionalHealth"},
		{r.EmploymentContrib, employment, CodeEmploymentWrong, "3.44", "employmentContrib"},
	} {
		want := base.Mul(k.rate).Round(2)
		if k.m.Set && k.m.D.Sub(want).Abs().GreaterThan(tolerance) {
			c.add(SeverityError, k.code, k.fld, p+"."+k.name, "%s is not %s × %s = %s", k.m.D, k.rate, base, want)
		}
	}
	contrib := dec(r.Pension).Add(dec(r.Health)).Add(dec(r.AdditionalHealth)).Add(dec(r.EmploymentContrib))
	allowance := allowanceOf(r, rates, h, self)
	taxBase := gross.Sub(contrib).Sub(allowance)
	if taxBase.IsNegative() {
		taxBase = money.Amount{}
	}
	pit := taxBase.Mul(money.MustParse("0.10")).Round(2)
	if self {
		pit = money.Amount{} // the self-employed pay PIT outside МПИН
	}
	if r.PIT.Set && r.PIT.D.Sub(pit).Abs().GreaterThan(tolerance) {
		if self {
			c.add(SeverityWarning, CodePITWrong, "3.46", p+".pit", "%s, but a self-employed payer (вид на обврзник 111) files PIT 0", r.PIT.D)
		} else {
			c.add(SeverityWarning, CodePITWrong, "3.46", p+".pit", "%s is not 10 %% of (%s − %s − %s) = %s", r.PIT.D, gross, contrib, allowance, pit)
		}
	}
	net := gross.Sub(contrib).Sub(dec(r.PIT))
	if r.SalaryNet.Set && r.SalaryNet.D.Sub(net).Abs().GreaterThan(netTolerance) {
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

// Detail is the problem detail of the error.
func (e *BlockingError) Detail() string {
	n := "1 blocking issue"
	if len(e.Issues) != 1 {
		n = fmt.Sprintf("%d blocking issues", len(e.Issues))
	}
	return "The МПИН checks found " + n + " (listed in errors and issues); correct them, or send force: true to generate the file anyway."
}

// CodeMpinValidationFailed is the problem code for a BlockingError.
const CodeMpinValidationFailed = "mpin_validation_failed"

// AsDenarError returns the error as the shared *denar.Error with the blocking
// issues in Detail["issues"].
func (e *BlockingError) AsDenarError() *denar.Error {
	fields := make([]denar.FieldError, len(e.Issues))
	for i, is := range e.Issues {
		fields[i] = denar.FieldError{Path: is.Path, Message: "МПИН " + is.Field + ", check " + is.Code + ": " + is.Message}
	}
	return &denar.Error{Code: CodeMpinValidationFailed, Message: e.Detail(), Fields: fields, Detail: map[string]any{"issues": e.Issues}}
}
