package einvoiceapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/sdk/signer"
)

func wsURL(base, agent string) string {
	return "ws://" + strings.TrimPrefix(base, "http://") + "/v1/agents/" + agent + "/signing-requests"
}

// readMsg reads the next message within 5 s.
func readMsg(t *testing.T, c *websocket.Conn) einvoiceapi.WSMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, raw, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m einvoiceapi.WSMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSigningWebSocket: the upgrade of the agent's request list pushes
// every pending request, including ones created while connected; it
// refuses bad credentials before upgrading; closing records the agent
// offline and clears signerReady; a new connection sends what is still
// pending again.
func TestSigningWebSocket(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		agent, authz := e.pair(c)

		_, resp, err := websocket.Dial(t.Context(), wsURL(e.srv.URL, agent), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz + "x"}}})
		if err == nil || resp == nil || resp.StatusCode != 401 || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("bad secret: %v %+v", err, resp)
		}
		_, resp, err = websocket.Dial(t.Context(), wsURL(e.srv.URL, "agt_other"), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		if err == nil || resp == nil || resp.StatusCode != 404 {
			t.Fatalf("another agent's path: %v %+v", err, resp)
		}

		before := e.request(einvoicing.PurposeDocument, `{"n":1}`)
		conn, _, err := websocket.Dial(t.Context(), wsURL(e.srv.URL, agent), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		if err != nil {
			t.Fatal(err)
		}
		if m := readMsg(t, conn); m.Type != "hello" || m.AgentID != agent || m.ServerTime == nil {
			t.Fatalf("hello: %+v", m)
		}
		if m := readMsg(t, conn); m.Type != "signing_request" || m.Request == nil || m.Request.ID != before.ID || m.Request.SigningInput != before.SigningInput {
			t.Fatalf("pending request: %+v", m)
		}
		ready, err := einvoicing.SignerReady(t.Context(), db.Reader(), e.company, db.Now())
		if err != nil || !ready {
			t.Fatalf("signerReady while connected: %v %v", ready, err)
		}
		// Signed over REST; then a new request arrives by push.
		if st, m := e.do("POST", "/v1/signing-requests/"+before.ID+"/claim", authz, nil); st != 200 {
			t.Fatalf("claim: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+before.ID+"/signature", authz, map[string]string{"jws": c.sign(t, before.SigningInput)}); st != 200 {
			t.Fatalf("sign: %d %v", st, m)
		}
		later := e.request(einvoicing.PurposeQuery, `{"n":2}`)
		if m := readMsg(t, conn); m.Type != "signing_request" || m.Request.ID != later.ID {
			t.Fatalf("pushed request: %+v", m)
		}
		conn.Close(websocket.StatusNormalClosure, "")

		deadline := time.Now().Add(5 * time.Second)
		for {
			var typ string
			err := db.ReadDB().QueryRowContext(t.Context(), "SELECT type FROM events WHERE object_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1", agent).Scan(&typ)
			if err == nil && typ == "signing_agent.offline" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("last event %q %v, want signing_agent.offline", typ, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if ready, _ := einvoicing.SignerReady(t.Context(), db.Reader(), e.company, db.Now()); ready {
			t.Fatal("signerReady after the agent left")
		}

		conn, _, err = websocket.Dial(t.Context(), wsURL(e.srv.URL, agent), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		readMsg(t, conn) // hello
		if m := readMsg(t, conn); m.Type != "signing_request" || m.Request.ID != later.ID {
			t.Fatalf("still pending after reconnect: %+v", m)
		}
		var online int
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM events WHERE object_id = $1 AND type = 'signing_agent.online'", agent).Scan(&online); err != nil || online < 2 {
			t.Fatalf("online events %d %v, want one per connection", online, err)
		}
	})
}

// TestWorkerFallsBackToLongPoll: behind a proxy that refuses WebSocket
// upgrades, the SDK worker long-polls and still signs.
func TestWorkerFallsBackToLongPoll(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		_, api := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
		h := api.Handler()
		var upgrades atomic.Int32
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				upgrades.Add(1)
				http.Error(w, "WebSockets are not allowed here", http.StatusBadRequest)
				return
			}
			h.ServeHTTP(w, r)
		}))
		defer proxy.Close()
		st, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+e.key, nil)
		if st != 201 {
			t.Fatalf("pairing code: %d %v", st, m)
		}
		creds, err := signer.Pair(t.Context(), nil, proxy.URL, m["code"].(string), "behind a proxy")
		if err != nil {
			t.Fatal(err)
		}
		if err := signer.RegisterCertificateAs(t.Context(), nil, creds, c.cert, e.company, "EUJP-PROXIED"); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		w := &signer.Worker{Creds: creds, Signer: c.key, Wait: 1, Log: slog.New(slog.DiscardHandler),
			OnSigned: func(r signer.Request, _ string) { got <- r.ID }}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		defer func() { cancel(); <-done }()
		r := e.request(einvoicing.PurposeDocument, `{"n":1}`)
		select {
		case id := <-got:
			if id != r.ID {
				t.Fatalf("signed %s, want %s", id, r.ID)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("not signed over long-poll")
		}
		if upgrades.Load() == 0 {
			t.Fatal("the worker never tried the WebSocket")
		}
	})
}
