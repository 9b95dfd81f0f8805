package filing

import (
	"fmt"
	"time"

	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/money"
)

// stat2026 holds the 2026 figures (research §1, §2.2): 18.8/7.5/0.5/1.2 %
// until June, 19.9/7.5/0.5/0.1 % from 1 July, allowance 10,932, maximum
// base 1,106,256.
type stat2026 struct{}

func (stat2026) On(d time.Time) (Rates, error) {
	if d.Year() != 2026 {
		return Rates{}, fmt.Errorf("no figures for %d", d.Year())
	}
	p := func(s string) money.Amount { return money.MustParse(s) }
	r := Rates{Pension: p("0.188"), Health: p("0.075"), Injury: p("0.005"), Employment: p("0.012"), Allowance: p("10932"), MaxBase: p("1106256")}
	if d.Month() >= time.July {
		r.Pension, r.Employment = p("0.199"), p("0.001")
	}
	return r, nil
}

// testEMBG completes a 12-digit prefix with its check digit.
func testEMBG(prefix string) string {
	for k := '0'; k <= '9'; k++ {
		if ident.EMBG(prefix+string(k)) == nil {
			return prefix + string(k)
		}
	}
	panic("no check digit for " + prefix)
}

func testAccount(prefix string) string {
	c, err := ident.BankAccountCheckDigits(prefix)
	if err != nil {
		panic(err)
	}
	return prefix + c
}

func sp(s string) *string { return &s }
func ip(i int) *int       { return &i }

// calc builds a record the way the payroll engine would for gross at the
// Jan–Jun 2026 rates: two-decimal arithmetic, rounded only on the form.
func calc(gross string, first, last string) Record { return calcShare(gross, first, last, 1, 1) }

// calcShare is calc for a partial month: paid hours of a fund prorate the
// allowance (and the maximum base).
func calcShare(gross string, first, last string, paid, fund int64) Record {
	r, _ := stat2026{}.On(time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC))
	g := money.MustParse(gross)
	pen, hea, inj, emp := g.Mul(r.Pension).Round(2), g.Mul(r.Health).Round(2), g.Mul(r.Injury).Round(2), g.Mul(r.Employment).Round(2)
	c := pen.Add(hea).Add(inj).Add(emp)
	allow := r.Allowance.MulDiv(money.FromInt(paid), money.FromInt(fund), 2)
	base := money.Max(g.Sub(c).Sub(allow), money.Amount{})
	pit := base.Mul(money.MustParse("0.1")).Round(2)
	net := g.Sub(c).Sub(pit)
	m := func(d money.Amount) Money { return Money{D: d, Set: true} }
	rec := Record{
		SalaryGross: m(g), SalaryNet: m(net), Pension: m(pen), Health: m(hea), AdditionalHealth: m(inj),
		EmploymentContrib: m(emp), PIT: m(pit),
		Employee: Employee{FirstName: first, LastName: last},
	}
	if paid != fund {
		rec.PersonalAllowance = m(allow)
	}
	return rec
}

func fixtureCompany() Company {
	return Company{
		Name: "DIZAJNIJA DOOEL", NameCyr: sp("Дизајнија ДООЕЛ"), TaxID: sp("4030990123455"),
		City: sp("Скопје"), MunicipalityCode: sp("179"), RegistrationNumber: sp("1234567"),
	}
}

// fixtureRegular is the May 2026 run (fund 168 hours): Cyrillic and Latin
// names, a part-time record, a re-hire (contract 2), maternity 128 and 129.
// Records follow the calculation's meaning of workingHours: the record's
// fund (its contracted hours), the batch's when absent.
func fixtureRegular() *MpinRequest {
	recs := []Record{}
	add := func(r Record, embg, acct, mun string) {
		r.Employee.EMBG = sp(testEMBG(embg))
		r.Employee.BankAccount = sp(testAccount(acct))
		r.Employee.MunicipalityCode = sp(mun)
		recs = append(recs, r)
	}
	r := calc("36037", "Marko", "Petrovski")
	r.Employee.FirstNameCyr, r.Employee.LastNameCyr = sp("Марко"), sp("Петровски")
	r.OvertimeHours, r.OvertimePay = N("4"), M("1100.00")
	add(r, "150598541234", "3000000002118", "179")

	r = calc("20000", "Ana", "Gjorgjievska") // part-time, name transliterated
	r.InsuranceCode, r.WorkingHours = sp("0047"), N("84")
	add(r, "020399045001", "2100000001234", "103")

	r = calcShare("12000", "Игор", "Стојановски", 56, 168) // leaves on the 10th: 56 of 168 hours ...
	r.LeaveDay, r.AbsentHours, r.ContractNo = ip(10), N("112"), ip(1)
	add(r, "110788045002", "2500000004567", "141")
	r = calcShare("20000", "Игор", "Стојановски", 80, 168) // ... and is re-hired on the 18th: 80 hours
	r.HireDay, r.AbsentHours, r.ContractNo = ip(18), N("88"), ip(2)
	add(r, "110788045002", "2500000004567", "141")

	r = calc("0", "Елена", "Јованова") // maternity leave all month: 3.23 = 128
	r.MaternityHours, r.MaternityBase = N("168"), M("41000.00")
	r.PersonalAllowance = M("0")
	add(r, "230691045003", "3800000007890", "152")

	r = calc("18000", "Љубица", "Њагулова") // early return: 3.23 = 129 for half the fund
	r.MaternityPartialHours = N("84")
	add(r, "050193045004", "3000000009999", "174")

	return &MpinRequest{
		Company: fixtureCompany(),
		Batch:   Batch{PeriodMonth: 5, PeriodYear: 2026, WorkingHours: N("168")},
		Records: recs,
	}
}

// fixtureCorrection is a вид 103 correction of one employee for May 2026.
func fixtureCorrection() *MpinRequest {
	r := calc("38000", "Шефки", "Ќоровски")
	r.Employee.EMBG = sp(testEMBG("010170045005"))
	r.Employee.BankAccount = sp(testAccount("3000000001111"))
	r.Employee.MunicipalityCode = sp("182")
	return &MpinRequest{
		Company: fixtureCompany(),
		Batch:   Batch{PeriodMonth: 5, PeriodYear: 2026, WorkingHours: N("168"), VidObvrska: sp("103")},
		Records: []Record{r},
	}
}

// testDoc is the document of a request the tests know to be within
// bounds, whatever its checks find.
func testDoc(req *MpinRequest) *doc {
	m := newMpinBuild(&req.Company, &req.Batch, stat2026{}, buildOptions{file: true, ranges: true, from: parallelMin})
	m.add(req.Records)
	d, err := m.doc(true)
	if err != nil {
		panic(err)
	}
	return d
}
