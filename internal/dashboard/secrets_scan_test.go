package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/dashboard"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestNoSecretAtRest: after each act that shows a secret once — pairing
// an agent (its code and secret; the pairing replayed with the agent's
// own Idempotency-Key), creating and rotating a webhook endpoint's secret
// (and replaying both), creating an API key and an OAuth client in the
// dashboard, exchanging the client's secret for an access token, and
// enrolling and confirming a TOTP second factor — every column of every
// table of the store, text and bytes alike, is read, and none holds any
// of the secrets shown. The e-invoicing API and the dashboard are served
// together on loopback as denar serve wires them.
func TestNoSecretAtRest(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := t.Context()
		log := slog.New(slog.DiscardHandler)
		as := &auth.Store{DB: db}
		api := einvoiceapi.New(einvoiceapi.Deps{Service: w.svc, Companies: w.companies, Pipeline: w.pipe, Webhooks: w.hooks, Signing: w.signing, Inbox: w.inbox,
			Reconcile: w.recon, Usage: w.usage, Auth: as, Idempotency: idempotency.New(db, 0), Ready: db.Ping, Log: log, RateLimit: httpx.RateLimit{}})
		dashboard.New(w.deps(w.users)).Register(api.Mux)
		w.srv = httptest.NewServer(api.Handler())
		t.Cleanup(w.srv.Close)

		_, key, err := as.CreateKey(ctx, auth.KeyParams{AccountID: w.acctA, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
		if err != nil {
			t.Fatal(err)
		}
		secrets := map[string]string{"the API key of the test": key}
		// known are values the scan must find (so that it reads what it
		// claims to): a text column and a bytes column.
		known := map[string]bool{}
		scan := func(after string) {
			t.Helper()
			tables, columns, values, found := scanStore(t, db, secrets, known)
			for _, f := range found {
				t.Errorf("after %s: %s", after, f)
			}
			for v, seen := range known {
				if !seen {
					t.Errorf("after %s: the scan did not find %q, which the store holds", after, v)
				}
			}
			t.Logf("after %s: %d tables, %d columns, %d values scanned for %d secrets", after, tables, columns, values, len(secrets))
		}
		call := func(method, path, authz, idem string, body any) (int, map[string]any, []byte) {
			t.Helper()
			var rd io.Reader
			if body != nil {
				b, _ := json.Marshal(body)
				rd = bytes.NewReader(b)
			}
			req, _ := http.NewRequestWithContext(ctx, method, w.srv.URL+path, rd)
			req.Header.Set("Content-Type", "application/json")
			if authz != "" {
				req.Header.Set("Authorization", authz)
			}
			req.Header.Set("Idempotency-Key", idem)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			return resp.StatusCode, m, raw
		}
		bearer := "Bearer " + key

		// Pairing: the code, then the agent's secret; the replay of each.
		codeKey := denar.NewID("idem")
		st, m, _ := call("POST", "/v1/agents/pairing-codes", bearer, codeKey, nil)
		if st != 201 {
			t.Fatalf("pairing code: %d %v", st, m)
		}
		code := m["code"].(string)
		secrets["the pairing code"] = code
		if st, _, raw := call("POST", "/v1/agents/pairing-codes", bearer, codeKey, nil); st != 409 || bytes.Contains(raw, []byte(code)) {
			t.Fatalf("replayed pairing code: %d %s", st, raw)
		}
		pair := map[string]string{"code": code, "name": "лаптоп"}
		st, m, _ = call("POST", "/v1/agents/pair", "", "pair:"+code, pair)
		if st != 201 {
			t.Fatalf("pair: %d %v", st, m)
		}
		agent := m["agentId"].(string)
		secrets["the agent's secret"] = m["agentSecret"].(string)
		if st, m, raw := call("POST", "/v1/agents/pair", "", "pair:"+code, pair); st != 409 || m["code"] != "secret_already_shown" ||
			bytes.Contains(raw, []byte(secrets["the agent's secret"])) {
			t.Fatalf("replayed pairing: %d %s", st, raw)
		}
		known[agent] = false // in the replay's problem, a bytes column (idempotency_keys.body)
		scan("pairing")

		// A webhook endpoint's secret, then a new one.
		hook := "http://127.0.0.1:9/hooks/" + denar.NewID("h")
		known[hook] = false // webhook_endpoints.url, a text column
		hookKey := denar.NewID("idem")
		st, m, _ = call("POST", "/v1/webhook-endpoints", bearer, hookKey, map[string]any{"url": hook, "events": []string{"*"}})
		if st != 201 {
			t.Fatalf("webhook endpoint: %d %v", st, m)
		}
		ep := m["id"].(string)
		secrets["the webhook secret"] = m["secret"].(string)
		if st, _, raw := call("POST", "/v1/webhook-endpoints", bearer, hookKey, map[string]any{"url": hook, "events": []string{"*"}}); st != 409 ||
			bytes.Contains(raw, []byte(secrets["the webhook secret"])) {
			t.Fatalf("replayed webhook creation: %d %s", st, raw)
		}
		scan("webhook creation")
		rotKey := denar.NewID("idem")
		st, m, _ = call("POST", "/v1/webhook-endpoints/"+ep+"/rotate-secret", bearer, rotKey, nil)
		if st != 200 {
			t.Fatalf("rotate: %d %v", st, m)
		}
		secrets["the rotated webhook secret"] = m["secret"].(string)
		if st, _, _ := call("POST", "/v1/webhook-endpoints/"+ep+"/rotate-secret", bearer, rotKey, nil); st != 409 {
			t.Fatalf("replayed rotation: %d", st)
		}
		scan("webhook secret rotation")

		// The dashboard: an API key, an OAuth client and its token, TOTP.
		o := w.browser()
		o.signIn("owner@a.mk")
		p := o.do("POST", "/dashboard/keys", url.Values{"csrf": {o.csrf()}, "scope": {"einvoices:read"}, "environment": {"sandbox"}})
		km := regexp.MustCompile(`dn_test_[0-9A-Za-z]{32}`).FindString(p.body)
		if p.status != http.StatusCreated || km == "" {
			t.Fatalf("dashboard key: %d", p.status)
		}
		secrets["the dashboard's API key"] = km
		scan("API key creation")
		p = o.do("POST", "/dashboard/clients", url.Values{"csrf": {o.csrf()}})
		cid := regexp.MustCompile(`id="new-client" data-id="([^"]+)"`).FindStringSubmatch(p.body)
		csec := regexp.MustCompile(`id="new-client-secret">([^<]+)<`).FindStringSubmatch(p.body)
		if p.status != http.StatusCreated || cid == nil || csec == nil {
			t.Fatalf("dashboard OAuth client: %d", p.status)
		}
		secrets["the OAuth client's secret"] = csec[1]
		scan("OAuth client creation")
		resp, err := http.PostForm(w.srv.URL+"/v1/oauth/token", url.Values{"grant_type": {"client_credentials"},
			"client_id": {cid[1]}, "client_secret": {csec[1]}})
		if err != nil {
			t.Fatal(err)
		}
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		if resp.StatusCode != 200 || tok.AccessToken == "" {
			t.Fatalf("token: %d", resp.StatusCode)
		}
		secrets["the access token"] = tok.AccessToken
		scan("issuing an access token")
		p = o.do("POST", "/dashboard/security/totp", url.Values{"csrf": {o.csrf()}})
		seed := regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`).FindStringSubmatch(p.body)
		if p.status != http.StatusOK || seed == nil {
			t.Fatalf("TOTP enrolment: %d", p.status)
		}
		secrets["the TOTP seed"] = seed[1]
		scan("TOTP enrolment")
		c, _ := auth.TOTPCode(seed[1], auth.TOTPStep(db.Now()))
		if p := o.do("POST", "/dashboard/security/totp/confirm", url.Values{"csrf": {o.csrf()}, "code": {c}}); p.status != http.StatusOK {
			t.Fatalf("TOTP confirmation: %d", p.status)
		}
		scan("TOTP confirmation")
	})
}

// scanStore reads every column of every row of every table of db and
// reports each value that contains one of secrets (as written, or in
// lower case); it marks the known values it finds. It returns how many
// tables, columns and non-null values it read.
func scanStore(t *testing.T, db *store.DB, secrets map[string]string, known map[string]bool) (tables, columns, values int, found []string) {
	t.Helper()
	ctx := t.Context()
	list := "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
	if db.Dialect() == store.Postgres {
		list = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
	}
	rows, err := db.ReadDB().QueryContext(ctx, list)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for v := range known {
		known[v] = false
	}
	for _, table := range names {
		tables++
		rs, err := db.ReadDB().QueryContext(ctx, `SELECT * FROM "`+table+`"`)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		cols, _ := rs.Columns()
		columns += len(cols)
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			for i, v := range vals {
				var text string
				switch x := v.(type) {
				case nil:
					continue
				case []byte:
					text = string(x)
				case string:
					text = x
				default:
					text = fmt.Sprint(x)
				}
				values++
				for what, s := range secrets {
					if strings.Contains(text, s) || strings.Contains(strings.ToLower(text), strings.ToLower(s)) {
						found = append(found, fmt.Sprintf("%s.%s holds %s", table, cols[i], what))
					}
				}
				for v := range known {
					if strings.Contains(text, v) {
						known[v] = true
					}
				}
			}
		}
		if err := rs.Close(); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
	}
	if tables < 40 {
		t.Fatalf("only %d tables in the store: the listing query is wrong", tables)
	}
	return tables, columns, values, found
}
