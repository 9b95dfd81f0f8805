package payrollapi

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/filing"
	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/payroll"
)

// recordFields are the JSON names of an МПИН record's fields.
var recordFields = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[filing.Record]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()

// recordFrom maps a calculation result to an МПИН record field for field:
// every field of the result whose name is a record field, nothing else,
// plus the employee.
func recordFrom(t testing.TB, r *payroll.Result, employee map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"employee": employee}
	for k, v := range res {
		if recordFields[k] {
			rec[k] = v
		}
	}
	return rec
}

func someEMBG(rng *rand.Rand) string {
	for {
		p := fmt.Sprintf("%02d%02d9%02d45%03d", 1+rng.IntN(28), 1+rng.IntN(12), 50+rng.IntN(40), rng.IntN(1000))
		for k := '0'; k <= '9'; k++ {
			if ident.EMBG(p+string(k)) == nil {
				return p + string(k)
			}
		}
	}
}

// randomInput is one CalculationInput of the sweep: every hour kind,
// partial months by placements or absent hours, part time, sick pay of
// both kinds, maternity, unpaid hours, seniority, bonuses, deductions, net
// first, net-based premiums, informational hours, every minimum-base mode,
// from 2025 to 2027 (provisional figures). No rate overrides: the filing
// checks read the statutory tables, as UJP does.
func randomInput(rng *rand.Rand) payroll.Input {
	var in payroll.Input
	s := func(v string) *string { return &v }
	n := func(v float64) payroll.Number {
		x, _ := payroll.ParseNumber(fmt.Sprintf("%g", v))
		return x
	}
	year := 2025 + rng.IntN(3)
	month := 1 + rng.IntN(12)
	if rng.IntN(3) == 0 {
		in.TargetNet = s(fmt.Sprint(15000 + rng.IntN(300000)))
	} else {
		g := fmt.Sprint(20000 + rng.IntN(rng.IntN(2)*1500000+200000))
		if rng.IntN(4) == 0 {
			g += fmt.Sprintf(".%02d", rng.IntN(100))
		}
		in.GrossSalary = s(g)
	}
	fund := 176.0
	switch rng.IntN(3) {
	case 0:
		in.Period = &payroll.Period{Year: year, Month: month}
		fund = float64(payroll.MonthFundHours(year, time.Month(month)).Whole())
		if rng.IntN(2) == 0 {
			first := time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC)
			start := first.AddDate(0, 0, rng.IntN(20)-5)
			pl := payroll.Placement{StartDate: start.Format(time.DateOnly)}
			if rng.IntN(2) == 0 {
				end := first.AddDate(0, 0, 10+rng.IntN(25)).Format(time.DateOnly)
				pl.EndDate = &end
			}
			in.Placements = []payroll.Placement{pl}
		}
	case 1:
		in.EffectiveDate = s(fmt.Sprintf("%04d-%02d-%02d", year, month, 1+rng.IntN(28)))
	default:
		in.EffectiveDate = s(fmt.Sprintf("%04d-%02d-15", year, month))
		if rng.IntN(2) == 0 {
			in.WorkingHours = n(fund / 2)
			in.FundHours = n(fund)
			fund /= 2
		}
	}
	left := fund
	take := func(p *payroll.Number, max float64) {
		if rng.IntN(4) != 0 || left < 1 {
			return
		}
		h := float64(rng.IntN(int(min(max, left)) + 1))
		if rng.IntN(5) == 0 && h >= 1 {
			h -= 0.5
		}
		*p = n(h)
		left -= h
	}
	take(&in.NightHours, 40)
	take(&in.HolidayHours, 16)
	take(&in.SundayHours, 16)
	take(&in.HolidayNightHours, 8)
	take(&in.SundayNightHours, 8)
	take(&in.SundayHolidayHours, 8)
	take(&in.Shift1Hours, 40)
	take(&in.Shift2Hours, 40)
	take(&in.Shift3Hours, 40)
	take(&in.SpecialHours, 16)
	take(&in.SickCompanyHours, 40)
	take(&in.SickFundHours, 80)
	take(&in.MaternityHours, 80)
	take(&in.UnpaidHours, 24)
	if in.Placements == nil {
		take(&in.AbsentHours, 80)
	}
	if rng.IntN(4) == 0 {
		in.OvertimeHours = n(float64(rng.IntN(30)))
	}
	if rng.IntN(5) == 0 {
		in.SickCompanyRate = n([]float64{70, 80, 90, 100}[rng.IntN(4)])
	}
	if rng.IntN(4) == 0 {
		in.Seniority = &payroll.Seniority{Months: rng.IntN(480)}
	}
	if rng.IntN(5) == 0 {
		in.BonusAmount = s(fmt.Sprint(1000 + rng.IntN(20000)))
		if rng.IntN(2) == 0 {
			in.BonusBasis = s("gross")
		}
	}
	if rng.IntN(5) == 0 {
		in.Deductions = []payroll.Deduction{{Description: "кредит", Amount: fmt.Sprint(rng.IntN(3000))}}
	}
	in.NetBased = rng.IntN(8) == 0
	in.HoursInformational = rng.IntN(10) == 0
	in.SeniorityInformational = rng.IntN(10) == 0
	in.NoPersonalAllowance = rng.IntN(10) == 0
	in.PitExempt = rng.IntN(20) == 0
	if rng.IntN(3) == 0 {
		in.MinBaseMode = s([]string{"prorated", "always", "off"}[rng.IntN(3)])
	}
	return in
}

// mpinDetail is what the property reads back from the XML.
type mpinDetail struct {
	Type   string `xml:"SifraTipRabotenCas"`
	Hours  int64  `xml:"BrojCasovi"`
	Amount int64  `xml:"BrutoIznos"`
}

type mpinEmployee struct {
	Gross   int64        `xml:"BrutoIznosVkVrab"`
	Hours   int64        `xml:"RabotniCasoviVkVrab"`
	Details []mpinDetail `xml:"MpinCalculationStDetail"`
}

// TestEveryResultFiles is issue 16's property: every CalculationResult of
// a broad random sweep, mapped field for field to an МПИН record, validates
// with no blocking issue and files as XML and TXT; in the XML the level-3
// hours other than overtime, with the absent hours (outside the
// employment, filed as none), add up to the record's fund, and the
// level-3 amounts to its gross.
func TestEveryResultFiles(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 2026))
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	const n = 3000
	filed := 0
	for i := range n {
		in := randomInput(rng)
		r, err := payroll.Calculate(&in, now)
		if err != nil {
			continue // inputs the engine refuses (a deduction above the net, …)
		}
		employee := map[string]any{"firstName": "Ана", "lastName": "Ангеловска", "embg": someEMBG(rng), "municipalityCode": "182"}
		rec := recordFrom(t, r, employee)
		date, _ := payroll.EffectiveDate(&in, now)
		req := map[string]any{
			"company": map[string]any{"name": "Дизајнија ДООЕЛ", "taxId": "4030990123455", "city": "Скопје"},
			"batch":   map[string]any{"periodMonth": int(date.Month()), "periodYear": date.Year(), "workingHours": json.RawMessage(r.FundHours.String())},
			"records": []any{rec},
		}
		body, _ := json.Marshal(req)
		mreq, err := filing.DecodeMpin(body)
		if err != nil {
			t.Fatalf("input %d: the record does not decode: %v\n%s", i, err, body)
		}
		res := filing.Validate(mreq, statutory{})
		for _, is := range res.Issues {
			if is.Severity == filing.SeverityError {
				t.Fatalf("input %d %+v:\nblocking %+v\nrecord %s", i, in, is, body)
			}
		}
		x, err := filing.MpinXML(mreq, statutory{})
		if err != nil {
			t.Fatalf("input %d: xml: %v", i, err)
		}
		if _, err := filing.MpinTXT(mreq, statutory{}); err != nil {
			t.Fatalf("input %d: txt: %v", i, err)
		}
		var doc struct {
			Emps []mpinEmployee `xml:"MpinCalculationSt"`
		}
		if err := xml.Unmarshal(x, &doc); err != nil || len(doc.Emps) != 1 {
			t.Fatalf("input %d: %v", i, err)
		}
		e := doc.Emps[0]
		var inside, all, amount int64
		for _, d := range e.Details {
			all += d.Hours
			amount += d.Amount
			if d.Type != "005" {
				inside += d.Hours
			}
		}
		fund, absent := r.WorkingHours.Whole(), r.AbsentHours.Whole()
		if inside+absent != fund || all != e.Hours {
			t.Fatalf("input %d: level-3 hours %d (of them inside the fund %d) + absent %d; fund %d, level 2 %d\n%s", i, all, inside, absent, fund, e.Hours, x)
		}
		if amount != e.Gross {
			t.Fatalf("input %d: level-3 amounts %d, gross %d\n%s", i, amount, e.Gross, x)
		}
		filed++
	}
	if filed < n*8/10 {
		t.Fatalf("only %d of %d inputs were calculated and filed", filed, n)
	}
	t.Logf("%d of %d results filed", filed, n)
}

// TestAcceptedFileFromCalculation: the May 2026 calculation of the minimum
// wage, copied field for field into a record, files exactly the МПИН UJP
// accepted (shared/reference/ujp/accepted-mpin/obvrznik-110.xml).
func TestAcceptedFileFromCalculation(t *testing.T) {
	t.Parallel()
	in := payroll.Input{GrossSalary: ptr("38507"), Period: &payroll.Period{Year: 2026, Month: 5}}
	r, err := payroll.Calculate(&in, time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	rec := recordFrom(t, r, map[string]any{"firstName": "Марија", "lastName": "Петровска", "embg": "0101990450006",
		"municipalityCode": "130", "bankAccount": "300000000000036"})
	body, _ := json.Marshal(map[string]any{
		"company": map[string]any{"name": "Дизајнија ДООЕЛ", "taxId": "4080000000009", "city": "Скопје"},
		"batch":   map[string]any{"periodMonth": 5, "periodYear": 2026, "workingHours": 168},
		"records": []any{rec},
	})
	req, err := filing.DecodeMpin(body)
	if err != nil {
		t.Fatal(err)
	}
	if res := filing.Validate(req, statutory{}); !res.OK || len(res.Issues) != 0 {
		t.Fatalf("issues %+v", res.Issues)
	}
	got, err := filing.MpinXML(req, statutory{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../filing/testdata/accepted/obvrznik-110.xml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the calculation files\n%s\nnot the accepted\n%s", got, want)
	}
}

func ptr[T any](v T) *T { return &v }
