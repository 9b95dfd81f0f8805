package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/crashpoint"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/sdk/signer"
)

// reconWorld is the strict world of a reconciliation: `denar serve` (the
// ujp backend) against a separate strict `denar ujp-sim`, both on a
// shifted clock (DENAR_CLOCK_OFFSET, the same for both) that the test
// moves by restarting them; the simulator's seller onboarded with its
// signer's certificate and RD granted, and, when asked for, the
// simulator's buyer onboarded without a certificate yet (so that its
// inbox is not synced until the test gives it one).
type reconWorld struct {
	*strictUJPWorld
	dbURL    string
	serveEnv []string // without DENAR_CLOCK_OFFSET
	day      time.Time
	seller   strictCompany
	buyer    strictCompany
	certDir  string
	db       *store.DB
	// stopAgent stops the agent the world runs.
	stopAgent func()
}

// reconDayStart is where the world's clock starts: 10:00 in Skopje of the
// day the documents are issued on (tomorrow, so that the offset is
// positive and the certificates, valid from an hour ago, already hold).
const reconDayStart = 10 * time.Hour

// newReconWorld starts the world on the clock of the day's 10:00.
// serveEnv is added to denar serve's environment.
func newReconWorld(t *testing.T, dbURL string, withBuyer bool, serveEnv ...string) *reconWorld {
	t.Helper()
	now := time.Now().In(ujpdoc.Skopje)
	day := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, ujpdoc.Skopje)
	w := &reconWorld{strictUJPWorld: &strictUJPWorld{t: t, signed: map[string]int{}}, dbURL: dbURL, day: day}
	u := w.strictUJPWorld
	u.simDB = storetest.SQLiteURL(t)
	if strings.HasPrefix(dbURL, "postgres") {
		u.simDB = storetest.PostgresURL(t)
	}
	offset := w.offsetTo(day.Add(reconDayStart))
	u.sim = startSimProcessAt(t, u.simDB, freeAddr(t), "DENAR_UJP_SIM_WINDOW="+strictWindow.String(), offset)
	u.simAdmin("user add", strictOperator)
	w.serveEnv = append(append(baseEnv(t, dbURL), "DENAR_UJP_SANDBOX_BACKEND=ujp", "DENAR_UJP_SANDBOX_URL="+u.sim.url,
		"DENAR_UJP_USER="+strictOperator, "DENAR_UJP_EDB="+einvoicingtest.TaxNumber("40300009", 1),
		"DENAR_UJP_SIGNER_INTERVAL="+strictWindow.String(),
		// A send whose answer was lost is looked up only after an hour:
		// the test leaves it as an older release could have.
		"DENAR_UJP_POLL_INTERVAL=1s", "DENAR_JOB_POLL_INTERVAL=100ms", "DENAR_EINVOICE_RETRY_DELAYS=1h",
		"DENAR_UJP_CALL_TIMEOUT=3s", "DENAR_JOB_LEASE=3s", "DENAR_RATE_LIMIT_RPS=10000", "DENAR_RATE_LIMIT_BURST=10000",
		"DENAR_RECONCILE_INTERVAL=0"), serveEnv...)
	u.srv = startServer(t, append(slices.Clone(w.serveEnv), offset))

	var acct struct{ ID string }
	if err := json.Unmarshal([]byte(runAdminCmd(t, u.srv.env, "account", "create", "--name", "Биро Сверка", "--plan", "business", "--json")), &acct); err != nil {
		t.Fatal(err)
	}
	u.account = acct.ID
	var key struct{ Key string }
	args := []string{"key", "create", "--account", acct.ID, "--service", "einvoice", "--env", "sandbox", "--json"}
	for _, s := range []string{"companies:read", "companies:write", "einvoices:read", "einvoices:write", "inbox:read", "events:read"} {
		args = append(args, "--scope", s)
	}
	if err := json.Unmarshal([]byte(runAdminCmd(t, u.srv.env, args...)), &key); err != nil {
		t.Fatal(err)
	}
	u.key = key.Key
	u.companies = []strictCompany{{tax: ujpsim.TaxSeller, name: "Тест Продавач ДООЕЛ Скопје"}}
	if withBuyer {
		u.companies = append(u.companies, strictCompany{tax: ujpsim.TaxBuyer})
	}
	for i := range u.companies {
		co := &u.companies[i]
		r := u.post(strictCompany{}, "/v1/companies", fmt.Sprintf(`{"taxNumber":%q,"representative":{"name":"Марија Николовска","email":"recon%d@example.mk"}}`, co.tax, i))
		var got struct{ ID string }
		if err := json.Unmarshal(r.body, &got); r.status != 201 || err != nil {
			t.Fatalf("onboard %s: %d %s", co.tax, r.status, r.body)
		}
		co.id = got.ID
	}
	u.acceptMandates(u.srv.env)
	w.seller = u.companies[0]
	if withBuyer {
		w.buyer = u.companies[1]
	}

	u.creds, u.signKey = u.pairAgent(w.seller, "recon")
	w.certDir = t.TempDir()
	w.certify(w.seller)
	w.startWorker()
	t.Cleanup(w.stopWorker)
	db, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	w.db = db
	t.Cleanup(func() { w.db.Close() })
	return w
}

// startWorker starts the agent: the SDK worker signing with the signer's
// key through the world's server.
func (w *reconWorld) startWorker() {
	worker := &signer.Worker{Creds: w.creds, Signer: w.signKey, Wait: 1, HTTP: &http.Client{Timeout: 10 * time.Second}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = worker.Run(ctx) }()
	w.stopAgent = func() { cancel(); <-done }
}

func (w *reconWorld) stopWorker() { w.stopAgent() }

// offsetTo is DENAR_CLOCK_OFFSET for a clock that shows at now.
func (w *reconWorld) offsetTo(at time.Time) string {
	return "DENAR_CLOCK_OFFSET=" + time.Until(at).Round(time.Second).String()
}

// certify gives co a certificate of the signer, out of band at UJP
// (registered, DP, RD and DA granted) and at denar serve.
func (w *reconWorld) certify(co strictCompany) {
	t := w.t
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Марија Николовска", Organization: []string{co.tax}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certValidity)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &w.signKey.PublicKey, w.signKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(w.certDir, co.tax+".pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	w.simAdmin("certificate add", "-eujp-id", strictSigner, "-edb", co.tax, "-cert", file)
	w.simAdmin("grant", "-eujp-id", strictSigner, "-edb", co.tax, "DP", "RD", "DA")
	if err := signer.RegisterCertificateAs(t.Context(), http.DefaultClient, w.creds, cert, co.id, strictSigner); err != nil {
		t.Fatal(err)
	}
}

// issueOn issues an invoice of the seller dated the world's day.
func (w *reconWorld) issueOn(number string) string {
	w.t.Helper()
	r := call(w.t, "POST", w.srv.einvoice+"/v1/einvoices", w.key,
		map[string]string{"Idempotency-Key": "recon-issue-" + number, "X-Company-Id": w.seller.id}, datedInvoiceBody(number, w.dayText(), ""))
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	if r.status != 202 {
		w.t.Fatalf("issue %s: %d %s", number, r.status, r.body)
	}
	return m["id"].(string)
}

func (w *reconWorld) dayText() string { return w.day.Format(time.DateOnly) }

// simPost calls the simulator's control API and decodes a document.
func (w *reconWorld) simPost(path string) ujpsim.Document {
	w.t.Helper()
	r := call(w.t, "POST", w.sim.url+path, simToken, nil, `{}`)
	var d ujpsim.Document
	if err := json.Unmarshal(r.body, &d); r.status != 200 || err != nil || d.EUID == "" {
		w.t.Fatalf("%s at the simulator: %d %s", path, r.status, r.body)
	}
	return d
}

// loseAnswer issues an invoice whose send answer the simulator loses (it
// holds the document); the service is left with it held, its look-up an
// hour away.
func (w *reconWorld) loseAnswer(number string) string {
	w.t.Helper()
	if r := call(w.t, "POST", w.sim.url+"/_sim/sellers/"+w.seller.tax+"/fail-next", simToken, nil, `{"kind":"lost","count":1,"path":"/send"}`); r.status != 200 {
		w.t.Fatalf("lost-response fault: %d %s", r.status, r.body)
	}
	id := w.issueOn(number)
	w.waitStatus(w.seller, id, "held", 30*time.Second)
	if n := w.sim.documents(w.t, w.seller.tax)[id]; n != 1 {
		w.t.Fatalf("%d documents with docId %s at UJP after the lost answer", n, id)
	}
	return id
}

// stopAll stops denar serve and the simulator (SIGTERM).
func (w *reconWorld) stopAll() {
	w.t.Helper()
	if w.srv.cmd.ProcessState == nil {
		w.srv.stop(w.t)
	}
	if err := w.sim.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		w.t.Fatal(err)
	}
	_ = w.sim.cmd.Wait()
}

// startAt starts the simulator on its store and address, then denar
// serve (build bin, extra environment) on its addresses, both with the
// clock at `at`.
func (w *reconWorld) startAt(at time.Time, bin string, extra ...string) {
	w.t.Helper()
	offset := w.offsetTo(at)
	w.sim = startSimProcessAt(w.t, w.sim.dbURL, w.sim.addr, "DENAR_UJP_SIM_WINDOW="+strictWindow.String(), offset)
	w.srv = w.serveAt(bin, at, extra...)
}

// serveAt starts denar serve (build bin) on the world's addresses with
// the clock at `at`.
func (w *reconWorld) serveAt(bin string, at time.Time, extra ...string) *server {
	w.t.Helper()
	env := make([]string, 0, len(w.srv.env)+len(extra)+1)
	for _, kv := range w.srv.env {
		if !strings.HasPrefix(kv, "DENAR_CLOCK_OFFSET=") && !strings.HasPrefix(kv, crashpoint.Env+"=") {
			env = append(env, kv)
		}
	}
	s := startServerBin(w.t, bin, append(append(env, w.offsetTo(at)), extra...))
	// The agent again at once, as an operator restarting both would: the
	// SDK worker's reconnection backs off to seconds while the server is
	// down.
	w.stopAgent()
	w.startWorker()
	return s
}

// leaveAs makes a document whose answer was lost stay in status as an
// older release (or an operator) could have left it: no look-up, no
// resubmission pending. denar serve must be stopped.
func (w *reconWorld) leaveAs(id, status string) {
	w.t.Helper()
	ctx := w.t.Context()
	if _, err := w.db.WriteDB().ExecContext(ctx, `UPDATE einvoices SET status = $1, send_unknown_since = NULL WHERE id = $2`, status, id); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.db.WriteDB().ExecContext(ctx, `UPDATE jobs SET state = 'cancelled' WHERE state IN ('available', 'retryable') AND args LIKE $1`, "%"+id+"%"); err != nil {
		w.t.Fatal(err)
	}
}

// reconcile asks for co's reconciliation of the world's day through s.
func (w *reconWorld) reconcile(s *server, co strictCompany) map[string]any {
	w.t.Helper()
	r := call(w.t, "POST", s.einvoice+"/v1/reconciliations", w.key, map[string]string{"X-Company-Id": co.id,
		"Idempotency-Key": fmt.Sprintf("recon-%s-%d", co.id, time.Now().UnixNano())}, fmt.Sprintf(`{"companyId":%q,"date":%q}`, co.id, w.dayText()))
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil || r.status != 202 || m["state"] != "running" {
		w.t.Fatalf("reconcile %s %s: %d %s", co.tax, w.dayText(), r.status, r.body)
	}
	return m
}

// reconciliation reads one through the current server.
func (w *reconWorld) reconciliation(co strictCompany, id string) map[string]any {
	w.t.Helper()
	st, m := w.get(co, "/v1/reconciliations/"+id)
	if st != 200 {
		w.t.Fatalf("reconciliation %s: %d %v", id, st, m)
	}
	return m
}

// waitCompleted waits until the reconciliation is completed.
func (w *reconWorld) waitCompleted(co strictCompany, id string, within time.Duration) map[string]any {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for {
		m := w.reconciliation(co, id)
		if m["state"] == "completed" {
			return m
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("reconciliation %s still %v after %s: %v\nserve log tail:\n%s", id, m["state"], within, m, tail(w.srv.stderr.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitKilled waits for s to die by SIGKILL at the crash point.
func (w *reconWorld) waitKilled(s *server, point string, within time.Duration) {
	w.t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(within):
		w.t.Fatalf("%s never fired within %s\n%s", point, within, tail(s.stderr.String(), 4000))
	}
	ws, _ := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL || !strings.Contains(s.stderr.String(), "crashpoint: "+point+" fired") {
		w.t.Fatalf("denar serve ended with %v, not by %s:\n%s", s.cmd.ProcessState, point, tail(s.stderr.String(), 4000))
	}
}

// count runs a COUNT(*) query.
func (w *reconWorld) count(query string, args ...any) int {
	w.t.Helper()
	var n int
	if err := w.db.ReadDB().QueryRowContext(w.t.Context(), query, args...).Scan(&n); err != nil {
		w.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// scalar runs a query of one text value.
func (w *reconWorld) scalar(query string, args ...any) string {
	w.t.Helper()
	var s string
	if err := w.db.ReadDB().QueryRowContext(w.t.Context(), query, args...).Scan(&s); err != nil {
		w.t.Fatalf("%s: %v", query, err)
	}
	return s
}

// figures are a reconciliation's figures as "sales a/d/m/r/disc/miss
// purchase a/i/add".
func figures(m map[string]any) string {
	n := func(side, k string) int {
		s, _ := m[side].(map[string]any)
		v, _ := s[k].(float64)
		return int(v)
	}
	return fmt.Sprintf("sales %d/%d/%d/%d/%d/%d purchase %d/%d/%d",
		n("sales", "atUJP"), n("sales", "atDenar"), n("sales", "matched"), n("sales", "repaired"), n("sales", "discovered"), n("sales", "missingAtUJP"),
		n("purchase", "atUJP"), n("purchase", "inInbox"), n("purchase", "added"))
}

// problemCodes lists the codes of a reconciliation's problems.
func problemCodes(m map[string]any) []string {
	var out []string
	list, _ := m["problems"].([]any)
	for _, p := range list {
		out = append(out, fmt.Sprint(p.(map[string]any)["code"]))
	}
	return out
}

// reconScene is the seller's day of work of every kind.
type reconScene struct {
	ok, failed, queued, gone string // e-invoice ids
	portal                   ujpsim.Document
	incoming                 ujpsim.Document // to the buyer, from the simulator's supplier
}

// setScene issues, on the world's day: one document delivered; two whose
// send answers were lost (left failed and queued, after serve stops);
// one delivered that the simulator then loses; one issued in UJP's
// portal; and, when the world has a buyer, one incoming document of the
// buyer from the simulator's supplier. Then it stops both processes.
func (w *reconWorld) setScene() reconScene {
	w.t.Helper()
	var s reconScene
	s.ok = w.issueOn("R-OK")
	w.waitStatus(w.seller, s.ok, "delivered", 30*time.Second)
	s.failed, s.queued = w.loseAnswer("R-FAILED"), w.loseAnswer("R-QUEUED")
	s.gone = w.issueOn("R-GONE")
	goneEUID := w.waitStatus(w.seller, s.gone, "delivered", 30*time.Second)["euid"].(string)
	if r := call(w.t, "DELETE", w.sim.url+"/_sim/documents/"+goneEUID, simToken, nil, ""); r.status/100 != 2 {
		w.t.Fatalf("lose %s at the simulator: %d %s", goneEUID, r.status, r.body)
	}
	s.portal = w.simPost("/_sim/sellers/" + w.seller.tax + "/portal-invoice")
	if w.buyer.id != "" {
		s.incoming = w.simPost("/_sim/buyers/" + w.buyer.tax + "/incoming")
	}
	w.stopAll()
	w.leaveAs(s.failed, "failed")
	w.leaveAs(s.queued, "queued")
	return s
}

// wantRDMissing fails unless the seller's problems say its signer lacks
// RD.
func (w *reconWorld) wantRDMissing() {
	w.t.Helper()
	_, co := w.get(w.seller, "/v1/companies/"+w.seller.id)
	if p := fmt.Sprint(co["problems"]); !strings.Contains(p, "ujp_privilege_missing") || !strings.Contains(p, "RD") {
		w.t.Fatalf("the company's problems: %s", p)
	}
}

// crashBinary is denar built with the crash points (-tags crashpoints),
// built once for the package's tests.
func crashBinary(t *testing.T) string {
	t.Helper()
	bin, err := crashpointsBin()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var crashpointsBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "denar-crashpoints-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "denar")
	if out, err := exec.Command("go", "build", "-tags", "crashpoints", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -tags crashpoints: %v\n%s", err, out)
	}
	return bin, nil
})

// TestReconciliationCrashEndToEnd kills `denar serve` (a crashpoints
// build, against a separate strict `denar ujp-sim`) with SIGKILL in the
// middle of reconciliations, just after a read of UJP was applied, and
// restarts it on the same store; each day completes once.
//
// The seller's day has work of every kind: two documents whose send
// answers were lost (left failed and queued), one issued in UJP's portal,
// one delivered that UJP lost, one matched. Its run is killed after the
// read that repaired the two and imported the portal's document, and
// again after the read that flagged the lost one. 70 days later the
// buyer, onboarded that day but synced for the first time only now (the
// month window of its inbox does not reach the day), reconciles the day:
// killed after the read that added the day's incoming documents to its
// inbox. After the restarts: one reconciliation per company and day, each
// run once, the figures of an uninterrupted run; one external e-invoice,
// one einvoice.discovered, one einvoice.missing_at_ujp, one
// reconciliation.completed and .mismatch per reconciliation, one inbox
// document per EUID with one inbox.received, one move to delivered
// (cause reconciled) per repaired document, nothing sent again.
func TestReconciliationCrashEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	bin := crashBinary(t)
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		start := time.Now()
		w := newReconWorld(t, dbURL, true)
		s := w.setScene()
		t.Logf("set-up and the day's documents: %s", time.Since(start).Round(time.Millisecond))

		// The next day, 00:30: the seller's run, killed after its third
		// read (sales_ids, sales_status, sales_payloads).
		next := w.day.AddDate(0, 0, 1).Add(30 * time.Minute)
		w.startAt(next, bin, crashpoint.Env+"="+crashpoint.ReconcileAfterRead+"@hit=3")
		id := w.reconcile(w.srv, w.seller)["id"].(string)
		w.waitKilled(w.srv, crashpoint.ReconcileAfterRead, 60*time.Second)
		ext := "SELECT COUNT(*) FROM einvoices WHERE euid = $1"
		if st := w.scalar("SELECT state FROM reconciliations WHERE id = $1", id); st != "running" ||
			w.count(ext, s.portal.EUID) != 1 || w.scalar("SELECT status FROM einvoices WHERE id = $1", s.failed) != "delivered" ||
			w.count("SELECT COUNT(*) FROM events WHERE type = 'einvoice.missing_at_ujp'") != 0 {
			t.Fatalf("after the first kill: reconciliation %s, %d external documents, the failed one %s, %d missing events: not the middle of the run",
				st, w.count(ext, s.portal.EUID), w.scalar("SELECT status FROM einvoices WHERE id = $1", s.failed),
				w.count("SELECT COUNT(*) FROM events WHERE type = 'einvoice.missing_at_ujp'"))
		}
		// Again, after the next read (missing_current: the lost one
		// flagged).
		w.srv = w.serveAt(bin, next, crashpoint.Env+"="+crashpoint.ReconcileAfterRead+"@hit=1")
		w.waitKilled(w.srv, crashpoint.ReconcileAfterRead, 60*time.Second)
		if st := w.scalar("SELECT state FROM reconciliations WHERE id = $1", id); st != "running" ||
			w.count("SELECT COUNT(*) FROM events WHERE type = 'einvoice.missing_at_ujp'") != 1 {
			t.Fatalf("after the second kill: reconciliation %s, %d missing events", st, w.count("SELECT COUNT(*) FROM events WHERE type = 'einvoice.missing_at_ujp'"))
		}
		w.srv = w.serveAt(bin, next)
		r := w.waitCompleted(w.seller, id, 60*time.Second)
		if got := figures(r); got != "sales 4/4/1/2/1/1 purchase 0/0/0" || r["runs"] != float64(1) || r["clean"] != false {
			t.Fatalf("the seller's day after two kills: %s, runs %v, clean %v, problems %v", got, r["runs"], r["clean"], r["problems"])
		}
		t.Logf("the seller's day, killed twice, completed %s after the start", time.Since(start).Round(time.Millisecond))

		// 70 days later: the buyer's first certificate, its first inbox
		// sync, and its reconciliation of the day, killed after the read
		// that added the incoming documents (sales_ids, sales_status,
		// purchase_ids, purchase_payloads).
		w.stopAll()
		later := w.day.AddDate(0, 0, 70).Add(12 * time.Hour)
		w.startAt(later, bin, crashpoint.Env+"="+crashpoint.ReconcileAfterRead+"@hit=4")
		w.certify(w.buyer)
		inbox := "SELECT COUNT(*) FROM inbox_documents WHERE company_id = $1"
		// Its first sync reads from the first day of the previous month,
		// and moves its cursor to the last day read completely.
		synced := later.AddDate(0, 0, -1).Format(time.DateOnly)
		waitFor(t, "the buyer's first inbox sync", func() bool {
			var through string
			err := w.db.ReadDB().QueryRowContext(t.Context(), "SELECT polled_through FROM ujp_purchase_cursors WHERE company_id = $1", w.buyer.id).Scan(&through)
			return err == nil && through >= synced
		})
		t.Logf("the buyer's first inbox sync done %s after the start", time.Since(start).Round(time.Millisecond))
		if n := w.count(inbox, w.buyer.id); n != 0 {
			t.Fatalf("the buyer's inbox sync found %d documents of 70 days ago: the test proves nothing", n)
		}
		bid := w.reconcile(w.srv, w.buyer)["id"].(string)
		w.waitKilled(w.srv, crashpoint.ReconcileAfterRead, 60*time.Second)
		if st := w.scalar("SELECT state FROM reconciliations WHERE id = $1", bid); st != "running" || w.count(inbox, w.buyer.id) != 5 {
			t.Fatalf("after the buyer's kill: reconciliation %s, %d inbox documents", st, w.count(inbox, w.buyer.id))
		}
		t.Logf("the buyer's run killed %s after the start", time.Since(start).Round(time.Millisecond))
		w.srv = w.serveAt(bin, later)
		br := w.waitCompleted(w.buyer, bid, 60*time.Second)
		t.Logf("the buyer's run completed %s after the start", time.Since(start).Round(time.Millisecond))
		// The seller's four documents UJP holds went to the buyer too.
		if got := figures(br); got != "sales 0/0/0/0/0/0 purchase 5/0/5" || br["runs"] != float64(1) {
			t.Fatalf("the buyer's day after a kill: %s, runs %v, problems %v", got, br["runs"], br["problems"])
		}

		// Once each.
		for _, q := range []struct {
			what, query string
			args        []any
			want        int
		}{
			{"reconciliations of the seller's day", "SELECT COUNT(*) FROM reconciliations WHERE company_id = $1 AND day = $2", []any{w.seller.id, w.dayText()}, 1},
			{"reconciliations of the buyer's day", "SELECT COUNT(*) FROM reconciliations WHERE company_id = $1 AND day = $2", []any{w.buyer.id, w.dayText()}, 1},
			{"e-invoices of the portal's document", ext, []any{s.portal.EUID}, 1},
			{"external e-invoices", "SELECT COUNT(*) FROM einvoices WHERE kind = 'external'", nil, 1},
			{"einvoice.discovered", "SELECT COUNT(*) FROM events WHERE type = 'einvoice.discovered'", nil, 1},
			{"einvoice.missing_at_ujp", "SELECT COUNT(*) FROM events WHERE type = 'einvoice.missing_at_ujp' AND object_id = $1", []any{s.gone}, 1},
			{"reconciliation.completed of the seller", "SELECT COUNT(*) FROM events WHERE type = 'reconciliation.completed' AND object_id = $1", []any{id}, 1},
			{"reconciliation.mismatch of the seller", "SELECT COUNT(*) FROM events WHERE type = 'reconciliation.mismatch' AND object_id = $1", []any{id}, 1},
			{"reconciliation.completed of the buyer", "SELECT COUNT(*) FROM events WHERE type = 'reconciliation.completed' AND object_id = $1", []any{bid}, 1},
			{"reconciliation.mismatch of the buyer", "SELECT COUNT(*) FROM events WHERE type = 'reconciliation.mismatch' AND object_id = $1", []any{bid}, 1},
			{"reconciliation events", "SELECT COUNT(*) FROM events WHERE type LIKE 'reconciliation.%'", nil, 4},
			{"inbox documents of the incoming one", "SELECT COUNT(*) FROM inbox_documents WHERE euid = $1", []any{s.incoming.EUID}, 1},
			{"inbox documents of the buyer", inbox, []any{w.buyer.id}, 5},
			{"inbox EUIDs of the buyer", "SELECT COUNT(DISTINCT euid) FROM inbox_documents WHERE company_id = $1", []any{w.buyer.id}, 5},
			{"inbox.received", "SELECT COUNT(*) FROM events WHERE type = 'inbox.received' AND company_id = $1", []any{w.buyer.id}, 5},
			{"usage of the external document", "SELECT COUNT(*) FROM usage_documents u JOIN einvoices e ON e.id = u.document_id WHERE e.kind = 'external' AND u.direction = 'sent'", nil, 1},
		} {
			if n := w.count(q.query, q.args...); n != q.want {
				t.Errorf("%s: %d, want %d", q.what, n, q.want)
			}
		}
		docs := w.sim.documents(t, w.seller.tax)
		for _, doc := range []string{s.failed, s.queued} {
			if st := w.scalar("SELECT status FROM einvoices WHERE id = $1", doc); st != "delivered" || docs[doc] != 1 {
				t.Errorf("%s: %s, %d documents at UJP", doc, st, docs[doc])
			}
			if n := w.count("SELECT COUNT(*) FROM einvoice_status_history WHERE einvoice_id = $1 AND to_status = 'delivered' AND cause = 'reconciled'", doc); n != 1 {
				t.Errorf("%s repaired %d times", doc, n)
			}
			if n := w.count("SELECT COUNT(*) FROM einvoice_status_history WHERE einvoice_id = $1 AND to_status = 'delivered'", doc); n != 1 {
				t.Errorf("%s moved to delivered %d times", doc, n)
			}
		}
		if docs[s.gone] != 0 {
			t.Errorf("the document UJP lost was sent again")
		}
		if p := w.scalar("SELECT problems FROM einvoices WHERE id = $1", s.gone); strings.Count(p, `"ujp_missing"`) != 1 {
			t.Errorf("problems of the document UJP lost: %s", p)
		}
		t.Logf("whole test: %s", time.Since(start).Round(time.Millisecond))
	})
}

// TestReconciliationTwoServeProcesses runs two `denar serve` processes on
// one PostgreSQL database against one strict `denar ujp-sim`: the day
// after a day with a matched, a portal-issued and a lost document, both
// run the daily job, both take POSTs for the day at once, and both run
// the jobs of its reads. One
// reconciliation, one run, each document imported or flagged once, its
// events once, one process logging its completion.
func TestReconciliationTwoServeProcesses(t *testing.T) {
	t.Parallel()
	dbURL := storetest.PostgresURL(t)
	start := time.Now()
	w := newReconWorld(t, dbURL, false)
	ok := w.issueOn("T-OK")
	w.waitStatus(w.seller, ok, "delivered", 30*time.Second)
	gone := w.issueOn("T-GONE")
	goneEUID := w.waitStatus(w.seller, gone, "delivered", 30*time.Second)["euid"].(string)
	if r := call(t, "DELETE", w.sim.url+"/_sim/documents/"+goneEUID, simToken, nil, ""); r.status/100 != 2 {
		t.Fatalf("lose %s: %d %s", goneEUID, r.status, r.body)
	}
	portal := w.simPost("/_sim/sellers/" + w.seller.tax + "/portal-invoice")
	w.stopAll()

	// The next day, 00:30: both processes run the daily job (every
	// second, the previous day due from midnight) as well. B first, on
	// addresses of its own; then A, where the agent connects: the day is
	// due from the moment the agent is seen.
	next := w.day.AddDate(0, 0, 1).Add(30 * time.Minute)
	w.sim = startSimProcessAt(t, w.sim.dbURL, w.sim.addr, "DENAR_UJP_SIM_WINDOW="+strictWindow.String(), w.offsetTo(next))
	daily := []string{"DENAR_RECONCILE_INTERVAL=1s", "DENAR_RECONCILE_HOUR=0"}
	env := []string{}
	for _, kv := range w.srv.env {
		if !strings.HasPrefix(kv, "DENAR_PAYROLL_ADDR=") && !strings.HasPrefix(kv, "DENAR_EINVOICE_ADDR=") && !strings.HasPrefix(kv, "DENAR_CLOCK_OFFSET=") {
			env = append(env, kv)
		}
	}
	b := startServer(t, append(append(env, w.offsetTo(next)), daily...))
	a := w.serveAt(denarBin, next, daily...)
	w.srv = a
	if a.einvoice == b.einvoice {
		t.Fatal("one address for both processes")
	}
	var wg sync.WaitGroup
	type answer struct {
		status int
		id     string
		state  any
	}
	answers := make([]answer, 4)
	for i, s := range []*server{a, b, a, b} {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", s.einvoice+"/v1/reconciliations", strings.NewReader(fmt.Sprintf(`{"companyId":%q,"date":%q}`, w.seller.id, w.dayText())))
			req.Header.Set("Authorization", "Bearer "+w.key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("two-recon-%d", i))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			id, _ := m["id"].(string)
			answers[i] = answer{resp.StatusCode, id, m["state"]}
		})
	}
	wg.Wait()
	for i, an := range answers {
		if an.status != 202 || an.id != answers[0].id || an.state != "running" {
			t.Fatalf("POST %d: %+v; all: %+v", i, an, answers)
		}
	}
	id := answers[0].id
	r := w.waitCompleted(w.seller, id, 60*time.Second)
	if got := figures(r); got != "sales 2/2/1/0/1/1 purchase 0/0/0" || r["runs"] != float64(1) {
		t.Fatalf("the day: %s, runs %v, problems %v", got, r["runs"], r["problems"])
	}
	for _, q := range []struct {
		what, query string
		args        []any
		want        int
	}{
		{"reconciliations of the day", "SELECT COUNT(*) FROM reconciliations WHERE company_id = $1 AND day = $2", []any{w.seller.id, w.dayText()}, 1},
		{"e-invoices of the portal's document", "SELECT COUNT(*) FROM einvoices WHERE euid = $1", []any{portal.EUID}, 1},
		{"einvoice.discovered", "SELECT COUNT(*) FROM events WHERE type = 'einvoice.discovered'", nil, 1},
		{"einvoice.missing_at_ujp", "SELECT COUNT(*) FROM events WHERE type = 'einvoice.missing_at_ujp' AND object_id = $1", []any{gone}, 1},
		{"reconciliation.completed", "SELECT COUNT(*) FROM events WHERE type = 'reconciliation.completed' AND object_id = $1", []any{id}, 1},
		{"reconciliation.mismatch", "SELECT COUNT(*) FROM events WHERE type = 'reconciliation.mismatch' AND object_id = $1", []any{id}, 1},
	} {
		if n := w.count(q.query, q.args...); n != q.want {
			t.Errorf("%s: %d, want %d", q.what, n, q.want)
		}
	}
	logged := map[string]int{}
	for name, s := range map[string]*server{"A": a, "B": b} {
		logged[name] = strings.Count(s.stderr.String(), "reconciliation completed")
	}
	if logged["A"]+logged["B"] != 1 {
		t.Errorf("processes logged the completion %v times", logged)
	}
	t.Logf("completion logged by process %v; whole test: %s", logged, time.Since(start).Round(time.Millisecond))
	b.stop(t)
	a.stop(t)
}

// TestReconciliationWithoutRD: the company's signer lacks UJP's RD
// privilege (revoked at the simulator with `denar ujp-sim revoke`, as in
// UJP's portal). The reconciliation still matches ours by EUID, repairs a
// document whose send answer was lost by its number, date, gross amount
// and buyer (the lists give no docId), imports the portal's document as
// external without its payload (number, date and totals from UJP's list),
// and says so: problem privilege_missing, and the company's problem of
// the missing privilege.
func TestReconciliationWithoutRD(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		start := time.Now()
		w := newReconWorld(t, dbURL, false)
		ok := w.issueOn("N-OK")
		w.waitStatus(w.seller, ok, "delivered", 30*time.Second)
		lost := w.loseAnswer("N-LOST")
		portal := w.simPost("/_sim/sellers/" + w.seller.tax + "/portal-invoice")
		w.simAdmin("revoke", "-eujp-id", strictSigner, "-edb", w.seller.tax, "RD")
		w.stopAll()
		w.leaveAs(lost, "failed")

		w.startAt(w.day.AddDate(0, 0, 1).Add(30*time.Minute), denarBin)
		id := w.reconcile(w.srv, w.seller)["id"].(string)
		r := w.waitCompleted(w.seller, id, 60*time.Second)
		if got := figures(r); got != "sales 3/2/1/1/1/0 purchase 0/0/0" || r["clean"] != false {
			t.Fatalf("the day without RD: %s, clean %v, problems %v", got, r["clean"], r["problems"])
		}
		if codes := problemCodes(r); !slices.Equal(codes, []string{"privilege_missing"}) {
			t.Fatalf("problems of the day without RD: %v", r["problems"])
		}

		// Ours whose answer was lost: repaired to UJP's status with UJP's
		// EUID, found by its headline.
		m := w.waitStatus(w.seller, lost, "delivered", time.Second)
		if d := w.simDocument(fmt.Sprint(m["euid"])); d.DocID != lost {
			t.Fatalf("the repaired document's EUID %v names docId %q at UJP", m["euid"], d.DocID)
		}
		if c := w.causes(w.seller, lost); c[len(c)-1] != "reconciled" {
			t.Fatalf("history of the repaired document: %v", c)
		}

		// The portal's document: external, without its payload.
		var header struct {
			Document struct {
				Header    struct{ DocNumber, DocDate string }
				DocTotals struct {
					DocGrossAmountR json.Number
				}
			}
		}
		if err := json.Unmarshal(portal.Payload, &header); err != nil {
			t.Fatal(err)
		}
		extID := w.scalar("SELECT id FROM einvoices WHERE euid = $1", portal.EUID)
		_, x := w.get(w.seller, "/v1/einvoices/"+extID)
		totals, _ := x["totals"].(map[string]any)
		if x["kind"] != "external" || x["document"] != nil || x["status"] != "delivered" || x["ujpDocId"] != "ujp:"+portal.EUID ||
			x["number"] != header.Document.Header.DocNumber || x["issueDate"] != header.Document.Header.DocDate {
			t.Fatalf("the external document without RD: %v (UJP's header %+v)", x, header.Document.Header)
		}
		if g := fmt.Sprint(totals["gross"]); g == "" || g == "<nil>" {
			t.Fatalf("the external document's totals: %v", x["totals"])
		}
		if n := w.count("SELECT COUNT(*) FROM events WHERE type = 'einvoice.discovered' AND object_id = $1", extID); n != 1 {
			t.Fatalf("%d einvoice.discovered", n)
		}
		// The company says which privilege is missing.
		w.wantRDMissing()

		// The next day, with the company known to lack RD: another
		// document issued in the portal is imported the same way, and
		// the run says so again.
		portal2 := w.simPost("/_sim/sellers/" + w.seller.tax + "/portal-invoice")
		w.stopAll()
		w.day = w.day.AddDate(0, 0, 1)
		w.startAt(w.day.AddDate(0, 0, 1).Add(30*time.Minute), denarBin)
		r = w.waitCompleted(w.seller, w.reconcile(w.srv, w.seller)["id"].(string), 60*time.Second)
		// The document repaired yesterday counts as ours delivered today
		// (its delivery was recorded at the repair): UJP, asked, holds it,
		// so it is matched.
		if got, codes := figures(r), problemCodes(r); got != "sales 1/1/1/0/1/0 purchase 0/0/0" || !slices.Equal(codes, []string{"privilege_missing"}) {
			t.Fatalf("the next day without RD: %s, problems %v", got, r["problems"])
		}
		_, x = w.get(w.seller, "/v1/einvoices/"+w.scalar("SELECT id FROM einvoices WHERE euid = $1", portal2.EUID))
		if x["kind"] != "external" || x["document"] != nil {
			t.Fatalf("the next day's external document: %v", x)
		}
		w.wantRDMissing()
		t.Logf("whole test: %s", time.Since(start).Round(time.Millisecond))
	})
}
