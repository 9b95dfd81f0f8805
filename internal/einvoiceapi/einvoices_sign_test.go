package einvoiceapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestIssueSignQueue: POST /v1/einvoices → 202 awaiting_signature with a
// signing request; the agent signs; the e-invoice is queued with history;
// the same clientReference and body returns it, another body is 409.
func TestIssueSignQueue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		_, agentAuthz := e.pair(c)
		key := e.issuingKey()
		body := strings.Replace(issueBody, "%s", "", 1)
		st, m := e.doRaw("POST", "/v1/einvoices", "Bearer "+key, body)
		if st != 202 || m["status"] != "awaiting_signature" || m["ujpDocId"] != m["id"] {
			t.Fatalf("issue: %d %v", st, m)
		}
		id := m["id"].(string)
		if st, m2 := e.doRaw("POST", "/v1/einvoices", "Bearer "+key, body); st != 202 || m2["id"] != id {
			t.Fatalf("replay: %d %v", st, m2)
		}
		if st, m2 := e.doRaw("POST", "/v1/einvoices", "Bearer "+key, strings.Replace(body, `"F-1"`, `"F-2"`, 1)); st != 409 || m2["code"] != "client_reference_conflict" {
			t.Fatalf("conflict: %d %v", st, m2)
		}
		var srID string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT id FROM signing_requests WHERE link_id = $1", id).Scan(&srID); err != nil {
			t.Fatal(err)
		}
		sr, err := einvoicing.GetSigningRequest(t.Context(), db.Reader(), srID)
		if err != nil {
			t.Fatal(err)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+srID+"/claim", agentAuthz, nil); st != 200 {
			t.Fatalf("claim: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+srID+"/signature", agentAuthz, map[string]string{"jws": c.sign(t, sr.SigningInput)}); st != 200 {
			t.Fatalf("sign: %d %v", st, m)
		}
		if st, m := e.doRaw("GET", "/v1/einvoices/"+id, "Bearer "+key, ""); st != 200 || m["status"] != "queued" {
			t.Fatalf("after signing: %d %v", st, m)
		}
		st, m = e.doRaw("GET", "/v1/einvoices/"+id+"/status-history", "Bearer "+key, "")
		if d, _ := m["data"].([]any); st != 200 || len(d) != 2 || d[1].(map[string]any)["cause"] != "signed" {
			t.Fatalf("history: %d %v", st, m)
		}
	})
}

func (e *signEnv) doRaw(method, path, authz, body string) (int, map[string]any) {
	e.t.Helper()
	if body == "" {
		return e.do(method, path, authz, nil)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		e.t.Fatal(err)
	}
	return e.do(method, path, authz, v)
}

// issuingKey readies signEnv's company to issue e-invoices (the seller's
// address, which comes from the registry, and signEnv's company has none)
// and returns an e-invoicing key for it.
func (e *signEnv) issuingKey() string {
	e.t.Helper()
	_, key, err := (&auth.Store{DB: e.db}).CreateKey(e.t.Context(), auth.KeyParams{AccountID: e.account, Service: auth.ServiceEInvoice,
		Environment: auth.EnvSandbox, Scopes: []string{"einvoices:write", "einvoices:read"}, CompanyIDs: []string{e.company}})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.WriteDB().ExecContext(e.t.Context(), "UPDATE companies SET address = $1 WHERE id = $2",
		`{"street":"Партизанска","number":"1","city":"Скопје","zip":"1000"}`, e.company); err != nil {
		e.t.Fatal(err)
	}
	return key
}
