package einvoiceapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// The signing flows of issue 11, each through the HTTP API on both stores:
// refusals, late signatures, several agents of one company, and the events
// and scopes around them.

// agentDo is a request with the pipeline agent's credentials (or authz).
func (e *pipeEnv) agentDo(method, path, authz string, body any) (int, map[string]any) {
	e.t.Helper()
	se := &signEnv{t: e.t, db: e.db, srv: e.srv}
	return se.do(method, path, authz, body)
}

// docRequests returns the ids of the document signing requests of
// e-invoice id, oldest first.
func (e *pipeEnv) docRequests(id string) []string {
	e.t.Helper()
	rows, err := e.db.ReadDB().QueryContext(e.t.Context(), "SELECT id FROM signing_requests WHERE link_type = 'einvoice' AND link_id = $1 ORDER BY id", id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// count returns how many of list are want.
func count(list []string, want string) int {
	n := 0
	for _, s := range list {
		if s == want {
			n++
		}
	}
	return n
}

// wantOneEventPerRequest checks that every document signing request issued
// for e-invoice id was announced by one einvoice.signature_required.
func (e *pipeEnv) wantOneEventPerRequest(id string) {
	e.t.Helper()
	reqs, ev := e.docRequests(id), e.events(id)
	if n := count(ev, webhooks.EventSignatureRequired); n != len(reqs) {
		e.t.Fatalf("%d signing requests for %s, %d signature_required events (%v)", len(reqs), id, n, ev)
	}
}

// runJobs enqueues nothing and runs what is due.
func (e *pipeEnv) runJobs() {
	e.t.Helper()
	if _, err := e.runner.RunOnce(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
}

// runExpiry runs the periodic expiry of signing requests once, now.
func (e *pipeEnv) runExpiry() {
	e.t.Helper()
	if err := e.db.InTx(e.t.Context(), func(tx *store.Tx) error {
		_, err := jobs.Enqueue(e.t.Context(), tx, jobs.Spec{Kind: signing.KindExpireSigning})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	e.runJobs()
}

// TestRefusalReasons: each refusal reason through the agent's HTTP calls.
// token_missing, pin_locked and unattended keep the e-invoice waiting with the refusal
// in problems and ask again after the configured backoff (with
// einvoice.signature_required); user_declined, policy and payload_invalid
// fail it with problem signature_refused and einvoice.failed.
func TestRefusalReasons(t *testing.T) {
	t.Parallel()
	const backoff = 2 * time.Minute
	for _, tc := range []struct {
		reason  string
		passing bool
	}{
		{"token_missing", true},
		{"pin_locked", true},
		{"unattended", true}, // nobody was there to ask: never final
		{"user_declined", false},
		{"policy", false},
		{"payload_invalid", false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newPipeEnvWith(t, db, func(c *appConfig) { c.RefusalBackoff = backoff })
				id := e.issue("F-" + tc.reason)
				first := e.einvoice(id)["signingRequestId"].(string)
				if st, m := e.agentDo("POST", "/v1/signing-requests/"+first+"/claim", e.authz, nil); st != 200 {
					t.Fatalf("claim: %d %v", st, m)
				}
				msg := "refused in the test (" + tc.reason + ")"
				st, m := e.agentDo("POST", "/v1/signing-requests/"+first+"/refuse", e.authz, map[string]any{"reason": tc.reason, "message": msg})
				if st != 200 || m["state"] != "refused" || m["refusal"].(map[string]any)["reason"] != tc.reason {
					t.Fatalf("refuse: %d %v", st, m)
				}
				inv := e.einvoice(id)
				probs, _ := inv["problems"].([]any)
				if len(probs) != 1 {
					t.Fatalf("problems %v", inv["problems"])
				}
				p := probs[0].(map[string]any)
				if p["code"] != "signature_refused" || p["reason"] != tc.reason || !strings.Contains(p["message"].(string), msg) || p["signingRequestId"] != first {
					t.Fatalf("problem %v", p)
				}
				if !tc.passing {
					if inv["status"] != "failed" || inv["signingRequestId"] != nil {
						t.Fatalf("after %s: %v %v", tc.reason, inv["status"], inv["signingRequestId"])
					}
					if ev := e.events(id); !equal(ev, []string{"einvoice.signature_required", "einvoice.failed"}) {
						t.Fatalf("events %v", ev)
					}
					if h := e.history(id); h[len(h)-1] != "awaiting_signature→failed:signature_refused" {
						t.Fatalf("history %v", h)
					}
					// Nothing asks again.
					e.advance(backoff + time.Minute)
					e.runJobs()
					if reqs := e.docRequests(id); len(reqs) != 1 {
						t.Fatalf("requests after a final refusal: %v", reqs)
					}
					e.wantStatus(id, "failed")
					return
				}
				if inv["status"] != "awaiting_signature" || inv["signingRequestId"] != nil {
					t.Fatalf("after %s: %v %v", tc.reason, inv["status"], inv["signingRequestId"])
				}
				// Within the backoff nothing is asked.
				e.advance(backoff - 5*time.Second)
				e.runJobs()
				if reqs := e.docRequests(id); len(reqs) != 1 {
					t.Fatalf("asked again within the backoff: %v", reqs)
				}
				if ev := e.events(id); !equal(ev, []string{"einvoice.signature_required"}) {
					t.Fatalf("events within the backoff %v", ev)
				}
				// After it, a new request, announced.
				e.advance(10 * time.Second)
				e.runJobs()
				reqs := e.docRequests(id)
				inv = e.wantStatus(id, "awaiting_signature")
				if len(reqs) != 2 || inv["signingRequestId"] != reqs[1] {
					t.Fatalf("after the backoff: requests %v, e-invoice waits on %v", reqs, inv["signingRequestId"])
				}
				if ev := e.events(id); !equal(ev, []string{"einvoice.signature_required", "einvoice.signature_required"}) {
					t.Fatalf("events after the backoff %v", ev)
				}
				if st, m := e.agentDo("GET", "/v1/signing-requests/"+reqs[1], e.authz, nil); st != 200 || m["state"] != "pending" {
					t.Fatalf("new request: %d %v", st, m)
				}
				// Signed this time: delivered, and the refusal no longer
				// counts as a problem.
				e.settle()
				inv = e.wantStatus(id, "delivered")
				if p, _ := inv["problems"].([]any); len(p) != 0 {
					t.Fatalf("problems after delivery %v", inv["problems"])
				}
				e.wantOneEventPerRequest(id)
			})
		})
	}
}

// TestLateSignature: a claim or signature on an expired request answers
// 410 signature_expired with replacedBy at any time after expiry, whoever
// expired it, and replacedBy can be signed and delivers the document.
func TestLateSignature(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		late := func(sr string, wantReplacement string) string {
			t.Helper()
			var got []string
			for _, op := range []string{"claim", "signature", "refuse"} {
				var body any
				switch op {
				case "signature":
					body = map[string]string{"jws": e.cert.sign(t, "eyJhbGciOiJSUzI1NiJ9.e30")}
				case "refuse":
					body = map[string]string{"reason": "user_declined"}
				}
				st, m := e.agentDo("POST", "/v1/signing-requests/"+sr+"/"+op, e.authz, body)
				if st != 410 || m["code"] != "signature_expired" {
					t.Fatalf("%s on %s: %d %v", op, sr, st, m)
				}
				r, _ := m["replacedBy"].(string)
				if r == "" || m["instance"] == "" {
					t.Fatalf("%s on %s: no replacedBy or instance: %v", op, sr, m)
				}
				got = append(got, r)
			}
			if got[0] != got[1] || got[1] != got[2] || (wantReplacement != "" && got[0] != wantReplacement) {
				t.Fatalf("replacedBy %v, want %s each time", got, wantReplacement)
			}
			return got[0]
		}

		// Expired by the job; the signer comes an hour later.
		byJob := e.issue("F-job")
		sr1 := e.einvoice(byJob)["signingRequestId"].(string)
		e.advance(16 * time.Minute)
		e.runExpiry()
		reqs := e.docRequests(byJob)
		if len(reqs) != 2 {
			t.Fatalf("after the expiry job: %v", reqs)
		}
		if st, m := e.agentDo("GET", "/v1/signing-requests/"+sr1, e.authz, nil); st != 200 || m["state"] != "expired" || m["replacedBy"] != reqs[1] {
			t.Fatalf("expired request: %d %v", st, m)
		}
		if got := late(sr1, reqs[1]); got != reqs[1] {
			t.Fatal(got)
		}
		// The replacement expires in turn: replacedBy follows on to a
		// request that can still be signed.
		e.advance(time.Hour)
		next := late(sr1, "")
		if next == reqs[1] {
			t.Fatalf("replacedBy %s, which expired", next)
		}
		if st, m := e.agentDo("GET", "/v1/signing-requests/"+next, e.authz, nil); st != 200 || m["state"] != "pending" {
			t.Fatalf("replacement: %d %v", st, m)
		}
		if again := late(reqs[1], next); again != next {
			t.Fatal(again)
		}
		// Signing what replacedBy names delivers the document, without
		// another signature: the replacement carries a fresh
		// requestTimestamp.
		e.settle()
		e.wantStatus(byJob, "delivered")
		if n := len(e.docRequests(byJob)); n != 3 {
			t.Fatalf("%d document requests, want 3", n)
		}
		e.wantOneEventPerRequest(byJob)

		// Expired by a late claim, before any job ran.
		byClaim := e.issue("F-claim")
		first := e.einvoice(byClaim)["signingRequestId"].(string)
		e.advance(16 * time.Minute)
		repl := late(first, "")
		// The expiry job that runs afterwards issues nothing more.
		e.runExpiry()
		if reqs := e.docRequests(byClaim); len(reqs) != 2 || reqs[1] != repl {
			t.Fatalf("requests %v, replacedBy %s", reqs, repl)
		}
		if inv := e.einvoice(byClaim); inv["signingRequestId"] != repl {
			t.Fatalf("e-invoice waits on %v, want %s", inv["signingRequestId"], repl)
		}
		e.settle()
		e.wantStatus(byClaim, "delivered")
		e.wantOneEventPerRequest(byClaim)
	})
}

// TestSeveralAgentsOneCompany: two agents with different certificates for
// one company both receive its requests (one on the WebSocket, one by
// long-poll); the first claim wins with its own certificate in the
// protected header, the other gets 409 already_claimed, and the document
// signed by the winner is delivered. Connection changes are events.
func TestSeveralAgentsOneCompany(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db) // agent A with e.cert
		se := &signEnv{t: t, db: db, srv: e.srv, key: e.key, company: e.company}
		certB := newTestCert(t)
		agentB, authzB := se.pair(certB) // registered last: the company's current certificate

		conn, _, err := websocket.Dial(t.Context(), wsURL(e.srv.URL, e.agent), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {e.authz}}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		if m := readMsg(t, conn); m.Type != "hello" {
			t.Fatalf("hello: %+v", m)
		}
		type poll struct {
			st int
			m  map[string]any
		}
		polled := make(chan poll, 1)
		go func() {
			st, m := se.do("GET", "/v1/agents/"+agentB+"/signing-requests?wait=10", authzB, nil)
			polled <- poll{st, m}
		}()

		id := e.issue("F-two-agents")
		sr := e.einvoice(id)["signingRequestId"].(string)
		pushed := readMsg(t, conn)
		if pushed.Type != "signing_request" || pushed.Request == nil || pushed.Request.ID != sr {
			t.Fatalf("A's socket: %+v", pushed)
		}
		var got poll
		select {
		case got = <-polled:
		case <-time.After(15 * time.Second):
			t.Fatal("B's long-poll did not return")
		}
		if data, _ := got.m["data"].([]any); got.st != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != sr {
			t.Fatalf("B's long-poll: %d %v", got.st, got.m)
		}
		if x5c := headerCert(t, pushed.Request.ProtectedHeader); x5c != base64.StdEncoding.EncodeToString(certB.cert.Raw) {
			t.Fatal("the request was not issued with the company's newest certificate")
		}

		// A claims first: the header is issued again with A's certificate.
		st, claimed := e.agentDo("POST", "/v1/signing-requests/"+sr+"/claim", e.authz, nil)
		if st != 200 || claimed["claimedBy"] != e.agent {
			t.Fatalf("A's claim: %d %v", st, claimed)
		}
		if x5c := headerCert(t, claimed["protectedHeader"].(string)); x5c != base64.StdEncoding.EncodeToString(e.cert.cert.Raw) {
			t.Fatal("the claim did not re-issue the header with the claimer's certificate")
		}
		if st, m := se.do("POST", "/v1/signing-requests/"+sr+"/claim", authzB, nil); st != 409 || m["code"] != "already_claimed" {
			t.Fatalf("B's claim: %d %v", st, m)
		}
		if st, m := se.do("POST", "/v1/signing-requests/"+sr+"/signature", authzB, map[string]string{"jws": certB.sign(t, pushed.Request.SigningInput)}); st != 409 || m["code"] != "already_claimed" {
			t.Fatalf("B's signature: %d %v", st, m)
		}
		// A signs what its claim answered.
		jws := e.cert.sign(t, claimed["signingInput"].(string))
		if st, m := e.agentDo("POST", "/v1/signing-requests/"+sr+"/signature", e.authz, map[string]string{"jws": jws}); st != 200 || m["state"] != "signed" {
			t.Fatalf("A's signature: %d %v", st, m)
		}
		e.settle()
		m := e.wantStatus(id, "delivered")
		doc, err := e.sim.Document(t.Context(), m["euid"].(string))
		if err != nil || doc.DocID != id {
			t.Fatalf("UJP has %+v (%v)", doc, err)
		}

		// Connection changes: both agents came online for the company on
		// registering; A's socket closing is signing_agent.offline.
		conn.Close(websocket.StatusNormalClosure, "")
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, m, _ := e.call("GET", "/v1/events?type=signing_agent.offline&objectId="+e.agent, nil)
			if d, _ := m["data"].([]any); len(d) == 1 {
				ev := d[0].(map[string]any)
				obj := ev["data"].(map[string]any)["object"].(map[string]any)
				if ev["companyId"] != e.company || obj["id"] != e.agent || obj["online"] != false {
					t.Fatalf("offline event %v", ev)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no signing_agent.offline for A: %v", m)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, agent := range []string{e.agent, agentB} {
			_, m, raw := e.call("GET", "/v1/events?type=signing_agent.online&objectId="+agent, nil)
			d, _ := m["data"].([]any)
			if len(d) == 0 || d[0].(map[string]any)["companyId"] != e.company {
				t.Fatalf("online events of %s: %s", agent, raw)
			}
		}
		e.wantOneEventPerRequest(id)
	})
}

// headerCert returns the x5c leaf of a base64url protected header.
func headerCert(t *testing.T, b64 string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		X5C []string `json:"x5c"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || len(h.X5C) == 0 {
		t.Fatalf("header %s: %v", raw, err)
	}
	return h.X5C[0]
}

// TestSigningRequestsWithOrdinaryKey: GET /v1/signing-requests needs only
// a read scope (einvoices:read, or signing:agent); answering a request
// still needs signing:agent or an agent.
func TestSigningRequestsWithOrdinaryKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-list")
		sr := e.einvoice(id)["signingRequestId"].(string)
		se := &signEnv{t: t, db: db, srv: e.srv}
		var account string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT account_id FROM companies WHERE id = $1", e.company).Scan(&account); err != nil {
			t.Fatal(err)
		}
		c := &capi{t: t, db: db, auth: &auth.Store{DB: db}}
		reader := c.key(account, "sandbox", []string{"einvoices:read"}, nil)
		signerKey := c.key(account, "sandbox", []string{"signing:agent"}, nil)
		other := c.key(account, "sandbox", []string{"companies:read"}, nil)
		for _, tc := range []struct {
			name, key string
			status    int
		}{{"einvoices:read", reader, 200}, {"signing:agent", signerKey, 200}, {"companies:read", other, 403}} {
			st, m := se.do("GET", "/v1/signing-requests?state=pending", "Bearer "+tc.key, nil)
			if st != tc.status {
				t.Fatalf("%s: list %d %v", tc.name, st, m)
			}
			if st == 200 {
				if d, _ := m["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != sr {
					t.Fatalf("%s: list %v", tc.name, m)
				}
			} else if m["code"] != "insufficient_scope" {
				t.Fatalf("%s: %v", tc.name, m)
			}
		}
		for _, op := range []string{"claim", "signature", "refuse"} {
			var body any
			switch op {
			case "signature":
				body = map[string]string{"jws": "a.b.c"}
			case "refuse":
				body = map[string]string{"reason": "policy"}
			}
			if st, m := se.do("POST", "/v1/signing-requests/"+sr+"/"+op, "Bearer "+reader, body); st != 403 || m["code"] != "insufficient_scope" {
				t.Fatalf("%s with einvoices:read: %d %v", op, st, m)
			}
		}
		// Inline signing with signing:agent.
		st, m := se.do("POST", "/v1/signing-requests/"+sr+"/signature", "Bearer "+signerKey, map[string]string{"jws": e.cert.sign(t, e.signingInput(sr))})
		if st != 200 || m["state"] != "signed" {
			t.Fatalf("inline signature: %d %v", st, m)
		}
		e.wantStatus(id, "queued")
	})
}

// signingInput reads a request's signing input as an agent sees it.
func (e *pipeEnv) signingInput(id string) string {
	e.t.Helper()
	st, m := e.agentDo("GET", "/v1/signing-requests/"+id, e.authz, nil)
	if st != 200 {
		e.t.Fatalf("get %s: %d %v", id, st, m)
	}
	return m["signingInput"].(string)
}

// TestCertificateAsksAgain: a document whose request expired while the
// company had no valid certificate waits with no request (410 names no
// replacement); registering a certificate asks for it at once.
func TestCertificateAsksAgain(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-no-cert")
		first := e.einvoice(id)["signingRequestId"].(string)
		if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE signing_certificates SET not_after = $1 WHERE company_id = $2",
			e.now().Add(10*time.Minute), e.company); err != nil {
			t.Fatal(err)
		}
		e.advance(16 * time.Minute)
		e.runExpiry()
		if st, m := e.agentDo("POST", "/v1/signing-requests/"+first+"/claim", "Bearer "+e.key, nil); st != 410 || m["code"] != "signature_expired" || m["replacedBy"] != nil {
			t.Fatalf("late claim without a certificate: %d %v", st, m)
		}
		inv := e.wantStatus(id, "awaiting_signature")
		if inv["signingRequestId"] != nil || len(e.docRequests(id)) != 1 {
			t.Fatalf("waiting on %v, requests %v", inv["signingRequestId"], e.docRequests(id))
		}
		se := &signEnv{t: t, db: db, srv: e.srv, key: e.key, company: e.company}
		fresh := newTestCert(t)
		if st, m := se.do("POST", "/v1/agents/"+e.agent+"/certificates", e.authz, map[string]string{
			"certificateDer": base64.StdEncoding.EncodeToString(fresh.cert.Raw), "companyId": e.company, "eujpId": "EUJP-FRESH"}); st != 201 {
			t.Fatalf("certificate: %d %v", st, m)
		}
		reqs := e.docRequests(id)
		if inv := e.einvoice(id); len(reqs) != 2 || inv["signingRequestId"] != reqs[1] {
			t.Fatalf("after registering: requests %v, waiting on %v", reqs, inv["signingRequestId"])
		}
		e.wantOneEventPerRequest(id)
		e.cert = fresh
		e.registerSigners() // the simulator knows the fresh certificate, as UJP's portal would
		e.settle()
		e.wantStatus(id, "delivered")
	})
}

// TestRefusedFreshSignature: a queued document whose signature grew too old
// for UJP waits on a fresh one; a passing refusal of that one asks again
// after the backoff (it is not left queued for ever), and a final refusal
// fails it.
func TestRefusedFreshSignature(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reason string
		want   string
	}{{"pin_locked", "delivered"}, {"policy", "failed"}} {
		t.Run(tc.reason, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newPipeEnv(t, db)
				id := e.issue("F-fresh-" + tc.reason)
				e.signAll()
				e.advance(6 * time.Minute)
				e.runJobs() // the submission finds the signature stale and asks again
				inv := e.wantStatus(id, "queued")
				fresh, _ := inv["signingRequestId"].(string)
				if reqs := e.docRequests(id); len(reqs) != 2 || fresh != reqs[1] {
					t.Fatalf("fresh request: %v, e-invoice waits on %v", reqs, inv["signingRequestId"])
				}
				if st, m := e.agentDo("POST", "/v1/signing-requests/"+fresh+"/refuse", e.authz, map[string]any{"reason": tc.reason}); st != 200 {
					t.Fatalf("refuse: %d %v", st, m)
				}
				if tc.want == "failed" {
					m := e.wantStatus(id, "failed")
					if p := m["problems"].([]any); len(p) != 1 || p[0].(map[string]any)["code"] != "signature_refused" {
						t.Fatalf("problems %v", m["problems"])
					}
					return
				}
				e.wantStatus(id, "queued")
				e.advance(5*time.Minute + time.Second) // the default backoff
				e.runJobs()
				if reqs := e.docRequests(id); len(reqs) != 3 {
					t.Fatalf("after the backoff: %v", reqs)
				}
				e.settle()
				if m := e.wantStatus(id, tc.want); len(m["problems"].([]any)) != 0 {
					t.Fatalf("problems after delivery %v", m["problems"])
				}
				e.wantOneEventPerRequest(id)
			})
		})
	}
}

// TestSigningRequestSummary: a document's signing request says what a
// signer must see (the company, what signing does, the number, the buyer,
// the gross total and currency), written where it is made, on the issuing
// path and on the expiry replacement alike.
func TestSigningRequestSummary(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-SUM-1")
		inv := e.einvoice(id)
		first := inv["signingRequestId"].(string)
		check := func(sr string) {
			t.Helper()
			st, m := e.agentDo("GET", "/v1/signing-requests/"+sr, e.authz, nil)
			sum, _ := m["summary"].(map[string]any)
			totals := inv["totals"].(map[string]any)
			if st != 200 || sum == nil || sum["companyName"] != "Тест Продавач ДООЕЛ Скопје" || sum["purpose"] != "issue e-invoice F-SUM-1" ||
				sum["documentNumber"] != "F-SUM-1" || sum["buyerName"] != "Тест Купувач ДОО Скопје" ||
				sum["grossTotal"] != totals["gross"] || sum["currency"] != "MKD" || sum["sellerName"] != nil {
				t.Fatalf("signing request %s: %d summary %v (e-invoice totals %v)", sr, st, m["summary"], totals)
			}
		}
		check(first)
		e.advance(16 * time.Minute)
		e.runExpiry()
		next := e.einvoice(id)["signingRequestId"].(string)
		if next == first {
			t.Fatal("the request was not replaced")
		}
		check(next)
	})
}

// TestNotAVATPayerShowsNoVAT: a company UJP's registry knows without a VAT
// number may not issue a line with VAT: 422 at the line's vatPercent
// (ЗДДВ член 51 став 3, DDV-G); without VAT the same invoice is issued.
func TestNotAVATPayerShowsNoVAT(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET vat_number = '' WHERE id = $1", e.company); err != nil {
			t.Fatal(err)
		}
		body := func(vat, indicator string) map[string]any {
			var v map[string]any
			raw := fmt.Sprintf(`{"number":"M-1","issueDate":%q,
 "buyer":{"taxNumber":%q,"name":"Тест Купувач ДОО Скопје","address":{"street":"Широк сокак","number":"5","postalCode":"1000","city":"Скопје"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"3","unitPrice":"1000","vatPercent":%q,"taxIndicator":%q}]}`,
				e.now().Format(time.DateOnly), ujpsim.TaxBuyer, vat, indicator)
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		st, m, raw := e.call("POST", "/v1/einvoices", body("18", "DDV-A"))
		errs, _ := m["errors"].([]any)
		if st != 422 || m["code"] != "validation_failed" || len(errs) != 1 ||
			errs[0].(map[string]any)["path"] != "lines[0].vatPercent" || !strings.Contains(errs[0].(map[string]any)["message"].(string), "not registered for VAT") {
			t.Fatalf("an 18%% line of a company that is not a VAT payer: %d %s", st, raw)
		}
		if st, _, raw := e.call("POST", "/v1/einvoices", body("0", "DDV-G")); st != 202 {
			t.Fatalf("the same invoice without VAT: %d %s", st, raw)
		}
	})
}
