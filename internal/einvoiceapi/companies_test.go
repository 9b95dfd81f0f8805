package einvoiceapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// fakeRegistry knows two companies, never answers for 4039999999989 and
// fails for 4039999999962 and for any number with a wrong check digit (the
// service must not ask about those).
type fakeRegistry struct{}

func (fakeRegistry) LookupCompany(ctx context.Context, env, as, tax string) (einvoicing.RegistryCompany, error) {
	switch tax {
	case "4030000000001":
		return einvoicing.RegistryCompany{Name: "Тест Трговија ДООЕЛ Скопје", VATNumber: "MK4030000000001",
			Address: einvoicing.Address{Street: "Партизанска", Number: "1", City: "Скопје", Zip: "1000"}}, nil
	case "4030000000010":
		return einvoicing.RegistryCompany{Name: "Тест Услуги ДОО Скопје"}, nil
	case "4039999999989":
		<-ctx.Done()
		return einvoicing.RegistryCompany{}, ctx.Err()
	case "4039999999962":
		return einvoicing.RegistryCompany{}, errors.New("connection refused")
	}
	if ident.EDB(tax) != nil {
		return einvoicing.RegistryCompany{}, errors.New("asked about a number that is not an ЕДБ")
	}
	if strings.HasPrefix(tax, "40310") {
		return einvoicing.RegistryCompany{Name: "Тест Фирма " + tax}, nil
	}
	return einvoicing.RegistryCompany{}, einvoicing.ErrRegistryNotFound
}

type capi struct {
	t    *testing.T
	db   *store.DB
	auth *auth.Store
	srv  *httptest.Server
	now  time.Time
}

func newCAPI(t *testing.T, db *store.DB) *capi {
	t.Helper()
	c := &capi{t: t, db: db, auth: &auth.Store{DB: db}, now: time.Now().UTC()}
	db.Now = func() time.Time { return c.now }
	_, s := newApp(db, einvoicing.Deps{Registry: fakeRegistry{}}, appConfig{Config: einvoicing.Config{RegistryTimeout: 200 * time.Millisecond},
		Companies: companies.Config{PublicURL: "http://mandates.test"}}, webhooks.Deps{}, webhooks.Config{})
	c.srv = httptest.NewServer(s.Handler())
	t.Cleanup(c.srv.Close)
	return c
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("not JSON (%d): %s", r.status, r.body)
	}
	return m
}

// idemSeq numbers the Idempotency-Keys of every test of the package, which
// run in parallel.
var idemSeq atomic.Int64

func (c *capi) do(method, path, bearer, body string) resp {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.srv.URL+path, rd)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == "POST" {
		n := int(idemSeq.Add(1))
		req.Header.Set("Idempotency-Key", "k"+time.Now().Format("150405.000000")+string(rune('a'+n%26))+strings.Repeat("x", n%7))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, b}
}

func (c *capi) key(acct, env string, scopes, companies []string) string {
	c.t.Helper()
	_, secret, err := c.auth.CreateKey(c.t.Context(), auth.KeyParams{AccountID: acct, Service: auth.ServiceEInvoice,
		Environment: env, Scopes: scopes, CompanyIDs: companies})
	if err != nil {
		c.t.Fatal(err)
	}
	return secret
}

func (c *capi) account(plan string) string {
	c.t.Helper()
	a, err := c.auth.CreateAccount(c.t.Context(), "Сметководство Пример", plan)
	if err != nil {
		c.t.Fatal(err)
	}
	return a.ID
}

const body1 = `{"taxNumber":"4030000000001","externalRef":"crm-1","representative":{"name":"Ана Петровска","email":"ana@example.mk"}}`

var linkRE = regexp.MustCompile(`http://mandates\.test(/mandates/mdt_[0-9A-Za-z]+)`)

func TestCompaniesOnboarding(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		acct := c.account("")
		key := c.key(acct, auth.EnvSandbox, nil, nil)

		r := c.do("POST", "/v1/companies", key, body1)
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		co := r.json(t)
		id := co["id"].(string)
		if r.header.Get("Location") != "/v1/companies/"+id || co["status"] != "pending_mandate" || co["signingMode"] != "bridge" ||
			co["name"] != "Тест Трговија ДООЕЛ Скопје" || co["vatNumber"] != "MK4030000000001" || co["externalRef"] != "crm-1" {
			t.Fatalf("created company: %v", co)
		}
		envs := co["environments"].(map[string]any)
		if envs["sandbox"].(map[string]any)["enabled"] != true || envs["production"].(map[string]any)["enabled"] != false {
			t.Fatalf("environments: %v", envs)
		}

		// The mail is in the outbox, in Macedonian with an English line.
		mails, err := db.Reader().ListOutboxMail(t.Context())
		if err != nil || len(mails) != 1 {
			t.Fatalf("outbox: %v %v", mails, err)
		}
		m := mails[0]
		if m.Recipient != "ana@example.mk" || !strings.Contains(m.Body, "овластување") || !strings.Contains(m.Body, "English:") {
			t.Fatalf("mail: %+v", m)
		}
		link := linkRE.FindStringSubmatch(m.Body)
		if link == nil {
			t.Fatalf("no link in %s", m.Body)
		}
		page := c.do("GET", link[1], "", "")
		if page.status != 200 || !strings.Contains(string(page.body), "Тест Трговија ДООЕЛ Скопје") || !strings.Contains(string(page.body), `method="post"`) {
			t.Fatalf("page: %d %s", page.status, page.body)
		}
		if page.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatal("mandate page leaks its URL in Referer")
		}
		// A cross-site form post is refused.
		req, _ := http.NewRequest("POST", c.srv.URL+link[1], nil)
		req.Header.Set("Origin", "https://evil.example")
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
			t.Fatalf("cross-site accept: %v %v", res, err)
		}
		if acc := c.do("POST", link[1], "", ""); acc.status != 200 || !strings.Contains(string(acc.body), "прифатено") {
			t.Fatalf("accept: %d %s", acc.status, acc.body)
		}
		if g := c.do("GET", "/v1/companies/"+id, key, "").json(t); g["status"] != "active" {
			t.Fatalf("after accept: %v", g)
		}
		if again := c.do("POST", link[1], "", ""); again.status != 410 || !strings.Contains(string(again.body), "искористена") {
			t.Fatalf("second accept: %d %s", again.status, again.body)
		}
		if u := c.do("GET", "/mandates/mdt_nope", "", ""); u.status != 404 {
			t.Fatalf("unknown token: %d", u.status)
		}

		// Expiry: a second company's link after 14 days.
		if r := c.do("POST", "/v1/companies", key, strings.Replace(body1, "4030000000001", "4030000000010", 1)); r.status != 201 {
			t.Fatalf("create 2: %d %s", r.status, r.body)
		}
		mails, _ = db.Reader().ListOutboxMail(t.Context())
		link2 := linkRE.FindStringSubmatch(mails[len(mails)-1].Body)
		c.now = c.now.Add(companies.DefaultMandateTTL)
		if e := c.do("POST", link2[1], "", ""); e.status != 410 || !strings.Contains(string(e.body), "истече") {
			t.Fatalf("expired: %d %s", e.status, e.body)
		}
		c.now = c.now.Add(-companies.DefaultMandateTTL)

		// Errors of creation.
		for _, tc := range []struct {
			name, body, code string
			status           int
			path, message    string // of the one field error, when set
		}{
			{"unknown tax number", strings.Replace(body1, "4030000000001", "4039999999997", 1), "validation_failed", 422, "taxNumber", "not found in UJP's registry"},
			{"wrong check digit", strings.Replace(body1, "4030000000001", "4030000000002", 1), "validation_failed", 422, "taxNumber", "is not a valid ЕДБ: the 13th digit is not the check digit of the first 12"},
			{"registry silent", strings.Replace(body1, "4030000000001", "4039999999989", 1), "ujp_unavailable", 503, "", ""},
			{"registry failing", strings.Replace(body1, "4030000000001", "4039999999962", 1), "ujp_unavailable", 503, "", ""},
			{"short tax number", strings.Replace(body1, "4030000000001", "403", 1), "validation_failed", 422, "", ""},
			{"bad email", strings.Replace(body1, "ana@example.mk", "ana", 1), "validation_failed", 422, "", ""},
			{"name in body", strings.Replace(body1, `"externalRef"`, `"name":"X","externalRef"`, 1), "validation_failed", 422, "", ""},
			{"bad signing mode", strings.Replace(body1, `"externalRef"`, `"signingMode":"hsm","externalRef"`, 1), "validation_failed", 422, "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := c.do("POST", "/v1/companies", key, tc.body)
				m := r.json(t)
				if r.status != tc.status || m["code"] != tc.code {
					t.Fatalf("%d %s", r.status, r.body)
				}
				if tc.path == "" {
					return
				}
				errs, _ := m["errors"].([]any)
				if len(errs) != 1 {
					t.Fatalf("want one field error at %s: %s", tc.path, r.body)
				}
				if e := errs[0].(map[string]any); e["path"] != tc.path || e["message"] != tc.message {
					t.Fatalf("field error %v, want %s: %q", e, tc.path, tc.message)
				}
			})
		}
		list := c.do("GET", "/v1/companies", key, "").json(t)
		if n := len(list["data"].([]any)); n != 2 {
			t.Fatalf("failed creations left companies: %d", n)
		}

		// PATCH and annual accounts.
		if p := c.do("PATCH", "/v1/companies/"+id, key, `{"signingMode":"sdk","externalRef":"crm-9"}`); p.status != 200 ||
			p.json(t)["signingMode"] != "sdk" || p.json(t)["externalRef"] != "crm-9" {
			t.Fatalf("patch: %d %s", p.status, p.body)
		}
		if p := c.do("PATCH", "/v1/companies/"+id, key, `{"name":"Друго"}`); p.status != 422 {
			t.Fatalf("patch name: %d %s", p.status, p.body)
		}
		if p := c.do("PUT", "/v1/companies/"+id+"/annual-accounts/2025", key, ""); p.status != 200 || p.json(t)["annualAccountFiledFor"] != float64(2025) {
			t.Fatalf("annual account: %d %s", p.status, p.body)
		}
		if p := c.do("PUT", "/v1/companies/"+id+"/annual-accounts/2024", key, ""); p.json(t)["annualAccountFiledFor"] != float64(2025) {
			t.Fatalf("annual account lowered: %s", p.body)
		}

		// Other account: 404; other environment: 403.
		other := c.key(c.account(""), auth.EnvSandbox, nil, nil)
		if g := c.do("GET", "/v1/companies/"+id, other, ""); g.status != 404 || g.json(t)["code"] != "not_found" {
			t.Fatalf("other account: %d %s", g.status, g.body)
		}
		prodAcct := c.account("business")
		prodKey := c.key(prodAcct, auth.EnvProduction, nil, nil)
		sbKey := c.key(prodAcct, auth.EnvSandbox, nil, nil)
		pc := c.do("POST", "/v1/companies", prodKey, body1)
		if pc.status != 201 || pc.json(t)["environments"].(map[string]any)["production"].(map[string]any)["enabled"] != true {
			t.Fatalf("production company: %d %s", pc.status, pc.body)
		}
		if g := c.do("GET", "/v1/companies/"+pc.json(t)["id"].(string), sbKey, ""); g.status != 403 || g.json(t)["code"] != "environment_mismatch" {
			t.Fatalf("sandbox key on production company: %d %s", g.status, g.body)
		}
	})
}

func TestCompaniesPagination(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		acct := c.account("")
		key := c.key(acct, auth.EnvSandbox, nil, nil)
		for i := range 5 {
			if r := c.do("POST", "/v1/companies", key, strings.Replace(body1, "4030000000001", einvoicingtest.TaxNumber("4031000000", i), 1)); r.status != 201 {
				t.Fatal(r.status, string(r.body))
			}
		}
		seen := map[string]bool{}
		path := "/v1/companies?limit=2"
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("pagination does not end")
			}
			p := c.do("GET", path, key, "").json(t)
			for _, d := range p["data"].([]any) {
				seen[d.(map[string]any)["id"].(string)] = true
			}
			next, _ := p["nextCursor"].(string)
			if next == "" {
				break
			}
			path = "/v1/companies?limit=2&cursor=" + next
		}
		if len(seen) != 5 {
			t.Fatalf("saw %d companies, want 5", len(seen))
		}
	})
}
