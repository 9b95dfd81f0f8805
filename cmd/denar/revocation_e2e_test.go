package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestRevocationEndToEnd revokes each kind of credential while it is in use,
// on both stores. On PostgreSQL two `denar serve` processes share the
// database, and what one process holds (a WebSocket, a long-poll, a token
// it accepts) is revoked through the other or through `denar admin`, a
// third process: nothing but the store tells the holder. An API key and an
// OAuth client's access token answer 401 key_revoked on the very next
// request; an agent's open WebSocket is closed with 1008 and its long-poll
// answers 401 key_revoked within signing.AgentRecheck (1 s; the test
// allows 10 s for a loaded machine).
func TestRevocationEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		env := baseEnv(t, dbURL)
		a := startServer(t, env)
		b := a
		if strings.HasPrefix(dbURL, "postgres") {
			b = startServer(t, env)
		}

		t.Run("API key", func(t *testing.T) {
			var key struct{ ID, Key string }
			out := runAdminCmd(t, a.env, "key", "create", "--account", bootstrapAccount(t, a), "--service", "einvoice", "--env", "sandbox", "--json")
			if err := json.Unmarshal([]byte(out), &key); err != nil {
				t.Fatalf("key create: %v %s", err, out)
			}
			if r := call(t, "GET", b.einvoice+"/v1/companies", key.Key, nil, ""); r.status != 200 {
				t.Fatalf("key before revocation: %d %s", r.status, r.body)
			}
			runAdminCmd(t, a.env, "key", "revoke", key.ID)
			for _, s := range []*server{a, b} {
				if r := call(t, "GET", s.einvoice+"/v1/companies", key.Key, nil, ""); r.status != 401 || r.code(t) != "key_revoked" {
					t.Fatalf("revoked key: %d %s", r.status, r.body)
				}
			}
		})

		t.Run("OAuth client", func(t *testing.T) {
			acct := bootstrapAccount(t, a)
			var cli struct {
				ID     string `json:"client_id"`
				Secret string `json:"client_secret"`
			}
			out := runAdminCmd(t, a.env, "client", "create", "--account", acct, "--env", "sandbox", "--json")
			if err := json.Unmarshal([]byte(out), &cli); err != nil || cli.ID == "" {
				t.Fatalf("client create: %v %s", err, out)
			}
			tok := oauthToken(t, a, cli.ID, cli.Secret)
			if r := call(t, "GET", b.einvoice+"/v1/companies", tok, nil, ""); r.status != 200 {
				t.Fatalf("token before revocation: %d %s", r.status, r.body)
			}
			runAdminCmd(t, a.env, "client", "revoke", cli.ID)
			// At once, in both processes, long before the token's 900 s.
			for _, s := range []*server{a, b} {
				if r := call(t, "GET", s.einvoice+"/v1/companies", tok, nil, ""); r.status != 401 || r.code(t) != "key_revoked" {
					t.Fatalf("token of a revoked client: %d %s", r.status, r.body)
				}
			}
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {cli.ID}, "client_secret": {cli.Secret}}
			r := call(t, "POST", b.einvoice+"/v1/oauth/token", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
			if r.status != 400 || !strings.Contains(string(r.body), `"invalid_client"`) {
				t.Fatalf("new token for a revoked client: %d %s", r.status, r.body)
			}
			if list := runAdminCmd(t, a.env, "client", "list", "--account", acct); !strings.Contains(list, cli.ID) || !strings.Contains(list, "revoked") || strings.Contains(list, cli.Secret) {
				t.Fatalf("client list:\n%s", list)
			}
		})

		// One agent revoked through the API of the process that does not
		// hold its connections, one through denar admin.
		for _, via := range []string{"api", "admin"} {
			t.Run("agent revoked through "+via, func(t *testing.T) {
				agent := pairAgent(t, a)
				ws := dialAgentSocket(t, b, agent)
				defer ws.CloseNow()
				// The long-poll is held by a (the socket by b): both must
				// notice a revocation made elsewhere.
				type answer struct {
					status int
					code   string
				}
				polled := make(chan answer, 1)
				go func() {
					req, _ := http.NewRequestWithContext(t.Context(), "GET", a.einvoice+"/v1/agents/"+agent.AgentID+"/signing-requests?wait=55", nil)
					req.Header.Set("Authorization", "Agent "+agent.AgentID+"."+agent.Secret)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						polled <- answer{}
						return
					}
					defer resp.Body.Close()
					var p struct{ Code string }
					_ = json.NewDecoder(resp.Body).Decode(&p)
					polled <- answer{resp.StatusCode, p.Code}
				}()
				// The long-poll and the metrics request (and the socket,
				// when one process holds both).
				inFlight := 2
				if a == b {
					inFlight = 3
				}
				waitInFlight(t, a.einvoice, inFlight)

				var list []struct {
					ID        string
					RevokedAt *time.Time
				}
				if err := json.Unmarshal([]byte(runAdminCmd(t, a.env, "agent", "list", "--json")), &list); err != nil {
					t.Fatal(err)
				}
				found := false
				for _, l := range list {
					found = found || (l.ID == agent.AgentID && l.RevokedAt == nil)
				}
				if !found {
					t.Fatalf("agent list has no active %s: %+v", agent.AgentID, list)
				}

				revoked := time.Now()
				if via == "api" {
					r := call(t, "POST", a.einvoice+"/v1/agents/"+agent.AgentID+"/revoke", a.einvoiceKey, map[string]string{"Idempotency-Key": "revoke-" + agent.AgentID}, "")
					if r.status != 200 || !strings.Contains(string(r.body), `"revokedAt"`) {
						t.Fatalf("revoke: %d %s", r.status, r.body)
					}
				} else {
					runAdminCmd(t, a.env, "agent", "revoke", agent.AgentID)
				}

				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				for {
					_, msg, err := ws.Read(ctx)
					if err == nil {
						continue // a signing request sent before the close
					}
					var ce websocket.CloseError
					if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "agent revoked" {
						t.Fatalf("socket after revocation: %v (last message %s)", err, msg)
					}
					break
				}
				select {
				case ans := <-polled:
					if ans.status != 401 || ans.code != "key_revoked" {
						t.Fatalf("long-poll after revocation: %+v", ans)
					}
				case <-ctx.Done():
					t.Fatal("the long-poll outlived the revocation by 10 s")
				}
				t.Logf("socket and long-poll ended %s after the revocation was asked for", time.Since(revoked).Round(time.Millisecond))

				h := map[string]string{"Authorization": "Agent " + agent.AgentID + "." + agent.Secret}
				if r := call(t, "GET", b.einvoice+"/v1/agents/"+agent.AgentID+"/signing-requests?wait=0", "", h, ""); r.status != 401 || r.code(t) != "key_revoked" {
					t.Fatalf("revoked agent's request: %d %s", r.status, r.body)
				}
				_, resp, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(b.einvoice, "http")+"/v1/agents/"+agent.AgentID+"/signing-requests",
					&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {h["Authorization"]}}})
				if err == nil || resp == nil || resp.StatusCode != 401 {
					t.Fatalf("revoked agent's new socket: %v %+v", err, resp)
				}
			})
		}
	})
}

// bootstrapAccount is the id of the account denar serve created on its
// first run.
func bootstrapAccount(t *testing.T, s *server) string {
	t.Helper()
	var accts []struct{ ID string }
	if err := json.Unmarshal([]byte(runAdminCmd(t, s.env, "account", "list", "--json")), &accts); err != nil || len(accts) == 0 {
		t.Fatalf("account list: %v", err)
	}
	return accts[0].ID
}

// oauthToken gets an access token for client credentials.
func oauthToken(t *testing.T, s *server, id, secret string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	r := call(t, "POST", s.einvoice+"/v1/oauth/token", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form.Encode())
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(r.body, &tok); err != nil || r.status != 200 || tok.AccessToken == "" {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	return tok.AccessToken
}
