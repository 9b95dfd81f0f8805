package signer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeMessage: any bytes decode or fail cleanly, and a decoded
// signing_request (or signing_requests) always carries usable requests
// and a result always names the message it answers.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"type":"hello","agentId":"agt_1","serverTime":"2026-11-22T10:00:00Z"}`))
	f.Add([]byte(`{"type":"signing_request","request":{"id":"sgr_1","signingInput":"a.b","payload":"b"}}`))
	f.Add([]byte(`{"type":"signing_request"}`))
	f.Add([]byte(`{"type":"future","x":[1,2]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"type":"signing_requests","requests":[{"id":"sgr_1","signingInput":"a.b"},{"id":""}]}`))
	f.Add([]byte(`{"type":"result","replyTo":"claim:1","status":200,"body":{"object":"list","data":[]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMessage(b)
		if err != nil {
			return
		}
		if m.Type == "signing_request" && (m.Request == nil || m.Request.ID == "" || m.Request.SigningInput == "") {
			t.Fatalf("accepted an unusable signing_request: %q", b)
		}
		if m.Type == "signing_requests" {
			if len(m.Requests) == 0 {
				t.Fatalf("accepted an empty signing_requests: %q", b)
			}
			for _, r := range m.Requests {
				if r.ID == "" || r.SigningInput == "" {
					t.Fatalf("accepted an unusable request in signing_requests: %q", b)
				}
			}
		}
		if m.Type == "result" && m.ReplyTo == "" {
			t.Fatalf("accepted a result that answers nothing: %q", b)
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

// TestQueue: the reader pushes without waiting, the handler takes what
// waits up to the batch size in the order pushed, and waits while nothing
// does.
func TestQueue(t *testing.T) {
	t.Parallel()
	q := newQueue()
	var ids []string
	for i := range 250 {
		ids = append(ids, fmt.Sprintf("sgr_%d", i))
	}
	for i := 0; i < len(ids); i += 10 {
		var rs []Request
		for _, id := range ids[i : i+10] {
			rs = append(rs, Request{ID: id})
		}
		q.push(rs) // never blocks, however much waits
	}
	var sizes []int
	var got []string
	for range 3 {
		rs, ok := q.take(t.Context(), 100)
		if !ok {
			t.Fatal("nothing taken")
		}
		sizes = append(sizes, len(rs))
		for _, r := range rs {
			got = append(got, r.ID)
		}
	}
	if fmt.Sprint(sizes) != "[100 100 50]" || strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("took %v: %v", sizes, got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if rs, ok := q.take(ctx, 100); ok {
		t.Fatalf("took %v from an empty queue", rs)
	}
}
