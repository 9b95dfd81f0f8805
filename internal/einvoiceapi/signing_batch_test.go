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
	"github.com/coder/websocket/wsjson"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// batchAnswer is the answer of a batch operation as a client reads it.
type batchAnswer struct {
	Object string
	Data   []struct {
		Object, ID string
		Status     int
		Request    *einvoicing.SigningRequest
		Error      map[string]any
	}
}

// batch posts a batch operation and decodes its answer; it fails the test
// unless the batch itself answers want.
func (e *signEnv) batch(path, authz, key string, body any, want int) (batchAnswer, []byte, http.Header) {
	e.t.Helper()
	st, raw, h := e.raw("POST", path, authz, key, body)
	if st != want {
		e.t.Fatalf("POST %s: %d %s, want %d", path, st, raw, want)
	}
	var a batchAnswer
	if st == 200 {
		if err := json.Unmarshal(raw, &a); err != nil || a.Object != "list" {
			e.t.Fatalf("POST %s: %v %s", path, err, raw)
		}
	}
	return a, raw, h
}

// outcomes lists each item as "status" or "status code".
func (a batchAnswer) outcomes() string {
	var out []string
	for _, it := range a.Data {
		s := fmt.Sprint(it.Status)
		if it.Error != nil {
			s += " " + fmt.Sprint(it.Error["code"])
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

func (e *signEnv) state(id string) string {
	e.t.Helper()
	r, err := einvoicing.GetSigningRequest(e.t.Context(), e.db.Reader(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r.State
}

// TestSigningBatches: claims, signatures and refusals of several requests
// in one call each, every item answered as its single operation would be —
// a bad signature or an unknown id fails alone while the others take
// effect; a retry with the same key replays the same items; a malformed
// batch changes nothing; a claim by max takes what waits; an expired item
// is 410 with the request to sign now; an inline-signing key batches too.
func TestSigningBatches(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		agent, authz := e.pair(c)
		var r [5]einvoicing.SigningRequest
		for i := range r {
			r[i] = e.request(einvoicing.PurposeDocument, fmt.Sprintf(`{"n":%d}`, i))
		}

		claimed, _, _ := e.batch("/v1/signing-requests/claims", authz, "claims-1",
			map[string]any{"ids": []string{r[0].ID, r[1].ID, r[2].ID, r[3].ID, "sgr_nope"}}, 200)
		if got := claimed.outcomes(); got != "200, 200, 200, 200, 404 not_found" {
			t.Fatalf("claims: %s", got)
		}
		for i, it := range claimed.Data[:4] {
			if it.ID != r[i].ID || it.Object != "signing_request_result" || it.Request == nil || it.Request.State != "claimed" ||
				it.Request.ClaimedBy == nil || *it.Request.ClaimedBy != agent || it.Error != nil {
				t.Fatalf("claimed item %d: %+v", i, it)
			}
		}
		if it := claimed.Data[4]; it.ID != "sgr_nope" || it.Request != nil || it.Error["status"] != float64(404) || it.Error["instance"] == "" {
			t.Fatalf("unknown item: %+v", it)
		}

		// A bad signature inside the batch fails alone.
		sigs := map[string]any{"items": []map[string]string{
			{"id": r[0].ID, "jws": c.sign(t, claimed.Data[0].Request.SigningInput)},
			{"id": r[1].ID, "jws": c.sign(t, claimed.Data[0].Request.SigningInput)}, // r0's signature on r1
			{"id": r[2].ID, "jws": c.sign(t, claimed.Data[2].Request.SigningInput)},
		}}
		signed, first, _ := e.batch("/v1/signing-requests/signatures", authz, "signatures-1", sigs, 200)
		if got := signed.outcomes(); got != "200, 422 payload_mismatch, 200" {
			t.Fatalf("signatures: %s", got)
		}
		if signed.Data[0].Request.State != "signed" || signed.Data[0].Request.JWS == nil {
			t.Fatalf("signed item: %+v", signed.Data[0])
		}
		for id, want := range map[string]string{r[0].ID: "signed", r[1].ID: "claimed", r[2].ID: "signed", r[3].ID: "claimed", r[4].ID: "pending"} {
			if got := e.state(id); got != want {
				t.Errorf("%s after the signatures: %s, want %s", id, got, want)
			}
		}
		// The same key and body: the same items, byte for byte.
		_, again, h := e.batch("/v1/signing-requests/signatures", authz, "signatures-1", sigs, 200)
		if string(again) != string(first) || h.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay:\n%s\nfirst:\n%s", again, first)
		}
		// The identical JWS again under another key: a retry, not a second signature.
		if a, _, _ := e.batch("/v1/signing-requests/signatures", authz, "signatures-2", sigs, 200); a.outcomes() != "200, 422 payload_mismatch, 200" {
			t.Fatalf("resubmitted: %s", a.outcomes())
		}

		// Refusals: one per request, each with its own reason.
		refused, _, _ := e.batch("/v1/signing-requests/refusals", authz, "refusals-1", map[string]any{"items": []map[string]string{
			{"id": r[1].ID, "reason": "user_declined", "message": "не"}, {"id": r[3].ID, "reason": "pin_locked"}, {"id": r[0].ID, "reason": "policy"},
		}}, 200)
		if got := refused.outcomes(); got != "200, 200, 409 signing_request_finished" {
			t.Fatalf("refusals: %s", got)
		}
		if rr := refused.Data[0].Request; rr.State != "refused" || rr.Refusal == nil || rr.Refusal.Reason != "user_declined" || rr.Refusal.Message != "не" {
			t.Fatalf("refused item: %+v", rr)
		}
		if e.state(r[0].ID) != "signed" || e.state(r[3].ID) != "refused" {
			t.Fatal("a refusal inside the batch changed a signed request, or was not recorded")
		}

		// Malformed batches: refused whole, nothing changed.
		for _, tt := range []struct {
			path string
			body any
			at   string
		}{
			{"/v1/signing-requests/refusals", map[string]any{"items": []map[string]string{{"id": r[4].ID, "reason": "policy"}, {"id": r[4].ID, "reason": "policy"}}}, "items[1].id"},
			{"/v1/signing-requests/refusals", map[string]any{"items": []map[string]string{{"id": r[4].ID, "reason": "bored"}}}, "items[0].reason"},
			{"/v1/signing-requests/refusals", map[string]any{"items": []map[string]string{}}, "items"},
			{"/v1/signing-requests/claims", map[string]any{"ids": []string{r[4].ID}, "max": 3}, "max"},
			{"/v1/signing-requests/claims", map[string]any{}, "ids"},
			{"/v1/signing-requests/claims", map[string]any{"max": 101}, "max"},
		} {
			_, raw, _ := e.batch(tt.path, authz, denar.NewID("k"), tt.body, 422)
			var p struct {
				Code   string
				Errors []struct{ Path string }
			}
			if err := json.Unmarshal(raw, &p); err != nil || p.Code != "validation_failed" || len(p.Errors) == 0 || p.Errors[0].Path != tt.at {
				t.Errorf("%s %v: %s, want validation_failed at %s", tt.path, tt.body, raw, tt.at)
			}
		}
		ids := make([]string, 101)
		for i := range ids {
			ids[i] = fmt.Sprintf("sgr_%d", i)
		}
		e.batch("/v1/signing-requests/claims", authz, "too-many", map[string]any{"ids": ids}, 422)
		if e.state(r[4].ID) != "pending" {
			t.Fatal("a refused batch changed a request")
		}

		// Claim by max: what waits for the agent.
		next, _, _ := e.batch("/v1/signing-requests/claims", authz, "claims-max", map[string]any{"max": 10}, 200)
		if len(next.Data) != 1 || next.Data[0].ID != r[4].ID || next.Data[0].Request.State != "claimed" {
			t.Fatalf("claim by max: %+v", next)
		}

		// An inline-signing key batches too, and finds nothing of the agent's.
		keyAuthz := "Bearer " + e.key
		r5 := e.request(einvoicing.PurposeQuery, `{"n":5}`)
		byKey, _, _ := e.batch("/v1/signing-requests/claims", keyAuthz, "key-claims", map[string]any{"ids": []string{r5.ID, r[4].ID}}, 200)
		if got := byKey.outcomes(); got != "200, 409 already_claimed" || *byKey.Data[0].Request.ClaimedBy == agent {
			t.Fatalf("key's claims: %s %+v", got, byKey.Data[0].Request)
		}

		// Expiry: the item is 410 with the request to sign now, the others go on.
		r6 := e.request(einvoicing.PurposeDocument, `{"n":6}`)
		e.clock.Add(int64(16 * time.Minute))
		r7 := e.request(einvoicing.PurposeDocument, `{"n":7}`)
		late, _, _ := e.batch("/v1/signing-requests/signatures", authz, "late", map[string]any{"items": []map[string]string{
			{"id": r6.ID, "jws": c.sign(t, r6.SigningInput)}, {"id": r7.ID, "jws": c.sign(t, r7.SigningInput)},
		}}, 200)
		if got := late.outcomes(); got != "410 signature_expired, 200" {
			t.Fatalf("late signatures: %s", got)
		}
		next6, _ := late.Data[0].Error["replacedBy"].(string)
		if next6 == "" || e.state(r6.ID) != "expired" || e.state(next6) != "pending" {
			t.Fatalf("expired item: %+v (replacement %q)", late.Data[0], next6)
		}
	})
}

// TestSigningBatchAgentScope: an agent limited to company A claims, signs
// and refuses in batches that also name B's requests: B's items are 404
// (even with a certificate row for B written behind the API's back) and
// stay untouched, A's take effect.
func TestSigningBatchAgentScope(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		ctx := t.Context()
		compA := e.company
		var compB string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			co, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: e.account, Name: "Друга ДООЕЛ",
				TaxNumber: "4030000000002", Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox, Address: "{}", CreatedAt: tx.Now})
			compB = co.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// An account-wide agent serves B (so B's requests can be made).
		wideCert := newTestCert(t)
		wide, wideAuthz := e.pair(wideCert)
		if st, m := e.do("POST", "/v1/agents/"+wide+"/certificates", wideAuthz, map[string]string{
			"certificateDer": base64.StdEncoding.EncodeToString(wideCert.cert.Raw), "companyId": compB, "eujpId": "EUJP-WIDE"}); st != 201 {
			t.Fatalf("certificate for B: %d %v", st, m)
		}
		as := &auth.Store{DB: db}
		_, onlyA, err := as.CreateKey(ctx, auth.KeyParams{AccountID: e.account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox,
			Scopes: []string{"companies:write"}, CompanyIDs: []string{compA}})
		if err != nil {
			t.Fatal(err)
		}
		_, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+onlyA, nil)
		_, m = e.do("POST", "/v1/agents/pair", "", map[string]string{"code": m["code"].(string), "name": "limited"})
		agent, authz := m["agentId"].(string), "Agent "+m["agentId"].(string)+"."+m["agentSecret"].(string)
		cert := newTestCert(t)
		if st, m := e.do("POST", "/v1/agents/"+agent+"/certificates", authz, map[string]string{
			"certificateDer": base64.StdEncoding.EncodeToString(cert.cert.Raw), "companyId": compA, "eujpId": "EUJP-A"}); st != 201 {
			t.Fatalf("certificate for A: %d %v", st, m)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateSigningCertificate(ctx, dbq.CreateSigningCertificateParams{ID: denar.NewID("crt"), AgentID: agent,
				CompanyID: compB, Der: base64.StdEncoding.EncodeToString(cert.cert.Raw), Serial: cert.cert.SerialNumber.String(),
				Subject: cert.cert.Subject.String(), NotBefore: cert.cert.NotBefore, NotAfter: cert.cert.NotAfter, CreatedAt: tx.Now})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		requestOf := func(company, payload string) einvoicing.SigningRequest {
			t.Helper()
			var r einvoicing.SigningRequest
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				r, err = einvoicing.RequestSignature(ctx, tx, company, einvoicing.PurposeQuery, []byte(payload), einvoicing.SigningLink{Type: "einvoice", ID: "inv_" + payload})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		b1, a1, b2, a2 := requestOf(compB, "b1"), requestOf(compA, "a1"), requestOf(compB, "b2"), requestOf(compA, "a2")

		claimed, _, _ := e.batch("/v1/signing-requests/claims", authz, "c", map[string]any{"ids": []string{b1.ID, a1.ID, b2.ID, a2.ID}}, 200)
		if got := claimed.outcomes(); got != "404 not_found, 200, 404 not_found, 200" {
			t.Fatalf("claims: %s", got)
		}
		if next, _, _ := e.batch("/v1/signing-requests/claims", authz, "c-max", map[string]any{"max": 100}, 200); len(next.Data) != 2 {
			t.Fatalf("claim by max reaches beyond A: %+v", next)
		}
		signed, _, _ := e.batch("/v1/signing-requests/signatures", authz, "s", map[string]any{"items": []map[string]string{
			{"id": b1.ID, "jws": cert.sign(t, b1.SigningInput)}, {"id": a1.ID, "jws": cert.sign(t, claimed.Data[1].Request.SigningInput)},
		}}, 200)
		if got := signed.outcomes(); got != "404 not_found, 200" {
			t.Fatalf("signatures: %s", got)
		}
		refused, _, _ := e.batch("/v1/signing-requests/refusals", authz, "r", map[string]any{"items": []map[string]string{
			{"id": a2.ID, "reason": "policy"}, {"id": b2.ID, "reason": "policy"},
		}}, 200)
		if got := refused.outcomes(); got != "200, 404 not_found" {
			t.Fatalf("refusals: %s", got)
		}
		for id, want := range map[string]string{b1.ID: "pending", b2.ID: "pending", a1.ID: "signed", a2.ID: "refused"} {
			if got := e.state(id); got != want {
				t.Errorf("%s: %s, want %s", id, got, want)
			}
		}
	})
}

// wsSend sends an agent's message and reads messages until the result
// that answers it (pushed requests read meanwhile are returned too).
func wsSend(t *testing.T, c *websocket.Conn, typ, id string, body any) (einvoiceapi.WSMessage, []einvoiceapi.WSMessage) {
	t.Helper()
	b, _ := json.Marshal(body)
	if err := wsjson.Write(t.Context(), c, map[string]any{"type": typ, "id": id, "body": json.RawMessage(b)}); err != nil {
		t.Fatal(err)
	}
	var other []einvoiceapi.WSMessage
	for {
		m := readMsg(t, c)
		if m.Type == "result" && m.ReplyTo == id {
			return m, other
		}
		other = append(other, m)
	}
}

// TestSigningBatchWebSocket: with ?batch=N the socket pushes what waits
// as one signing_requests message and takes the agent's claim,
// signatures and refusals as messages, each answered as the POST of its
// body with its id as the Idempotency-Key: a refusal inside the batch
// leaves the others signed, a message sent again is answered again the
// same, and a message that names no operation gets a problem.
func TestSigningBatchWebSocket(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		agent, authz := e.pair(c)
		dial := func(query string) (*websocket.Conn, *http.Response, error) {
			return websocket.Dial(t.Context(), wsURL(e.srv.URL, agent)+query, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		}
		for _, q := range []string{"?batch=0", "?batch=101", "?batch=x"} {
			if _, resp, err := dial(q); err == nil || resp == nil || resp.StatusCode != 422 {
				t.Fatalf("%s: %v %+v", q, err, resp)
			}
		}
		var r [5]einvoicing.SigningRequest
		for i := range r {
			r[i] = e.request(einvoicing.PurposeDocument, fmt.Sprintf(`{"n":%d}`, i))
		}
		conn, _, err := dial("?batch=100")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		if m := readMsg(t, conn); m.Type != "hello" || m.Batch != 100 {
			t.Fatalf("hello: %+v", m)
		}
		push := readMsg(t, conn)
		if push.Type != "signing_requests" || len(push.Requests) != len(r) {
			t.Fatalf("push: %+v", push)
		}
		ids := make([]string, len(r))
		for i, p := range push.Requests {
			if p.ID != r[i].ID {
				t.Fatalf("pushed %d: %s, want %s", i, p.ID, r[i].ID)
			}
			ids[i] = p.ID
		}

		res, _ := wsSend(t, conn, "claim", "ws-claim-1", map[string]any{"ids": ids})
		var claimed batchAnswer
		if err := json.Unmarshal(res.Body, &claimed); err != nil || res.Status != 200 || claimed.outcomes() != "200, 200, 200, 200, 200" {
			t.Fatalf("claim: %d %s", res.Status, res.Body)
		}
		var items []map[string]string
		for _, it := range claimed.Data[:4] {
			items = append(items, map[string]string{"id": it.ID, "jws": c.sign(t, it.Request.SigningInput)})
		}
		res, _ = wsSend(t, conn, "signatures", "ws-sign-1", map[string]any{"items": items})
		var signed batchAnswer
		if err := json.Unmarshal(res.Body, &signed); err != nil || res.Status != 200 || signed.outcomes() != "200, 200, 200, 200" {
			t.Fatalf("signatures: %d %s", res.Status, res.Body)
		}
		again, _ := wsSend(t, conn, "signatures", "ws-sign-1", map[string]any{"items": items})
		if string(again.Body) != string(res.Body) {
			t.Fatalf("the same message again:\n%s\nfirst:\n%s", again.Body, res.Body)
		}
		res, _ = wsSend(t, conn, "refusals", "ws-refuse-1", map[string]any{"items": []map[string]string{{"id": r[4].ID, "reason": "user_declined"}}})
		if res.Status != 200 {
			t.Fatalf("refusals: %d %s", res.Status, res.Body)
		}
		for i, want := range []string{"signed", "signed", "signed", "signed", "refused"} {
			if got := e.state(r[i].ID); got != want {
				t.Errorf("request %d: %s, want %s", i, got, want)
			}
		}

		// What the socket refuses: a problem in the result, the socket stays.
		for _, tt := range []struct {
			msg  string
			want string
		}{
			{`{"type":"sign","id":"x1","body":{}}`, "type"},
			{`{"type":"claim","body":{"max":1}}`, "id"},
			{`{"type":"claim","id":"x2","body":{"max":0}}`, "max"},
			{`not json`, ""},
		} {
			if err := conn.Write(t.Context(), websocket.MessageText, []byte(tt.msg)); err != nil {
				t.Fatal(err)
			}
			m := readMsg(t, conn)
			var p struct {
				Code   string
				Errors []struct{ Path string }
			}
			if err := json.Unmarshal(m.Body, &p); err != nil || m.Type != "result" || m.Status != 422 || p.Code != "validation_failed" ||
				len(p.Errors) == 0 || p.Errors[0].Path != tt.want {
				t.Fatalf("%s: %+v %s", tt.msg, m, m.Body)
			}
		}

		// A request made while connected arrives as a batch of one.
		later := e.request(einvoicing.PurposeQuery, `{"n":9}`)
		if m := readMsg(t, conn); m.Type != "signing_requests" || len(m.Requests) != 1 || m.Requests[0].ID != later.ID {
			t.Fatalf("pushed later: %+v", m)
		}
		conn.Close(websocket.StatusNormalClosure, "")
	})
}
