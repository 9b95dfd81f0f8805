package httpx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type thingBody struct {
	Name  string `json:"name" minLength:"1"`
	Panic bool   `json:"panic,omitempty"`
	Fail  bool   `json:"fail,omitempty"`
	Terms *struct {
		Days *int `json:"days,omitempty"`
	} `json:"terms,omitempty"`
	Counts []int8 `json:"counts,omitempty"`
}

type thingIn struct {
	Body thingBody
}

type thingOut struct {
	Location string `header:"Location"`
	Body     struct {
		ID      string `json:"id"`
		Name    string `json:"name"`
		Company string `json:"company"`
	}
}

// bench is a test service with one POST and one GET, counting executions.
type bench struct {
	db      *store.DB
	srv     *httptest.Server
	runs    atomic.Int64
	release chan struct{} // when non-nil, POST waits on it
	entered chan struct{}
}

func newBench(t *testing.T, db *store.DB, required bool, rl httpx.RateLimit) *bench {
	t.Helper()
	b := &bench{db: db}
	s := httpx.NewService(httpx.Options{
		Name: auth.ServiceEInvoice, Title: "test", Version: "1", Auth: &auth.Store{DB: db},
		Companies: auth.Employers{DB: db}, Idempotency: idempotency.New(db, 0), Ready: db.Ping,
		Log: slog.New(slog.DiscardHandler), IdempotencyRequired: required, RateLimit: rl, MaxBodyBytes: 1024,
		ServiceURLs: map[string]string{auth.ServicePayroll: "http://payroll.example:8080"},
	})
	httpx.Register(s, huma.Operation{OperationID: "createThing", Method: http.MethodPost, Path: "/v1/things", DefaultStatus: 201},
		httpx.Spec{Scope: "einvoices:write", Company: true},
		func(ctx context.Context, in *thingIn) (*thingOut, error) {
			if b.entered != nil {
				b.entered <- struct{}{}
			}
			if b.release != nil {
				<-b.release
			}
			if in.Body.Panic {
				panic("secret internals")
			}
			if in.Body.Fail {
				return nil, denar.Invalid(denar.FieldError{Path: "name", Message: "rejected"})
			}
			n := b.runs.Add(1)
			out := &thingOut{}
			out.Body.ID = denar.NewID("thg")
			out.Body.Name = in.Body.Name
			out.Body.Company = httpx.CompanyFrom(ctx)
			out.Location = "/v1/things/" + out.Body.ID
			_ = n
			return out, nil
		})
	b.srv = httptest.NewServer(s.Handler())
	t.Cleanup(b.srv.Close)
	return b
}

type fixture struct {
	account string
	key     string
}

func newAccount(t *testing.T, db *store.DB, plan string) fixture {
	t.Helper()
	a := &auth.Store{DB: db}
	acct, err := a.CreateAccount(context.Background(), "Test", plan)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := a.CreateKey(context.Background(), auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{account: acct.ID, key: key}
}

func addCompany(t *testing.T, db *store.DB, account string) string {
	t.Helper()
	id := denar.NewID("cmp")
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.CreateCompanyRecord(context.Background(), dbq.CreateCompanyRecordParams{ID: id, AccountID: account, Name: "Фирма", TaxNumber: "4030000000001", CreatedAt: tx.Now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) problem(t *testing.T) httpx.Problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type = %q, want application/problem+json; body %s", ct, r.body)
	}
	var p httpx.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	if p.Status != r.status || p.Instance == "" || p.Instance != r.header.Get("X-Request-Id") || !strings.HasSuffix(p.Type, "#"+p.Code) {
		t.Fatalf("malformed problem %s (status %d, request id %q)", r.body, r.status, r.header.Get("X-Request-Id"))
	}
	return p
}

func do(t *testing.T, url, method, path string, headers map[string]string, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAccount(t, db, "sandbox")
		b := newBench(t, db, true, httpx.RateLimit{})
		a := &auth.Store{DB: db}
		ctx := context.Background()
		payrollKeyRow, payrollKey, _ := a.CreateKey(ctx, auth.KeyParams{AccountID: f.account, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
		_ = payrollKeyRow
		revokedRow, revoked, _ := a.CreateKey(ctx, auth.KeyParams{AccountID: f.account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
		if err := a.RevokeKey(ctx, revokedRow.ID); err != nil {
			t.Fatal(err)
		}
		_, noScope, _ := a.CreateKey(ctx, auth.KeyParams{AccountID: f.account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox, Scopes: []string{"einvoices:read"}})
		_, prodKey, _ := a.CreateKey(ctx, auth.KeyParams{AccountID: f.account, Service: auth.ServiceEInvoice, Environment: auth.EnvProduction})

		// A key of the other service says where it belongs; an unknown
		// one does not.
		otherDetail := "This credential belongs to the payroll and filing service, which listens at http://payroll.example:8080; " +
			"this is the e-invoicing service."
		tests := []struct {
			name   string
			auth   string
			status int
			code   string
			detail string // a prefix of the detail, or "" for any but otherDetail
		}{
			{"missing", "", 401, "unauthenticated", ""},
			{"malformed", "Basic abc", 401, "unauthenticated", ""},
			{"empty bearer", "Bearer ", 401, "unauthenticated", ""},
			{"unknown", "Bearer dn_test_nope", 401, "unauthenticated", ""},
			{"other service", "Bearer " + payrollKey, 401, "unauthenticated", otherDetail},
			{"revoked", "Bearer " + revoked, 401, "key_revoked", ""},
			{"missing scope", "Bearer " + noScope, 403, "insufficient_scope", ""},
			{"production without plan", "Bearer " + prodKey, 403, "production_not_enabled", ""},
		}
		for _, tt := range tests {
			r := do(t, b.srv.URL, "POST", "/v1/things", map[string]string{"Authorization": tt.auth, "Idempotency-Key": "k-" + tt.name}, `{"name":"x"}`)
			if r.status != tt.status {
				t.Errorf("%s: status %d, want %d (%s)", tt.name, r.status, tt.status, r.body)
				continue
			}
			p := r.problem(t)
			if p.Code != tt.code {
				t.Errorf("%s: code %q, want %q", tt.name, p.Code, tt.code)
			}
			if tt.detail != "" && !strings.HasPrefix(p.Detail, tt.detail) || tt.detail == "" && strings.HasPrefix(p.Detail, otherDetail[:30]) {
				t.Errorf("%s: detail %q", tt.name, p.Detail)
			}
		}
		if b.runs.Load() != 0 {
			t.Errorf("handler ran %d times for rejected credentials", b.runs.Load())
		}
	})
}

func TestCompanyResolution(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAccount(t, db, "sandbox")
		b := newBench(t, db, false, httpx.RateLimit{})
		bearer := map[string]string{"Authorization": "Bearer " + f.key}
		if r := do(t, b.srv.URL, "POST", "/v1/things", bearer, `{"name":"none"}`); r.status != 201 {
			t.Fatalf("no companies: %d %s", r.status, r.body)
		}
		c1 := addCompany(t, db, f.account)
		r := do(t, b.srv.URL, "POST", "/v1/things", bearer, `{"name":"one"}`)
		if r.status != 201 || !bytes.Contains(r.body, []byte(c1)) {
			t.Fatalf("single company not used implicitly: %d %s", r.status, r.body)
		}
		c2 := addCompany(t, db, f.account)
		// A few companies are listed; more are to be looked up.
		r = do(t, b.srv.URL, "POST", "/v1/things", bearer, `{"name":"two"}`)
		if p := r.problem(t); r.status != 400 || p.Code != "company_required" || !strings.Contains(p.Detail, c1) || !strings.Contains(p.Detail, c2) {
			t.Fatalf("two companies without header: %d %s", r.status, r.body)
		}
		var more []string
		for range 4 {
			more = append(more, addCompany(t, db, f.account))
		}
		r = do(t, b.srv.URL, "POST", "/v1/things", bearer, `{"name":"six"}`)
		if p := r.problem(t); r.status != 400 || p.Code != "company_required" || !strings.Contains(p.Detail, "GET /v1/companies") || strings.Contains(p.Detail, more[3]) {
			t.Fatalf("six companies without header: %d %s", r.status, r.body)
		}
		with := map[string]string{"Authorization": "Bearer " + f.key, "X-Company-Id": c2}
		if r := do(t, b.srv.URL, "POST", "/v1/things", with, `{"name":"two"}`); r.status != 201 || !bytes.Contains(r.body, []byte(c2)) {
			t.Fatalf("named company: %d %s", r.status, r.body)
		}
		other := newAccount(t, db, "sandbox")
		foreign := addCompany(t, db, other.account)
		with["X-Company-Id"] = foreign
		if r := do(t, b.srv.URL, "POST", "/v1/things", with, `{"name":"x"}`); r.status != 403 || r.problem(t).Code != "company_not_allowed" {
			t.Fatalf("company of another account: %d %s", r.status, r.body)
		}
		_, limited, err := (&auth.Store{DB: db}).CreateKey(context.Background(), auth.KeyParams{AccountID: f.account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox, CompanyIDs: []string{c1}})
		if err != nil {
			t.Fatal(err)
		}
		lim := map[string]string{"Authorization": "Bearer " + limited, "X-Company-Id": c2}
		if r := do(t, b.srv.URL, "POST", "/v1/things", lim, `{"name":"x"}`); r.status != 403 || r.problem(t).Code != "company_not_allowed" {
			t.Fatalf("company outside allow-list: %d %s", r.status, r.body)
		}
		delete(lim, "X-Company-Id")
		if r := do(t, b.srv.URL, "POST", "/v1/things", lim, `{"name":"x"}`); r.status != 201 || !bytes.Contains(r.body, []byte(c1)) {
			t.Fatalf("allow-list of one company used implicitly: %d %s", r.status, r.body)
		}
	})
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAccount(t, db, "sandbox")
		b := newBench(t, db, true, httpx.RateLimit{})
		h := func(key string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + f.key, "Idempotency-Key": key}
		}
		if r := do(t, b.srv.URL, "POST", "/v1/things", map[string]string{"Authorization": "Bearer " + f.key}, `{"name":"a"}`); r.status != 400 || r.problem(t).Code != "idempotency_key_required" {
			t.Fatalf("missing key: %d %s", r.status, r.body)
		}
		first := do(t, b.srv.URL, "POST", "/v1/things", h("k1"), `{"name":"a"}`)
		if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %s", first.status, first.body)
		}
		// Same request, re-serialised with other white space and key order.
		again := do(t, b.srv.URL, "POST", "/v1/things", h("k1"), "{ \"name\" : \"a\" }")
		if again.status != 201 || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %q replayed=%q; want byte-equal to %q", again.status, again.body, again.header.Get("Idempotent-Replayed"), first.body)
		}
		if again.header.Get("Location") != first.header.Get("Location") || again.header.Get("Content-Type") != first.header.Get("Content-Type") {
			t.Errorf("replayed headers differ: %v vs %v", again.header, first.header)
		}
		if r := do(t, b.srv.URL, "POST", "/v1/things", h("k1"), `{"name":"b"}`); r.status != 409 || r.problem(t).Code != "idempotency_conflict" {
			t.Fatalf("conflict: %d %s", r.status, r.body)
		}
		if n := b.runs.Load(); n != 1 {
			t.Fatalf("handler ran %d times, want 1", n)
		}
		// A failed request releases its key; a corrected retry runs.
		if r := do(t, b.srv.URL, "POST", "/v1/things", h("k2"), `{"name":"a","fail":true}`); r.status != 422 {
			t.Fatalf("failing request: %d %s", r.status, r.body)
		}
		if r := do(t, b.srv.URL, "POST", "/v1/things", h("k2"), `{"name":"a"}`); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry after failure: %d %s", r.status, r.body)
		}
	})
}

// TestIdempotencyLargeResponse: an answer too large to store (a payroll
// file) is not kept under its key, which is released: the same request
// with the key runs again instead of being replayed; a small answer of the
// same operation is replayed.
func TestIdempotencyLargeResponse(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAccount(t, db, "sandbox")
		s := httpx.NewService(httpx.Options{
			Name: auth.ServiceEInvoice, Title: "test", Version: "1", Auth: &auth.Store{DB: db},
			Companies: auth.Employers{DB: db}, Idempotency: idempotency.New(db, 0), Ready: db.Ping,
			Log: slog.New(slog.DiscardHandler),
		})
		var runs atomic.Int64
		type blobOut struct {
			Body []byte
		}
		httpx.Register(s, huma.Operation{OperationID: "makeBlob", Method: http.MethodPost, Path: "/v1/blobs"}, httpx.Spec{},
			func(ctx context.Context, in *thingIn) (*blobOut, error) {
				runs.Add(1)
				n := 10
				if in.Body.Name == "large" {
					n = 5 << 20
				}
				return &blobOut{Body: bytes.Repeat([]byte("x"), n)}, nil
			})
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		h := func(key string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + f.key, "Idempotency-Key": key}
		}
		for range 2 {
			if r := do(t, srv.URL, "POST", "/v1/blobs", h("large"), `{"name":"large"}`); r.status != 200 || len(r.body) != 5<<20 || r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("large: %d, %d bytes, replayed %q", r.status, len(r.body), r.header.Get("Idempotent-Replayed"))
			}
		}
		if n := runs.Load(); n != 2 {
			t.Fatalf("the large request ran %d times, want 2 (not replayed)", n)
		}
		for i := range 2 {
			r := do(t, srv.URL, "POST", "/v1/blobs", h("small"), `{"name":"small"}`)
			if r.status != 200 || len(r.body) != 10 || (r.header.Get("Idempotent-Replayed") == "true") != (i == 1) {
				t.Fatalf("small #%d: %d, %d bytes, replayed %q", i, r.status, len(r.body), r.header.Get("Idempotent-Replayed"))
			}
		}
	})
}

// TestIdempotencyInProgress runs two service instances on two connections
// to one database, as two server processes would, and sends the same key
// to both while the first request is still running.
func TestIdempotencyInProgress(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { inProgress(t, storetest.SQLiteURL(t)) })
	t.Run("postgres", func(t *testing.T) { inProgress(t, storetest.PostgresURL(t)) })
}

func inProgress(t *testing.T, url string) {
	ctx := context.Background()
	open := func() *store.DB {
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return db
	}
	db1, db2 := open(), open()
	f := newAccount(t, db1, "sandbox")
	b1 := newBench(t, db1, true, httpx.RateLimit{})
	b2 := newBench(t, db2, true, httpx.RateLimit{})
	b1.release = make(chan struct{})
	b1.entered = make(chan struct{}, 1)
	h := map[string]string{"Authorization": "Bearer " + f.key, "Idempotency-Key": "slow"}
	var wg sync.WaitGroup
	var first reply
	wg.Go(func() { first = do(t, b1.srv.URL, "POST", "/v1/things", h, `{"name":"slow"}`) })
	select {
	case <-b1.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("first request never reached the handler")
	}
	second := do(t, b2.srv.URL, "POST", "/v1/things", h, `{"name":"slow"}`)
	if second.status != 409 || second.problem(t).Code != "idempotency_in_progress" {
		t.Fatalf("concurrent request on the other instance: %d %s", second.status, second.body)
	}
	close(b1.release)
	wg.Wait()
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	third := do(t, b2.srv.URL, "POST", "/v1/things", h, `{"name":"slow"}`)
	if third.status != 201 || !bytes.Equal(third.body, first.body) || third.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("after completion: %d %s", third.status, third.body)
	}
	if b1.runs.Load()+b2.runs.Load() != 1 {
		t.Fatalf("handler ran %d times", b1.runs.Load()+b2.runs.Load())
	}
}

func TestRequestProblems(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newAccount(t, db, "sandbox")
		b := newBench(t, db, false, httpx.RateLimit{})
		h := map[string]string{"Authorization": "Bearer " + f.key}
		tests := []struct {
			name, body string
			status     int
			code, path string
		}{
			{"malformed JSON", `{"name":`, 422, "validation_failed", ""},
			{"unknown field", `{"name":"a","colour":"red"}`, 422, "validation_failed", "colour"},
			{"schema violation", `{"name":""}`, 422, "validation_failed", "name"},
			// Valid by the schema (an integer) but beyond what the field
			// holds: encoding/json's error names Go types and no path.
			{"integer out of range", `{"name":"a","terms":{"days":100000000000000000000}}`, 422, "validation_failed", "terms.days"},
			{"integer out of range in an array", `{"name":"a","counts":[1,300]}`, 422, "validation_failed", "counts[1]"},
			{"too large", `{"name":"` + strings.Repeat("x", 2000) + `"}`, 413, "payload_too_large", ""},
			{"panic", `{"name":"a","panic":true}`, 500, "internal", ""},
		}
		for _, tt := range tests {
			r := do(t, b.srv.URL, "POST", "/v1/things", h, tt.body)
			if r.status != tt.status {
				t.Errorf("%s: status %d, want %d: %s", tt.name, r.status, tt.status, r.body)
				continue
			}
			p := r.problem(t)
			if p.Code != tt.code {
				t.Errorf("%s: code %q, want %q", tt.name, p.Code, tt.code)
			}
			if tt.path != "" && !strings.Contains(string(r.body), `"path":"`+tt.path) {
				t.Errorf("%s: no field error at %q: %s", tt.name, tt.path, r.body)
			}
			if strings.Contains(string(r.body), "Go struct") || strings.Contains(string(r.body), "of type int") || strings.Contains(string(r.body), `"path":"","message":"json:`) {
				t.Errorf("%s: Go decoding error leaked: %s", tt.name, r.body)
			}
			if tt.name == "malformed JSON" {
				// At the root with the byte offset, as the payroll
				// service's decoders say it too (jsontext.MalformedJSON).
				if len(p.Errors) != 1 || p.Errors[0].Path != "" || p.Errors[0].Message != "malformed JSON at byte 8: unexpected end of the body" {
					t.Errorf("malformed JSON: %s", r.body)
				}
			}
			if strings.Contains(string(r.body), "secret internals") {
				t.Errorf("%s: internals leaked: %s", tt.name, r.body)
			}
		}
	})
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	f := newAccount(t, db, "sandbox")
	b := newBench(t, db, false, httpx.RateLimit{Rate: 1, Burst: 2})
	h := map[string]string{"Authorization": "Bearer " + f.key}
	var limited reply
	for i := range 5 {
		r := do(t, b.srv.URL, "POST", "/v1/things", h, `{"name":"a"}`)
		if r.status == 429 {
			limited = r
			if i < 2 {
				t.Fatalf("limited after %d requests with a burst of 2", i)
			}
			break
		}
	}
	if limited.status != 429 || limited.problem(t).Code != "rate_limited" || limited.header.Get("Retry-After") == "" {
		t.Fatalf("no 429 with Retry-After: %d %v", limited.status, limited.header)
	}
}
