package einvoiceapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestRevokeAgent: POST /v1/agents/{id}/revoke, served by one API instance,
// ends the agent's WebSocket (1008 "agent revoked") and long-poll (401
// key_revoked) held by another instance on the same store — two processes,
// as far as either can tell — and its REST credential; the request it had
// claimed is pending again, its certificate no longer makes the company
// ready to sign, and it is recorded offline. Revoking again answers the same
// agent; another account's key gets 404, a production key 403
// environment_mismatch, a key without companies:write 403.
func TestRevokeAgent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newSignEnv(t, db)
		agent, authz := e.pair(newTestCert(t))
		// A second agent of the company, which claims a request and is
		// revoked holding it.
		claimer, claimerAuthz := e.pair(newTestCert(t))

		// The other "process": its own application layer and server.
		_, other := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
		holder := httptest.NewServer(other.Handler())
		defer holder.Close()
		ws, _, err := websocket.Dial(t.Context(), wsURL(holder.URL, agent), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		if m := readMsg(t, ws); m.Type != "hello" {
			t.Fatalf("hello: %+v", m)
		}
		type answer struct {
			status int
			code   string
		}
		polled := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", holder.URL+"/v1/agents/"+agent+"/signing-requests?wait=55", nil)
			req.Header.Set("Authorization", authz)
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

		// Scope, account and environment first: nothing is revoked.
		as := &auth.Store{DB: db}
		ctx := t.Context()
		_, narrow, err := as.CreateKey(ctx, auth.KeyParams{AccountID: e.account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox, Scopes: []string{"companies:read"}})
		if err != nil {
			t.Fatal(err)
		}
		if st, m := e.do("POST", "/v1/agents/"+agent+"/revoke", "Bearer "+narrow, nil); st != 403 || m["code"] != "insufficient_scope" {
			t.Fatalf("without companies:write: %d %v", st, m)
		}
		stranger, err := as.CreateAccount(ctx, "Друг", "enterprise")
		if err != nil {
			t.Fatal(err)
		}
		_, foreign, err := as.CreateKey(ctx, auth.KeyParams{AccountID: stranger.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
		if err != nil {
			t.Fatal(err)
		}
		if st, m := e.do("POST", "/v1/agents/"+agent+"/revoke", "Bearer "+foreign, nil); st != 404 || m["code"] != "not_found" {
			t.Fatalf("another account's key: %d %v", st, m)
		}
		if _, err := db.WriteDB().ExecContext(ctx, "UPDATE accounts SET plan = 'enterprise' WHERE id = $1", e.account); err != nil {
			t.Fatal(err)
		}
		_, prod, err := as.CreateKey(ctx, auth.KeyParams{AccountID: e.account, Service: auth.ServiceEInvoice, Environment: auth.EnvProduction})
		if err != nil {
			t.Fatal(err)
		}
		if st, m := e.do("POST", "/v1/agents/"+agent+"/revoke", "Bearer "+prod, nil); st != 403 || m["code"] != "environment_mismatch" {
			t.Fatalf("production key on a sandbox agent: %d %v", st, m)
		}
		if st, _ := e.do("GET", "/v1/agents/"+agent+"/signing-requests?wait=0", authz, nil); st != 200 {
			t.Fatalf("the agent works before the revocation: %d", st)
		}

		st, m := e.do("POST", "/v1/agents/"+agent+"/revoke", "Bearer "+e.key, nil)
		if st != 200 || m["id"] != agent || m["revokedAt"] == nil || m["online"] != false {
			t.Fatalf("revoke: %d %v", st, m)
		}
		revokedAt := m["revokedAt"]

		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			_, _, err := ws.Read(rctx)
			if err == nil {
				continue
			}
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "agent revoked" {
				t.Fatalf("socket after revocation: %v", err)
			}
			break
		}
		select {
		case a := <-polled:
			if a.status != 401 || a.code != "key_revoked" {
				t.Fatalf("long-poll after revocation: %+v", a)
			}
		case <-rctx.Done():
			t.Fatal("the long-poll outlived the revocation")
		}
		if st, m := e.do("GET", "/v1/agents/"+agent+"/signing-requests?wait=0", authz, nil); st != 401 || m["code"] != "key_revoked" {
			t.Fatalf("revoked agent: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/agents/"+agent+"/revoke", "Bearer "+e.key, nil); st != 200 || m["revokedAt"] != revokedAt {
			t.Fatalf("revoke again: %d %v, want the first revocation's %v", st, m, revokedAt)
		}

		// The claimer: its claim goes back to pending for another agent.
		claimed := e.request(einvoicing.PurposeDocument, `{"n":1}`)
		if st, m := e.do("POST", "/v1/signing-requests/"+claimed.ID+"/claim", claimerAuthz, nil); st != 200 {
			t.Fatalf("claim: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/agents/"+claimer+"/revoke", "Bearer "+e.key, nil); st != 200 {
			t.Fatalf("revoke the claimer: %d %v", st, m)
		}
		r, err := einvoicing.GetSigningRequest(ctx, db.Reader(), claimed.ID)
		if err != nil || r.State != einvoicing.StatePending || r.ClaimedBy != nil {
			t.Fatalf("the revoked agent's claim: %+v %v", r, err)
		}
		if ready, err := einvoicing.SignerReady(ctx, db.Reader(), e.company, db.Now()); err != nil || ready {
			t.Fatalf("signerReady once every agent is revoked: %v %v", ready, err)
		}
		var offline int
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM events WHERE object_id = $1 AND type = 'signing_agent.offline'", agent).Scan(&offline); err != nil || offline < 1 {
			t.Fatalf("offline events %d %v", offline, err)
		}
	})
}
