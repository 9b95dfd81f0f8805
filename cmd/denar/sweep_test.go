package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/caarlos0/env/v11"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestBadBytesSweep walks every operation of both OpenAPI documents, as the
// running services render them, and sends each what a hostile client would:
// NUL, invalid UTF-8 and a string one character over its maxLength in every
// string of the body (at any depth) and in every query, path and header
// parameter; a wrong JSON type in every field; nesting 10,000 levels deep;
// a body one byte over the operation's x-body-limit. On both stores, with
// valid credentials so that the requests get past authentication: never a
// 5xx; every 4xx a problem+json with a code (the OAuth token endpoint
// answers RFC 6749 JSON, as documented); every 422 naming a path; and the
// bad string reported at its own path. Then the credential parsers: Bearer,
// Agent and OAuth client credentials with such bytes are refused without a
// 5xx. (NUL and other control bytes in a header never reach a handler:
// net/http refuses the request line by itself, so they are not sent here.)
func TestBadBytesSweep(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newSweepWorld(t, db)
		total := 0
		for _, svc := range []*sweepService{w.payroll, w.einvoice} {
			for _, op := range svc.operations(t) {
				total += w.sweepOperation(t, svc, op)
			}
		}
		total += w.sweepCredentials(t)
		t.Logf("%d requests, none a 5xx", total)
	})
}

type sweepService struct {
	name string
	url  string
	doc  map[string]any
}

type sweepWorld struct {
	payroll, einvoice *sweepService
	payrollKey        string
	einvoiceKey       string
	agentAuth         string
	seq               int
	// The companies sent as X-Company-Id: the sweep onboards companies
	// of its own (POST /v1/companies with sample bodies), after which the
	// credential reaches several.
	employer, company string
}

func newSweepWorld(t *testing.T, db *store.DB) *sweepWorld {
	t.Helper()
	cfg := packageDefaults()
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: map[string]string{
		"DENAR_DATA_DIR": t.TempDir(), "DENAR_RATE_LIMIT_RPS": "0", "DENAR_RATE_LIMIT_ADDR_RPS": "0", "DENAR_UJP_SIM_TOKEN": "sweep"}}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	reg, err := newRegistry(cfg, log, db)
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blobStore(t.Context(), cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := auth.NewSecretBox(mustSecretKey(t))
	if err != nil {
		t.Fatal(err)
	}
	payroll, einvoice, _ := services(db, cfg, log, &reg, blobs, secrets)
	w := &sweepWorld{}
	for _, s := range []struct {
		dst  **sweepService
		name string
		h    http.Handler
		doc  func() ([]byte, error)
	}{{&w.payroll, "payroll", payroll.Handler(), payroll.OpenAPIJSON}, {&w.einvoice, "einvoice", einvoice.Handler(), einvoice.OpenAPIJSON}} {
		srv := httptest.NewServer(s.h)
		t.Cleanup(srv.Close)
		raw, err := s.doc()
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		*s.dst = &sweepService{name: s.name, url: srv.URL, doc: doc}
	}

	ctx := t.Context()
	as := &auth.Store{DB: db}
	acct, err := as.CreateAccount(ctx, "Sweep", "")
	if err != nil {
		t.Fatal(err)
	}
	// One employer and one e-invoicing company: X-Company-Id resolves
	// without the header, so requests get as far as they can.
	err = db.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.CreateCompanyRecord(ctx, dbq.CreateCompanyRecordParams{ID: denar.NewID("cmp"), AccountID: acct.ID,
			Name: "Работодавач ДООЕЛ", TaxNumber: "4030000000010", CreatedAt: tx.Now})
		if err != nil {
			return err
		}
		c, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: acct.ID, Name: "Тест ДООЕЛ",
			TaxNumber: "4030000000001", Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox, Address: "{}", CreatedAt: tx.Now})
		w.employer, w.company = e.ID, c.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, w.payrollKey, err = as.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox}); err != nil {
		t.Fatal(err)
	}
	if _, w.einvoiceKey, err = as.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox,
		Scopes: auth.EInvoiceScopes}); err != nil {
		t.Fatal(err)
	}
	st, body := w.send(t, w.einvoice, "POST", "/v1/agents/pairing-codes", "Bearer "+w.einvoiceKey, nil, nil)
	var pc struct{ Code string }
	if err := json.Unmarshal(body, &pc); err != nil || st != 201 {
		t.Fatalf("pairing code: %d %s", st, body)
	}
	st, body = w.send(t, w.einvoice, "POST", "/v1/agents/pair", "", nil, []byte(`{"code":"`+pc.Code+`","name":"sweep"}`))
	var ag struct{ AgentID, AgentSecret string }
	if err := json.Unmarshal(body, &ag); err != nil || st != 201 {
		t.Fatalf("pair: %d %s", st, body)
	}
	w.agentAuth = "Agent " + ag.AgentID + "." + ag.AgentSecret
	return w
}

// sweepOp is one operation of a document.
type sweepOp struct {
	method, path string
	op           map[string]any
}

func (s *sweepService) operations(t *testing.T) []sweepOp {
	paths, _ := s.doc["paths"].(map[string]any)
	var out []sweepOp
	for p, item := range paths {
		for m, op := range item.(map[string]any) {
			if o, ok := op.(map[string]any); ok && o["responses"] != nil {
				out = append(out, sweepOp{strings.ToUpper(m), p, o})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	if len(out) < 5 {
		t.Fatalf("%s: only %d operations in the document", s.name, len(out))
	}
	return out
}

// leaf is a scalar of a sample body, with its path and schema.
type leaf struct {
	path   []any // string keys, int indexes
	schema map[string]any
}

func pathString(p []any) string {
	var b strings.Builder
	for _, e := range p {
		switch v := e.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(v)
		case int:
			b.WriteString("[" + strconv.Itoa(v) + "]")
		}
	}
	return b.String()
}

// resolve follows a $ref into components.schemas.
func (s *sweepService) resolve(sc map[string]any) map[string]any {
	for depth := 0; depth < 10; depth++ {
		ref, ok := sc["$ref"].(string)
		if !ok {
			return sc
		}
		name := ref[strings.LastIndex(ref, "/")+1:]
		sc, _ = s.doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	}
	return sc
}

func schemaType(sc map[string]any) string {
	switch t := sc["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return x.(string)
			}
		}
	}
	return ""
}

// sample builds a value of schema sc with every property present, and
// lists its scalars.
func (s *sweepService) sample(sc map[string]any, path []any, leaves *[]leaf, depth int) any {
	sc = s.resolve(sc)
	if sc == nil || depth > 8 {
		return nil
	}
	if enum, ok := sc["enum"].([]any); ok && len(enum) > 0 {
		*leaves = append(*leaves, leaf{slices.Clone(path), sc})
		return enum[0]
	}
	switch schemaType(sc) {
	case "object":
		m := map[string]any{}
		props, _ := sc["properties"].(map[string]any)
		for k, p := range props {
			m[k] = s.sample(p.(map[string]any), append(slices.Clone(path), k), leaves, depth+1)
		}
		return m
	case "array":
		items, _ := sc["items"].(map[string]any)
		return []any{s.sample(items, append(slices.Clone(path), 0), leaves, depth+1)}
	case "string":
		*leaves = append(*leaves, leaf{slices.Clone(path), sc})
		switch sc["format"] {
		case "date":
			return "2026-01-15"
		case "date-time":
			return "2026-01-15T10:00:00Z"
		}
		n := 1
		if m, ok := sc["minLength"].(float64); ok && int(m) > n {
			n = int(m)
		}
		return strings.Repeat("1", n)
	case "integer", "number":
		*leaves = append(*leaves, leaf{slices.Clone(path), sc})
		if m, ok := sc["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		*leaves = append(*leaves, leaf{slices.Clone(path), sc})
		return false
	}
	return nil
}

// set returns a copy of v with the value at path replaced.
func set(v any, path []any, nv any) any {
	if len(path) == 0 {
		return nv
	}
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, x := range c {
			out[k] = x
		}
		k := path[0].(string)
		out[k] = set(c[k], path[1:], nv)
		return out
	case []any:
		out := slices.Clone(c)
		i := path[0].(int)
		out[i] = set(c[i], path[1:], nv)
		return out
	}
	return v
}

const badUTF8Marker = "INVALID-UTF8-MARKER"

func (w *sweepWorld) authFor(svc *sweepService, op map[string]any) string {
	sec, _ := op["security"].([]any)
	if len(sec) == 0 {
		return ""
	}
	first, _ := sec[0].(map[string]any)
	if _, ok := first["agent"]; ok {
		return w.agentAuth
	}
	if svc == w.payroll {
		return "Bearer " + w.payrollKey
	}
	return "Bearer " + w.einvoiceKey
}

// send makes one request; it never fails on a status, only on transport.
func (w *sweepWorld) send(t *testing.T, svc *sweepService, method, path, authz string, headers map[string]string, body []byte) (int, []byte) {
	t.Helper()
	st, _, b := w.sendCT(t, svc, method, path, authz, headers, body)
	return st, b
}

func (w *sweepWorld) sendCT(t *testing.T, svc *sweepService, method, path, authz string, headers map[string]string, body []byte) (int, string, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, svc.url+path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	if method == "POST" {
		w.seq++
		req.Header.Set("Idempotency-Key", "sweep-"+strconv.Itoa(w.seq))
	}
	if w.employer != "" && strings.HasPrefix(authz, "Bearer ") {
		if svc == w.payroll {
			req.Header.Set("X-Company-Id", w.employer)
		} else {
			req.Header.Set("X-Company-Id", w.company)
		}
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

type sweepProblem struct {
	Code   string
	Errors []struct {
		Path    *string // "" is the body itself (docs/errors.md)
		Message string
	}
}

// check applies the rules every answer must follow and returns the problem
// (nil for a success). wantPath, when set, must be among the error paths.
func check(t *testing.T, what string, status int, ct string, body []byte, oauth bool, wantPath string) *sweepProblem {
	t.Helper()
	if status >= 500 {
		t.Errorf("%s: %d %s", what, status, body)
		return nil
	}
	if status < 400 {
		if wantPath != "" {
			t.Errorf("%s: %d, want 422 at %s", what, status, wantPath)
		}
		return nil
	}
	if oauth && !strings.HasPrefix(ct, "application/problem+json") {
		// RFC 6749 JSON; limits met before the endpoint (413) are problems.
		if !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s: OAuth error without error member: %d %s", what, status, body)
		}
		return nil
	}
	var p sweepProblem
	if !strings.HasPrefix(ct, "application/problem+json") || json.Unmarshal(body, &p) != nil || p.Code == "" {
		t.Errorf("%s: %d %q is not a problem with a code: %.300s", what, status, ct, body)
		return nil
	}
	if p.Code == denar.ECodeValidation {
		if len(p.Errors) == 0 {
			t.Errorf("%s: validation_failed without errors: %s", what, body)
		}
		for _, e := range p.Errors {
			if e.Path == nil {
				t.Errorf("%s: a field error without a path: %s", what, body)
			}
		}
	}
	if wantPath != "" {
		found := false
		for _, e := range p.Errors {
			found = found || (e.Path != nil && *e.Path == wantPath)
		}
		if status != 422 || !found {
			t.Errorf("%s: %d %.400s, want 422 with an error at %s", what, status, body, wantPath)
		}
	}
	return &p
}

// sweepOperation sends an operation every bad request and returns how many.
func (w *sweepWorld) sweepOperation(t *testing.T, svc *sweepService, o sweepOp) int {
	t.Helper()
	n := 0
	authz := w.authFor(svc, o.op)
	oauth := o.path == "/v1/oauth/token"
	var pathParams, queryParams, headerParams []string
	params, _ := o.op["parameters"].([]any)
	for _, p := range params {
		pm := p.(map[string]any)
		switch pm["in"] {
		case "path":
			pathParams = append(pathParams, pm["name"].(string))
		case "query":
			queryParams = append(queryParams, pm["name"].(string))
		case "header":
			if pm["name"] != "Idempotency-Key" {
				headerParams = append(headerParams, pm["name"].(string))
			}
		}
	}
	fill := func(bad string, which string) string {
		p := o.path
		for _, name := range pathParams {
			v := "x"
			if name == which {
				v = url.PathEscape(bad)
			}
			p = strings.ReplaceAll(p, "{"+name+"}", v)
		}
		return p
	}
	label := svc.name + " " + o.method + " " + o.path
	for _, bad := range []struct{ name, v string }{{"NUL", "a\x00b"}, {"invalid UTF-8", "a\xffb"}} {
		for _, name := range pathParams {
			st, ct, b := w.sendCT(t, svc, o.method, fill(bad.v, name), authz, nil, w.bodyFor(svc, o))
			check(t, label+" path "+name+" "+bad.name, st, ct, b, oauth, "path."+name)
			n++
		}
		for _, name := range queryParams {
			st, ct, b := w.sendCT(t, svc, o.method, fill("", "")+"?"+url.QueryEscape(name)+"="+url.QueryEscape(bad.v), authz, nil, w.bodyFor(svc, o))
			check(t, label+" query "+name+" "+bad.name, st, ct, b, oauth, "query."+name)
			n++
		}
		if bad.name == "invalid UTF-8" { // NUL cannot be sent in a header
			for _, name := range headerParams {
				st, ct, b := w.sendCT(t, svc, o.method, fill("", ""), authz, map[string]string{name: bad.v}, w.bodyFor(svc, o))
				check(t, label+" header "+name+" "+bad.name, st, ct, b, oauth, "header."+name)
				n++
			}
		}
	}
	for _, name := range headerParams {
		st, ct, b := w.sendCT(t, svc, o.method, fill("", ""), authz, map[string]string{name: strings.Repeat("c", 101)}, w.bodyFor(svc, o))
		check(t, label+" header "+name+" too long", st, ct, b, oauth, "header."+name)
		n++
	}
	path := fill("", "")

	rb, _ := o.op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	if js, ok := content["application/json"].(map[string]any); ok {
		var leaves []leaf
		sc, _ := js["schema"].(map[string]any)
		sample := svc.sample(sc, nil, &leaves, 0)
		limit, _ := o.op["x-body-limit"].(float64)
		for _, l := range leaves {
			lp := pathString(l.path)
			isString := schemaType(l.schema) == "string" && l.schema["enum"] == nil
			if isString {
				for _, bad := range []struct{ name, v string }{{"NUL", "a\x00b"}, {"invalid UTF-8", badUTF8Marker}} {
					raw, _ := json.Marshal(set(sample, l.path, bad.v))
					raw = bytes.ReplaceAll(raw, []byte(badUTF8Marker), []byte("a\xffb"))
					st, ct, b := w.sendCT(t, svc, o.method, path, authz, nil, raw)
					check(t, label+" body "+lp+" "+bad.name, st, ct, b, oauth, lp)
					n++
				}
				if ml, ok := l.schema["maxLength"].(float64); ok {
					raw, _ := json.Marshal(set(sample, l.path, strings.Repeat("ж", int(ml)+1)))
					st, ct, b := w.sendCT(t, svc, o.method, path, authz, nil, raw)
					want := lp
					if float64(len(raw)) > limit {
						want = "" // over the body limit: 413 payload_too_large
					}
					p := check(t, label+" body "+lp+" over maxLength", st, ct, b, oauth, want)
					if want == "" && (st != 413 || p == nil || p.Code != "payload_too_large") {
						t.Errorf("%s: a body over x-body-limit: %d %s", label, st, b)
					}
					n++
				} else if f := l.schema["format"]; f != "date" && f != "date-time" && f != "time" {
					// A date or time is bounded by its format.
					t.Errorf("%s: %s has no maxLength", label, lp)
				}
			}
			// A wrong JSON type.
			var wrong any = 12345
			if !isString {
				wrong = "not a number or boolean"
			}
			raw, _ := json.Marshal(set(sample, l.path, wrong))
			st, ct, b := w.sendCT(t, svc, o.method, path, authz, nil, raw)
			check(t, label+" body "+lp+" wrong type", st, ct, b, oauth, "")
			n++
		}
		for _, raw := range [][]byte{
			[]byte(`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`),
			[]byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000)),
			[]byte(`[]`), []byte(`"text"`), []byte(`{`), []byte("\x00"), []byte("{\"\xff\":1}"),
		} {
			st, ct, b := w.sendCT(t, svc, o.method, path, authz, nil, raw)
			if p := check(t, label+fmt.Sprintf(" body %.20q", raw), st, ct, b, oauth, ""); st < 400 || (p == nil && !oauth) {
				t.Errorf("%s: body %.20q answered %d", label, raw, st)
			}
			n++
		}
	}
	if limit, ok := o.op["x-body-limit"].(float64); ok {
		st, ct, b := w.oversized(t, svc, o.method, path, authz, int64(limit)+1)
		if p := check(t, label+" oversized", st, ct, b, oauth, ""); p == nil || st != 413 || p.Code != "payload_too_large" {
			t.Errorf("%s: a body of x-body-limit+1 bytes: %d %s", label, st, b)
		}
		n++
	}
	return n
}

// bodyFor is a well-formed sample body for an operation that takes JSON.
func (w *sweepWorld) bodyFor(svc *sweepService, o sweepOp) []byte {
	rb, _ := o.op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	js, ok := content["application/json"].(map[string]any)
	if !ok {
		return nil
	}
	var leaves []leaf
	sc, _ := js["schema"].(map[string]any)
	raw, _ := json.Marshal(svc.sample(sc, nil, &leaves, 0))
	return raw
}

// oversized declares a body of n bytes and sends none of it: the answer
// must come from the Content-Length alone.
func (w *sweepWorld) oversized(t *testing.T, svc *sweepService, method, path, authz string, n int64) (int, string, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(svc.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w.seq++
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nIdempotency-Key: sweep-%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		method, path, authz, w.seq, n)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s oversized: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// sweepCredentials sends credentials with bytes no issued one has.
func (w *sweepWorld) sweepCredentials(t *testing.T) int {
	n := 0
	for _, v := range []string{"dn_test_\xff\xfe", strings.Repeat("k", 10000), "dnat_\xff", "a b"} {
		for _, c := range []struct {
			svc   *sweepService
			path  string
			authz string
		}{
			{w.einvoice, "/v1/companies", "Bearer " + v},
			{w.payroll, "/v1/rates", "Bearer " + v},
			{w.einvoice, "/v1/agents/agt_x/signing-requests?wait=0", "Agent agt_x." + v},
			{w.einvoice, "/v1/agents/agt_x/signing-requests?wait=0", "Agent " + v + ".secret"},
		} {
			st, ct, b := w.sendCT(t, c.svc, "GET", c.path, c.authz, nil, nil)
			if p := check(t, "credential "+c.authz[:min(len(c.authz), 20)], st, ct, b, false, ""); st != 401 || p == nil || p.Code != "unauthenticated" {
				t.Errorf("credential %.30q on %s: %d %s", c.authz, c.path, st, b)
			}
			n++
		}
	}
	for _, form := range []string{
		"grant_type=client_credentials&client_id=%00&client_secret=x",
		"grant_type=client_credentials&client_id=%FF&client_secret=x",
		"grant_type=client_credentials&client_id=cli_x&client_secret=%00",
		"grant_type=client_credentials&client_id=" + strings.Repeat("c", 5000) + "&client_secret=x",
	} {
		st, ct, b := w.sendCT(t, w.einvoice, "POST", "/v1/oauth/token", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, []byte(form))
		check(t, "oauth form", st, ct, b, true, "")
		// Over 1,000 characters the parameter itself is refused
		// (invalid_request); any other such credential is invalid_client.
		if st != 400 || !(strings.Contains(string(b), `"invalid_client"`) || (len(form) > 1000 && strings.Contains(string(b), `"invalid_request"`))) {
			t.Errorf("token form %.60q: %d %s", form, st, b)
		}
		n++
	}
	for _, user := range []string{"%00", "%FF", "cli\xff"} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", w.einvoice.url+"/v1/oauth/token", strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(user, "secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(string(b), `"invalid_client"`) {
			t.Errorf("Basic %q: %d %s", user, resp.StatusCode, b)
		}
		n++
	}
	return n
}

func mustSecretKey(t *testing.T) []byte {
	t.Helper()
	key, err := auth.ParseSecretKey(auth.NewSecretKey())
	if err != nil {
		t.Fatal(err)
	}
	return key
}
