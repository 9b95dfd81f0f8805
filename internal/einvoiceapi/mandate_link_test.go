package einvoiceapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestSandboxMandateLink: a program finishes a sandbox onboarding without
// the representative's mail: the link POST /v1/sandbox/companies/{id}/
// mandate-link gives is the mail's, accepting it makes the company active;
// it is shown once, only for sandbox companies, and only while there is a
// mandate to accept.
func TestSandboxMandateLink(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		acct := c.account("business")
		key := c.key(acct, auth.EnvSandbox, nil, nil)
		r := c.do("POST", "/v1/companies", key, body1)
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		id := r.json(t)["id"].(string)

		post := func(idem string) resp {
			req, _ := http.NewRequest("POST", c.srv.URL+"/v1/sandbox/companies/"+id+"/mandate-link", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Idempotency-Key", idem)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return resp{res.StatusCode, res.Header, b}
		}
		r = post("link-1")
		m := r.json(t)
		if r.status != 201 || m["object"] != "sandbox_mandate_link" || m["companyId"] != id || m["expiresAt"] == nil {
			t.Fatalf("mandate link: %d %s", r.status, r.body)
		}
		u, err := url.Parse(m["url"].(string))
		if err != nil || u.Host != "mandates.test" || !strings.HasPrefix(u.Path, "/mandates/mdt_") {
			t.Fatalf("url %v", m["url"])
		}
		// Shown once: a replay says what was made, not the link.
		if r := post("link-1"); r.status != 409 || r.json(t)["code"] != "secret_already_shown" || strings.Contains(string(r.body), u.Path) {
			t.Fatalf("replay: %d %s", r.status, r.body)
		}
		if acc := c.do("POST", u.Path, "", ""); acc.status != 200 {
			t.Fatalf("accept: %d %s", acc.status, acc.body)
		}
		if g := c.do("GET", "/v1/companies/"+id, key, "").json(t); g["status"] != "active" {
			t.Fatalf("after accept: %v", g)
		}
		if r := post("link-2"); r.status != 409 || r.json(t)["code"] != "mandate_already_accepted" {
			t.Fatalf("active company: %d %s", r.status, r.body)
		}
		if r := c.do("POST", "/v1/sandbox/companies/cmp_nope/mandate-link", key, ""); r.status != 404 {
			t.Fatalf("unknown company: %d %s", r.status, r.body)
		}

		// A production company's representative gets the link by mail only.
		prod := c.key(acct, auth.EnvProduction, nil, nil)
		r = c.do("POST", "/v1/companies", prod, strings.Replace(body1, "4030000000001", "4030000000010", 1))
		if r.status != 201 {
			t.Fatalf("create production: %d %s", r.status, r.body)
		}
		pid := r.json(t)["id"].(string)
		if r := c.do("POST", "/v1/sandbox/companies/"+pid+"/mandate-link", prod, ""); r.status != 403 || r.json(t)["code"] != "sandbox_only" {
			t.Fatalf("production company: %d %s", r.status, r.body)
		}
	})
}
