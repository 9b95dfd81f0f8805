package signer

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDecodeMessage: any bytes decode or fail cleanly, and a decoded
// signing_request always carries a usable request.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"type":"hello","agentId":"agt_1","serverTime":"2026-11-22T10:00:00Z"}`))
	f.Add([]byte(`{"type":"signing_request","request":{"id":"sgr_1","signingInput":"a.b","payload":"b"}}`))
	f.Add([]byte(`{"type":"signing_request"}`))
	f.Add([]byte(`{"type":"future","x":[1,2]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			return
		}
		if m.Type == "signing_request" && (m.Request == nil || m.Request.ID == "" || m.Request.SigningInput == "") {
			t.Fatalf("accepted an unusable signing_request: %q", b)
		}
	})
}

func TestSocketURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:8081": "ws://127.0.0.1:8081/v1/agents/agt_1/signing-requests",
		"https://api.denar.mk":  "wss://api.denar.mk/v1/agents/agt_1/signing-requests",
	} {
		if got := socketURL(in, "agt_1"); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestSocketRefusalSaysWhy: a refused handshake reports the server's
// problem (a revoked agent is told to pair again), not a generic one.
func TestSocketRefusalSaysWhy(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"key_revoked","detail":"The agent was revoked. Pair the agent again.","status":401}`))
	}))
	defer srv.Close()
	w := &Worker{Creds: Credentials{Server: srv.URL, AgentID: "agt_1", Secret: "s"}}
	err := w.runSocket(t.Context())
	var api *APIError
	if !errors.As(err, &api) || api.Code != "key_revoked" || !strings.Contains(api.Detail, "Pair the agent again") {
		t.Fatalf("%v, want the server's key_revoked", err)
	}
}
