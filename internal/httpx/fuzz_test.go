package httpx_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func FuzzCursor(f *testing.F) {
	f.Add("", "")
	f.Add(httpx.EncodeCursor("cmp_06h064eqtns3s2qsfhb9rg4dz8", ""), "")
	f.Add(httpx.EncodeCursor("x", "status=queued"), "status=delivered")
	f.Add("eyJ2IjoxLCJhIjoiIn0", "")
	f.Add("!!!", "f")
	f.Fuzz(func(t *testing.T, s, filter string) {
		id, err := httpx.DecodeCursor(s, filter)
		if err == nil && s != "" && id == "" {
			t.Fatalf("cursor %q decoded to an empty id without error", s)
		}
		if s == "" || err != nil {
			return
		}
		// A cursor that decodes must encode back to one that decodes the same.
		again, err := httpx.DecodeCursor(httpx.EncodeCursor(id, filter), filter)
		if err != nil || again != id {
			t.Fatalf("round trip of %q: %q, %v", id, again, err)
		}
	})
}

type fuzzBody struct {
	Name   string            `json:"name" minLength:"1" maxLength:"50"`
	Amount string            `json:"amount,omitempty" pattern:"^[0-9]+(\\.[0-9]{1,2})?$"`
	Lines  []fuzzLine        `json:"lines,omitempty" maxItems:"5"`
	Tags   map[string]string `json:"tags,omitempty"`
}

type fuzzLine struct {
	Qty float64 `json:"qty" minimum:"0"`
}

// FuzzRequestBody sends arbitrary bodies through the whole decoding path
// (authentication, idempotency, huma's schema validation, the handler) and
// checks that the answer is never a 5xx and always a problem when not 2xx.
func FuzzRequestBody(f *testing.F) {
	db := storetest.SQLite(f)
	a := &auth.Store{DB: db}
	acct, err := a.CreateAccount(context.Background(), "fuzz", "sandbox")
	if err != nil {
		f.Fatal(err)
	}
	_, key, err := a.CreateKey(context.Background(), auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
	if err != nil {
		f.Fatal(err)
	}
	s := httpx.NewService(httpx.Options{Name: auth.ServiceEInvoice, Title: "fuzz", Version: "1", Auth: a, Idempotency: idempotency.New(db, 0), Log: slog.New(slog.DiscardHandler), MaxBodyBytes: 4096})
	httpx.Register(s, huma.Operation{OperationID: "fuzz", Method: http.MethodPost, Path: "/v1/fuzz"}, httpx.Spec{},
		func(ctx context.Context, in *struct{ Body fuzzBody }) (*struct{ Body fuzzBody }, error) {
			return &struct{ Body fuzzBody }{Body: in.Body}, nil
		})
	h := s.Handler()
	for _, seed := range []string{`{"name":"a"}`, `{"name":"a","amount":"1.50","lines":[{"qty":1}]}`, `{`, `[]`, `null`, `{"name":1}`, "\x00", `{"name":"a","tags":{"x":"y"}}`, `{"lines":[{"qty":-1}]}`} {
		f.Add(seed, "k")
	}
	f.Fuzz(func(t *testing.T, body, idem string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/fuzz", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if idem != "" && !strings.ContainsAny(idem, "\r\n\x00") {
			req.Header.Set("Idempotency-Key", idem)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body.String())
		}
		if rec.Code >= 400 && rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("body %q: status %d with content type %q", body, rec.Code, rec.Header().Get("Content-Type"))
		}
	})
}
