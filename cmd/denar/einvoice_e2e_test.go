package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/sdk/signer"
)

// simProcess is `denar ujp-sim` on a loopback port.
type simProcess struct {
	url   string
	addr  string
	dbURL string
	cmd   *exec.Cmd
	out   *syncBuffer
}

// simToken is the control token (DENAR_UJP_SIM_TOKEN) of the `denar
// ujp-sim` processes the tests start.
const simToken = "e2e-ujp-sim-control-token"

// simEnv is the environment of a `denar ujp-sim` process: none of the
// caller's DENAR_ variables, and the control token.
func simEnv(t *testing.T) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DENAR_") {
			env = append(env, kv)
		}
	}
	return append(env, "DENAR_UJP_SIM_TOKEN="+simToken, "DENAR_DATA_DIR="+t.TempDir(), "DENAR_UJP_SIM_WINDOW="+e2eWindow.String())
}

// startSimProcess starts `denar ujp-sim` on its own store at dbURL.
func startSimProcess(t *testing.T, dbURL string) *simProcess {
	t.Helper()
	return startSimProcessAt(t, dbURL, freeAddr(t))
}

// startSimProcessAt starts `denar ujp-sim` on addr with its store at
// dbURL and extra environment (a restart keeps both).
func startSimProcessAt(t *testing.T, dbURL, addr string, extraEnv ...string) *simProcess {
	t.Helper()
	p := &simProcess{url: "http://" + addr, addr: addr, dbURL: dbURL, out: &syncBuffer{}}
	p.cmd = exec.Command(denarBin, "ujp-sim", "-addr", addr, "-db", dbURL)
	p.cmd.Env = append(simEnv(t), extraEnv...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest("GET", p.url+"/_sim/faults", nil)
		req.Header.Set("Authorization", "Bearer "+simToken)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("ujp-sim never answered:\n%s", p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// addCompany adds a company to the simulator's registry.
func (p *simProcess) addCompany(t *testing.T, tax, name string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"taxNumber": tax, "name": name, "golemina": "1", "countryCode": "MK",
		"address": map[string]string{"street": "ул. Тестова", "number": "1", "city": "Скопје", "zip": "1000"}})
	r := call(t, "POST", p.url+"/_sim/companies", simToken, nil, string(body))
	if r.status != 200 {
		t.Fatalf("sim company %s: %d %s", tax, r.status, r.body)
	}
}

// faults sets the simulator's faults (a PUT of all of them). UJP's rate
// limit is not one of them: it is always on.
func (p *simProcess) faults(t *testing.T, body string) {
	t.Helper()
	r := call(t, "PUT", p.url+"/_sim/faults", simToken, nil, body)
	if r.status != 200 {
		t.Fatalf("sim faults: %d %s", r.status, r.body)
	}
}

// documents counts the seller's documents at the simulator by docId.
func (p *simProcess) documents(t *testing.T, seller string) map[string]int {
	t.Helper()
	var list struct {
		Documents []struct {
			DocID string `json:"docId"`
		} `json:"documents"`
	}
	r := call(t, "GET", p.url+"/_sim/sellers/"+seller+"/documents", simToken, nil, "")
	if r.status != 200 {
		t.Fatalf("sim documents: %d %s", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, d := range list.Documents {
		out[d.DocID]++
	}
	return out
}

// einvoiceWorld is denar serve against denar ujp-sim, with one active
// sandbox company and an SDK signing worker for it.
type einvoiceWorld struct {
	t       *testing.T
	sim     *simProcess
	srv     *server
	env     []string
	key     string
	account string
	company string
	cert    *x509.Certificate
	rsaKey  *rsa.PrivateKey
	creds   signer.Credentials
	stop    context.CancelFunc
	n       int

	mu     sync.Mutex
	signed map[string]int // signing request id → signatures the worker made
}

func newEInvoiceWorld(t *testing.T, dbURL string, extraEnv ...string) *einvoiceWorld {
	t.Helper()
	return newEInvoiceWorldBin(t, denarBin, dbURL, extraEnv...)
}

// newEInvoiceWorldBin is newEInvoiceWorld with another build of denar.
func newEInvoiceWorldBin(t *testing.T, bin, dbURL string, extraEnv ...string) *einvoiceWorld {
	t.Helper()
	w := &einvoiceWorld{t: t}
	// The simulator has a store of its own, on the same engine.
	simDB := storetest.SQLiteURL(t)
	if strings.HasPrefix(dbURL, "postgres") {
		simDB = storetest.PostgresURL(t)
	}
	w.sim = startSimProcess(t, simDB)
	w.env = append(append(baseEnv(t, dbURL), "DENAR_UJP_SANDBOX_BACKEND=ujp-sim", "DENAR_UJP_SANDBOX_URL="+w.sim.url,
		"DENAR_UJP_SIM_TOKEN="+simToken,
		"DENAR_UJP_POLL_INTERVAL=300ms", "DENAR_JOB_POLL_INTERVAL=100ms", "DENAR_EINVOICE_RETRY_DELAYS=1s",
		"DENAR_UJP_CALL_TIMEOUT=3s", "DENAR_JOB_LEASE=3s", "DENAR_UJP_EDB="+ujpsim.TaxSeller, "DENAR_RATE_LIMIT_RPS=10000", "DENAR_RATE_LIMIT_BURST=10000"), extraEnv...)
	w.srv = startServerBin(t, bin, w.env)
	w.setup()
	return w
}

// setup makes, through w.srv, an account with a sandbox e-invoicing key,
// the simulator's seller as an active company, and an SDK signing worker
// for it.
func (w *einvoiceWorld) setup() {
	t := w.t
	t.Helper()
	var acct struct{ ID string }
	if err := json.Unmarshal([]byte(runAdminCmd(t, w.srv.env, "account", "create", "--name", "Биро", "--plan", "business", "--json")), &acct); err != nil {
		t.Fatal(err)
	}
	w.account = acct.ID
	var key struct{ Key string }
	args := []string{"key", "create", "--account", acct.ID, "--service", "einvoice", "--env", "sandbox", "--json"}
	for _, s := range []string{"companies:read", "companies:write", "einvoices:read", "einvoices:write", "events:read"} {
		args = append(args, "--scope", s)
	}
	if err := json.Unmarshal([]byte(runAdminCmd(t, w.srv.env, args...)), &key); err != nil {
		t.Fatal(err)
	}
	w.key = key.Key
	// The company through the API: name and address from the simulator's
	// registry. Its mandate page is exercised by the onboarding test; here
	// the representative's acceptance is written directly.
	r := w.post("/v1/companies", `{"taxNumber":"`+ujpsim.TaxSeller+`","representative":{"name":"Марија Николовска","email":"marija@example.mk"}}`)
	if r.status != 201 {
		t.Fatalf("company: %d %s", r.status, r.body)
	}
	var co struct{ ID string }
	_ = json.Unmarshal(r.body, &co)
	w.company = co.ID
	db, err := store.Open(t.Context(), w.dbURL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET status = 'active' WHERE id = $1", w.company); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Pair an SDK worker and register a certificate made here.
	r = w.post("/v1/agents/pairing-codes", "")
	var pc struct{ Code string }
	if err := json.Unmarshal(r.body, &pc); err != nil || r.status != 201 {
		t.Fatalf("pairing code: %d %s", r.status, r.body)
	}
	w.rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Тест Продавач ДООЕЛ Скопје"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certValidity)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &w.rsaKey.PublicKey, w.rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	w.cert, _ = x509.ParseCertificate(der)
	w.creds, err = signer.Pair(t.Context(), http.DefaultClient, w.srv.einvoice, pc.Code, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	// Without an EUJP id: the sandbox's simulator makes one up, and denar
	// serve's sandbox set-up registers the certificate there.
	if err := signer.RegisterCertificate(t.Context(), http.DefaultClient, w.creds, w.cert, w.company); err != nil {
		t.Fatal(err)
	}
	w.startWorker()
}

// certValidity is how long the worlds' signing certificates are valid: long
// enough for tests that move the clock to a document's deadline.
const certValidity = 120 * 24 * time.Hour

// dbURL is the database of the world's servers.
func (w *einvoiceWorld) dbURL() string {
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, "DENAR_DATABASE_URL="); ok {
			return v
		}
	}
	w.t.Fatal("no DENAR_DATABASE_URL")
	return ""
}

func (w *einvoiceWorld) startWorker() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	// A worker started before this one may still be signing its last
	// request: the map is replaced under the lock it counts under.
	w.mu.Lock()
	w.signed = map[string]int{}
	w.mu.Unlock()
	worker := &signer.Worker{Creds: w.creds, Signer: w.rsaKey, Wait: 1, HTTP: &http.Client{Timeout: 10 * time.Second},
		OnSigned: func(r signer.Request, _ string) {
			w.mu.Lock()
			w.signed[r.ID]++
			w.mu.Unlock()
		}}
	done := make(chan struct{})
	go func() { defer close(done); _ = worker.Run(ctx) }()
	w.t.Cleanup(func() { cancel(); <-done })
}

func (w *einvoiceWorld) post(path, body string) httpReply {
	w.t.Helper()
	w.n++
	h := map[string]string{"Idempotency-Key": fmt.Sprintf("e2e-%d-%d", time.Now().UnixNano(), w.n)}
	if w.company != "" {
		h["X-Company-Id"] = w.company
	}
	return call(w.t, "POST", w.srv.einvoice+path, w.key, h, body)
}

func (w *einvoiceWorld) get(path string) (int, map[string]any) {
	w.t.Helper()
	r := call(w.t, "GET", w.srv.einvoice+path, w.key, map[string]string{"X-Company-Id": w.company}, "")
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	return r.status, m
}

func invoiceBody(number, extra string) string {
	return datedInvoiceBody(number, time.Now().Format(time.DateOnly), extra)
}

// datedInvoiceBody is invoiceBody issued on date (YYYY-MM-DD): the day of
// a server whose clock is shifted (DENAR_CLOCK_OFFSET).
func datedInvoiceBody(number, date, extra string) string {
	return fmt.Sprintf(`{"number":%q,"issueDate":%q,
 "buyer":{"taxNumber":%q,"name":"Тест Купувач ДОО Скопје","address":{"street":"Широк сокак","number":"5","postalCode":"1000","city":"Скопје"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"3","unitPrice":"1000","unitDiscount":"100","vatPercent":"18","taxIndicator":"DDV-A"}]%s}`,
		number, date, ujpsim.TaxBuyer, extra)
}

func (w *einvoiceWorld) issue(number string) string {
	w.t.Helper()
	r := w.post("/v1/einvoices", invoiceBody(number, ""))
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	if r.status != 202 {
		w.t.Fatalf("issue %s: %d %s", number, r.status, r.body)
	}
	return m["id"].(string)
}

// waitStatus polls until the e-invoice reaches want.
func (w *einvoiceWorld) waitStatus(id, want string, within time.Duration) map[string]any {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, m := w.get("/v1/einvoices/" + id)
		if m["status"] == want {
			return m
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: status %v after %s, want %s; problems %v\nlog tail:\n%s", id, m["status"], within, want, m["problems"], tail(w.srv.stderr.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (w *einvoiceWorld) simulate(id, body string) httpReply {
	w.t.Helper()
	return w.post("/v1/sandbox/einvoices/"+id+"/simulate", body)
}

func (w *einvoiceWorld) eventTypes(id string) []string {
	w.t.Helper()
	_, m := w.get("/v1/events?objectId=" + id)
	data, _ := m["data"].([]any)
	var out []string
	for i := len(data) - 1; i >= 0; i-- {
		out = append(out, data[i].(map[string]any)["type"].(string))
	}
	return out
}

// TestEInvoiceEndToEnd runs the real denar serve against the real denar
// ujp-sim over HTTP on both stores, with the SDK worker signing: issue →
// delivered → accepted / rejected / auto_accepted, storno and correction,
// an outage that holds a document and delivers it once after, a terminal
// failure, the PDF, and the refusals (totals_mismatch,
// client_reference_conflict, supersede_pending, period_closed, state
// conflicts).
func TestEInvoiceEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		w := newEInvoiceWorld(t, dbURL)
		ids := map[string]string{}
		for _, n := range []string{"accept", "reject", "deadline", "void"} {
			ids[n] = w.issue("E2E-" + n)
		}
		for n, id := range ids {
			m := w.waitStatus(id, "delivered", 20*time.Second)
			if m["euid"] == nil || m["qrLink"] == nil {
				t.Fatalf("%s delivered without euid/qrLink: %v", n, m)
			}
		}
		steps := map[string]string{
			"accept":   `{"action":"buyer_accepts"}`,
			"reject":   `{"action":"buyer_rejects","rejectReasonCode":"` + firstRejectReason() + `","comment":"погрешна количина"}`,
			"deadline": `{"action":"deadline_passes"}`,
		}
		for n, body := range steps {
			if r := w.simulate(ids[n], body); r.status != 202 {
				t.Fatalf("simulate %s: %d %s", n, r.status, r.body)
			}
		}
		w.waitStatus(ids["accept"], "accepted", 20*time.Second)
		w.waitStatus(ids["reject"], "rejected", 20*time.Second)
		w.waitStatus(ids["deadline"], "auto_accepted", 20*time.Second)
		if ev := w.eventTypes(ids["reject"]); strings.Join(ev, ",") != "einvoice.signature_required,einvoice.submitted,einvoice.rejected" {
			t.Fatalf("events of the rejected invoice: %v", ev)
		}
		_, hist := w.get("/v1/einvoices/" + ids["accept"] + "/status-history")
		var moves []string
		for _, it := range hist["data"].([]any) {
			moves = append(moves, it.(map[string]any)["to"].(string))
		}
		if strings.Join(moves, ",") != "awaiting_signature,queued,submitting,delivered,accepted" {
			t.Fatalf("history: %v", moves)
		}

		// Storno of the accepted invoice: UJP voids only a document still
		// NEW (E1016, error-codes.txt), so the storno fails with UJP's
		// code and the original is untouched.
		void := ujpdoc.Snapshot().VoidReasons[0].Code
		r := w.post("/v1/einvoices/"+ids["accept"]+"/storno", `{"reason":"`+void+`","comment":"двојно"}`)
		if r.status != 202 {
			t.Fatalf("storno: %d %s", r.status, r.body)
		}
		var refused struct{ ID string }
		_ = json.Unmarshal(r.body, &refused)
		if r := w.post("/v1/einvoices/"+ids["accept"]+"/storno", `{"reason":"`+void+`"}`); r.status != 409 ||
			!strings.Contains(string(r.body), "supersede_pending") {
			t.Fatalf("second storno: %d %s", r.status, r.body)
		}
		if m := w.waitStatus(refused.ID, "failed", 20*time.Second); !strings.Contains(fmt.Sprint(m["problems"]), "E1016") {
			t.Fatalf("the refused storno's problems: %v", m["problems"])
		}
		// Storno of the delivered one (still NEW at UJP), correction of
		// the auto-accepted one.
		r = w.post("/v1/einvoices/"+ids["void"]+"/storno", `{"reason":"`+void+`","comment":"двојно"}`)
		if r.status != 202 {
			t.Fatalf("storno: %d %s", r.status, r.body)
		}
		var storno struct{ ID string }
		_ = json.Unmarshal(r.body, &storno)
		corr := strings.Replace(invoiceBody("E2E-deadline-2", `,"docStorno":2,"reason":"`+ujpdoc.Snapshot().CorrectionReasons[0].Code+`"`), `"quantity":"3"`, `"quantity":"2"`, 1)
		r = w.post("/v1/einvoices/"+ids["deadline"]+"/correction", corr)
		if r.status != 202 {
			t.Fatalf("correction: %d %s", r.status, r.body)
		}
		var correction struct{ ID string }
		_ = json.Unmarshal(r.body, &correction)
		w.waitStatus(storno.ID, "delivered", 20*time.Second)
		w.waitStatus(correction.ID, "delivered", 20*time.Second)
		w.waitStatus(ids["deadline"], "corrected", 20*time.Second)
		// The original moves when UJP voids it: once the buyer confirms
		// the storno (statuses.txt, 07).
		if _, m := w.get("/v1/einvoices/" + ids["void"]); m["status"] != "delivered" {
			t.Fatalf("the storno's original before the buyer confirmed: %v", m["status"])
		}
		if r := w.simulate(storno.ID, `{"action":"buyer_accepts"}`); r.status != 202 {
			t.Fatalf("the buyer accepts the storno: %d %s", r.status, r.body)
		}
		w.waitStatus(ids["void"], "cancelled_by_storno", 20*time.Second)
		if ev := w.eventTypes(ids["void"]); strings.Join(ev, ",") != "einvoice.signature_required,einvoice.submitted,einvoice.cancelled_by_storno" {
			t.Fatalf("events of the voided invoice: %v", ev)
		}
		if _, m := w.get("/v1/einvoices/" + ids["accept"]); m["status"] != "accepted" {
			t.Fatalf("the original of the refused storno: %v", m["status"])
		}
		// A filed annual account closes the year for both.
		closed := w.issue("E2E-closed")
		w.waitStatus(closed, "delivered", 20*time.Second)
		year := time.Now().Year()
		if r := call(t, "PUT", fmt.Sprintf("%s/v1/companies/%s/annual-accounts/%d", w.srv.einvoice, w.company, year), w.key,
			map[string]string{"Idempotency-Key": fmt.Sprintf("aa-%d", time.Now().UnixNano())}, ""); r.status != 200 {
			t.Fatalf("annual account: %d %s", r.status, r.body)
		}
		if r := w.post("/v1/einvoices/"+closed+"/correction", corr); r.status != 409 || !strings.Contains(string(r.body), "period_closed") {
			t.Fatalf("closed year: %d %s", r.status, r.body)
		}
		if r := w.post("/v1/einvoices/"+ids["reject"]+"/storno", `{"reason":"`+ujpdoc.Snapshot().VoidReasons[0].Code+`"}`); r.status != 409 ||
			!strings.Contains(string(r.body), "einvoice_state_conflict") {
			t.Fatalf("storno of a rejected invoice: %d %s", r.status, r.body)
		}

		// The PDF: UJP's rendering, fetched with a signed read.
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := call(t, "GET", w.srv.einvoice+"/v1/einvoices/"+ids["accept"]+"/pdf", w.key, map[string]string{"X-Company-Id": w.company}, "")
			if r.status == 200 && r.header.Get("Content-Type") == "application/pdf" && strings.HasPrefix(string(r.body), "%PDF-") {
				break
			}
			if r.status != 409 || !strings.Contains(string(r.body), "pdf_not_ready") || time.Now().After(deadline) {
				t.Fatalf("pdf: %d %.200s", r.status, r.body)
			}
			time.Sleep(100 * time.Millisecond)
		}

		// Outage: held, then delivered once the simulator is back.
		held := w.issue("E2E-held")
		if r := w.simulate(held, `{"action":"outage_starts"}`); r.status != 202 {
			t.Fatalf("outage: %d %s", r.status, r.body)
		}
		w.waitStatus(held, "held", 20*time.Second)
		// At least one probe during the outage: a look-up of the seller's
		// own registry entry, answered 503 by the simulator.
		probe := regexp.MustCompile(`path=\S*/companies/` + ujpsim.TaxSeller + `[^\n]*status=503`)
		probes := len(probe.FindAllString(w.sim.out.String(), -1))
		waitFor(t, "a probe during the outage", func() bool { return len(probe.FindAllString(w.sim.out.String(), -1)) > probes })
		if r := w.simulate(held, `{"action":"outage_ends"}`); r.status != 202 {
			t.Fatalf("outage end: %d %s", r.status, r.body)
		}
		w.waitStatus(held, "delivered", 20*time.Second)
		if n := w.sim.documents(t, ujpsim.TaxSeller)[held]; n != 1 {
			t.Fatalf("UJP holds %d documents for %s", n, held)
		}

		// A terminal error: failed, with UJP's code.
		bad := w.issue("E2E-bad")
		if r := w.simulate(bad, `{"action":"terminal_error","ujpCode":"E10203"}`); r.status != 202 {
			t.Fatalf("terminal: %d %s", r.status, r.body)
		}
		m := w.waitStatus(bad, "failed", 20*time.Second)
		if p, _ := m["problems"].([]any); len(p) == 0 || p[0].(map[string]any)["code"] != "E10203" {
			t.Fatalf("problems: %v", m["problems"])
		}

		// Refusals with nothing written.
		r = w.post("/v1/einvoices", invoiceBody("E2E-tot", `,"expectedTotals":{"net":"1.00","vat":"0.18","gross":"1.18","currency":"MKD"}`))
		if r.status != 422 || !strings.Contains(string(r.body), `"code":"totals_mismatch"`) {
			t.Fatalf("totals_mismatch: %d %s", r.status, r.body)
		}
		ref := `,"clientReference":"order-77"`
		if r := w.post("/v1/einvoices", invoiceBody("E2E-ref", ref)); r.status != 202 {
			t.Fatalf("with clientReference: %d %s", r.status, r.body)
		}
		if r := w.post("/v1/einvoices", invoiceBody("E2E-ref-other", ref)); r.status != 409 || !strings.Contains(string(r.body), "client_reference_conflict") {
			t.Fatalf("client_reference_conflict: %d %s", r.status, r.body)
		}
		if r := w.simulate(bad, `{"action":"buyer_accepts"}`); r.status != 409 || !strings.Contains(string(r.body), "einvoice_state_conflict") {
			t.Fatalf("simulate on failed: %d %s", r.status, r.body)
		}
		w.srv.stop(t)
	})
}

// TestEInvoiceCrashRecovery kills denar serve (SIGKILL) while 200 signed
// invoices are on their way to UJP, restarts it, and checks that every one
// is delivered exactly once: one →delivered move each, and one document
// per docId at UJP.
func TestEInvoiceCrashRecovery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		w := newEInvoiceWorld(t, dbURL)
		// A slow UJP keeps most of the batch between signed and delivered.
		w.sim.faults(t, `{"latencyMs":100}`)
		const n = 200
		ids := make([]string, 0, n)
		for i := range n {
			ids = append(ids, w.issue(fmt.Sprintf("CR-%03d", i)))
		}
		// Kill once every invoice is signed: all 200 are then between
		// signed and delivered, or delivered.
		deadline := time.Now().Add(60 * time.Second)
		for {
			_, m := w.get("/v1/einvoices?status=awaiting_signature&limit=200")
			if d, ok := m["data"].([]any); ok && len(d) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not every invoice was signed in time\n%s", tail(w.srv.stderr.String(), 3000))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := w.srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = w.srv.cmd.Wait()
		delivered := len(w.sim.documents(t, ujpsim.TaxSeller))
		if delivered >= n {
			t.Fatalf("all %d delivered before the crash; the test proves nothing", delivered)
		}
		if delivered == 0 {
			t.Log("none delivered before the crash")
		}
		t.Logf("killed with %d of %d at UJP", delivered, n)
		w.sim.faults(t, `{"latencyMs":0}`)
		w.srv = w.srv.restart(t)
		for _, id := range ids {
			w.waitStatus(id, "delivered", 90*time.Second)
		}
		docs := w.sim.documents(t, ujpsim.TaxSeller)
		if len(docs) != n {
			t.Fatalf("UJP holds %d documents, want %d", len(docs), n)
		}
		for _, id := range ids {
			if docs[id] != 1 {
				t.Fatalf("UJP holds %d documents with docId %s", docs[id], id)
			}
			_, hist := w.get("/v1/einvoices/" + id + "/status-history")
			count := 0
			for _, it := range hist["data"].([]any) {
				if it.(map[string]any)["to"] == "delivered" {
					count++
				}
			}
			if count != 1 {
				t.Fatalf("%s moved to delivered %d times", id, count)
			}
		}
		// The worker lost its WebSocket with the server and reconnected;
		// it signed no request twice.
		w.mu.Lock()
		for id, n := range w.signed {
			if n != 1 {
				t.Errorf("signing request %s signed %d times", id, n)
			}
		}
		w.mu.Unlock()
		w.srv.stop(t)
	})
}

func firstRejectReason() string {
	return ujpdoc.Snapshot().RejectReasons[0].Code
}
