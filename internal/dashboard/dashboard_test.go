package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/dashboard"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/usage"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

const password = "лозинка за тест 2026"

// world is two accounts, each with a sandbox company and an incoming
// document, served by the dashboard on loopback.
type world struct {
	t               *testing.T
	db              *store.DB
	srv             *httptest.Server
	users           *auth.Users
	svc             *einvoicing.Service
	pipe            *pipeline.Service
	hooks           *webhooks.Service
	signing         *signing.Service
	inbox           *inbox.Service
	recon           *reconcile.Service
	companies       *companies.Service
	usage           *usage.Service
	acctA, acctB    string
	companyA, compB string
	docA, docB      string
	keyB            string
}

func newWorld(t *testing.T, db *store.DB) *world {
	t.Helper()
	ctx := t.Context()
	box, err := auth.NewSecretBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, db: db, users: &auth.Users{DB: db, Secrets: box}}
	as := &auth.Store{DB: db}
	for _, a := range []*string{&w.acctA, &w.acctB} {
		acct, err := as.CreateAccount(ctx, "Биро", "business")
		if err != nil {
			t.Fatal(err)
		}
		*a = acct.ID
	}
	for i, c := range []struct {
		acct         string
		company, doc *string
		tax          string
	}{{w.acctA, &w.companyA, &w.docA, "4030000000001"}, {w.acctB, &w.compB, &w.docB, "4030000000010"}} {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			co, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: c.acct, Name: "Фирма " + c.tax,
				TaxNumber: c.tax, VatNumber: "МК" + c.tax, Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox,
				Address: `{"street":"Широк сокак","number":"1","city":"Битола","zip":"7000"}`, CreatedAt: tx.Now})
			if err != nil {
				return err
			}
			*c.company = co.ID
			d, err := tx.InsertInboxDocument(ctx, dbq.InsertInboxDocumentParams{ID: denar.NewID("inbd"), AccountID: c.acct, CompanyID: co.ID,
				Environment: auth.EnvSandbox, Euid: "EUID-" + c.tax, Kind: "invoice", DocumentType: "100", Number: "Ф-" + string(rune('1'+i)),
				IssueDate: tx.Now.Format(time.DateOnly), TransactionDate: tx.Now.Format(time.DateOnly),
				Seller:   `{"country":"MK","taxNumber":"4030000000044","name":"Добавувач ДООЕЛ","address":{}}`,
				TotalNet: "100.00", TotalVat: "18.00", TotalGross: "118.00", Currency: "MKD", UjpStatus: "01", UjpStatusName: "Испратена",
				UjpStatusAt: tx.Now, DecisionState: "pending", Problems: "[]", DecideBy: tx.Now.AddDate(0, 1, 0).Format(time.DateOnly),
				Payload: []byte(`{}`), ReceivedAt: tx.Now})
			*c.doc = d.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	_, w.keyB, _ = as.CreateKey(ctx, auth.KeyParams{AccountID: w.acctB, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
	for _, u := range []struct{ acct, email, role string }{
		{w.acctA, "owner@a.mk", auth.RoleOwner}, {w.acctA, "staff@a.mk", auth.RoleStaff}, {w.acctA, "viewer@a.mk", auth.RoleViewer},
		{w.acctB, "owner@b.mk", auth.RoleOwner},
	} {
		if _, err := w.users.CreateUser(ctx, u.acct, u.email, u.role, password); err != nil {
			t.Fatal(err)
		}
	}
	hooks := webhooks.New(webhooks.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Secrets: box, Resources: einvoicing.EventResources()},
		webhooks.Config{AllowPrivateSandbox: true})
	svc := einvoicing.New(einvoicing.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Secrets: box, Events: hooks,
		CodeLists: codelists.New(codelists.Deps{DB: db, Events: hooks}, codelists.Config{})}, einvoicing.Config{})
	w.svc, w.hooks = svc, hooks
	w.pipe, w.signing, w.inbox, w.recon, w.companies, w.usage = buildRooms(db, svc)
	mux := http.NewServeMux()
	dashboard.New(w.deps(w.users)).Register(mux)
	w.srv = httptest.NewServer(mux)
	t.Cleanup(w.srv.Close)
	return w
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	w   *world
	c   *http.Client
	jar *cookiejar.Jar
}

func (w *world) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{w: w, jar: jar, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	body   string
	header http.Header
}

func (b *browser) do(method, path string, form url.Values) page {
	b.w.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.w.srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.w.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(raw), resp.Header}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF field in the page (%d):\n%s", p.status, p.body)
	}
	return m[1]
}

func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.w.srv.URL + "/dashboard/")
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

func (b *browser) signIn(email string) {
	b.w.t.Helper()
	login := b.do("GET", "/dashboard/login", nil)
	p := b.do("POST", "/dashboard/login", url.Values{"csrf": {csrfOf(b.w.t, login)}, "email": {email}, "password": {password}})
	if p.status != http.StatusSeeOther || b.cookie("dn_session") == "" {
		b.w.t.Fatalf("sign in %s: %d %s", email, p.status, p.body)
	}
}

// csrf is the session's form token, read from a page.
func (b *browser) csrf() string {
	b.w.t.Helper()
	return csrfOf(b.w.t, b.do("GET", "/dashboard/security", nil))
}

func TestDashboardSecurity(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := context.Background()

		t.Run("sign-in needs its CSRF token", func(t *testing.T) {
			b := w.browser()
			p := b.do("POST", "/dashboard/login", url.Values{"email": {"owner@a.mk"}, "password": {password}})
			if p.status != http.StatusForbidden || b.cookie("dn_session") != "" {
				t.Fatalf("sign-in without the token: %d, session %q", p.status, b.cookie("dn_session"))
			}
		})

		t.Run("CSRF refused on a signed-in form", func(t *testing.T) {
			b := w.browser()
			b.signIn("owner@a.mk")
			for _, tok := range []string{"", "forged-token-000000000000000000"} {
				form := url.Values{}
				if tok != "" {
					form.Set("csrf", tok)
				}
				if p := b.do("POST", "/dashboard/keys", form); p.status != http.StatusForbidden {
					t.Fatalf("POST /dashboard/keys with csrf %q: %d", tok, p.status)
				}
			}
			p := &auth.Principal{AccountID: w.acctA}
			if ks, _ := w.users.AccountKeys(ctx, p); len(ks) != 0 {
				t.Fatalf("a refused form created %d keys", len(ks))
			}
			// Another session's token is no good either.
			other := w.browser()
			other.signIn("staff@a.mk")
			if p := b.do("POST", "/dashboard/keys", url.Values{"scope": {"einvoices:read"}, "csrf": {other.csrf()}}); p.status != http.StatusForbidden {
				t.Fatalf("another session's token: %d", p.status)
			}
			if p := b.do("POST", "/dashboard/keys", url.Values{"scope": {"einvoices:read"}, "csrf": {b.csrf()}}); p.status != http.StatusCreated {
				t.Fatalf("with the token: %d", p.status)
			}
		})

		t.Run("the session id rotates at sign-in", func(t *testing.T) {
			b := w.browser()
			// A fixed id planted before sign-in is never adopted.
			u, _ := url.Parse(w.srv.URL + "/dashboard/")
			b.jar.SetCookies(u, []*http.Cookie{{Name: "dn_session", Value: "ds_planted_by_an_attacker", Path: "/dashboard"}})
			b.signIn("owner@a.mk")
			first := b.cookie("dn_session")
			if first == "ds_planted_by_an_attacker" || first == "" {
				t.Fatalf("session cookie after sign-in: %q", first)
			}
			b.signIn("owner@a.mk")
			second := b.cookie("dn_session")
			if second == first {
				t.Fatal("signing in again kept the session id")
			}
			if _, err := w.users.Session(ctx, first); err == nil {
				t.Fatal("the session before the sign-in still works")
			}
			if p := b.do("GET", "/dashboard/companies", nil); p.status != http.StatusOK {
				t.Fatalf("with the new session: %d", p.status)
			}
			stale := w.browser()
			stale.jar.SetCookies(u, []*http.Cookie{{Name: "dn_session", Value: first, Path: "/dashboard"}})
			if p := stale.do("GET", "/dashboard/companies", nil); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/dashboard/login") {
				t.Fatalf("the old id: %d %s", p.status, p.header.Get("Location"))
			}
			for _, c := range b.jar.Cookies(u) {
				_ = c
			}
		})

		t.Run("cookie attributes", func(t *testing.T) {
			b := w.browser()
			login := b.do("GET", "/dashboard/login", nil)
			resp, err := http.PostForm(w.srv.URL+"/dashboard/login", url.Values{"csrf": {csrfOf(t, login)}, "email": {"owner@a.mk"}, "password": {password}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			// Without the double-submit cookie the post is refused; with it:
			req, _ := http.NewRequest("POST", w.srv.URL+"/dashboard/login", strings.NewReader(url.Values{"csrf": {csrfOf(t, login)}, "email": {"owner@a.mk"}, "password": {password}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: "dn_csrf", Value: csrfOf(t, login)})
			resp, err = (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var set string
			for _, c := range resp.Header.Values("Set-Cookie") {
				if strings.HasPrefix(c, "dn_session=") {
					set = c
				}
			}
			for _, want := range []string{"HttpOnly", "SameSite=Lax", "Path=/dashboard"} {
				if !strings.Contains(set, want) {
					t.Errorf("session cookie %q lacks %s", set, want)
				}
			}
		})

		t.Run("another account's resources are 404", func(t *testing.T) {
			a, b := w.browser(), w.browser()
			a.signIn("owner@a.mk")
			b.signIn("owner@b.mk")
			path := "/dashboard/inbox/" + w.compB + "/" + w.docB
			if p := b.do("GET", path, nil); p.status != http.StatusOK || !strings.Contains(p.body, "Добавувач ДООЕЛ") {
				t.Fatalf("its own account: %d", p.status)
			}
			if p := a.do("GET", path, nil); p.status != http.StatusNotFound {
				t.Fatalf("another account: %d", p.status)
			}
			// With A's own company id in the path, B's document is still unknown.
			if p := a.do("GET", "/dashboard/inbox/"+w.companyA+"/"+w.docB, nil); p.status != http.StatusNotFound {
				t.Fatalf("another account's document under one's own company: %d", p.status)
			}
			if p := a.do("POST", path+"/decide", url.Values{"csrf": {a.csrf()}, "decision": {"accept"}}); p.status != http.StatusNotFound {
				t.Fatalf("deciding another account's document: %d", p.status)
			}
			keys, _ := w.users.AccountKeys(ctx, &auth.Principal{AccountID: w.acctB})
			if p := a.do("POST", "/dashboard/keys/"+keys[0].ID+"/revoke", url.Values{"csrf": {a.csrf()}}); p.status != http.StatusNotFound {
				t.Fatalf("revoking another account's key: %d", p.status)
			}
			if p := a.do("GET", "/dashboard/keys", nil); strings.Contains(p.body, keys[0].ID) {
				t.Fatal("another account's key is listed")
			}
			if p := a.do("GET", "/dashboard/inbox", nil); strings.Contains(p.body, w.docB) || !strings.Contains(p.body, w.docA) {
				t.Fatal("the inbox list crosses accounts")
			}
		})

		t.Run("a viewer cannot decide", func(t *testing.T) {
			v := w.browser()
			v.signIn("viewer@a.mk")
			path := "/dashboard/inbox/" + w.companyA + "/" + w.docA
			p := v.do("GET", path, nil)
			if p.status != http.StatusOK || strings.Contains(p.body, `id="reject"`) || strings.Contains(p.body, `id="accept"`) {
				t.Fatalf("viewer's page: %d, decide forms shown: %v", p.status, strings.Contains(p.body, `id="reject"`))
			}
			for _, form := range []url.Values{{"decision": {"accept"}}, {"decision": {"reject"}, "reason": {"O-2"}}} {
				form.Set("csrf", v.csrf())
				if p := v.do("POST", path+"/decide", form); p.status != http.StatusForbidden {
					t.Fatalf("viewer decides %v: %d", form, p.status)
				}
			}
			if p := v.do("GET", "/dashboard/keys", nil); p.status != http.StatusForbidden {
				t.Fatalf("viewer's keys page: %d", p.status)
			}
			s := w.browser()
			s.signIn("staff@a.mk")
			if p := s.do("GET", path, nil); !strings.Contains(p.body, `id="reject"`) {
				t.Fatal("staff sees no reject form")
			}
		})

		t.Run("sign-in is throttled", func(t *testing.T) {
			b := w.browser()
			login := b.do("GET", "/dashboard/login", nil)
			tok := csrfOf(t, login)
			var last page
			for range 6 {
				last = b.do("POST", "/dashboard/login", url.Values{"csrf": {tok}, "email": {"throttle@a.mk"}, "password": {"wrong one"}})
			}
			if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" {
				t.Fatalf("sixth failure: %d", last.status)
			}
		})

		t.Run("a form submitted twice acts once", func(t *testing.T) {
			b := w.browser()
			b.signIn("owner@a.mk")
			count := func() int {
				ks, err := w.users.AccountKeys(ctx, &auth.Principal{AccountID: w.acctA})
				if err != nil {
					t.Fatal(err)
				}
				return len(ks)
			}
			page := b.do("GET", "/dashboard/keys", nil)
			nonce := regexp.MustCompile(`name="nonce" value="([^"]+)"`).FindStringSubmatch(page.body)
			if nonce == nil {
				t.Fatal("the key form has no nonce")
			}
			before := count()
			form := url.Values{"scope": {"einvoices:read"}, "csrf": {csrfOf(t, page)}, "nonce": {nonce[1]}}
			if p := b.do("POST", "/dashboard/keys", form); p.status != http.StatusCreated {
				t.Fatalf("first submission: %d", p.status)
			}
			if p := b.do("POST", "/dashboard/keys", form); p.status != http.StatusConflict || strings.Contains(p.body, "dn_test_") {
				t.Fatalf("the same form again: %d", p.status)
			}
			// Concurrently, one form eight times: one key.
			page = b.do("GET", "/dashboard/keys", nil)
			nonce = regexp.MustCompile(`name="nonce" value="([^"]+)"`).FindStringSubmatch(page.body)
			form = url.Values{"scope": {"einvoices:read"}, "csrf": {csrfOf(t, page)}, "nonce": {nonce[1]}}
			statuses := make(chan int, 8)
			for range 8 {
				go func() {
					// Not b.do: no t.Fatal off the test's goroutine.
					resp, err := b.c.PostForm(w.srv.URL+"/dashboard/keys", form)
					if err != nil {
						statuses <- 0
						return
					}
					resp.Body.Close()
					statuses <- resp.StatusCode
				}()
			}
			created := 0
			for range 8 {
				switch st := <-statuses; st {
				case http.StatusCreated:
					created++
				case http.StatusConflict:
				default:
					t.Errorf("a concurrent submission answered %d", st)
				}
			}
			if created != 1 || count() != before+2 {
				t.Fatalf("%d answers created a key; keys %d → %d, want +2", created, before, count())
			}
		})

		t.Run("production asks for confirmation", func(t *testing.T) {
			b := w.browser()
			b.signIn("owner@a.mk")
			if p := b.do("POST", "/dashboard/env", url.Values{"csrf": {b.csrf()}, "environment": {"production"}, "next": {"/dashboard/keys"}}); p.status != http.StatusSeeOther {
				t.Fatalf("switch to production: %d %s", p.status, p.body)
			}
			keys := b.do("GET", "/dashboard/keys", nil)
			if !strings.Contains(keys.body, `class="banner production"`) {
				t.Fatal("no production banner")
			}
			before, _ := w.users.AccountKeys(ctx, &auth.Principal{AccountID: w.acctA})
			p := b.do("POST", "/dashboard/keys", url.Values{"scope": {"einvoices:read"}, "csrf": {b.csrf()}})
			if p.status != http.StatusOK || !strings.Contains(p.body, `name="confirm" value="yes"`) {
				t.Fatalf("unconfirmed production action: %d", p.status)
			}
			if after, _ := w.users.AccountKeys(ctx, &auth.Principal{AccountID: w.acctA}); len(after) != len(before) {
				t.Fatal("the unconfirmed action happened")
			}
			p = b.do("POST", "/dashboard/keys", url.Values{"scope": {"einvoices:read"}, "csrf": {b.csrf()}, "confirm": {"yes"}})
			if p.status != http.StatusCreated || !strings.Contains(p.body, "dn_live_") {
				t.Fatalf("confirmed: %d", p.status)
			}
			log, _ := w.users.AuditLog(ctx, &auth.Principal{AccountID: w.acctA}, 10)
			if len(log) < 2 || log[0].Action != "key.create" || log[0].Environment != auth.EnvProduction || log[0].UserEmail != "owner@a.mk" {
				t.Fatalf("audit log: %+v", log)
			}
		})
	})
}

// TestDashboardTOTPAndTwoProcesses enrols a second factor through the
// pages, signs in with it, and uses the session on a second dashboard on
// the same database (as a second process would); creates and revokes an
// OAuth client.
func TestDashboardTOTPAndTwoProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		b := w.browser()
		b.signIn("staff@a.mk")
		p := b.do("POST", "/dashboard/security/totp", url.Values{"csrf": {b.csrf()}})
		m := regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`).FindStringSubmatch(p.body)
		if p.status != http.StatusOK || m == nil || !strings.Contains(p.body, "otpauth://totp/denar:staff@a.mk?") {
			t.Fatalf("enrolment page: %d", p.status)
		}
		code := func() string {
			c, err := auth.TOTPCode(m[1], auth.TOTPStep(db.Now()))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		if p := b.do("POST", "/dashboard/security/totp/confirm", url.Values{"csrf": {b.csrf()}, "code": {"12345"}}); p.status != http.StatusUnprocessableEntity {
			t.Fatalf("a wrong code: %d", p.status)
		}
		// The code that confirms is kept: the step may end before the
		// check below that the same code cannot be used again.
		used := code()
		if p := b.do("POST", "/dashboard/security/totp/confirm", url.Values{"csrf": {b.csrf()}, "code": {used}}); p.status != http.StatusOK {
			t.Fatalf("confirm: %d", p.status)
		}
		if p := b.do("POST", "/dashboard/logout", url.Values{"csrf": {b.csrf()}}); p.status != http.StatusSeeOther {
			t.Fatalf("sign out: %d", p.status)
		}

		// The password alone no longer signs in: it leads to the code.
		c := w.browser()
		login := c.do("GET", "/dashboard/login", nil)
		p = c.do("POST", "/dashboard/login", url.Values{"csrf": {csrfOf(t, login)}, "email": {"staff@a.mk"}, "password": {password}})
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/dashboard/login/totp") {
			t.Fatalf("password step: %d %s", p.status, p.header.Get("Location"))
		}
		mfa := c.cookie("dn_session")
		if p := c.do("GET", "/dashboard/companies", nil); p.status != http.StatusSeeOther {
			t.Fatalf("a page between the password and the code: %d", p.status)
		}
		// The code just used to confirm is refused (one use per step).
		form := c.do("GET", "/dashboard/login/totp", nil)
		if p := c.do("POST", "/dashboard/login/totp", url.Values{"csrf": {csrfOf(t, form)}, "code": {used}}); p.status != http.StatusUnauthorized {
			t.Fatalf("the used code: %d", p.status)
		}
		// Sign in on a "second process": another dashboard on the same store.
		hooks := webhooks.New(webhooks.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Resources: einvoicing.EventResources()}, webhooks.Config{})
		svc := einvoicing.New(einvoicing.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Events: hooks,
			CodeLists: codelists.New(codelists.Deps{DB: db, Events: hooks}, codelists.Config{})}, einvoicing.Config{})
		other := &world{svc: svc, hooks: hooks}
		other.pipe, other.signing, other.inbox, other.recon, other.companies, other.usage = buildRooms(db, svc)
		mux := http.NewServeMux()
		// The second process seals and opens TOTP seeds with the same key.
		dashboard.New(other.deps(&auth.Users{DB: db, Secrets: w.users.Secrets})).Register(mux)
		second := httptest.NewServer(mux)
		defer second.Close()
		next := auth.TOTPStep(db.Now()) + 1
		nextCode, _ := auth.TOTPCode(m[1], next)
		c2 := *c
		c2.w = &world{t: t, srv: second}
		form = c2.do("GET", "/dashboard/login/totp", nil)
		// The double-submit cookie is the first server's: the jar sends it
		// to the second (same host), so the form token matches.
		p = c2.do("POST", "/dashboard/login/totp", url.Values{"csrf": {csrfOf(t, form)}, "code": {nextCode}})
		if p.status != http.StatusSeeOther || c2.cookie("dn_session") == mfa || c2.cookie("dn_session") == "" {
			t.Fatalf("code step on the second server: %d", p.status)
		}
		if p := c.do("GET", "/dashboard/companies", nil); p.status != http.StatusOK || !strings.Contains(p.body, "staff@a.mk") {
			t.Fatalf("the session on the first server: %d", p.status)
		}

		// OAuth clients: created once shown, revoked.
		o := w.browser()
		o.signIn("owner@a.mk")
		p = o.do("POST", "/dashboard/clients", url.Values{"csrf": {o.csrf()}})
		cm := regexp.MustCompile(`id="new-client" data-id="([^"]+)"`).FindStringSubmatch(p.body)
		if p.status != http.StatusCreated || cm == nil || !strings.Contains(p.body, "dncs_") {
			t.Fatalf("create client: %d", p.status)
		}
		if again := o.do("GET", "/dashboard/keys", nil); strings.Contains(again.body, "dncs_") {
			t.Fatal("the client secret is shown again")
		}
		sec := regexp.MustCompile(`id="new-client-secret">([^<]+)<`).FindStringSubmatch(p.body)
		as := &auth.Store{DB: db}
		if _, err := as.IssueToken(t.Context(), cm[1], sec[1], nil); err != nil {
			t.Fatalf("the new client: %v", err)
		}
		if p := o.do("POST", "/dashboard/clients/"+cm[1]+"/revoke", url.Values{"csrf": {o.csrf()}}); p.status != http.StatusSeeOther {
			t.Fatalf("revoke client: %d", p.status)
		}
		if p := o.do("POST", "/dashboard/clients/"+cm[1]+"/revoke", url.Values{"csrf": {o.csrf()}}); p.status != http.StatusNotFound {
			t.Fatalf("revoke twice: %d", p.status)
		}
		if _, err := as.IssueToken(t.Context(), cm[1], sec[1], nil); err == nil {
			t.Fatal("a revoked client gets tokens")
		}
	})
}

// TestDashboardLargestPagesStayUnder100KB fills the longest pages to their
// limits — an e-invoice of 1,000 lines with long descriptions, an inbox of
// more documents than a page across companies — and checks each stays
// under 100 KB.
func TestDashboardLargestPagesStayUnder100KB(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	w := newWorld(t, db)
	ctx := t.Context()
	long := strings.Repeat("Консултантска услуга по договор ", 10) // 320 characters
	items := make([]string, 0, 1000)
	for i := range 1000 {
		items = append(items, fmt.Sprintf(`{"docItemLineNo":%d,"docItemDesc":%q,"docItemQty":"1000000.0000","docItemUnitPriceWoVat":"999999999.9999","docItemTotalVat":"179999999999.99","docItemTotalPriceWVat":"1179999999999.99"}`, i+1, long))
	}
	doc := `{"requestTimestamp":"x","document":{"buyer":{"buyerTin":"4030000000010","buyerName":"` + long + `"},"docItems":[` + strings.Join(items, ",") + `]}}`
	inv := denar.NewID("einv")
	err := db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: inv, AccountID: w.acctA, CompanyID: w.companyA,
			Environment: auth.EnvSandbox, Kind: "invoice", Status: "delivered", DocumentType: "100", Number: "F-1",
			IssueDate: "2026-03-02", Document: doc, UjpDocID: inv, TotalNet: "1", TotalVat: "0", TotalGross: "1",
			Currency: "MKD", Problems: "[]", Fingerprint: "f", CreatedAt: tx.Now, UpdatedAt: tx.Now}); err != nil {
			return err
		}
		// Sixty more companies, the first four with a full inbox page each.
		for c := range 60 {
			co, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: w.acctA, Name: long,
				TaxNumber: einvoicingtest.TaxNumber("4030000001", c), Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox,
				Address: "{}", CreatedAt: tx.Now})
			if err != nil {
				return err
			}
			for i := range inbox.InboxPageSize + 1 {
				if c >= 4 {
					break
				}
				if _, err := tx.InsertInboxDocument(ctx, dbq.InsertInboxDocumentParams{ID: denar.NewID("inbd"), AccountID: w.acctA,
					CompanyID: co.ID, Environment: auth.EnvSandbox, Euid: fmt.Sprintf("E-%d-%d", c, i), Kind: "invoice", DocumentType: "100",
					Number: strings.Repeat("Ф", 40), IssueDate: "2026-03-02", TransactionDate: "2026-03-02",
					Seller:   `{"country":"MK","taxNumber":"4030000000044","name":"` + long + `","address":{}}`,
					TotalNet: "999999999999.99", TotalVat: "0", TotalGross: "999999999999.99", Currency: "MKD", UjpStatus: "01",
					UjpStatusName: "Испратена", UjpStatusAt: tx.Now, DecisionState: "pending", Problems: "[]", DecideBy: "2026-04-10",
					Payload: []byte(`{}`), ReceivedAt: tx.Now}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b := w.browser()
	b.signIn("owner@a.mk")
	for _, path := range []string{"/dashboard/einvoices/" + w.companyA + "/" + inv, "/dashboard/inbox", "/dashboard/companies",
		"/dashboard/einvoices?company=" + w.companyA} {
		p := b.do("GET", path, nil)
		if p.status != http.StatusOK || len(p.body) >= 100<<10 {
			t.Errorf("%s: %d, %d bytes", path, p.status, len(p.body))
		}
		t.Logf("%s: %d bytes", path, len(p.body))
	}
	if p := b.do("GET", "/dashboard/einvoices/"+w.companyA+"/"+inv, nil); !strings.Contains(p.body, `id="more-lines">+ 900 `) {
		t.Error("the page does not say 900 more lines")
	}
	if p := b.do("GET", "/dashboard/companies", nil); strings.Count(p.body, "<tr><td>") != 50 || !strings.Contains(p.body, "/dashboard/companies?after=") {
		t.Errorf("%d company rows, want a page of 50 and a link to the next", strings.Count(p.body, "<tr><td>"))
	}
	if p := b.do("GET", "/dashboard/inbox", nil); strings.Count(p.body, `class="inbox-row"`) != 50 {
		t.Errorf("%d inbox rows, want the cap of 50", strings.Count(p.body, `class="inbox-row"`))
	}
}

var (
	inputTag = regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`)
	idAttr   = regexp.MustCompile(`\bid="([^"]+)"`)
	typeAttr = regexp.MustCompile(`\btype="([^"]+)"`)
)

// TestDashboardPagesSizeAndLabels opens every page, in both languages, and
// checks it is under 100 KB and that every input a person fills in has a
// label naming it.
func TestDashboardPagesSizeAndLabels(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.SQLite(t))
	b := w.browser()
	pages := []string{"/dashboard/login"}
	b.signIn("owner@a.mk")
	pages = append(pages, "/dashboard/companies", "/dashboard/einvoices", "/dashboard/inbox",
		"/dashboard/inbox/"+w.companyA+"/"+w.docA, "/dashboard/events", "/dashboard/keys", "/dashboard/usage",
		"/dashboard/security", "/dashboard/audit", "/dashboard/users", "/dashboard/webhooks")
	for _, lang := range []string{"mk", "en"} {
		b.do("GET", "/dashboard/lang/"+lang, nil)
		for _, path := range pages {
			p := b.do("GET", path, nil)
			if p.status != http.StatusOK {
				t.Errorf("%s %s: %d", lang, path, p.status)
				continue
			}
			if len(p.body) >= 100<<10 {
				t.Errorf("%s %s: %d bytes", lang, path, len(p.body))
			}
			if !strings.Contains(p.body, `<html lang="`+lang+`">`) {
				t.Errorf("%s %s: not in %s", lang, path, lang)
			}
			for _, tag := range inputTag.FindAllString(p.body, -1) {
				if ty := typeAttr.FindStringSubmatch(tag); ty != nil && (ty[1] == "hidden" || ty[1] == "submit") {
					continue
				}
				id := idAttr.FindStringSubmatch(tag)
				if id == nil || !strings.Contains(p.body, `<label for="`+id[1]+`"`) {
					t.Errorf("%s %s: %s has no label", lang, path, tag)
				}
			}
		}
	}
	if p := b.do("GET", "/dashboard/companies", nil); !strings.Contains(p.body, "Companies") || !strings.Contains(p.body, "SANDBOX") {
		t.Fatalf("English page: %s", p.body)
	}
}

// buildRooms builds the rooms of the application layer on svc as
// cmd/denar does (the inbox wired as svc's port, every link type handled).
func buildRooms(db *store.DB, svc *einvoicing.Service) (*pipeline.Service, *signing.Service, *inbox.Service, *reconcile.Service, *companies.Service, *usage.Service) {
	log := slog.New(slog.DiscardHandler)
	pipe := pipeline.New(pipeline.Deps{DB: db, Log: log, EInvoicing: svc}, pipeline.Config{})
	signer := signing.New(signing.Deps{DB: db, Log: log, Core: svc}, signing.Config{})
	in := inbox.New(inbox.Deps{Core: svc, Pipeline: pipe, DB: db, Log: log}, inbox.Config{})
	svc.UseInbox(in)
	recon := reconcile.New(reconcile.Deps{DB: db, Log: log, Core: svc, Pipeline: pipe, Inbox: in}, reconcile.Config{})
	if err := svc.CheckLinks(); err != nil {
		panic(err)
	}
	return pipe, signer, in, recon, companies.New(companies.Deps{DB: db, Log: log}, companies.Config{}), usage.New(usage.Deps{DB: db})
}

// deps are the dashboard's Deps on w's application layer, with users.
func (w *world) deps(users *auth.Users) dashboard.Deps {
	return dashboard.Deps{Service: w.svc, Companies: w.companies, Pipeline: w.pipe, Webhooks: w.hooks, Signing: w.signing, Inbox: w.inbox, Reconcile: w.recon, Usage: w.usage,
		Users: users, Log: slog.New(slog.DiscardHandler)}
}
