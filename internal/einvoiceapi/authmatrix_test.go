package einvoiceapi_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestAuthMatrix runs every authenticated e-invoicing endpoint against each
// kind of bad credential. The public ones (POST /v1/oauth/token, the
// mandate page) have their own tests.
func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		ctx := t.Context()
		acct := c.account("business")
		good := c.key(acct, auth.EnvSandbox, nil, nil)
		r := c.do("POST", "/v1/companies", good, body1)
		if r.status != 201 {
			t.Fatal(r.status, string(r.body))
		}
		id := r.json(t)["id"].(string)
		r = c.do("POST", "/v1/companies", good, strings.Replace(body1, "4030000000001", "4030000000010", 1))
		other := r.json(t)["id"].(string)

		revokedKey, revokedSecret, _ := c.auth.CreateKey(ctx, auth.KeyParams{AccountID: acct, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
		if err := c.auth.RevokeKey(ctx, revokedKey.ID); err != nil {
			t.Fatal(err)
		}
		_, payrollKey, _ := c.auth.CreateKey(ctx, auth.KeyParams{AccountID: acct, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
		prodKey := c.key(acct, auth.EnvProduction, nil, nil)
		noScope := c.key(acct, auth.EnvSandbox, []string{"einvoices:read"}, nil)
		limited := c.key(acct, auth.EnvSandbox, nil, []string{other})
		cli, secret, err := c.auth.CreateClient(ctx, auth.ClientParams{AccountID: acct, Environment: auth.EnvSandbox})
		if err != nil {
			t.Fatal(err)
		}
		st, m := postForm(t, c.srv.URL, url.Values{"grant_type": {"client_credentials"}, "client_id": {cli.ID}, "client_secret": {secret}}, "", "")
		if st != 200 {
			t.Fatal(st, m)
		}
		expiring := m["access_token"].(string)

		type want struct {
			status int
			code   string
		}
		creds := []struct {
			name   string
			bearer string
			before func()
			after  func()
		}{
			{"no credential", "", nil, nil},
			{"revoked key", revokedSecret, nil, nil},
			{"other-service key", payrollKey, nil, nil},
			{"wrong environment", prodKey, nil, nil},
			{"missing scope", noScope, nil, nil},
			{"company outside allow-list", limited, nil, nil},
			{"expired token", expiring, func() { c.now = c.now.Add(auth.TokenTTL) }, func() { c.now = c.now.Add(-auth.TokenTTL) }},
		}
		unauth := want{401, "unauthenticated"}
		common := map[string]want{
			"no credential": unauth, "revoked key": {401, "key_revoked"}, "other-service key": unauth,
			"missing scope": {403, "insufficient_scope"}, "expired token": unauth,
		}
		endpoints := []struct {
			method, path, body string
			// Wants for the cases that differ per endpoint.
			wrongEnv, outside want
		}{
			// A collection has no environment or company of its own: a
			// production key lists production companies (none here), and a
			// limited key lists its allowed ones.
			{"GET", "/v1/companies", "", want{200, ""}, want{200, ""}},
			// A production key creates a production company; a key limited
			// to companies cannot onboard new ones.
			{"POST", "/v1/companies", body1, want{201, ""}, want{403, "company_not_allowed"}},
			{"GET", "/v1/companies/" + id, "", want{403, "environment_mismatch"}, want{403, "company_not_allowed"}},
			{"PATCH", "/v1/companies/" + id, `{"externalRef":"x"}`, want{403, "environment_mismatch"}, want{403, "company_not_allowed"}},
			{"PUT", "/v1/companies/" + id + "/annual-accounts/2025", "", want{403, "environment_mismatch"}, want{403, "company_not_allowed"}},
		}
		for _, ep := range endpoints {
			for _, cr := range creds {
				w, ok := common[cr.name]
				switch cr.name {
				case "wrong environment":
					w, ok = ep.wrongEnv, true
				case "company outside allow-list":
					w, ok = ep.outside, true
				}
				if !ok {
					t.Fatalf("no expectation for %s", cr.name)
				}
				t.Run(ep.method+" "+ep.path+"/"+cr.name, func(t *testing.T) {
					if cr.before != nil {
						cr.before()
						defer cr.after()
					}
					r := c.do(ep.method, ep.path, cr.bearer, ep.body)
					if r.status != w.status {
						t.Fatalf("status %d, want %d: %s", r.status, w.status, r.body)
					}
					if w.code != "" {
						p := r.json(t)
						if p["code"] != w.code || p["status"] != float64(w.status) || p["type"] == nil || p["title"] == nil {
							t.Fatalf("problem %v, want code %s", p, w.code)
						}
						if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
							t.Fatalf("content type %q", ct)
						}
					}
				})
			}
		}
	})
}
