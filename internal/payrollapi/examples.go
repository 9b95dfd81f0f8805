package payrollapi

import (
	"bytes"
	"fmt"
	"reflect"
	"time"
	"unicode/utf16"

	"github.com/denar-mk/denar/filing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/payroll"
)

// The examples of the reference are one bureau's May 2026: the request
// bodies are written out below, and every answer is computed from them by
// the same code that answers the requests, so each example response is
// what the service answers to the example request (TestExamplesAnswered).
// May 2026 has a fund of 168 hours (21 weekdays × 8, no public holiday
// on a weekday): with period and no workingHours, the divisor of the
// hourly rate.

// exampleNow is the time the examples are computed at: after May 2026,
// so no figure is provisional.
var exampleNow = time.Date(2026, 6, 5, 10, 0, 0, 0, time.UTC)

// Example request bodies, by operation.
const (
	// ExampleCalculation: a full month with night and overtime hours,
	// seniority and a deduction.
	ExampleCalculation = `{"grossSalary":"30000","period":{"year":2026,"month":5},"nightHours":16,"overtimeHours":10,` +
		`"seniority":{"months":125,"asOf":"2026-05-31"},"deductions":[{"description":"Задршка по решение И-123/26","amount":"2000"}]}`
	ExampleBatch = `{"inputs":[{"grossSalary":"30000","period":{"year":2026,"month":5}},` +
		`{"targetNet":"25000","period":{"year":2026,"month":5}}]}`
	ExampleConvert      = `{"gross":"30000","effectiveDate":"2026-05-31"}`
	ExampleGrossFromNet = `{"net":"9000","subtypeIncome":"7.3"}`
	ExamplePddgi        = `{"company":{"name":"Дизајнија ДООЕЛ","taxId":"4030000000001","email":"plati@dizajnija.mk",` +
		`"phone":"02 3111 111","contactPerson":"Ана Ангеловска","municipalityCode":"182"},"month":5,"year":2026,` +
		`"records":[{"salaryGross":"11111","employee":{"embg":"2207990050008","firstName":"Петар","lastName":"Петровски",` +
		`"bankAccount":"300000000012355"}}]}`
	ExampleEppd = `{"issuer":{"edb":"4030000000001","name":"Дизајнија ДООЕЛ","bankAccount":"300000000012355",` +
		`"email":"plati@dizajnija.mk","phone":"02 3111 111"},"periodFrom":"2026-05-01","periodTo":"2026-05-31",` +
		`"comment":"Хонорари за мај","rows":[{"embg":"2207990050008","firstName":"Петар","lastName":"Петровски",` +
		`"grossIncome":"10000","municipalityCode":"182","subtypeIncome":"7.3","bankAccount":"300000000012355"}]}`
)

// exampleCompany and exampleBatch are the payer and period of the МПИН
// examples.
const (
	exampleCompany = `{"name":"Дизајнија ДООЕЛ","taxId":"4030000000001","city":"Скопје","municipalityCode":"182",` +
		`"addressStreet":"бул. Илинден","addressNumber":"10","postalCode":"1000","phone":"02 3111 111","email":"plati@dizajnija.mk"}`
	exampleBatch = `{"periodMonth":5,"periodYear":2026,"workingHours":168}`
)

// exampleRecord is the МПИН record of one employee: the matching fields of
// the calculation of gross, May 2026, copied one for one.
func exampleRecord(gross, embg, first, last string) string {
	in, err := payroll.DecodeInput([]byte(`{"grossSalary":"` + gross + `","period":{"year":2026,"month":5}}`))
	if err != nil {
		panic(err)
	}
	r, err := payroll.Calculate(in, exampleNow)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf(`{"employee":{"firstName":%q,"lastName":%q,"embg":%q,"municipalityCode":"182","bankAccount":"300000000012355"},`+
		`"salaryGross":%q,"salaryNet":%q,"pension":%q,"health":%q,"additionalHealth":%q,"employmentContrib":%q,"pit":%q,`+
		`"personalAllowance":%q,"netPaid":%q,"workingHours":%s,"fundHours":%s,"insuranceCode":%q}`,
		first, last, embg, r.SalaryGross, r.SalaryNet, r.Pension, r.Health, r.AdditionalHealth, r.EmploymentContrib, r.PIT,
		r.PersonalAllowance, r.NetPaid, r.WorkingHours, r.FundHours, r.InsuranceCode)
}

// ExampleMpin is the example body of the МПИН endpoints.
func ExampleMpin() string {
	return `{"company":` + exampleCompany + `,"batch":` + exampleBatch + `,"records":[` +
		exampleRecord("30000", "1505985412349", "Ана", "Ангеловска") + `]}`
}

// ExampleCombined is the example body of the combined МПИН TXT.
func ExampleCombined() string {
	return `{"company":` + exampleCompany + `,"batch":` + exampleBatch + `,"batches":[{"records":[` +
		exampleRecord("30000", "1505985412349", "Ана", "Ангеловска") + `]},{"records":[` +
		exampleRecord("42000", "2207990051004", "Марко", "Марковски") + `]}]}`
}

// must panics on an error building an example: the examples are fixed, so
// one that fails is a bug the first test finds.
func must[T any](v T, err error) T {
	if err != nil {
		panic("payrollapi: example: " + err.Error())
	}
	return v
}

// registerExamples gives every request and response body of the service
// its example, the answers computed from the requests.
func registerExamples(s *httpx.Service) {
	s.ExampleJSON(reflect.TypeFor[payroll.Input](), ExampleCalculation)
	s.ExampleJSON(reflect.TypeFor[payroll.Result](), string(must(payroll.AppendCalculationJSON(nil, []byte(ExampleCalculation), exampleNow, false))))
	s.ExampleJSON(reflect.TypeFor[payroll.BatchInput](), ExampleBatch)
	s.ExampleJSON(reflect.TypeFor[BatchResults](), string(must(payroll.AppendBatchJSON(nil, []byte(ExampleBatch), exampleNow, false))))
	s.ExampleJSON(reflect.TypeFor[payroll.ConvertInput](), ExampleConvert)
	s.Example(must(payroll.Convert(must(payroll.DecodeConvert([]byte(ExampleConvert))), exampleNow)))

	var rates ratesOutput
	d := time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)
	rates.Body.EffectiveDate = d.Format(time.DateOnly)
	rates.Body.Rates = payroll.RatesOn(d)
	rates.Body.Provisional = payroll.ProvisionalOn(d)
	s.Example(rates.Body)
	var history historyOutput
	for _, h := range payroll.RateHistory() {
		if h.Key == "pension" {
			history.Body.Data = append(history.Body.Data, h)
		}
	}
	s.Example(history.Body)

	mpin, combined := ExampleMpin(), ExampleCombined()
	s.ExampleJSON(reflect.TypeFor[filing.MpinRequest](), mpin)
	s.ExampleJSON(reflect.TypeFor[filing.CombinedRequest](), combined)
	s.ExampleJSON(reflect.TypeFor[filing.PddgiRequest](), ExamplePddgi)
	s.ExampleJSON(reflect.TypeFor[filing.EppdRequest](), ExampleEppd)
	s.ExampleJSON(reflect.TypeFor[filing.GrossFromNetRequest](), ExampleGrossFromNet)
	var gfn filing.GrossFromNetRequest
	must(0, filing.DecodeJSON([]byte(ExampleGrossFromNet), &gfn))
	s.Example(must(filing.GrossFromNet(&gfn)))
	res := must(filing.ValidateFrom(bytes.NewReader([]byte(mpin)), statutory{}))
	s.Example(ValidationResult{OK: res.OK, Issues: res.Issues})

	// The files, as their media types' examples: XML as it is, the TXT
	// files as the text they hold (they are UTF-16LE with a byte-order
	// mark on the wire).
	var pddgi filing.PddgiRequest
	must(0, filing.DecodeJSON([]byte(ExamplePddgi), &pddgi))
	var eppd filing.EppdRequest
	must(0, filing.DecodeJSON([]byte(ExampleEppd), &eppd))
	files := map[string]any{
		"/v1/files/mpin/xml":          string(must(filing.MpinXMLFrom(bytes.NewReader([]byte(mpin)), statutory{})).Bytes()),
		"/v1/files/mpin/txt":          utf16Text(must(filing.MpinTXTFrom(bytes.NewReader([]byte(mpin)), statutory{})).Bytes()),
		"/v1/files/mpin/txt/combined": utf16Text(must(filing.CombinedTXTFrom(bytes.NewReader([]byte(combined)), statutory{})).Bytes()),
		"/v1/files/pddgi":             string(must(filing.PddgiFile(&pddgi)).Bytes()),
		"/v1/files/epdd":              string(must(filing.EppdFile(&eppd)).Bytes()),
	}
	for path, ex := range files {
		op := s.API.OpenAPI().Paths[path].Post
		for _, mt := range op.Responses["200"].Content {
			mt.Example = ex
		}
	}
}

// utf16Text decodes a UTF-16LE file with a byte-order mark.
func utf16Text(b []byte) string {
	b = bytes.TrimPrefix(b, []byte{0xFF, 0xFE})
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return string(utf16.Decode(u))
}
