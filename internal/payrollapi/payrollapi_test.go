package payrollapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/payrollapi"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type env struct {
	url string
	key string
}

func setup(t testing.TB) env {
	t.Helper()
	db := storetest.SQLite(t)
	a := &auth.Store{DB: db}
	acct, err := a.CreateAccount(context.Background(), "Биро", "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := a.CreateKey(context.Background(), auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
	if err != nil {
		t.Fatal(err)
	}
	s := payrollapi.New(payrollapi.Deps{Auth: a, Companies: auth.Employers{DB: db}, Idempotency: idempotency.New(db, 0), Log: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return env{url: srv.URL, key: key}
}

func (e env) post(t testing.TB, path, body string) (int, map[string]any, []byte) {
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
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m, b
}

func TestCalculationOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t)
	status, m, body := e.post(t, "/v1/calculations", `{"grossSalary":"30000"}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	// R5 with the rates in force on 2026-11-22.
	for k, v := range map[string]string{"pension": "5970", "health": "2250", "additionalHealth": "150", "employmentContrib": "30",
		"totalContributions": "8400", "personalAllowance": "10932", "taxableIncome": "10668", "pit": "1067", "salaryNet": "20533",
		"nightPay": "0", "pensionTopUp": "0"} {
		if m[k] != v {
			t.Errorf("%s = %v, want %q", k, m[k], v)
		}
	}
	if m["workingHours"] != float64(176) {
		t.Errorf("workingHours = %v", m["workingHours"])
	}
	status, m, body = e.post(t, "/v1/calculations", `{"grossSalary":"-1","overtimeHours":-2,"colour":"red"}`)
	if status != 422 || m["code"] != "validation_failed" {
		t.Fatalf("invalid input: %d %s", status, body)
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var inputs []string
	for i := range 500 {
		inputs = append(inputs, fmt.Sprintf(`{"grossSalary":"%d","effectiveDate":"2026-01-15"}`, 30000+i))
	}
	status, m, body := e.post(t, "/v1/calculations/batch", `{"inputs":[`+strings.Join(inputs, ",")+`]}`)
	if status != 200 {
		t.Fatalf("500 inputs: %d %s", status, body[:min(len(body), 300)])
	}
	data := m["data"].([]any)
	if len(data) != 500 || data[7].(map[string]any)["salaryGross"] != "30007" {
		t.Fatalf("results out of order or missing")
	}
	status, _, _ = e.post(t, "/v1/calculations/batch", `{"inputs":[`+strings.Join(append(inputs, inputs[0]), ",")+`]}`)
	if status != 422 {
		t.Fatalf("501 inputs: %d", status)
	}
	bad := append([]string{}, inputs[:10]...)
	bad[7] = `{"grossSalary":"abc"}`
	status, _, body = e.post(t, "/v1/calculations/batch", `{"inputs":[`+strings.Join(bad, ",")+`]}`)
	if status != 422 || !bytes.Contains(body, []byte(`"path":"inputs[7].grossSalary"`)) {
		t.Fatalf("invalid input 7: %d %s", status, body)
	}
}

func TestConvertAndRates(t *testing.T) {
	t.Parallel()
	e := setup(t)
	status, m, body := e.post(t, "/v1/calculations/convert", `{"net":"50000","effectiveDate":"2025-06-15"}`)
	if status != 200 || m["gross"] != "75575" || m["net"] != "50000" || m["effectiveDate"] != "2025-06-15" {
		t.Fatalf("convert net: %d %s", status, body)
	}
	status, m, _ = e.post(t, "/v1/calculations/convert", `{"gross":"11111","contractor":true}`)
	if status != 200 || m["net"] != "10000" {
		t.Fatalf("convert contractor: %d %v", status, m)
	}
	if status, _, _ := e.post(t, "/v1/calculations/convert", `{"gross":"1","net":"1"}`); status != 422 {
		t.Fatalf("both gross and net: %d", status)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/v1/rates?date=2026-07-01", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rates struct {
		EffectiveDate string
		Rates         map[string]string
	}
	_ = json.NewDecoder(resp.Body).Decode(&rates)
	resp.Body.Close()
	if rates.Rates["pension"] != "19.9" || rates.Rates["employment"] != "0.1" || rates.Rates["personalAllowance"] != "10932" {
		t.Fatalf("rates on 2026-07-01: %+v", rates)
	}
}

// BenchmarkBatch500 is one 500-input batch over HTTP on loopback.
func BenchmarkBatch500(b *testing.B) {
	e := setup(b)
	var inputs []string
	for i := range 500 {
		inputs = append(inputs, fmt.Sprintf(`{"grossSalary":"%d","overtimeHours":4}`, 30000+i*7))
	}
	body := `{"inputs":[` + strings.Join(inputs, ",") + `]}`
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/calculations/batch", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.StatusCode)
		}
	}
}

// TestWorkedExamplesOverHTTP repeats research §5 through the API.
func TestWorkedExamplesOverHTTP(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tests := []struct{ body, field, want string }{
		{`{"grossSalary":"36037","effectiveDate":"2026-01-15"}`, "pit", "1501"},
		{`{"grossSalary":"36037","effectiveDate":"2026-01-15"}`, "salaryNet", "24445"},
		{`{"grossSalary":"21776","effectiveDate":"2020-06-15"}`, "salaryNet", "14934"},
		{`{"grossSalary":"26422","effectiveDate":"2022-06-15"}`, "salaryNet", "18000"},
		{`{"grossSalary":"38507","effectiveDate":"2026-05-15"}`, "salaryNet", "26046"},
		{`{"grossSalary":"1200000","effectiveDate":"2025-06-15"}`, "salaryNet", "826390"},
		{`{"grossSalary":"63154","effectiveDate":"2025-06-15"}`, "salaryNet", "41951"},
		{`{"targetNet":"50000","effectiveDate":"2025-06-15"}`, "salaryGross", "75575"},
		{`{"targetNet":"26046","effectiveDate":"2026-05-15"}`, "salaryGross", "38507"},
		{`{"grossSalary":"11111","contractor":true}`, "salaryNet", "10000"},
	}
	for _, tt := range tests {
		status, m, body := e.post(t, "/v1/calculations", tt.body)
		if status != 200 || m[tt.field] != tt.want {
			t.Errorf("%s: %s = %v, want %s (%d %s)", tt.body, tt.field, m[tt.field], tt.want, status, body)
		}
	}
	status, m, body := e.post(t, "/v1/calculations", `{"grossSalary":"30000","effectiveDate":"2024-03-01"}`)
	if status != 422 || !bytes.Contains(body, []byte(`"path":"averageSalary"`)) {
		t.Fatalf("2024 without averageSalary: %d %v", status, m)
	}
}
