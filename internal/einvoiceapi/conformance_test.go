package einvoiceapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// Spec conformance items of issue 11, each proven by a real request.

// raw sends a request with exactly the headers given and returns the
// status, the headers and the body decoded as an object.
func raw(t *testing.T, method, url string, header map[string]string, body string) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, resp.Header, m
}

// TestProblemsCarryInstance: every problem, whichever layer writes it
// (the guard, huma's validation, a handler, the application layer, the
// WebSocket upgrade, the router), has instance = the request id sent in
// X-Request-Id, and a type anchored at its code.
func TestProblemsCarryInstance(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-instance")
		sr := e.einvoice(id)["signingRequestId"].(string)
		// A second agent of the account, to be refused the claim.
		se := &signEnv{t: t, db: db, srv: e.srv, key: e.key, company: e.company}
		_, otherAgent := se.pair(newTestCert(t))
		if st, m := e.agentDo("POST", "/v1/signing-requests/"+sr+"/claim", e.authz, nil); st != 200 {
			t.Fatalf("claim: %d %v", st, m)
		}
		expiring := e.issue("F-expiring")
		oldReq := e.einvoice(expiring)["signingRequestId"].(string)

		key := func(h map[string]string) map[string]string {
			h["Idempotency-Key"] = denar.NewID("idem")
			return h
		}
		bearer := map[string]string{"Authorization": "Bearer " + e.key, "X-Company-Id": e.company}
		agent := map[string]string{"Authorization": e.authz}
		big := `{"code":"` + strings.Repeat("A", 2<<20) + `","name":"x"}`
		for _, tc := range []struct {
			name, method, path string
			header             map[string]string
			body               string
			status             int
			code               string
			late               bool // after the signing requests expired
		}{
			{"no credential", "GET", "/v1/companies", nil, "", 401, "unauthenticated", false},
			{"pairing without a key", "POST", "/v1/agents/pair", nil, `{"code":"X","name":"y"}`, 400, "idempotency_key_required", false},
			{"pairing code", "POST", "/v1/agents/pair", key(map[string]string{}), `{"code":"NOPE","name":"y"}`, 422, "pairing_code_invalid", false},
			{"pairing body too large", "POST", "/v1/agents/pair", key(map[string]string{}), big, 413, "payload_too_large", false},
			{"agent on a key operation", "GET", "/v1/companies", agent, "", 401, "unauthenticated", false},
			{"another agent's path", "GET", "/v1/agents/agt_other/signing-requests?wait=0", agent, "", 404, "not_found", false},
			{"agent without a key", "POST", "/v1/agents/" + e.agent + "/certificates", agent, `{"certificateDer":"x","companyId":"y"}`, 400, "idempotency_key_required", false},
			{"certificate", "POST", "/v1/agents/" + e.agent + "/certificates", key(map[string]string{"Authorization": e.authz}), `{"certificateDer":"%%%","companyId":"` + e.company + `"}`, 422, "validation_failed", false},
			{"unknown request", "POST", "/v1/signing-requests/sgr_nope/claim", key(map[string]string{"Authorization": e.authz}), "", 404, "not_found", false},
			{"claimed by another", "POST", "/v1/signing-requests/" + sr + "/claim", key(map[string]string{"Authorization": otherAgent}), "", 409, "already_claimed", false},
			{"refusal reason", "POST", "/v1/signing-requests/" + sr + "/refuse", key(map[string]string{"Authorization": e.authz}), `{"reason":"bored"}`, 422, "validation_failed", false},
			{"issue body", "POST", "/v1/einvoices", key(bearer), `{"number":1}`, 422, "validation_failed", false},
			{"unknown company", "GET", "/v1/einvoices", map[string]string{"Authorization": "Bearer " + e.key, "X-Company-Id": "cmp_nope"}, "", 403, "company_not_allowed", false},
			{"no route", "GET", "/v1/nothing", nil, "", 404, "not_found", false},
			{"method", "DELETE", "/v1/companies", bearer, "", 405, "method_not_allowed", false},
			{"websocket upgrade", "GET", "/v1/agents/" + e.agent + "/signing-requests", map[string]string{"Authorization": e.authz + "x",
				"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}, "", 401, "unauthenticated", false},
			{"expired", "POST", "/v1/signing-requests/" + oldReq + "/signature", key(map[string]string{"Authorization": e.authz}), `{"jws":"a.b.c"}`, 410, "signature_expired", true},
		} {
			if tc.late && e.now().Before(time.Now().Add(15*time.Minute)) {
				e.advance(16 * time.Minute)
			}
			st, h, m := raw(t, tc.method, e.srv.URL+tc.path, tc.header, tc.body)
			rid := h.Get("X-Request-Id")
			if st != tc.status || m["code"] != tc.code || rid == "" || m["instance"] != rid ||
				!strings.HasSuffix(m["type"].(string), "#"+tc.code) || h.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s: %d %v (X-Request-Id %q, Content-Type %q), want %d %s with instance", tc.name, st, m, rid, h.Get("Content-Type"), tc.status, tc.code)
			}
		}

		// A 401 challenges with the scheme the operation takes.
		for _, tc := range []struct{ path, authz, want string }{
			{"/v1/agents/" + e.agent + "/signing-requests?wait=0", "Agent agt_nope.secret", `Agent realm="denar"`},
			{"/v1/companies", "Bearer nope", `Bearer realm="denar"`},
			{"/v1/signing-requests/sgr_nope", "Bearer nope", `Agent realm="denar", Bearer realm="denar"`},
		} {
			st, h, m := raw(t, "GET", e.srv.URL+tc.path, map[string]string{"Authorization": tc.authz}, "")
			if st != 401 || h.Get("WWW-Authenticate") != tc.want {
				t.Errorf("%s: %d %v, WWW-Authenticate %q, want 401 with %q", tc.path, st, m, h.Get("WWW-Authenticate"), tc.want)
			}
		}

		// Problems found by trying the API from outside: each names the
		// query parameter it is about, or says what is wrong.
		plain := map[string]string{"Authorization": "Bearer " + e.key}
		text := key(map[string]string{"Authorization": "Bearer " + e.key, "X-Company-Id": e.company, "Content-Type": "text/plain"})
		for _, tc := range []struct {
			name, method, path string
			header             map[string]string
			body               string
			status             int
			code, field        string
		}{
			{"content type", "POST", "/v1/einvoices", text, `{}`, 415, "unsupported_media_type", ""},
			{"accept", "GET", "/v1/einvoices", map[string]string{"Authorization": "Bearer " + e.key, "X-Company-Id": e.company, "Accept": "text/csv"}, "", 406, "not_acceptable", ""},
			{"accept on the PDF", "GET", "/v1/einvoices/" + id + "/pdf", map[string]string{"Authorization": "Bearer " + e.key, "X-Company-Id": e.company, "Accept": "application/json"}, "", 406, "not_acceptable", ""},
			{"event type", "GET", "/v1/events?type=einvoice.nope", bearer, "", 422, "validation_failed", "query.type"},
			{"event type in the feed", "GET", "/v1/events?after=start&type=nope", bearer, "", 422, "validation_failed", "query.type"},
			{"list cursor", "GET", "/v1/einvoices?cursor=garbage", bearer, "", 422, "validation_failed", "query.cursor"},
			{"list cursor of other filters", "GET", "/v1/companies?cursor=" + httpx.EncodeCursor("x", "other"), bearer, "", 422, "validation_failed", "query.cursor"},
			{"signing request state", "GET", "/v1/signing-requests?state=bogus", bearer, "", 422, "validation_failed", "query.state"},
			// A company named as a parameter outside the account is 403, as
			// X-Company-Id is (404 is for the resource of the path).
			{"signing requests of a foreign company", "GET", "/v1/signing-requests?companyId=cmp_nope", plain, "", 403, "company_not_allowed", ""},
			{"archive of a foreign company", "POST", "/v1/archive-exports", key(map[string]string{"Authorization": "Bearer " + e.key}),
				`{"companyId":"cmp_nope","from":"2026-01-01","to":"2026-01-31"}`, 403, "company_not_allowed", ""},
		} {
			st, _, m := raw(t, tc.method, e.srv.URL+tc.path, tc.header, tc.body)
			if st != tc.status || m["code"] != tc.code {
				t.Errorf("%s: %d %v, want %d %s", tc.name, st, m, tc.status, tc.code)
				continue
			}
			if d, _ := m["detail"].(string); d == "" || d == "validation failed" {
				t.Errorf("%s: detail %q says nothing", tc.name, d)
			}
			if tc.field == "" {
				continue
			}
			errs, _ := m["errors"].([]any)
			if len(errs) == 0 || errs[0].(map[string]any)["path"] != tc.field {
				t.Errorf("%s: errors %v, want one at %s", tc.name, m["errors"], tc.field)
			}
		}
	})
}

// TestIdempotencyKeyOnEveryPOST: every POST operation of the OpenAPI
// document but the token endpoint, agent operations included, answers 400
// idempotency_key_required without the header, with a credential it
// accepts; the document marks the header required on each.
func TestIdempotencyKeyOnEveryPOST(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		st, _, doc := raw(t, "GET", e.srv.URL+"/v1/openapi.json", nil, "")
		if st != 200 {
			t.Fatalf("openapi: %d", st)
		}
		paths := doc["paths"].(map[string]any)
		var checked []string
		for path, item := range paths {
			post, ok := item.(map[string]any)["post"].(map[string]any)
			if !ok {
				continue
			}
			if path == "/v1/oauth/token" {
				continue
			}
			required := false
			for _, p := range post["parameters"].([]any) {
				pm := p.(map[string]any)
				if pm["name"] == "Idempotency-Key" && pm["in"] == "header" && pm["required"] == true {
					required = true
				}
			}
			if !required {
				t.Errorf("%s: Idempotency-Key not required in the OpenAPI document", path)
			}
			header := map[string]string{"X-Company-Id": e.company}
			sec, _ := post["security"].([]any)
			switch {
			case len(sec) == 0: // public (pairing)
			case sec[0].(map[string]any)["agent"] != nil:
				header["Authorization"] = e.authz
			default:
				header["Authorization"] = "Bearer " + e.key
			}
			url := strings.NewReplacer("{id}", "x_1").Replace(path)
			st, h, m := raw(t, "POST", e.srv.URL+url, header, `{}`)
			if st != 400 || m["code"] != "idempotency_key_required" || m["instance"] != h.Get("X-Request-Id") {
				t.Errorf("POST %s without Idempotency-Key: %d %v", path, st, m)
			}
			checked = append(checked, path)
		}
		sort.Strings(checked)
		for _, want := range []string{"/v1/agents/pair", "/v1/agents/{id}/certificates", "/v1/signing-requests/{id}/claim",
			"/v1/signing-requests/{id}/signature", "/v1/signing-requests/{id}/refuse", "/v1/einvoices", "/v1/companies",
			"/v1/inbox/{id}/accept", "/v1/inbox/{id}/reject", "/v1/sandbox/inbox"} {
			if sort.SearchStrings(checked, want) == len(checked) || checked[sort.SearchStrings(checked, want)] != want {
				t.Errorf("%s was not checked (checked %v)", want, checked)
			}
		}
		// The token endpoint takes none.
		st, _, m := raw(t, "POST", e.srv.URL+"/v1/oauth/token", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, "grant_type=client_credentials&client_id=x&client_secret=y")
		if st != 400 || m["error"] != "invalid_client" {
			t.Fatalf("token without Idempotency-Key: %d %v", st, m)
		}
	})
}

// TestOtherEnvironmentLists: a list asked for with X-Company-Id (or
// companyId) of a company of the other environment is 403
// environment_mismatch, never an empty 200; a production company shows
// sandbox.enabled false and production.enabled true under a plan.
func TestOtherEnvironmentLists(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		acct := c.account("business")
		prodKey := c.key(acct, auth.EnvProduction, nil, nil)
		sbKey := c.key(acct, auth.EnvSandbox, []string{"companies:read", "companies:write", "einvoices:read", "events:read", "signing:agent"}, nil)
		pc := c.do("POST", "/v1/companies", prodKey, body1)
		if pc.status != 201 {
			t.Fatalf("production company: %d %s", pc.status, pc.body)
		}
		prod := pc.json(t)
		envs := prod["environments"].(map[string]any)
		if envs["sandbox"].(map[string]any)["enabled"] != false || envs["production"].(map[string]any)["enabled"] != true {
			t.Fatalf("production company environments: %v", envs)
		}
		prodID := prod["id"].(string)
		if sc := c.do("POST", "/v1/companies", sbKey, body1); sc.status != 201 {
			t.Fatalf("sandbox company: %d %s", sc.status, sc.body)
		}
		for _, tc := range []struct{ path, header string }{
			{"/v1/einvoices", prodID},
			{"/v1/events", prodID},
			{"/v1/signing-requests", prodID},
			{"/v1/signing-requests?companyId=" + prodID, ""},
			{"/v1/companies", prodID},
		} {
			h := map[string]string{"Authorization": "Bearer " + sbKey}
			if tc.header != "" {
				h["X-Company-Id"] = tc.header
			}
			st, _, m := raw(t, "GET", c.srv.URL+tc.path, h, "")
			if st != 403 || m["code"] != "environment_mismatch" {
				t.Errorf("GET %s (X-Company-Id %q) with a sandbox key: %d %v", tc.path, tc.header, st, m)
			}
		}
		// And the other way round.
		st, _, m := raw(t, "GET", c.srv.URL+"/v1/events", map[string]string{"Authorization": "Bearer " + prodKey, "X-Company-Id": prodID}, "")
		if st != 200 {
			t.Fatalf("events of the production company with its key: %d %v", st, m)
		}
	})
}

// TestPatchExternalRef: externalRef null clears it, absent leaves it.
func TestPatchExternalRef(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		key := c.key(c.account(""), auth.EnvSandbox, nil, nil)
		r := c.do("POST", "/v1/companies", key, body1)
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)
		for _, tc := range []struct {
			body string
			want any
		}{
			{`{"signingMode":"sdk"}`, "crm-1"}, // absent leaves it
			{`{"externalRef":"crm-2"}`, "crm-2"},
			{`{}`, "crm-2"},
			{`{"externalRef":null}`, nil}, // null clears it
			{`{"externalRef":"crm-3"}`, "crm-3"},
		} {
			p := c.do("PATCH", "/v1/companies/"+id, key, tc.body)
			if p.status != 200 || p.json(t)["externalRef"] != tc.want {
				t.Fatalf("PATCH %s: %d %s, want externalRef %v", tc.body, p.status, p.body, tc.want)
			}
			if g := c.do("GET", "/v1/companies/"+id, key, ""); g.json(t)["externalRef"] != tc.want {
				t.Fatalf("GET after %s: %s", tc.body, g.body)
			}
		}
		if p := c.do("PATCH", "/v1/companies/"+id, key, `{"externalRef":5}`); p.status != 422 || p.json(t)["errors"].([]any)[0].(map[string]any)["path"] != "externalRef" {
			t.Fatalf("externalRef 5: %d %s", p.status, p.body)
		}
	})
}

// TestCompanyExists: onboarding an ЕДБ the account already has in that
// environment is 409 company_exists naming the company, with a new key as
// much as with the same; the other environment is another company.
func TestCompanyExists(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		acct := c.account("business")
		key := c.key(acct, auth.EnvSandbox, nil, nil)
		first := c.do("POST", "/v1/companies", key, body1)
		if first.status != 201 {
			t.Fatalf("create: %d %s", first.status, first.body)
		}
		id := first.json(t)["id"].(string)
		again := c.do("POST", "/v1/companies", key, strings.Replace(body1, "crm-1", "crm-other", 1))
		m := again.json(t)
		errs, _ := m["errors"].([]any)
		if again.status != 409 || m["code"] != "company_exists" || m["companyId"] != id || len(errs) != 1 || errs[0].(map[string]any)["path"] != "taxNumber" {
			t.Fatalf("second onboarding: %d %s", again.status, again.body)
		}
		if n := len(c.do("GET", "/v1/companies", key, "").json(t)["data"].([]any)); n != 1 {
			t.Fatalf("%d companies after the refusal", n)
		}
		if p := c.do("POST", "/v1/companies", c.key(acct, auth.EnvProduction, nil, nil), body1); p.status != 201 || p.json(t)["id"] == id {
			t.Fatalf("the same ЕДБ in production: %d %s", p.status, p.body)
		}
	})
}
