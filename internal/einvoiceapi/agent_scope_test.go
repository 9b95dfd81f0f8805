package einvoiceapi_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/sdk/signer"
)

// TestAgentReachIsItsCreators: an agent paired with a code that a key
// limited to company A created acts for A only. Its certificate
// registration for B is 403 company_not_allowed; a request of B — even
// with a certificate row for B written behind the API's back — is not
// delivered on its long-poll or WebSocket, and get, claim, signature and
// refusal of it are 404 (the request is the path's resource), while A's
// work. The limited key may revoke that agent but not an account-wide one
// (403 company_not_allowed), nor may a key limited to B revoke it; an
// unrestricted key may. An OAuth client's allow-list scopes its codes the
// same way, and replaying the pairing answers 409 secret_already_shown.
func TestAgentReachIsItsCreators(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newSignEnv(t, db)
		ctx := t.Context()
		as := &auth.Store{DB: db}
		compA := e.company
		var compB string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			c, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: e.account, Name: "Друга ДООЕЛ",
				TaxNumber: "4030000000002", Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox, Address: "{}", CreatedAt: tx.Now})
			compB = c.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		keyFor := func(companies ...string) string {
			t.Helper()
			_, k, err := as.CreateKey(ctx, auth.KeyParams{AccountID: e.account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox,
				Scopes: []string{"companies:read", "companies:write"}, CompanyIDs: companies})
			if err != nil {
				t.Fatal(err)
			}
			return "Bearer " + k
		}
		onlyA, onlyB := keyFor(compA), keyFor(compB)

		// An account-wide agent, serving B (and A).
		wide, wideAuthz := e.pair(newTestCert(t))
		wideCert := newTestCert(t)
		if st, m := e.do("POST", "/v1/agents/"+wide+"/certificates", wideAuthz, map[string]string{
			"certificateDer": base64.StdEncoding.EncodeToString(wideCert.cert.Raw), "companyId": compB, "eujpId": "EUJP-WIDE"}); st != 201 {
			t.Fatalf("account-wide agent for B: %d %v", st, m)
		}

		// The limited key's code, its agent, and the replay of the pairing.
		st, m := e.do("POST", "/v1/agents/pairing-codes", onlyA, nil)
		if st != 201 || !sameIDs(m["companyIds"], compA) {
			t.Fatalf("pairing code of the limited key: %d %v", st, m)
		}
		code := m["code"].(string)
		pairKey := "pair:" + code
		st, raw, _ := e.raw("POST", "/v1/agents/pair", "", pairKey, map[string]string{"code": code, "name": "limited"})
		var creds struct {
			AgentID, AgentSecret string
			CompanyIDs           []string
		}
		if err := json.Unmarshal(raw, &creds); st != 201 || err != nil || len(creds.CompanyIDs) != 1 || creds.CompanyIDs[0] != compA {
			t.Fatalf("pair: %d %s", st, raw)
		}
		agent, authz := creds.AgentID, "Agent "+creds.AgentID+"."+creds.AgentSecret
		st, raw, h := e.raw("POST", "/v1/agents/pair", "", pairKey, map[string]string{"code": code, "name": "limited"})
		var replay map[string]any
		_ = json.Unmarshal(raw, &replay)
		if st != 409 || replay["code"] != "secret_already_shown" || replay["objectId"] != agent || h.Get("Idempotent-Replayed") != "true" ||
			strings.Contains(string(raw), creds.AgentSecret) || strings.Contains(string(raw), code) {
			t.Fatalf("replayed pairing: %d %s %v", st, raw, h)
		}

		// Certificate registration: A yes, B no.
		cert := newTestCert(t)
		register := func(company string) (int, map[string]any) {
			return e.do("POST", "/v1/agents/"+agent+"/certificates", authz, map[string]string{
				"certificateDer": base64.StdEncoding.EncodeToString(cert.cert.Raw), "companyId": company, "eujpId": "EUJP-LIMITED"})
		}
		if st, m := register(compA); st != 201 {
			t.Fatalf("certificate for A: %d %v", st, m)
		}
		st, m = register(compB)
		if errs, _ := m["errors"].([]any); st != 403 || m["code"] != "company_not_allowed" || len(errs) != 1 ||
			errs[0].(map[string]any)["path"] != "companyId" {
			t.Fatalf("certificate for B: %d %v", st, m)
		}
		// What registration would have written without the rule: the
		// agent's scope still holds on every path below.
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
		// B's request first: were it deliverable, it would come first.
		reqB := requestOf(compB, "b1")
		reqA := requestOf(compA, "a1")

		st, m = e.do("GET", "/v1/agents/"+agent+"/signing-requests?wait=0", authz, nil)
		if data, _ := m["data"].([]any); st != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != reqA.ID {
			t.Fatalf("long-poll of the limited agent: %d %v", st, m)
		}
		if st, m := e.do("GET", "/v1/agents/"+wide+"/signing-requests?wait=0", wideAuthz, nil); st != 200 || len(m["data"].([]any)) != 2 {
			t.Fatalf("long-poll of the account-wide agent: %d %v", st, m)
		}
		ws, _, err := websocket.Dial(ctx, wsURL(e.srv.URL, agent), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		if msg := readMsg(t, ws); msg.Type != "hello" {
			t.Fatalf("hello: %+v", msg)
		}
		if msg := readMsg(t, ws); msg.Type != "signing_request" || msg.Request.ID != reqA.ID {
			t.Fatalf("first pushed request: %+v", msg)
		}
		// Another of each while connected: A's arrives, B's never does.
		reqB2 := requestOf(compB, "b2")
		reqA2 := requestOf(compA, "a2")
		if msg := readMsg(t, ws); msg.Type != "signing_request" || msg.Request.ID != reqA2.ID {
			t.Fatalf("second pushed request: %+v (B's were %s, %s)", msg, reqB.ID, reqB2.ID)
		}
		ws.Close(websocket.StatusNormalClosure, "")

		jws := cert.sign(t, reqB.SigningInput)
		for _, op := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/v1/signing-requests/" + reqB.ID, nil},
			{"POST", "/v1/signing-requests/" + reqB.ID + "/claim", nil},
			{"POST", "/v1/signing-requests/" + reqB.ID + "/signature", map[string]string{"jws": jws}},
			{"POST", "/v1/signing-requests/" + reqB.ID + "/refuse", map[string]string{"reason": "user_declined"}},
		} {
			if st, m := e.do(op.method, op.path, authz, op.body); st != 404 || m["code"] != "not_found" {
				t.Fatalf("%s %s by the limited agent: %d %v", op.method, op.path, st, m)
			}
		}
		if r, err := einvoicing.GetSigningRequest(ctx, db.Reader(), reqB.ID); err != nil || r.State != einvoicing.StatePending {
			t.Fatalf("B's request after the limited agent's tries: %+v %v", r, err)
		}
		if st, m := e.do("GET", "/v1/signing-requests/"+reqA.ID, authz, nil); st != 200 {
			t.Fatalf("GET of A's request: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+reqA.ID+"/claim", authz, nil); st != 200 || m["state"] != "claimed" {
			t.Fatalf("claim of A's request: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+reqA2.ID+"/refuse", authz, map[string]string{"reason": "policy"}); st != 200 {
			t.Fatalf("refusal of A's request: %d %v", st, m)
		}

		// Revocation: only a credential that reaches all the agent's companies.
		if st, m := e.do("POST", "/v1/agents/"+wide+"/revoke", onlyA, nil); st != 403 || m["code"] != "company_not_allowed" {
			t.Fatalf("limited key revokes an account-wide agent: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/agents/"+agent+"/revoke", onlyB, nil); st != 403 || m["code"] != "company_not_allowed" {
			t.Fatalf("key of B revokes A's agent: %d %v", st, m)
		}
		if a, err := db.Reader().GetSigningAgent(ctx, wide); err != nil || a.RevokedAt.Valid {
			t.Fatalf("the account-wide agent after refused revocations: %+v %v", a, err)
		}
		if st, m := e.do("POST", "/v1/agents/"+agent+"/revoke", onlyA, nil); st != 200 || m["revokedAt"] == nil || !sameIDs(m["companyIds"], compA) {
			t.Fatalf("limited key revokes its own agent: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/agents/"+wide+"/revoke", "Bearer "+e.key, nil); st != 200 || !sameIDs(m["companyIds"]) {
			t.Fatalf("unrestricted key revokes the account-wide agent: %d %v", st, m)
		}

		// The SDK's pairing: a second run with the same code (its answer
		// lost) is told to pair again with a new code.
		st, m = e.do("POST", "/v1/agents/pairing-codes", onlyA, nil)
		if st != 201 {
			t.Fatalf("pairing code: %d %v", st, m)
		}
		again := m["code"].(string)
		if c, err := signer.Pair(ctx, nil, e.srv.URL, again, "sdk"); err != nil || c.Secret == "" {
			t.Fatalf("SDK pairing: %+v %v", c, err)
		}
		if _, err := signer.Pair(ctx, nil, e.srv.URL, again, "sdk"); !errors.Is(err, signer.ErrPairingAnswerLost) {
			t.Fatalf("SDK pairing again with the code: %v", err)
		}

		// An OAuth client's allow-list scopes its pairing codes alike.
		client, secret, err := as.CreateClient(ctx, auth.ClientParams{AccountID: e.account, Environment: auth.EnvSandbox,
			Scopes: []string{"companies:write"}, CompanyIDs: []string{compB}})
		if err != nil {
			t.Fatal(err)
		}
		tok := oauthToken(t, e.srv.URL, client.ID, secret)
		if st, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+tok, nil); st != 201 || !sameIDs(m["companyIds"], compB) {
			t.Fatalf("pairing code of a limited OAuth client: %d %v", st, m)
		}
	})
}

// sameIDs reports whether a JSON array holds exactly ids, in order.
func sameIDs(v any, ids ...string) bool {
	list, ok := v.([]any)
	if !ok || len(list) != len(ids) {
		return false
	}
	for i, id := range ids {
		if list[i] != id {
			return false
		}
	}
	return true
}

// raw sends a request with the given Idempotency-Key and returns the
// status, body and headers.
func (e *signEnv) raw(method, path, authz, key string, body any) (int, []byte, http.Header) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(e.t.Context(), method, e.srv.URL+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header
}

// oauthToken exchanges client credentials for an access token.
func oauthToken(t *testing.T, base, id, secret string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret}}
	resp, err := http.PostForm(base+"/v1/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); resp.StatusCode != 200 || err != nil || out.AccessToken == "" {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return out.AccessToken
}
