package payrollapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/jsontext"
)

func validEMBG(prefix string) string {
	for k := '0'; k <= '9'; k++ {
		if ident.EMBG(prefix+string(k)) == nil {
			return prefix + string(k)
		}
	}
	panic("no check digit")
}

func validAccount(prefix string) string {
	c, err := ident.BankAccountCheckDigits(prefix)
	if err != nil {
		panic(err)
	}
	return prefix + c
}

func (e env) postRaw(t *testing.T, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// mpinBody builds an МПИН request whose one record is the payroll engine's
// result for gross 36,037 in May 2026, as a client would pass it on.
func mpinBody(t *testing.T, e env, force bool) string {
	t.Helper()
	status, calc, body := e.post(t, "/v1/calculations", `{"grossSalary":"36037","effectiveDate":"2026-05-15","workingHours":152}`)
	if status != 200 {
		t.Fatalf("calculation: %d %s", status, body)
	}
	record := map[string]any{
		"employee": map[string]any{"firstName": "Ана", "lastName": "Ангеловска", "embg": validEMBG("010199045001"),
			"bankAccount": validAccount("3000000001234"), "municipalityCode": "182"},
		"workingHours": 152,
	}
	for _, k := range []string{"salaryGross", "salaryNet", "pension", "health", "additionalHealth", "employmentContrib", "pit", "personalAllowance"} {
		record[k] = calc[k]
	}
	req := map[string]any{
		"company": map[string]any{"name": "Дизајнија ДООЕЛ", "taxId": "4030990123455", "city": "Скопје", "municipalityCode": "182"},
		"batch":   map[string]any{"periodMonth": 5, "periodYear": 2026, "workingHours": 152},
		"records": []any{record},
		"force":   force,
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// TestEngineIntoMPIN feeds a calculation result straight into validate and
// the generators: the checks find no error.
func TestEngineIntoMPIN(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := mpinBody(t, e, false)
	status, v, raw := e.post(t, "/v1/files/mpin/validate", body)
	if status != 200 || v["ok"] != true {
		t.Fatalf("validate: %d %s", status, raw)
	}
	for _, is := range v["issues"].([]any) {
		if is.(map[string]any)["severity"] == "error" {
			t.Errorf("blocking issue: %v", is)
		}
	}
	resp, xml := e.postRaw(t, "/v1/files/mpin/xml", body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml; charset=utf-8" ||
		!bytes.Contains(xml, []byte("<BrutoIznosVk>36037</BrutoIznosVk>")) {
		t.Fatalf("xml: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), xml)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, "_2026_05_101.xml") {
		t.Errorf("Content-Disposition %q", cd)
	}
	resp, txt := e.postRaw(t, "/v1/files/mpin/txt", body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-16le" || !bytes.HasPrefix(txt, []byte{0xFF, 0xFE}) {
		t.Fatalf("txt: %d %q % x", resp.StatusCode, resp.Header.Get("Content-Type"), txt[:min(4, len(txt))])
	}
}

func TestMPINBlocking(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := strings.Replace(mpinBody(t, e, false), `"pension":"6775"`, `"pension":"7000"`, 1)
	status, p, raw := e.post(t, "/v1/files/mpin/xml", body)
	if status != 422 || p["code"] != "mpin_validation_failed" || !bytes.Contains(raw, []byte(`"issues"`)) {
		t.Fatalf("blocking: %d %s", status, raw)
	}
	forced := strings.Replace(body, `"force":false`, `"force":true`, 1)
	if resp, _ := e.postRaw(t, "/v1/files/mpin/xml", forced); resp.StatusCode != 200 {
		t.Fatalf("forced: %d", resp.StatusCode)
	}
	status, _, raw = e.post(t, "/v1/files/mpin/validate", `{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":[],"colour":1}`)
	if status != 422 || !bytes.Contains(raw, []byte(`"path":"colour"`)) {
		t.Fatalf("unknown field: %d %s", status, raw)
	}
}

func TestGrossFromNet(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, tt := range []struct{ body, gross, pit string }{
		{`{"net":"10000"}`, "11111", "1111"},
		{`{"net":"10000","subtypeIncome":"13.2"}`, "10695", "695"},
	} {
		status, m, raw := e.post(t, "/v1/files/epdd/gross-from-net", tt.body)
		if status != 200 || !strings.HasPrefix(fmt.Sprint(m["gross"]), tt.gross) || !strings.HasPrefix(fmt.Sprint(m["pit"]), tt.pit) {
			t.Errorf("%s: %d %s", tt.body, status, raw)
		}
	}
}

// problemAt is the message of the problem's field error at path.
func problemAt(p map[string]any, path string) (string, bool) {
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		if m, _ := e.(map[string]any); m["path"] == path {
			msg, _ := m["message"].(string)
			return msg, true
		}
	}
	return "", false
}

// TestFilesRefuseMoneyOverCap: every file endpoint refuses a money input
// above the 1,000,000,000 denars of docs/payroll.md ("Limits") as the
// calculations do (validation_failed, the field's path, the same words),
// force or not; nothing is clamped into the file.
func TestFilesRefuseMoneyOverCap(t *testing.T) {
	t.Parallel()
	e := setup(t)
	status, calc, raw := e.post(t, "/v1/calculations", `{"grossSalary":"1000000000.01"}`)
	want, _ := problemAt(calc, "grossSalary")
	if status != 422 || calc["code"] != "validation_failed" || want == "" {
		t.Fatalf("calculation over the cap: %d %s", status, raw)
	}
	mpin := strings.Replace(mpinBody(t, e, true), `"salaryGross":"36037"`, `"salaryGross":"9999999999999999999999999"`, 1)
	if !strings.Contains(mpin, "9999999999999999999999999") {
		t.Fatal("the МПИН body has no salaryGross 36037")
	}
	var req map[string]any
	if err := json.Unmarshal([]byte(mpin), &req); err != nil {
		t.Fatal(err)
	}
	req["batches"] = []any{map[string]any{"records": []any{}}, map[string]any{"records": req["records"]}}
	delete(req, "records")
	combinedJSON, _ := json.Marshal(req)
	combined := string(combinedJSON)
	const person = `"employee":{"embg":"1505985412349","firstName":"Ана","lastName":"Ангеловска"}`
	for _, tt := range []struct{ path, body, field string }{
		{"/v1/files/mpin/xml", mpin, "records[0].salaryGross"},
		{"/v1/files/mpin/txt", mpin, "records[0].salaryGross"},
		{"/v1/files/mpin/validate", mpin, "records[0].salaryGross"},
		{"/v1/files/mpin/txt/combined", combined, "batches[1].records[0].salaryGross"},
		{"/v1/files/pddgi", `{"company":{"name":"Д","taxId":"4030990123455"},"month":10,"year":2026,"records":[{"salaryGross":"99999999999999999999",` + person + `}]}`,
			"records[0].salaryGross"},
		{"/v1/files/epdd", `{"issuer":{"edb":"4030990123455","name":"Д"},"periodFrom":"2026-10-01","periodTo":"2026-10-31","rows":[{"embg":"1505985412349","firstName":"Ана","lastName":"Ангеловска","grossIncome":"` +
			strings.Repeat("9", 40) + `"}]}`, "rows[0].grossIncome"},
		{"/v1/files/epdd/gross-from-net", `{"net":"1000000000.01"}`, "net"},
	} {
		status, p, raw := e.post(t, tt.path, tt.body)
		msg, _ := problemAt(p, tt.field)
		if status != 422 || p["code"] != "validation_failed" || msg != want {
			t.Errorf("%s: %d %s; want 422 validation_failed %q at %s", tt.path, status, raw, want, tt.field)
		}
		if bytes.Contains(raw, []byte("9223372036854775807")) {
			t.Errorf("%s: a clamped figure: %s", tt.path, raw)
		}
	}
}

// TestFilesRefuseControlCharacters: a control character XML cannot carry
// (U+0001, a vertical tab) in a name of a file request is a field error at
// its path, not a file that no XML parser reads.
func TestFilesRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const person = `"employee":{"embg":"1505985412349","firstName":"Ана","lastName":"Ангеловска"}`
	for _, tt := range []struct{ path, body, field string }{
		{"/v1/files/epdd", `{"issuer":{"edb":"4030990123455","name":"a\u0001b"},"periodFrom":"2026-10-01","periodTo":"2026-10-31","rows":[{"embg":"1505985412349","firstName":"Ана","lastName":"Ангеловска","grossIncome":"1000"}]}`,
			"issuer.name"},
		{"/v1/files/pddgi", `{"company":{"name":"Д","taxId":"4030990123455","contactPerson":"a\u000bb"},"month":10,"year":2026,"records":[{"salaryGross":"30000",` + person + `}]}`,
			"company.contactPerson"},
		{"/v1/files/mpin/xml", strings.Replace(mpinBody(t, e, true), `"firstName":"`, `"firstName":"\f`, 1), "records[0].employee.firstName"},
	} {
		status, p, raw := e.post(t, tt.path, tt.body)
		if msg, _ := problemAt(p, tt.field); status != 422 || msg != jsontext.ControlCharMessage {
			t.Errorf("%s: %d %s; want 422 at %s", tt.path, status, raw, tt.field)
		}
	}
}

// TestMpinCheckSaysProvisional: a filing for a month whose figures are
// not published yet is checked on the carried ones and says so.
func TestMpinCheckSaysProvisional(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := strings.Replace(mpinBody(t, e, true), `"periodYear":2026`, `"periodYear":2027`, 1)
	if !strings.Contains(body, `"periodYear":2027`) {
		t.Fatal("the МПИН body has no periodYear 2026")
	}
	status, res, raw := e.post(t, "/v1/files/mpin/validate", body)
	issues, _ := res["issues"].([]any)
	found := false
	for _, is := range issues {
		m := is.(map[string]any)
		found = found || (m["code"] == "provisional_figure" && m["severity"] == "warning" && strings.Contains(m["message"].(string), "personalAllowance"))
	}
	if status != 200 || !found {
		t.Errorf("%d %s; want a provisional_figure warning naming personalAllowance", status, raw)
	}
}
