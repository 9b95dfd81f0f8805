package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/sdk/signer"
)

// TestUJPBackendAgainstStrictSimulator is UJP as published, end to end:
// `denar serve` with DENAR_UJP_SANDBOX_BACKEND=ujp talks to a separate
// strict `denar ujp-sim` (its own store, its rate limit on with a short
// window, the service's signer interval the same) as it would to UJP's test
// host. Users, certificates and privileges are registered at the simulator
// out of band with `denar ujp-sim user add / certificate add / grant`, as
// an operator does in UJP's portal; the service never calls /_sim, and the
// test acts as the buyer through the simulator's control API.
//
// It covers onboarding, issue → delivered, a lost send response (one
// document at UJP, delivered), the buyer accepting and rejecting, an
// incoming invoice accepted, a storno (the original moves only once the
// buyer confirms it), and 200 e-invoices of four companies sharing one
// signer (one agent, one EUJP user): all delivered, not one call answered
// E4007, no document signed twice.
func TestUJPBackendAgainstStrictSimulator(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		start := time.Now()
		u := newStrictUJPWorld(t, dbURL)
		t.Logf("set-up (simulator, serve, onboarding of %d companies, agent, certificates): %s", len(u.companies), time.Since(start).Round(time.Millisecond))

		a := u.companies[0]

		// Issue → delivered, one document at UJP.
		step := time.Now()
		plain := u.issue(a, "STRICT-1")
		m := u.waitStatus(a, plain, "delivered", 30*time.Second)
		if m["euid"] == nil {
			t.Fatalf("delivered without an EUID: %v", m)
		}
		if n := u.sim.documents(t, a.tax)[plain]; n != 1 {
			t.Fatalf("%d documents with docId %s at UJP", n, plain)
		}

		// A send whose answer is lost: UJP holds the document; the
		// service finds it in UJP's records instead of failing or sending
		// it twice.
		r := call(t, "POST", u.sim.url+"/_sim/sellers/"+a.tax+"/fail-next", simToken, nil, `{"kind":"lost","count":1,"path":"/send"}`)
		if r.status != 200 {
			t.Fatalf("lost-response fault: %d %s", r.status, r.body)
		}
		lost := u.issue(a, "STRICT-LOST")
		m = u.waitStatus(a, lost, "delivered", 60*time.Second)
		if n := u.sim.documents(t, a.tax)[lost]; n != 1 {
			t.Fatalf("%d documents with docId %s at UJP after a lost answer", n, lost)
		}
		if causes := u.causes(a, lost); !strings.Contains(strings.Join(causes, ","), "submitted_earlier") {
			t.Fatalf("history of the document UJP held: %v", causes)
		}
		if d := u.simDocument(m["euid"].(string)); d.DocID != lost {
			t.Fatalf("UJP's EUID %s names docId %q", m["euid"], d.DocID)
		}

		// The buyer accepts one and rejects another (the test acts as
		// the buyer at UJP).
		accept, reject, void := u.issue(a, "STRICT-ACC"), u.issue(a, "STRICT-REJ"), u.issue(a, "STRICT-VOID")
		euids := map[string]string{}
		for _, id := range []string{accept, reject, void} {
			euids[id] = u.waitStatus(a, id, "delivered", 30*time.Second)["euid"].(string)
		}
		u.decide(euids[accept], `{"accept":true}`)
		u.decide(euids[reject], `{"accept":false,"rejectReasonCode":"O-2","comment":"погрешна количина"}`)
		u.waitStatus(a, accept, "accepted", 30*time.Second)
		u.waitStatus(a, reject, "rejected", 30*time.Second)

		// Storno: UJP voids the original once the buyer confirms the
		// storno (statuses.txt, 07), not when the storno is delivered.
		r = u.post(a, "/v1/einvoices/"+void+"/storno", `{"reason":"`+ujpdoc.Snapshot().VoidReasons[0].Code+`","comment":"двојно"}`)
		if r.status != 202 {
			t.Fatalf("storno: %d %s", r.status, r.body)
		}
		var storno struct{ ID string }
		_ = json.Unmarshal(r.body, &storno)
		stornoEUID := u.waitStatus(a, storno.ID, "delivered", 30*time.Second)["euid"].(string)
		if d := u.simDocument(euids[void]); d.Status != "01" {
			t.Fatalf("UJP's original before the buyer confirmed the storno: %s", d.Status)
		}
		if _, m := u.get(a, "/v1/einvoices/"+void); m["status"] != "delivered" {
			t.Fatalf("the original before the buyer confirmed the storno: %v", m["status"])
		}
		u.decide(stornoEUID, `{"accept":true}`)
		u.waitStatus(a, void, "cancelled_by_storno", 30*time.Second)
		u.waitStatus(a, storno.ID, "accepted", 30*time.Second)

		// An incoming invoice: the fictitious supplier sends one to the
		// second company, which accepts it (signed by the shared signer).
		b := u.companies[1]
		r = call(t, "POST", u.sim.url+"/_sim/buyers/"+b.tax+"/incoming", simToken, nil, `{}`)
		if r.status != 200 {
			t.Fatalf("incoming invoice: %d %s", r.status, r.body)
		}
		var incoming ujpsim.Document
		_ = json.Unmarshal(r.body, &incoming)
		inboxID := u.waitInbox(b, incoming.EUID, 30*time.Second)
		if r := u.post(b, "/v1/inbox/"+inboxID+"/accept", ""); r.status != 202 {
			t.Fatalf("accept the incoming invoice: %d %s", r.status, r.body)
		}
		waitFor(t, "UJP to record the buyer's acceptance", func() bool { return u.simDocument(incoming.EUID).Status == "03" })
		waitFor(t, "the inbox to show the acceptance", func() bool {
			_, d := u.get(b, "/v1/inbox/"+inboxID)
			dec, _ := d["decision"].(map[string]any)
			return dec["state"] == "accepted"
		})
		t.Logf("single documents (issue, lost answer, decisions, storno, incoming): %s", time.Since(step).Round(time.Millisecond))

		// 200 e-invoices of four companies, one signer for all.
		step = time.Now()
		const perCompany = 50
		ids := make([][]string, len(u.companies))
		var wg sync.WaitGroup
		for i, co := range u.companies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range perCompany {
					ids[i] = append(ids[i], u.issue(co, fmt.Sprintf("BULK-%d-%03d", i, k)))
				}
			}()
		}
		wg.Wait()
		issued := time.Since(step)
		deadline := time.Now().Add(3 * time.Minute)
		for i, co := range u.companies {
			for _, id := range ids[i] {
				u.waitStatus(co, id, "delivered", time.Until(deadline))
			}
			docs := u.sim.documents(t, co.tax)
			for _, id := range ids[i] {
				if docs[id] != 1 {
					t.Fatalf("%s: %d documents at UJP", id, docs[id])
				}
			}
		}
		t.Logf("%d e-invoices of %d companies, one signer: issued in %s, all delivered after %s",
			perCompany*len(u.companies), len(u.companies), issued.Round(time.Millisecond), time.Since(step).Round(time.Millisecond))

		// No call of any user was answered E4007, over the whole run.
		var limited struct {
			Total int64            `json:"total"`
			Users map[string]int64 `json:"users"`
		}
		r = call(t, "GET", u.sim.url+"/_sim/rate-limited", simToken, nil, "")
		if err := json.Unmarshal(r.body, &limited); r.status != 200 || err != nil || limited.Total != 0 {
			var around []string
			lines := strings.Split(u.sim.out.String(), "\n")
			for i, l := range lines {
				if strings.Contains(l, "status=429") {
					around = append(around, lines[max(0, i-6):i+1]...)
				}
			}
			t.Fatalf("calls answered E4007: %d %s\n%s", r.status, r.body, strings.Join(around, "\n"))
		}
		// No document was signed twice: one signing request of purpose
		// document per e-invoice, and the agent signed each once.
		db, err := store.Open(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var einvoices, twice int
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM einvoices`).Scan(&einvoices); err != nil {
			t.Fatal(err)
		}
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM (SELECT link_id FROM signing_requests
			WHERE purpose = 'document' AND link_type = 'einvoice' GROUP BY link_id HAVING COUNT(*) <> 1) AS t`).Scan(&twice); err != nil {
			t.Fatal(err)
		}
		var documents int
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT COUNT(DISTINCT link_id) FROM signing_requests
			WHERE purpose = 'document' AND link_type = 'einvoice'`).Scan(&documents); err != nil {
			t.Fatal(err)
		}
		if twice != 0 || documents != einvoices || einvoices != perCompany*len(u.companies)+6 {
			t.Fatalf("%d e-invoices, %d with a document signing request, %d with other than one", einvoices, documents, twice)
		}
		u.mu.Lock()
		for id, n := range u.signed {
			if n != 1 {
				t.Errorf("signing request %s signed %d times by the agent", id, n)
			}
		}
		u.mu.Unlock()
		t.Logf("whole test: %s", time.Since(start).Round(time.Millisecond))
	})
}

// strictCompany is a company of the strict world: its id at denar serve
// and its tax number.
type strictCompany struct {
	id, tax, name string
}

// strictUJPWorld is denar serve with the ujp backend against a strict
// denar ujp-sim, four onboarded companies and one agent signing for all.
type strictUJPWorld struct {
	t         *testing.T
	sim       *simProcess
	simDB     string
	srv       *server
	key       string
	companies []strictCompany
	n         int
	// creds and signKey are the agent's: its credentials and the key of
	// every certificate.
	creds   signer.Credentials
	signKey *rsa.PrivateKey
	account string

	mu     sync.Mutex
	signed map[string]int // signing request id → signatures the agent made
}

// The strict world's users at UJP: the operator (DENAR_UJP_USER, its firm
// DENAR_UJP_EDB) and the one signer of all four companies.
const (
	strictOperator = "OPERATOR-ACME"
	strictSigner   = "SIGNER-MARIJA"
)

func newStrictUJPWorld(t *testing.T, dbURL string) *strictUJPWorld {
	t.Helper()
	u := &strictUJPWorld{t: t, signed: map[string]int{}}
	// The simulator keeps its own store on the same engine.
	u.simDB = storetest.SQLiteURL(t)
	if strings.HasPrefix(dbURL, "postgres") {
		u.simDB = storetest.PostgresURL(t)
	}
	u.sim = startSimProcessAt(t, u.simDB, freeAddr(t), "DENAR_UJP_SIM_WINDOW="+strictWindow.String())

	// The registry: the seeded seller and three more VAT payers.
	u.companies = []strictCompany{{tax: ujpsim.TaxSeller, name: "Тест Продавач ДООЕЛ Скопје"}}
	for i := 1; i <= 3; i++ {
		tax := einvoicingtest.TaxNumber("40300001", i)
		name := fmt.Sprintf("Строга Фирма %d ДООЕЛ Скопје", i)
		body, _ := json.Marshal(map[string]any{"taxNumber": tax, "vatNumber": "МК" + tax, "name": name, "golemina": "1", "countryCode": "MK",
			"registrationNumber": fmt.Sprintf("800000%d", i),
			"address":            map[string]string{"street": "ул. Тестова", "number": fmt.Sprint(i), "city": "Скопје", "zip": "1000"}})
		if r := call(t, "POST", u.sim.url+"/_sim/companies", simToken, nil, string(body)); r.status != 200 {
			t.Fatalf("registry entry %s: %d %s", tax, r.status, r.body)
		}
		u.companies = append(u.companies, strictCompany{tax: tax, name: name})
	}
	operatorFirm := einvoicingtest.TaxNumber("40300009", 1)
	// The operator's user, as UJP's portal registers it.
	u.simAdmin("user add", strictOperator)

	env := append(baseEnv(t, dbURL), "DENAR_UJP_SANDBOX_BACKEND=ujp", "DENAR_UJP_SANDBOX_URL="+u.sim.url,
		"DENAR_UJP_USER="+strictOperator, "DENAR_UJP_EDB="+operatorFirm,
		"DENAR_UJP_SIGNER_INTERVAL="+strictWindow.String(),
		"DENAR_UJP_POLL_INTERVAL=1s", "DENAR_JOB_POLL_INTERVAL=100ms", "DENAR_EINVOICE_RETRY_DELAYS=1s",
		"DENAR_UJP_CALL_TIMEOUT=3s", "DENAR_JOB_LEASE=5s", "DENAR_RATE_LIMIT_RPS=10000", "DENAR_RATE_LIMIT_BURST=10000")
	u.srv = startServer(t, env)

	var acct struct{ ID string }
	if err := json.Unmarshal([]byte(runAdminCmd(t, u.srv.env, "account", "create", "--name", "Биро Строго", "--plan", "business", "--json")), &acct); err != nil {
		t.Fatal(err)
	}
	u.account = acct.ID
	var key struct{ Key string }
	args := []string{"key", "create", "--account", acct.ID, "--service", "einvoice", "--env", "sandbox", "--json"}
	for _, s := range []string{"companies:read", "companies:write", "einvoices:read", "einvoices:write", "inbox:read", "inbox:write", "events:read"} {
		args = append(args, "--scope", s)
	}
	if err := json.Unmarshal([]byte(runAdminCmd(t, u.srv.env, args...)), &key); err != nil {
		t.Fatal(err)
	}
	u.key = key.Key

	// Onboarding: each company from UJP's registry (looked up as the
	// operator, for the company), then its representative's mandate.
	for i := range u.companies {
		co := &u.companies[i]
		r := u.post(strictCompany{}, "/v1/companies", fmt.Sprintf(`{"taxNumber":%q,"representative":{"name":"Марија Николовска","email":"rep%d@example.mk"}}`, co.tax, i))
		var got struct{ ID, Name, Status string }
		if err := json.Unmarshal(r.body, &got); r.status != 201 || err != nil || got.Name != co.name || got.Status != "pending_mandate" {
			t.Fatalf("onboard %s: %d %s", co.tax, r.status, r.body)
		}
		co.id = got.ID
	}
	u.acceptMandates(env)
	for _, co := range u.companies {
		if _, m := u.get(co, "/v1/companies/"+co.id); m["status"] != "active" {
			t.Fatalf("company %s after its mandate: %v", co.tax, m)
		}
	}

	// One agent for the four companies; one signer (one key, one EUJP
	// user) with a certificate for each.
	creds, rsaKey := u.pairAgent(u.companies[0], "strict")
	dir := t.TempDir()
	for i, co := range u.companies {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano() + int64(i)), Subject: pkix.Name{CommonName: "Марија Николовска", Organization: []string{co.name}},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certValidity)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &rsaKey.PublicKey, rsaKey)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		if i == 0 {
			// A real UJP knows the signer by the EUJP id only its portal
			// gives: without it the certificate is refused.
			err := signer.RegisterCertificate(t.Context(), http.DefaultClient, creds, cert, co.id)
			var ae *signer.APIError
			if !errors.As(err, &ae) || ae.Status != 422 || ae.Code != "validation_failed" {
				t.Fatalf("a certificate without its EUJP id against UJP: %v", err)
			}
		}
		// Out of band first, as at UJP: the certificate in the portal,
		// and the portal privileges the service needs for the company.
		file := filepath.Join(dir, fmt.Sprintf("cert-%d.pem", i))
		if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		out := u.simAdmin("certificate add", "-eujp-id", strictSigner, "-edb", co.tax, "-cert", file)
		if !strings.Contains(out, cert.SerialNumber.String()) {
			t.Fatalf("certificate add: %s", out)
		}
		u.simAdmin("grant", "-eujp-id", strictSigner, "-edb", co.tax, "DP", "RD", "DA")
		if err := signer.RegisterCertificateAs(t.Context(), http.DefaultClient, creds, cert, co.id, strictSigner); err != nil {
			t.Fatal(err)
		}
	}
	u.creds, u.signKey = creds, rsaKey
	worker := &signer.Worker{Creds: creds, Signer: rsaKey, Wait: 1, HTTP: &http.Client{Timeout: 10 * time.Second},
		OnSigned: func(r signer.Request, _ string) {
			u.mu.Lock()
			u.signed[r.ID]++
			u.mu.Unlock()
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = worker.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return u
}

// strictWindow is the strict simulator's rate window in this test, and the
// service's signer interval.
const strictWindow = 50 * time.Millisecond

// simAdmin runs a `denar ujp-sim` operator command (verb: "user add",
// "certificate add", "grant") on the simulator's store.
func (u *strictUJPWorld) simAdmin(verb string, args ...string) string {
	u.t.Helper()
	argv := append(append(append([]string{"ujp-sim"}, strings.Fields(verb)...), "-db", u.simDB), args...)
	cmd := exec.Command(denarBin, argv...)
	cmd.Env = simEnv(u.t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		u.t.Fatalf("denar %s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// acceptMandates opens every mandate mail in the outbox and accepts the
// mandate as its representative would (the form of the mail's link).
func (u *strictUJPWorld) acceptMandates(env []string) {
	t := u.t
	t.Helper()
	var dbURL string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "DENAR_DATABASE_URL="); ok {
			dbURL = v
		}
	}
	db, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key, err := auth.ParseSecretKey(testWebhookKey)
	if err != nil {
		t.Fatal(err)
	}
	box, err := auth.NewSecretBox(key)
	if err != nil {
		t.Fatal(err)
	}
	mails, err := db.Reader().ListOutboxMail(t.Context())
	if err != nil || len(mails) != len(u.companies) {
		t.Fatalf("outbox: %d mails, %v", len(mails), err)
	}
	for _, m := range mails {
		body, _, err := mail.Opened(box, m.ID, m.Body, m.Link)
		if err != nil {
			t.Fatal(err)
		}
		link := regexp.MustCompile(regexp.QuoteMeta(u.srv.einvoice) + `/mandates/\S+`).FindString(body)
		if link == "" {
			t.Fatalf("no mandate link in:\n%s", body)
		}
		if r := call(t, "POST", link, "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, ""); r.status != 200 {
			t.Fatalf("accept the mandate: %d %s", r.status, r.body)
		}
	}
}

// pairAgent pairs an agent through co's pairing code under name and
// makes the RSA key its certificates will certify.
func (u *strictUJPWorld) pairAgent(co strictCompany, name string) (signer.Credentials, *rsa.PrivateKey) {
	t := u.t
	t.Helper()
	r := u.post(co, "/v1/agents/pairing-codes", "")
	var pc struct{ Code string }
	if err := json.Unmarshal(r.body, &pc); err != nil || r.status != 201 {
		t.Fatalf("pairing code: %d %s", r.status, r.body)
	}
	creds, err := signer.Pair(t.Context(), http.DefaultClient, u.srv.einvoice, pc.Code, name)
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return creds, key
}

func (u *strictUJPWorld) post(co strictCompany, path, body string) httpReply {
	u.t.Helper()
	u.n++
	h := map[string]string{"Idempotency-Key": fmt.Sprintf("strict-%d-%d", time.Now().UnixNano(), u.n)}
	if co.id != "" {
		h["X-Company-Id"] = co.id
	}
	return call(u.t, "POST", u.srv.einvoice+path, u.key, h, body)
}

func (u *strictUJPWorld) get(co strictCompany, path string) (int, map[string]any) {
	u.t.Helper()
	r := call(u.t, "GET", u.srv.einvoice+path, u.key, map[string]string{"X-Company-Id": co.id}, "")
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	return r.status, m
}

// issue issues an invoice of co to the sandbox buyer and returns its id
// (UJP's docId).
func (u *strictUJPWorld) issue(co strictCompany, number string) string {
	u.t.Helper()
	r := call(u.t, "POST", u.srv.einvoice+"/v1/einvoices", u.key,
		map[string]string{"Idempotency-Key": "strict-issue-" + co.id + "-" + number, "X-Company-Id": co.id}, invoiceBody(number, ""))
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	if r.status != 202 {
		u.t.Fatalf("issue %s: %d %s", number, r.status, r.body)
	}
	return m["id"].(string)
}

// waitStatus polls until the e-invoice reaches want.
func (u *strictUJPWorld) waitStatus(co strictCompany, id, want string, within time.Duration) map[string]any {
	u.t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, m := u.get(co, "/v1/einvoices/"+id)
		if m["status"] == want {
			return m
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("%s: status %v after %s, want %s; problems %v\nserve log tail:\n%s\nsimulator log tail:\n%s", id, m["status"], within, want, m["problems"],
				tail(u.srv.stderr.String(), 3000), tail(u.sim.out.String(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// causes lists the causes of an e-invoice's status history.
func (u *strictUJPWorld) causes(co strictCompany, id string) []string {
	u.t.Helper()
	_, hist := u.get(co, "/v1/einvoices/"+id+"/status-history")
	var out []string
	for _, it := range hist["data"].([]any) {
		out = append(out, fmt.Sprint(it.(map[string]any)["cause"]))
	}
	return out
}

// decide records the buyer's decision at UJP (the control API acting as
// the buyer).
func (u *strictUJPWorld) decide(euid, body string) {
	u.t.Helper()
	if r := call(u.t, "POST", u.sim.url+"/_sim/documents/"+euid+"/decision", simToken, nil, body); r.status != 200 {
		u.t.Fatalf("buyer's decision on %s: %d %s", euid, r.status, r.body)
	}
}

// simDocument is the simulator's record of a document.
func (u *strictUJPWorld) simDocument(euid string) ujpsim.Document {
	u.t.Helper()
	r := call(u.t, "GET", u.sim.url+"/_sim/documents/"+euid, simToken, nil, "")
	var d ujpsim.Document
	if err := json.Unmarshal(r.body, &d); r.status != 200 || err != nil {
		u.t.Fatalf("simulator's document %s: %d %s", euid, r.status, r.body)
	}
	return d
}

// waitInbox waits until co's inbox holds the document euid and returns
// its id.
func (u *strictUJPWorld) waitInbox(co strictCompany, euid string, within time.Duration) string {
	u.t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, m := u.get(co, "/v1/inbox")
		data, _ := m["data"].([]any)
		for _, it := range data {
			if d := it.(map[string]any); d["euid"] == euid {
				return d["id"].(string)
			}
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("the inbox never showed %s; serve log tail:\n%s", euid, tail(u.srv.stderr.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
