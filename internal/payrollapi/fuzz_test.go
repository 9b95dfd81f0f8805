package payrollapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/payrollapi"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// FuzzEndpoints sends arbitrary bodies to every POST of the payroll
// service: the answer is never a 5xx, and always a problem when not 2xx.
func FuzzEndpoints(f *testing.F) {
	db := storetest.SQLite(f)
	a := &auth.Store{DB: db}
	acct, err := a.CreateAccount(context.Background(), "fuzz", "sandbox")
	if err != nil {
		f.Fatal(err)
	}
	_, key, err := a.CreateKey(context.Background(), auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
	if err != nil {
		f.Fatal(err)
	}
	h := payrollapi.New(payrollapi.Deps{Auth: a, Companies: auth.Employers{DB: db}, Idempotency: idempotency.New(db, 0), Log: slog.New(slog.DiscardHandler)}).Handler()
	paths := []string{"/v1/calculations", "/v1/calculations/batch", "/v1/calculations/convert", "/v1/files/mpin/validate",
		"/v1/files/mpin/xml", "/v1/files/mpin/txt", "/v1/files/mpin/txt/combined", "/v1/files/pddgi", "/v1/files/epdd", "/v1/files/epdd/gross-from-net"}
	for i, seed := range []string{`{"grossSalary":"30000"}`, `{"inputs":[{"targetNet":"1"}]}`, `{"net":"1"}`,
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"records":[{"salaryGross":"1","employee":{"firstName":"a","lastName":"b"}}]}`,
		`{"company":{"name":"x"},"batch":{"periodMonth":5,"periodYear":2026},"batches":[{"records":[]}]}`,
		`{"company":{"name":"x"},"month":1,"year":2026,"records":[{"salaryGross":"1","employee":{"firstName":"a","lastName":"b"}}]}`,
		`{"issuer":{"edb":"1","name":"x"},"periodFrom":"2026-01-01","periodTo":"2026-01-31","rows":[]}`, `{"net":"10000"}`} {
		f.Add(uint8(i), seed)
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		path := paths[int(which)%len(paths)]
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", path, body, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 && rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s %q: %d with %q", path, body, rec.Code, rec.Header().Get("Content-Type"))
		}
	})
}
