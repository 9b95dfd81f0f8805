package payrollapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/payrollapi"
)

// TestProblemsNameTheField (issue 16, defect 8): every 4xx is a problem
// whose errors name the real field, with one title and detail per code,
// and a batch lists every input's problems in one answer.
func TestProblemsNameTheField(t *testing.T) {
	t.Parallel()
	e := setup(t)
	record := `{"salaryGross":"1","salaryNet":"1","pension":"0","health":"0","additionalHealth":"0","employmentContrib":"0","pit":"0","employee":{"firstName":"a","lastName":"b"}}`
	mpin := func(rec string) string {
		return `{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":[` + rec + `]}`
	}
	tests := []struct {
		name, path, body string
		code             string
		paths            []string
	}{
		{"unknown field and domain errors together", "/v1/calculations", `{"grossSalary":"-1","overtimeHours":-2,"colour":"red"}`,
			"validation_failed", []string{"colour", "grossSalary", "overtimeHours"}},
		{"deduction without description", "/v1/calculations", `{"grossSalary":"30000","deductions":[{"amount":"1"}]}`,
			"validation_failed", []string{"deductions[0].description"}},
		{"hours as a string", "/v1/calculations", `{"grossSalary":"30000","nightHours":"8"}`, "validation_failed", []string{"nightHours"}},
		{"empty body", "/v1/calculations", ``, "validation_failed", []string{""}},
		// Malformed JSON is one error at the root, with the byte offset,
		// on every endpoint (and on the e-invoicing service).
		{"malformed inside an object", "/v1/calculations", `{"grossSalary":"30000","period":{"year":2026,"month":}}`, "validation_failed", []string{""}},
		{"malformed inside a record", "/v1/files/mpin/xml", mpin(`{"salaryGross":}`), "validation_failed", []string{""}},
		{"malformed ПДД-ГИ", "/v1/files/pddgi", `{"company":{"name":"x"},"month":1,"year":2026,"records":[{"salaryGross":"1",}]}`, "validation_failed", []string{""}},
		{"contractor with hours", "/v1/calculations", `{"grossSalary":"30000","contractor":true,"nightHours":8,"seniorityPercentage":5}`,
			"validation_failed", []string{"nightHours", "seniorityPercentage"}},
		{"period and effectiveDate disagree", "/v1/calculations", `{"grossSalary":"30000","period":{"year":2026,"month":3},"effectiveDate":"2026-04-01"}`,
			"validation_failed", []string{"effectiveDate"}},
		{"batch: every input's errors", "/v1/calculations/batch",
			`{"inputs":[{"grossSalary":"30000"},{"grossSalary":"x","colour":1},{"grossSalary":"30000"},{"grossSalary":"30000","deductions":[{"description":"d","amount":"99999"}]},{"targetNet":5}]}`,
			"validation_failed", []string{"inputs[1].colour", "inputs[1].grossSalary", "inputs[3].deductions", "inputs[4].targetNet"}},
		{"convert with both", "/v1/calculations/convert", `{"gross":"1","net":"1"}`, "validation_failed", []string{"gross", "net"}},
		{"nested unknown field in a record", "/v1/files/mpin/xml", mpin(strings.TrimSuffix(record, "}") + `,"foo":1}`), "validation_failed", []string{"records[0].foo"}},
		{"record field of the wrong type", "/v1/files/mpin/validate", mpin(strings.TrimSuffix(record, "}") + `,"hireDay":"5"}`), "validation_failed", []string{"records[0].hireDay"}},
		{"blocking МПИН checks", "/v1/files/mpin/xml", mpin(record), "mpin_validation_failed", []string{"company.taxId", "records[0].employee.embg"}},
		{"ПДД-ГИ unknown field", "/v1/files/pddgi", `{"company":{"name":"x"},"month":1,"year":2026,"records":[{"salaryGross":"1","employee":{"firstName":"a","lastName":"b","age":3}}]}`,
			"validation_failed", []string{"records[0].employee.age"}},
		{"gross-from-net with three decimals", "/v1/files/epdd/gross-from-net", `{"net":"10.005"}`, "validation_failed", []string{"net"}},
	}
	titles := map[string]string{}
	for _, tt := range tests {
		status, p, raw := e.post(t, tt.path, tt.body)
		if status != 422 || p["code"] != tt.code {
			t.Errorf("%s: %d %s", tt.name, status, raw)
			continue
		}
		var got []string
		for _, f := range p["errors"].([]any) {
			got = append(got, f.(map[string]any)["path"].(string))
		}
		for _, want := range tt.paths {
			if !slices.Contains(got, want) {
				t.Errorf("%s: no error at %q; errors %v", tt.name, want, got)
			}
		}
		if slices.Contains(got, "body") {
			t.Errorf("%s: an error at \"body\": %s", tt.name, raw)
		}
		if p["instance"] == "" || p["title"] == "" {
			t.Errorf("%s: no instance or title: %s", tt.name, raw)
		}
		key := p["title"].(string) + " / " + p["detail"].(string)
		if tt.code == "mpin_validation_failed" {
			key = p["title"].(string)
		}
		if prev, ok := titles[tt.code]; ok && prev != key {
			t.Errorf("%s: title/detail %q, another %s had %q", tt.name, key, tt.code, prev)
		}
		titles[tt.code] = key
	}
}

// TestNullsAndFormats (issue 16, defect 8): nulls where the spec allows
// them, no caller input rewritten, and PIT of contractor payments in whole
// denars on every endpoint.
func TestNullsAndFormats(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := `{"grossSalary":"30000","targetNet":null,"seniorityPercentage":null,"seniority":null,"unpaidHours":null,"absentHours":null,
		"maternityHours":null,"fundHours":null,"minBaseMode":null,"period":null,"placements":null,"bonusAmount":null,"personalAllowance":null,
		"averageSalary":null,"deductions":null,"rateOverrides":null,"effectiveDate":null,"nightHours":null,"nightHoursRate":null}`
	if status, m, raw := e.post(t, "/v1/calculations", body); status != 200 || m["salaryNet"] != "20533" {
		t.Errorf("nulls in a calculation: %d %s", status, raw)
	}
	status, m, raw := e.post(t, "/v1/files/epdd/gross-from-net", `{"net":"9999.99","subtypeIncome":null}`)
	if status != 200 || m["net"] != "9999.99" || m["gross"] != "11110.99" || m["pit"] != "1111" {
		t.Errorf("gross-from-net 9999.99: %d %s", status, raw)
	}
	status, m, raw = e.post(t, "/v1/files/epdd/gross-from-net", `{"net":"10000"}`)
	if status != 200 || m["net"] != "10000" || m["gross"] != "11111" || m["pit"] != "1111" {
		t.Errorf("gross-from-net 10000: %d %s", status, raw)
	}
	pddgi := `{"company":{"name":"Дизајнија","taxId":"4030990123455","email":null,"phone":null,"contactPerson":null,"municipalityCode":null},
		"month":5,"year":2026,"records":[{"salaryGross":"11111","employee":{"embg":null,"firstName":"Ана","lastName":"Ристова","bankAccount":null}}]}`
	resp, x := e.postRaw(t, "/v1/files/pddgi", pddgi)
	if resp.StatusCode != 200 || !strings.Contains(string(x), "<Danok>1111.00</Danok>") || !strings.Contains(string(x), "<Neto>10000.00</Neto>") {
		t.Errorf("ПДД-ГИ: %d %s", resp.StatusCode, x)
	}
	// The contractor calculation gives the same whole-denar PIT.
	if _, m, _ := e.post(t, "/v1/calculations", `{"grossSalary":"11111","contractor":true}`); m["pit"] != "1111" || m["salaryNet"] != "10000" {
		t.Errorf("contractor: %v", m)
	}
}

// TestOpenAPIRequiredAndNullable (issue 16, defect 8): the OpenAPI
// document's required and nullable fields are the spec's.
func TestOpenAPIRequiredAndNullable(t *testing.T) {
	t.Parallel()
	doc, err := payrollapi.New(payrollapi.Deps{Log: slog.New(slog.DiscardHandler)}).OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	s := d.Components.Schemas
	required := map[string][]string{
		"Record":          {"salaryGross", "salaryNet", "pension", "health", "additionalHealth", "employmentContrib", "pit", "employee"},
		"Employee":        {"firstName", "lastName"},
		"Company":         {"name"},
		"Batch":           {"periodMonth", "periodYear"},
		"MpinRequest":     {"company", "batch", "records"},
		"CombinedRequest": {"company", "batch", "batches"},
		"PddgiEmployee":   {"firstName", "lastName"},
		"PddgiRequest":    {"company", "month", "year", "records"},
		"EppdRow":         {"embg", "firstName", "lastName", "grossIncome"},
		"EppdRequest":     {"issuer", "periodFrom", "periodTo", "rows"},
		"Input":           nil,
		"Deduction":       {"description", "amount"},
		"Placement":       {"startDate"},
	}
	for name, want := range required {
		got := append([]string(nil), s[name].Required...)
		slices.Sort(got)
		want = append([]string(nil), want...)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s required %v, spec %v", name, got, want)
		}
	}
	nullable := map[string][]string{
		"Input": {"grossSalary", "targetNet", "seniorityPercentage", "seniority", "unpaidHours", "absentHours", "maternityHours",
			"fundHours", "minBaseMode", "period", "placements", "bonusAmount", "personalAllowance", "averageSalary", "deductions",
			"rateOverrides", "effectiveDate", "overtimeHours", "overtimeRate", "sickFundHours", "specialRate"},
		"Record": {"workingHours", "sickFundHours", "sickFundRate", "sickCompanyHours", "sickCompanyRate", "unpaidHours", "serviceDays",
			"maternityHours", "maternityPartialHours", "absentHours", "hireDay", "leaveDay", "contractNo", "insuranceCode", "sickFundCode", "clientTaxId"},
		"Employee":      {"embg", "firstNameCyr", "lastNameCyr", "bankAccount", "municipalityCode", "fzomBranch"},
		"Batch":         {"vidObvrska", "vidObvrznik", "filingVariant"},
		"PddgiEmployee": {"embg", "bankAccount"},
		"EppdRow":       {"municipalityCode", "subtypeIncome", "bankAccount"},
		"Result":        {"hireDay", "leaveDay", "serviceDays"},
	}
	for name, props := range nullable {
		for _, p := range props {
			raw := string(s[name].Properties[p])
			if !strings.Contains(raw, `"null"`) {
				t.Errorf("%s.%s is not nullable: %s", name, p, raw)
			}
		}
	}
	for _, p := range []string{"salaryGross", "pension", "overtimeHours", "employee"} {
		if strings.Contains(string(s["Record"].Properties[p]), `"null"`) {
			t.Errorf("Record.%s is nullable; the spec does not say so", p)
		}
	}
}

// TestRates2027 (issue 16, defect 7): /v1/rates shows the carried 2026
// figures for 2027 and lists them as provisional with their sources.
func TestRates2027(t *testing.T) {
	t.Parallel()
	e := setup(t)
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/rates?date=2027-01-10", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rates struct {
		Rates       map[string]string
		Provisional []struct{ Key, Value, CarriedFrom, Source, Reason string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&rates); err != nil {
		t.Fatal(err)
	}
	if rates.Rates["personalAllowance"] != "10932" || rates.Rates["maxBase"] != "1106256" || len(rates.Provisional) != 4 {
		t.Fatalf("2027 rates %+v", rates)
	}
	for _, p := range rates.Provisional {
		if p.CarriedFrom != "2026-01-01" || p.Source == "" || p.Value != rates.Rates[p.Key] {
			t.Errorf("provisional %+v", p)
		}
	}
}

// TestExplainOverHTTP: ?explain=true adds the explanation to a result and
// to every result of a batch; without it there is none.
func TestExplainOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t)
	status, m, raw := e.post(t, "/v1/calculations?explain=true", `{"grossSalary":"30000"}`)
	ex, ok := m["explain"].(map[string]any)
	if status != 200 || !ok || len(ex["lines"].([]any)) < 10 {
		t.Fatalf("explain: %d %s", status, raw)
	}
	if _, m, _ := e.post(t, "/v1/calculations", `{"grossSalary":"30000"}`); m["explain"] != nil {
		t.Error("explain without asking")
	}
	status, m, raw = e.post(t, "/v1/calculations/batch?explain=true", `{"inputs":[{"grossSalary":"30000"},{"targetNet":"20533"}]}`)
	if status != 200 {
		t.Fatalf("batch: %d %s", status, raw)
	}
	for i, d := range m["data"].([]any) {
		if d.(map[string]any)["explain"] == nil {
			t.Errorf("batch item %d without explain", i)
		}
	}
	if status, _, _ := e.post(t, "/v1/calculations?explain=maybe", `{"grossSalary":"30000"}`); status != 422 {
		t.Errorf("explain=maybe: %d", status)
	}
}
