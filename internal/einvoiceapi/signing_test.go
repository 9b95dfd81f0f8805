package einvoiceapi_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

type signEnv struct {
	t       *testing.T
	db      *store.DB
	srv     *httptest.Server
	clock   atomic.Int64 // offset in ns added to the real time
	key     string       // API key with companies:read, companies:write and signing:agent
	company string
	account string
}

func newSignEnv(t *testing.T, db *store.DB) *signEnv {
	t.Helper()
	e := &signEnv{t: t, db: db}
	db.Now = func() time.Time { return time.Now().UTC().Add(time.Duration(e.clock.Load())) }
	as := &auth.Store{DB: db}
	_, api := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
	e.srv = httptest.NewServer(api.Handler())
	t.Cleanup(e.srv.Close)
	ctx := t.Context()
	acct, err := as.CreateAccount(ctx, "Биро", "")
	if err != nil {
		t.Fatal(err)
	}
	e.account = acct.ID
	err = db.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: acct.ID, Name: "Тест ДООЕЛ",
			TaxNumber: "4030000000001", VatNumber: "МК4030000000001", Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox, Address: "{}", CreatedAt: tx.Now})
		e.company = c.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, e.key, err = as.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox,
		Scopes: []string{"companies:read", "companies:write", "signing:agent"}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *signEnv) do(method, path, authz string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	req.Header.Set("Idempotency-Key", denar.NewID("idem"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m
}

type testCert struct {
	key  *rsa.PrivateKey
	cert *x509.Certificate
}

func newTestCert(t *testing.T) testCert {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Тест ДООЕЛ"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCert{key, cert}
}

func (c testCert) sign(t *testing.T, signingInput string) string {
	sum := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(rand.Reader, c.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// pair creates a pairing code with the key, pairs, registers cert; it
// returns the agent id and its Authorization header.
func (e *signEnv) pair(c testCert) (string, string) {
	e.t.Helper()
	st, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+e.key, nil)
	if st != 201 {
		e.t.Fatalf("pairing code: %d %v", st, m)
	}
	code := m["code"].(string)
	st, m = e.do("POST", "/v1/agents/pair", "", map[string]string{"code": strings.ToLower(code[:5]) + "-" + code[5:], "name": "laptop"})
	if st != 201 {
		e.t.Fatalf("pair: %d %v", st, m)
	}
	id, authz := m["agentId"].(string), "Agent "+m["agentId"].(string)+"."+m["agentSecret"].(string)
	if st, m := e.do("POST", "/v1/agents/pair", "", map[string]string{"code": code, "name": "again"}); st != 422 || m["code"] != "pairing_code_invalid" {
		e.t.Fatalf("code reused: %d %v", st, m)
	}
	st, m = e.do("POST", "/v1/agents/"+id+"/certificates", authz, map[string]string{
		"certificateDer": base64.StdEncoding.EncodeToString(c.cert.Raw), "companyId": e.company, "eujpId": "EUJP-" + id})
	if st != 201 || m["serialNumber"] != c.cert.SerialNumber.String() {
		e.t.Fatalf("certificate: %d %v", st, m)
	}
	return id, authz
}

func (e *signEnv) request(purpose string, payload string) einvoicing.SigningRequest {
	e.t.Helper()
	var r einvoicing.SigningRequest
	err := e.db.InTx(e.t.Context(), func(tx *store.Tx) error {
		var err error
		r, err = einvoicing.RequestSignature(e.t.Context(), tx, e.company, purpose, []byte(payload), einvoicing.SigningLink{Type: "einvoice", ID: "inv_1"})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func TestSigningEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		agent, authz := e.pair(c)
		ready, err := einvoicing.SignerReady(t.Context(), db.Reader(), e.company, db.Now())
		if err != nil || !ready {
			t.Fatalf("signerReady = %v, %v", ready, err)
		}
		// The company shows it too.
		st, co := e.do("GET", "/v1/companies/"+e.company, "Bearer "+e.key, nil)
		envs, _ := co["environments"].(map[string]any)
		sandbox, _ := envs["sandbox"].(map[string]any)
		if st != 200 || sandbox["signerReady"] != true {
			t.Fatalf("company after pairing: %d %v", st, co)
		}

		// Long-poll: the request arrives while the agent waits.
		type result struct {
			st int
			m  map[string]any
		}
		got := make(chan result, 1)
		go func() {
			st, m := e.do("GET", "/v1/agents/"+agent+"/signing-requests?wait=10", authz, nil)
			got <- result{st, m}
		}()
		waitInFlight(t, e.srv.URL, 2) // the long-poll, and the metrics request asking
		sr := e.request(einvoicing.PurposeDocument, `{"invoice":"inv_1","total":"1180.00"}`)
		res := <-got
		data, _ := res.m["data"].([]any)
		if res.st != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != sr.ID {
			t.Fatalf("long-poll: %d %v", res.st, res.m)
		}
		item := data[0].(map[string]any)
		if item["signingInput"] != item["protectedHeader"].(string)+"."+item["payload"].(string) || item["purpose"] != "document" {
			t.Fatalf("request body: %v", item)
		}

		// Claim, double claim by another signer, sign.
		if st, m := e.do("POST", "/v1/signing-requests/"+sr.ID+"/claim", authz, nil); st != 200 || m["state"] != "claimed" {
			t.Fatalf("claim: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+sr.ID+"/claim", authz, nil); st != 200 {
			t.Fatalf("re-claim by the same agent: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+sr.ID+"/claim", "Bearer "+e.key, nil); st != 409 || m["code"] != "already_claimed" {
			t.Fatalf("double claim: %d %v", st, m)
		}
		other := newTestCert(t)
		hdrB64 := sr.ProtectedHeader
		otherHdr, _ := json.Marshal(map[string]any{"alg": "RS256", "x5c": []string{base64.StdEncoding.EncodeToString(other.cert.Raw)}})
		for _, tc := range []struct {
			name, jws, code string
			status          int
		}{
			{"tampered payload", hdrB64 + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"invoice":"inv_1","total":"1.00"}`)) + "." + strings.Split(c.sign(t, sr.SigningInput), ".")[2], "payload_mismatch", 422},
			{"another certificate", other.sign(t, base64.RawURLEncoding.EncodeToString(otherHdr)+"."+sr.Payload), "certificate_mismatch", 422},
			{"another key", other.sign(t, sr.SigningInput), "signature_invalid", 422},
			{"alg none", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + sr.Payload + ".", "signature_invalid", 422},
		} {
			if st, m := e.do("POST", "/v1/signing-requests/"+sr.ID+"/signature", authz, map[string]string{"jws": tc.jws}); st != tc.status || m["code"] != tc.code {
				t.Fatalf("%s: %d %v", tc.name, st, m)
			}
		}
		jws := c.sign(t, sr.SigningInput)
		if st, m := e.do("POST", "/v1/signing-requests/"+sr.ID+"/signature", authz, map[string]string{"jws": jws}); st != 200 || m["state"] != "signed" || m["jws"] != jws {
			t.Fatalf("signature: %d %v", st, m)
		}
		// The same JWS again is a replay, not a second acceptance; another is refused.
		if st, _ := e.do("POST", "/v1/signing-requests/"+sr.ID+"/signature", authz, map[string]string{"jws": jws}); st != 200 {
			t.Fatalf("replay: %d", st)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+sr.ID+"/signature", authz, map[string]string{"jws": c.sign(t, sr.SigningInput) + ""}); st != 200 && st != 409 {
			t.Fatalf("second signature: %d %v", st, m)
		}
		if got, _ := einvoicing.GetSigningRequest(t.Context(), db.Reader(), sr.ID); got.State != "signed" || got.JWS == nil || *got.JWS != jws {
			t.Fatalf("stored: %+v", got)
		}

		// Inline signing with a signing:agent key: list, sign.
		sr2 := e.request(einvoicing.PurposeQuery, `{"query":"status"}`)
		st, m := e.do("GET", "/v1/signing-requests?state=pending&companyId="+e.company, "Bearer "+e.key, nil)
		if data, _ := m["data"].([]any); st != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != sr2.ID {
			t.Fatalf("list: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+sr2.ID+"/signature", "Bearer "+e.key, map[string]string{"jws": c.sign(t, sr2.SigningInput)}); st != 200 || m["state"] != "signed" {
			t.Fatalf("inline: %d %v", st, m)
		}

		// Refuse.
		sr3 := e.request(einvoicing.PurposeDecision, `{"decision":"accept"}`)
		if st, m := e.do("POST", "/v1/signing-requests/"+sr3.ID+"/refuse", authz, map[string]string{"reason": "user_declined", "message": "не"}); st != 200 || m["state"] != "refused" {
			t.Fatalf("refuse: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+sr3.ID+"/signature", authz, map[string]string{"jws": c.sign(t, sr3.SigningInput)}); st != 409 {
			t.Fatalf("sign refused: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+sr3.ID+"/refuse", authz, map[string]string{"reason": "because"}); st != 422 {
			t.Fatalf("bad reason: %d %v", st, m)
		}

		// Expiry: 410 and a replacement that can be signed.
		sr4 := e.request(einvoicing.PurposeDocument, `{"invoice":"inv_2"}`)
		e.clock.Store(int64(16 * time.Minute))
		st, m = e.do("POST", "/v1/signing-requests/"+sr4.ID+"/signature", authz, map[string]string{"jws": c.sign(t, sr4.SigningInput)})
		if st != 410 || m["code"] != "signature_expired" || m["replacedBy"] == nil {
			t.Fatalf("expired: %d %v", st, m)
		}
		st, m = e.do("GET", "/v1/signing-requests/"+m["replacedBy"].(string), authz, nil)
		if st != 200 || m["state"] != "pending" || m["payload"] != sr4.Payload {
			t.Fatalf("replacement: %d %v", st, m)
		}
		if st, m := e.do("POST", "/v1/signing-requests/"+m["id"].(string)+"/signature", authz, map[string]string{"jws": c.sign(t, m["signingInput"].(string))}); st != 200 {
			t.Fatalf("sign replacement: %d %v", st, m)
		}

		// Authentication failures.
		for _, a := range []string{"", "Agent " + agent + ".wrong", "Agent agt_nope.x", "Bearer nope"} {
			if st, m := e.do("GET", "/v1/signing-requests/"+sr.ID, a, nil); st != 401 {
				t.Fatalf("auth %q: %d %v", a, st, m)
			}
		}
		ev, err := db.Reader().ListEvents(t.Context(), dbq.ListEventsParams{AccountID: e.account, Environment: "sandbox", AllCompanies: true,
			Type: sql.NullString{String: webhooks.EventSigningAgentOnline, Valid: true}, Lim: 10})
		if err != nil || len(ev) == 0 || ev[0].ObjectID != agent || ev[0].CompanyID != e.company {
			t.Fatalf("events: %v %v", ev, err)
		}
	})
}

func TestRegisterCertificateRejects(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		agent, authz := e.pair(newTestCert(t))
		small, _ := rsa.GenerateKey(rand.Reader, 1024)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		smallDER, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &small.PublicKey, small)
		other := newSignEnv(t, db) // another account on the same database
		good := base64.StdEncoding.EncodeToString(newTestCert(t).cert.Raw)
		for _, tc := range []struct {
			name, der, company, authz string
			status                    int
			code                      string
		}{
			{"rsa 1024", base64.StdEncoding.EncodeToString(smallDER), e.company, authz, 422, "validation_failed"},
			{"not base64", "%%%", e.company, authz, 422, "validation_failed"},
			{"company of another account", good, other.company, authz, 403, "company_not_allowed"},
			{"no credentials", good, e.company, "", 401, "unauthenticated"},
			{"api key instead of agent", good, e.company, "Bearer " + e.key, 401, "unauthenticated"},
		} {
			st, m := e.do("POST", "/v1/agents/"+agent+"/certificates", tc.authz, map[string]string{"certificateDer": tc.der, "companyId": tc.company,
				"eujpId": "EUJP-1"})
			if st != tc.status || m["code"] != tc.code {
				t.Errorf("%s: %d %v", tc.name, st, m)
			}
		}
		// A sandbox whose UJP is not the simulator (UJP's test environment)
		// talks to a real UJP: the certificate needs the signer's EUJP id.
		st, m := e.do("POST", "/v1/agents/"+agent+"/certificates", authz, map[string]string{"certificateDer": good, "companyId": e.company})
		if errs, _ := m["errors"].([]any); st != 422 || m["code"] != "validation_failed" || len(errs) != 1 || errs[0].(map[string]any)["path"] != "eujpId" {
			t.Errorf("without eujpId: %d %v", st, m)
		}
	})
}

// TestProductionRefusesSelfSignedCertificates: the sandbox signer's
// throw-away certificates (self-signed) sign only for sandbox companies; a
// production company takes a certificate an authority issued.
func TestProductionRefusesSelfSignedCertificates(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		ctx := t.Context()
		as := &auth.Store{DB: db}
		acct, err := as.CreateAccount(ctx, "Биро во продукција", "business")
		if err != nil {
			t.Fatal(err)
		}
		var company string
		err = db.InTx(ctx, func(tx *store.Tx) error {
			c, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: acct.ID, Name: "Тест ДООЕЛ",
				TaxNumber: "4030000000001", VatNumber: "МК4030000000001", Status: "active", SigningMode: "bridge", Environment: auth.EnvProduction, Address: "{}", CreatedAt: tx.Now})
			company = c.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		_, key, err := as.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvProduction,
			Scopes: []string{"companies:read", "companies:write"}})
		if err != nil {
			t.Fatal(err)
		}
		st, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+key, nil)
		if st != 201 {
			t.Fatalf("pairing code: %d %v", st, m)
		}
		st, m = e.do("POST", "/v1/agents/pair", "", map[string]string{"code": m["code"].(string), "name": "server"})
		if st != 201 || m["environment"] != "production" {
			t.Fatalf("pair: %d %v", st, m)
		}
		agent, authz := m["agentId"].(string), "Agent "+m["agentId"].(string)+"."+m["agentSecret"].(string)

		self := newTestCert(t)
		caKey, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Тест CA"}, IsCA: true, BasicConstraintsValid: true,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
		leaf := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Тест ДООЕЛ"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		issuedDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &self.key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name    string
			der     []byte
			company string
			status  int
			code    string
		}{
			{"self-signed for production", self.cert.Raw, company, 422, "self_signed_certificate"},
			{"issued by an authority", issuedDER, company, 201, ""},
		} {
			st, m := e.do("POST", "/v1/agents/"+agent+"/certificates", authz, map[string]string{
				"certificateDer": base64.StdEncoding.EncodeToString(tc.der), "companyId": tc.company, "eujpId": "prod-user"})
			if st != tc.status || (tc.code != "" && m["code"] != tc.code) {
				t.Fatalf("%s: %d %v", tc.name, st, m)
			}
			if tc.code != "" {
				errs, _ := m["errors"].([]any)
				if len(errs) != 1 || errs[0].(map[string]any)["path"] != "certificateDer" {
					t.Fatalf("%s: errors %v", tc.name, m["errors"])
				}
			}
		}
		// The same self-signed certificate is fine for a sandbox company.
		e.pair(self)
	})
}

// waitInFlight waits until the service at base serves exactly n requests
// (denar_http_requests_in_flight, the metrics request included).
func waitInFlight(t *testing.T, base string, n int) {
	t.Helper()
	gauge := regexp.MustCompile(`(?m)^denar_http_requests_in_flight\{[^}]*\} (\d+)`)
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := gauge.FindSubmatch(body)
		if m == nil {
			t.Fatalf("no in-flight gauge in the metrics")
		}
		if got, _ := strconv.Atoi(string(m[1])); got == n {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%s serves %d requests, want %d", base, got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
