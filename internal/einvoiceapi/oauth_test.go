package einvoiceapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type env struct {
	db   *store.DB
	auth *auth.Store
	srv  *httptest.Server
	now  time.Time
}

func newEnv(t *testing.T, db *store.DB) *env {
	t.Helper()
	e := &env{db: db, auth: &auth.Store{DB: db}, now: time.Now().UTC()}
	db.Now = func() time.Time { return e.now }
	_, s := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
	e.srv = httptest.NewServer(s.Handler())
	t.Cleanup(e.srv.Close)
	return e
}

func postForm(t *testing.T, base string, form url.Values, user, pass string) (int, map[string]any) {
	t.Helper()
	st, _, m := postFormHeader(t, base, form, user, pass)
	return st, m
}

// postFormHeader is postForm that also returns WWW-Authenticate.
func postFormHeader(t *testing.T, base string, form url.Values, user, pass string) (int, string, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("token response is not JSON: %s", b)
	}
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), m
}

func get(t *testing.T, base, path, bearer string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestOAuthToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := t.Context()
		acct, err := e.auth.CreateAccount(ctx, "Биро", "")
		if err != nil {
			t.Fatal(err)
		}
		cli, secret, err := e.auth.CreateClient(ctx, auth.ClientParams{AccountID: acct.ID, Environment: auth.EnvSandbox,
			Scopes: []string{"companies:read", "einvoices:read"}})
		if err != nil {
			t.Fatal(err)
		}
		ok := url.Values{"grant_type": {"client_credentials"}, "client_id": {cli.ID}, "client_secret": {secret}}
		with := func(kv ...string) url.Values {
			v := url.Values{}
			for k, vs := range ok {
				v[k] = vs
			}
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == "" {
					v.Del(kv[i])
				} else {
					v.Set(kv[i], kv[i+1])
				}
			}
			return v
		}
		for _, tc := range []struct {
			name   string
			form   url.Values
			status int
			code   string
		}{
			// Credentials in the body: 400, as the spec's table says.
			{"wrong secret", with("client_secret", "nope"), 400, "invalid_client"},
			{"unknown client", with("client_id", "cli_nope"), 400, "invalid_client"},
			{"no secret", with("client_secret", ""), 400, "invalid_client"},
			{"no grant", with("grant_type", ""), 400, "invalid_request"},
			{"password grant", with("grant_type", "password"), 400, "unsupported_grant_type"},
			{"scope not granted", with("scope", "companies:read signing:agent"), 400, "invalid_scope"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				st, www, m := postFormHeader(t, e.srv.URL, tc.form, "", "")
				if st != tc.status || m["error"] != tc.code || www != "" {
					t.Fatalf("got %d %v (WWW-Authenticate %q), want %d %s", st, m, www, tc.status, tc.code)
				}
			})
		}
		// Credentials in HTTP Basic: a failure is 401 with a challenge
		// (RFC 6749 §5.2).
		st, www, m := postFormHeader(t, e.srv.URL, url.Values{"grant_type": {"client_credentials"}}, cli.ID, "nope")
		if st != 401 || m["error"] != "invalid_client" || !strings.HasPrefix(www, "Basic ") {
			t.Fatalf("basic, wrong secret: %d %v %q", st, m, www)
		}

		st, m = postForm(t, e.srv.URL, ok, "", "")
		if st != 200 || m["token_type"] != "Bearer" || m["expires_in"] != float64(900) || m["scope"] != "companies:read einvoices:read" {
			t.Fatalf("token: %d %v", st, m)
		}
		tok := m["access_token"].(string)
		if st, m := get(t, e.srv.URL, "/v1/companies", tok); st != 200 {
			t.Fatalf("list with token: %d %v", st, m)
		}

		// HTTP Basic, narrowed scope: the token lacks companies:read.
		st, m = postForm(t, e.srv.URL, url.Values{"grant_type": {"client_credentials"}, "scope": {"einvoices:read"}}, cli.ID, secret)
		if st != 200 || m["scope"] != "einvoices:read" {
			t.Fatalf("basic: %d %v", st, m)
		}
		if st, m := get(t, e.srv.URL, "/v1/companies", m["access_token"].(string)); st != 403 || m["code"] != "insufficient_scope" {
			t.Fatalf("narrow token: %d %v", st, m)
		}

		// Expired after 900 s.
		e.now = e.now.Add(auth.TokenTTL)
		if st, m := get(t, e.srv.URL, "/v1/companies", tok); st != 401 || m["code"] != "unauthenticated" {
			t.Fatalf("expired token: %d %v", st, m)
		}
		e.now = e.now.Add(-auth.TokenTTL)

		// Revoking the client kills its tokens.
		if err := e.auth.RevokeClient(ctx, cli.ID); err != nil {
			t.Fatal(err)
		}
		if st, m := get(t, e.srv.URL, "/v1/companies", tok); st != 401 || m["code"] != "key_revoked" {
			t.Fatalf("revoked client's token: %d %v", st, m)
		}
		if st, m := postForm(t, e.srv.URL, ok, "", ""); st != 400 || m["error"] != "invalid_client" {
			t.Fatalf("revoked client: %d %v", st, m)
		}
	})
}

func TestTokenWrongContentType(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	resp, err := http.Post(e.srv.URL+"/v1/oauth/token", "application/json", strings.NewReader(`{"grant_type":"client_credentials"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	if resp.StatusCode != 400 || m["error"] != "invalid_request" {
		t.Fatalf("%d %v", resp.StatusCode, m)
	}
}
