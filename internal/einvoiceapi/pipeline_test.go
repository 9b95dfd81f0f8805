package einvoiceapi_test

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// pipeEnv is the e-invoicing API, the job runner with the pipeline, the
// UJP simulator in-process and an agent that signs everything, all on one
// movable clock.
type pipeEnv struct {
	t       *testing.T
	db      *store.DB
	srv     *httptest.Server
	sim     *ujpsim.Sim
	runner  *jobs.Runner
	gw      *lossyGateway
	tr      *simTransport // the way to the simulator: canned answers, recorded calls
	clock   atomic.Int64
	key     string // e-invoicing key of the company
	company string
	agent   string
	authz   string // Agent header
	cert    testCert
	app     *app // the application layer, room by room
	svc     *einvoicing.Service
	inboxes *inbox.Service // the inbox room
	// hooks runs webhook deliveries (webhooks.Service.RegisterJobs), stepped apart
	// from the pipeline.
	hooks *jobs.Runner
	// hookCfg tunes the webhooks service (options may change it).
	hookCfg webhooks.Config
	// frozen, when set, is the clock's base instead of the real time.
	frozen time.Time
	// window, when set, is the simulator's rate window instead of
	// simWindow (withWindow).
	window time.Duration
}

// lossyGateway forwards to UJP but can lose the answer of the next sends,
// as a timeout after UJP already stored the document would, or send the
// next ones twice, as a client that retried on its own after a lost
// answer would (the second answer is then UJP's E1023).
type lossyGateway struct {
	ujp.Gateway
	loseNext   atomic.Int32
	doubleNext atomic.Int32
	sends      atomic.Int32
}

func (g *lossyGateway) Send(ctx context.Context, caller ujp.Identity, docType, jws string) (*ujp.SendResult, error) {
	g.sends.Add(1)
	if g.doubleNext.Load() > 0 {
		g.doubleNext.Add(-1)
		if _, err := g.Gateway.Send(ctx, caller, docType, jws); err != nil {
			return nil, err
		}
		turn, err := g.Gateway.Turn(ctx, caller, ujp.PrioritySend)
		if err != nil {
			return nil, err
		}
		ctx = turn
	}
	res, err := g.Gateway.Send(ctx, caller, docType, jws)
	if err == nil && g.loseNext.Load() > 0 {
		g.loseNext.Add(-1)
		return nil, &ujp.UnavailableError{Op: "send", Err: context.DeadlineExceeded}
	}
	return res, err
}

// slowRegistry is how long the simulator's registry takes for
// ujpsim.TaxSlowRegistry in these tests.
const slowRegistry = 400 * time.Millisecond

// simDocs are the seller's documents at the simulator.
func (e *pipeEnv) simDocs() []ujpsim.Document {
	e.t.Helper()
	docs, err := e.sim.Documents(context.Background(), ujpsim.TaxSeller)
	if err != nil {
		e.t.Fatal(err)
	}
	return docs
}

func (e *pipeEnv) now() time.Time {
	base := e.frozen
	if base.IsZero() {
		base = time.Now().UTC()
	}
	return base.Add(time.Duration(e.clock.Load()))
}

// pipeOption adjusts a pipeEnv before its service is built.
type pipeOption func(e *pipeEnv, cfg *appConfig)

// withWindow makes the simulator's rate window, and the pipeline's signer
// interval with it, d instead of simWindow.
func withWindow(d time.Duration) pipeOption {
	return func(e *pipeEnv, _ *appConfig) { e.window = d }
}

// frozenClock makes the environment's clock move only when the test
// advances it.
func frozenClock(e *pipeEnv, _ *appConfig) {
	e.frozen = time.Now().UTC().Truncate(time.Second)
}

func newPipeEnv(t *testing.T, db *store.DB, opts ...pipeOption) *pipeEnv {
	t.Helper()
	return newPipeEnvWith(t, db, nil, opts...)
}

// newPipeEnvWith is newPipeEnv with the service's configuration adjusted
// by tune (nil: as newPipeEnv).
func newPipeEnvWith(t *testing.T, db *store.DB, tune func(*appConfig), opts ...pipeOption) *pipeEnv {
	t.Helper()
	e := &pipeEnv{t: t, db: db, hookCfg: webhooks.Config{AllowPrivateSandbox: true}}
	cfg := appConfig{Pipeline: pipeline.Config{RetryDelays: []time.Duration{time.Minute}}}
	if tune != nil {
		tune(&cfg)
	}
	for _, o := range opts {
		o(e, &cfg)
	}
	db.Now = e.now
	window := cmp.Or(e.window, simWindow)
	sim, client, tr := newSimGateway(t, db, ujpsim.Options{Now: e.now, Logger: slog.New(slog.DiscardHandler), ControlToken: "pipeline-test",
		SlowRegistryDelay: slowRegistry, Window: window})
	e.sim, e.tr = sim, tr
	e.gw = &lossyGateway{Gateway: client}
	cfg.Pipeline.SignerInterval = window
	cfg.Gateways = map[string]ujp.Gateway{auth.EnvSandbox: e.gw}
	cfg.Sandbox, cfg.SandboxSetup = sim, simSetup{sim}
	a, api := newApp(db, einvoicing.Deps{Registry: simRegistry{client},
		Secrets: testSecrets(t)}, cfg,
		webhooks.Deps{}, e.hookCfg)
	e.app, e.svc, e.inboxes = a, a.Service, a.inbox
	e.srv = httptest.NewServer(api.Handler())
	t.Cleanup(e.srv.Close)
	e.runner = jobs.NewRunner(db, jobs.Config{Workers: 4, Logger: slog.New(slog.DiscardHandler)})
	a.RegisterJobs(e.runner)
	e.hooks = jobs.NewRunner(db, jobs.Config{Workers: 8, Logger: slog.New(slog.DiscardHandler)})
	a.hooks.RegisterJobs(e.hooks)

	e.company, e.key = seedSeller(t, db, "companies:read", "companies:write", "einvoices:read", "einvoices:write", "events:read",
		"webhooks:write", "signing:agent", "inbox:read", "inbox:write")
	se := &signEnv{t: t, db: db, srv: e.srv, key: e.key, company: e.company}
	e.cert = newTestCert(t)
	e.agent, e.authz = se.pair(e.cert)
	e.registerSigners()
	return e
}

// registerSigners runs the sandbox set-up's jobs: the simulator learns the
// certificates registered, as UJP's portal knows a real signer's before
// the first call.
func (e *pipeEnv) registerSigners() {
	e.t.Helper()
	for {
		var n int
		if err := e.db.ReadDB().QueryRowContext(e.t.Context(), "SELECT COUNT(*) FROM jobs WHERE kind = $1 AND state IN ('available', 'retryable', 'running')",
			signing.KindSandboxSigner).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if _, err := e.runner.RunOnce(e.t.Context()); err != nil {
			e.t.Fatal(err)
		}
	}
}

// seedSeller creates an account with the simulator's seller as an active
// sandbox company, and an e-invoicing key with scopes for it.
func seedSeller(tb testing.TB, db *store.DB, scopes ...string) (companyID, key string) {
	tb.Helper()
	ctx := context.Background()
	as := &auth.Store{DB: db}
	acct, err := as.CreateAccount(ctx, "Биро", "")
	if err != nil {
		tb.Fatal(err)
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: acct.ID, Name: "Тест Продавач ДООЕЛ Скопје",
			TaxNumber: ujpsim.TaxSeller, VatNumber: "МК" + ujpsim.TaxSeller, Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox,
			Address: `{"street":"Партизанска","number":"1","city":"Скопје","zip":"1000"}`, CreatedAt: tx.Now})
		companyID = c.ID
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	_, key, err = as.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox, Scopes: scopes})
	if err != nil {
		tb.Fatal(err)
	}
	return companyID, key
}

func (e *pipeEnv) call(method, path string, body any) (int, map[string]any, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("X-Company-Id", e.company)
	req.Header.Set("Idempotency-Key", denar.NewID("idem"))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw
}

// issue posts an invoice to the simulator's registered buyer.
func (e *pipeEnv) issue(number string) string {
	e.t.Helper()
	body := fmt.Sprintf(`{"number":%q,"issueDate":%q,
 "buyer":{"taxNumber":%q,"name":"Тест Купувач ДОО Скопје","address":{"street":"Широк сокак","number":"5","postalCode":"1000","city":"Скопје"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"3","unitPrice":"1000","unitDiscount":"100","vatPercent":"18","taxIndicator":"DDV-A"}]}`,
		number, e.now().Format(time.DateOnly), ujpsim.TaxBuyer)
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		e.t.Fatal(err)
	}
	st, m, raw := e.call("POST", "/v1/einvoices", v)
	if st != 202 || m["status"] != "awaiting_signature" {
		e.t.Fatalf("issue: %d %s", st, raw)
	}
	return m["id"].(string)
}

// signAll is the agent: it signs every request waiting for it, and
// returns how many.
func (e *pipeEnv) signAll() int {
	e.t.Helper()
	se := &signEnv{t: e.t, db: e.db, srv: e.srv}
	st, m := se.do("GET", "/v1/agents/"+e.agent+"/signing-requests?wait=0", e.authz, nil)
	if st != 200 {
		e.t.Fatalf("agent poll: %d %v", st, m)
	}
	n := 0
	for _, it := range m["data"].([]any) {
		r := it.(map[string]any)
		id := r["id"].(string)
		if r["state"] == "pending" {
			// The claim answers with the request as this agent signs it
			// (its header carries this agent's certificate).
			st, m := se.do("POST", "/v1/signing-requests/"+id+"/claim", e.authz, nil)
			if st != 200 {
				e.t.Fatalf("claim %s: %d %v", id, st, m)
			}
			r = m
		}
		if st, m := se.do("POST", "/v1/signing-requests/"+id+"/signature", e.authz, map[string]string{"jws": e.cert.sign(e.t, r["signingInput"].(string))}); st != 200 {
			e.t.Fatalf("sign %s: %d %v", id, st, m)
		}
		n++
	}
	return n
}

// settle signs and runs jobs until nothing is left to do now.
func (e *pipeEnv) settle() {
	e.t.Helper()
	for i := 0; i < 100; i++ {
		signed := e.signAll()
		ran, err := e.runner.RunOnce(e.t.Context())
		if err != nil {
			e.t.Fatal(err)
		}
		if signed == 0 && ran == 0 {
			// A job snoozed for its signer's turn at UJP is due within
			// moments; let the clock reach it. Anything later is a real
			// wait the test steps itself.
			var next sql.NullString
			if err := e.db.ReadDB().QueryRowContext(e.t.Context(), `SELECT CAST(MIN(run_at) AS TEXT) FROM jobs
				WHERE state IN ('available', 'retryable') AND kind IN ($1, $2, $3)`,
				einvoicing.KindSubmit, einvoicing.KindUJPQuery, signing.KindSandboxSigner).Scan(&next); err != nil {
				e.t.Fatal(err)
			}
			var due time.Time
			if next.Valid {
				due = e.dueTime(next.String)
			}
			if wait := due.Sub(e.now()); next.Valid && wait < 2*time.Second {
				e.advance(wait + time.Millisecond)
				continue
			}
			return
		}
	}
	e.t.Fatal("the pipeline did not settle")
}

// dueTime parses a run_at read back as text from either store.
func (e *pipeEnv) dueTime(s string) time.Time {
	e.t.Helper()
	for _, layout := range []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999-07", "2006-01-02 15:04:05.999999999Z07:00", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	e.t.Fatalf("run_at %q", s)
	return time.Time{}
}

func (e *pipeEnv) einvoice(id string) map[string]any {
	e.t.Helper()
	st, m, raw := e.call("GET", "/v1/einvoices/"+id, nil)
	if st != 200 {
		e.t.Fatalf("get %s: %d %s", id, st, raw)
	}
	return m
}

func (e *pipeEnv) wantStatus(id, want string) map[string]any {
	e.t.Helper()
	m := e.einvoice(id)
	if m["status"] != want {
		rows, _ := e.db.ReadDB().QueryContext(e.t.Context(), "SELECT kind, state, CAST(run_at AS TEXT), COALESCE(last_error,'') FROM jobs")
		for rows.Next() {
			var a, b, c, d string
			_ = rows.Scan(&a, &b, &c, &d)
			e.t.Logf("job %s %s %s %s (now %s)", a, b, c, d, e.now())
		}
		rows.Close()
		e.t.Fatalf("%s: status %v, want %s (problems %v)", id, m["status"], want, m["problems"])
	}
	return m
}

// history returns "from→to:cause" of each row.
func (e *pipeEnv) history(id string) []string {
	e.t.Helper()
	_, m, _ := e.call("GET", "/v1/einvoices/"+id+"/status-history", nil)
	var out []string
	for _, it := range m["data"].([]any) {
		r := it.(map[string]any)
		from, _ := r["from"].(string)
		out = append(out, from+"→"+r["to"].(string)+":"+r["cause"].(string))
	}
	return out
}

// events returns the event types of object id, oldest first.
func (e *pipeEnv) events(id string) []string {
	e.t.Helper()
	_, m, raw := e.call("GET", "/v1/events?objectId="+id, nil)
	data, ok := m["data"].([]any)
	if !ok {
		e.t.Fatalf("events: %s", raw)
	}
	var out []string
	for i := len(data) - 1; i >= 0; i-- {
		out = append(out, data[i].(map[string]any)["type"].(string))
	}
	return out
}

func (e *pipeEnv) simulate(id, action string, extra map[string]any) (int, map[string]any) {
	e.t.Helper()
	body := map[string]any{"action": action}
	for k, v := range extra {
		body[k] = v
	}
	st, m, _ := e.call("POST", "/v1/sandbox/einvoices/"+id+"/simulate", body)
	return st, m
}

func (e *pipeEnv) advance(d time.Duration) { e.clock.Add(int64(d)) }

// pollNow reads the company's change feeds now and settles.
func (e *pipeEnv) pollNow() {
	e.t.Helper()
	if err := e.db.InTx(e.t.Context(), func(tx *store.Tx) error {
		_, err := jobs.Enqueue(e.t.Context(), tx, jobs.Spec{Kind: einvoicing.KindPollCompany, Args: map[string]string{"companyId": e.company}})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
	e.settle()
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// TestPipelineDeliverAndDecide: issue → signed → queued → submitting →
// delivered with UJP's EUID and QR link; the PDF arrives after its signed
// read; the buyer's decisions and the deadline arrive through the change
// feed. History and events match every move.
func TestPipelineDeliverAndDecide(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		ids := map[string]string{}
		for _, n := range []string{"accept", "reject", "deadline"} {
			ids[n] = e.issue("F-" + n)
		}
		if st, m, _ := e.call("GET", "/v1/einvoices/"+ids["accept"]+"/pdf", nil); st != 409 || m["code"] != "pdf_not_ready" {
			t.Fatalf("pdf before delivery: %d %v", st, m)
		}
		e.settle()
		for n, id := range ids {
			m := e.wantStatus(id, "delivered")
			euid, _ := m["euid"].(string)
			doc, err := e.sim.Document(context.Background(), euid)
			if err != nil || doc.DocID != id || doc.Status != ujp.StatusSent {
				t.Fatalf("%s: UJP has %+v for euid %q", n, doc, euid)
			}
			if m["qrLink"] != doc.QRLink || m["deliveredAt"] == nil || m["settledAt"] != nil || m["submitAttempts"] != float64(1) {
				t.Fatalf("%s: qrLink %v (UJP's %s), deliveredAt %v, settledAt %v, attempts %v", n, m["qrLink"], doc.QRLink, m["deliveredAt"], m["settledAt"], m["submitAttempts"])
			}
			want := []string{"→awaiting_signature:issued", "awaiting_signature→queued:signed", "queued→submitting:submission", "submitting→delivered:submitted"}
			if h := e.history(id); !equal(h, want) {
				t.Fatalf("%s history %v", n, h)
			}
		}
		st, _, pdf := e.call("GET", "/v1/einvoices/"+ids["accept"]+"/pdf", nil)
		if st != 200 || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Fatalf("pdf: %d %.40q", st, pdf)
		}

		if st, m := e.simulate(ids["accept"], "buyer_accepts", nil); st != 202 {
			t.Fatalf("simulate accept: %d %v", st, m)
		}
		if st, m := e.simulate(ids["reject"], "buyer_rejects", map[string]any{"rejectReasonCode": "NOPE"}); st != 422 {
			t.Fatalf("bad reason: %d %v", st, m)
		}
		if st, m := e.simulate(ids["reject"], "buyer_rejects", map[string]any{"rejectReasonCode": firstRejectReason(t), "comment": "погрешна цена"}); st != 202 {
			t.Fatalf("simulate reject: %d %v", st, m)
		}
		if st, m := e.simulate(ids["deadline"], "deadline_passes", nil); st != 202 {
			t.Fatalf("simulate deadline: %d %v", st, m)
		}
		e.settle()
		if m := e.wantStatus(ids["accept"], "accepted"); m["settledAt"] == nil {
			t.Fatal("accepted without settledAt")
		}
		e.wantStatus(ids["deadline"], "auto_accepted")
		m := e.wantStatus(ids["reject"], "rejected")
		if p, _ := m["problems"].([]any); len(p) != 1 || p[0].(map[string]any)["code"] != firstRejectReason(t) {
			t.Fatalf("rejection problems: %v", m["problems"])
		}
		for n, want := range map[string][]string{
			"accept":   {"einvoice.signature_required", "einvoice.submitted", "einvoice.accepted"},
			"reject":   {"einvoice.signature_required", "einvoice.submitted", "einvoice.rejected"},
			"deadline": {"einvoice.signature_required", "einvoice.submitted", "einvoice.auto_accepted"},
		} {
			if ev := e.events(ids[n]); !equal(ev, want) {
				t.Fatalf("%s events %v, want %v", n, ev, want)
			}
		}
		if h := e.history(ids["deadline"]); h[len(h)-1] != "delivered→auto_accepted:deadline_passed" {
			t.Fatalf("deadline history %v", h)
		}
		// A decision on a settled document is refused by the simulator.
		if st, m := e.simulate(ids["accept"], "buyer_rejects", map[string]any{"rejectReasonCode": firstRejectReason(t)}); st != 409 || m["code"] != "einvoice_state_conflict" {
			t.Fatalf("decide twice: %d %v", st, m)
		}
		if e.gw.sends.Load() != 3 {
			t.Fatalf("%d sends for 3 documents", e.gw.sends.Load())
		}
		// Yesterday's feed, once read, is not read again; today's is.
		today := e.now().In(ujpdoc.Skopje).Format(time.DateOnly)
		yesterday := e.now().In(ujpdoc.Skopje).AddDate(0, 0, -1).Format(time.DateOnly)
		var through string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT polled_through FROM ujp_change_cursors WHERE company_id = $1", e.company).Scan(&through); err != nil || through != today {
			t.Fatalf("cursor %q %v, want %s", through, err, today)
		}
		e.pollNow()
		var reads int
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM signing_requests WHERE link_id = $1",
			e.company+"/"+yesterday).Scan(&reads); err != nil || reads != 1 {
			t.Fatalf("%d reads of yesterday's feed (%v), want 1", reads, err)
		}
	})
}

func firstRejectReason(t *testing.T) string {
	t.Helper()
	cb := ujpdoc.Snapshot()
	if len(cb.RejectReasons) == 0 {
		t.Fatal("no reject reasons in the code lists")
	}
	return cb.RejectReasons[0].Code
}

// TestPipelineOutageHeldThenDelivered: during an outage the document is
// held; after it, the retry delivers exactly one document at UJP.
func TestPipelineOutageHeldThenDelivered(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		first := e.issue("F-1")
		if st, m := e.simulate(first, "outage_starts", nil); st != 202 {
			t.Fatalf("outage: %d %v", st, m)
		}
		e.settle()
		m := e.wantStatus(first, "held")
		if m["euid"] != nil {
			t.Fatalf("held with an euid: %v", m)
		}
		// Still down at the next attempt: the probe fails, nothing is sent.
		sends := e.gw.sends.Load()
		e.advance(61 * time.Second)
		e.settle()
		e.wantStatus(first, "held")
		if e.gw.sends.Load() != sends {
			t.Fatal("a held document was sent during the outage")
		}
		if st, m := e.simulate(first, "outage_ends", nil); st != 202 {
			t.Fatalf("outage end: %d %v", st, m)
		}
		// Two minutes after signing: the signature is still fresh.
		e.advance(61 * time.Second)
		e.settle()
		m = e.wantStatus(first, "delivered")
		if docs := e.simDocs(); len(docs) != 1 || docs[0].DocID != first || docs[0].EUID != m["euid"] {
			t.Fatalf("UJP holds %d documents; euid %v", len(docs), m["euid"])
		}
		want := []string{"→awaiting_signature:issued", "awaiting_signature→queued:signed", "queued→submitting:submission",
			"submitting→held:ujp_outage", "held→submitting:retry", "submitting→delivered:submitted"}
		if h := e.history(first); !equal(h, want) {
			t.Fatalf("history %v", h)
		}
		if ev := e.events(first); !equal(ev, []string{"einvoice.signature_required", "einvoice.held", "einvoice.submitted"}) {
			t.Fatalf("events %v", ev)
		}
	})
}

// TestPipelineLostAnswerAndStaleSignature: a send whose answer was lost is
// not sent again: UJP's records (invoices-status, then the payloads matched
// on docId) show it landed, and it is delivered with UJP's EUID, one
// document at UJP, one send; a signature older than UJP's window is
// refreshed by the signer before sending.
func TestPipelineLostAnswerAndStaleSignature(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		lost := e.issue("F-lost")
		e.gw.loseNext.Store(1)
		e.settle()
		e.wantStatus(lost, "held")
		e.advance(61 * time.Second)
		e.settle()
		m := e.wantStatus(lost, "delivered")
		docs := e.simDocs()
		if len(docs) != 1 || docs[0].EUID != m["euid"] {
			t.Fatalf("UJP holds %d documents; euid %v", len(docs), m["euid"])
		}
		if n := e.gw.sends.Load(); n != 1 {
			t.Fatalf("%d sends: a document UJP held was sent again", n)
		}
		want := []string{"→awaiting_signature:issued", "awaiting_signature→queued:signed", "queued→submitting:submission",
			"submitting→held:ujp_outage", "held→delivered:submitted_earlier"}
		if h := e.history(lost); !equal(h, want) {
			t.Fatalf("history %v", h)
		}
		if n := e.countLinks("ujp_sales_lookup", "ujp_sales_lookup_payloads"); n != 2 {
			t.Fatalf("%d look-up reads, want the status read and the payload read", n)
		}

		stale := e.issue("F-stale")
		e.signAll() // signed now …
		e.advance(6 * time.Minute)
		// … sent six minutes later: the pipeline asks for a fresh signature
		// instead of letting UJP refuse the old timestamp.
		if _, err := e.runner.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		e.wantStatus(stale, "queued")
		var open int
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM signing_requests WHERE link_id = $1 AND state = 'pending'", stale).Scan(&open); err != nil || open != 1 {
			t.Fatalf("fresh signing requests: %d %v", open, err)
		}
		e.settle()
		e.wantStatus(stale, "delivered")
	})
}

// countLinks counts the signing requests of the link types.
func (e *pipeEnv) countLinks(types ...string) int {
	e.t.Helper()
	n := 0
	for _, typ := range types {
		var c int
		if err := e.db.ReadDB().QueryRowContext(e.t.Context(), "SELECT COUNT(*) FROM signing_requests WHERE link_type = $1", typ).Scan(&c); err != nil {
			e.t.Fatal(err)
		}
		n += c
	}
	return n
}

// TestPipelineTerminalFailure: UJP's terminal refusal fails the document
// with UJP's code unrenamed.
func TestPipelineTerminalFailure(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-1")
		if st, m := e.simulate(id, "buyer_accepts", nil); st != 409 || m["code"] != "einvoice_state_conflict" {
			t.Fatalf("decide before delivery: %d %v", st, m)
		}
		if st, m := e.simulate(id, "terminal_error", map[string]any{"ujpCode": "E10203"}); st != 202 {
			t.Fatalf("terminal: %d %v", st, m)
		}
		e.settle()
		m := e.wantStatus(id, "failed")
		if p, _ := m["problems"].([]any); len(p) != 1 || p[0].(map[string]any)["code"] != "E10203" {
			t.Fatalf("problems %v", m["problems"])
		}
		if ev := e.events(id); !equal(ev, []string{"einvoice.signature_required", "einvoice.failed"}) {
			t.Fatalf("events %v", ev)
		}
		if h := e.history(id); h[len(h)-1] != "submitting→failed:ujp_rejected" {
			t.Fatalf("history %v", h)
		}
		// The next document of the company goes through.
		next := e.issue("F-2")
		e.settle()
		e.wantStatus(next, "delivered")
	})
}

// TestSimulateSandboxOnly: production companies, and a service whose
// sandbox is not the simulator, get 403 sandbox_only.
func TestSimulateSandboxOnly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-1")
		_, plainAPI := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
		plain := httptest.NewServer(plainAPI.Handler())
		defer plain.Close()
		req, _ := http.NewRequest("POST", plain.URL+"/v1/sandbox/einvoices/"+id+"/simulate", strings.NewReader(`{"action":"outage_starts"}`))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("X-Company-Id", e.company)
		req.Header.Set("Idempotency-Key", "k1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 403 || m["code"] != "sandbox_only" {
			t.Fatalf("no simulator: %d %v", resp.StatusCode, m)
		}
		if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET environment = 'production' WHERE id = $1", e.company); err != nil {
			t.Fatal(err)
		}
		// The key is a sandbox key: the production company is not its own.
		if st, m := e.simulate(id, "outage_starts", nil); st != 403 && st != 404 {
			t.Fatalf("production: %d %v", st, m)
		}
	})
}

// simRegistry is the registry look-up against the simulator.
type simRegistry struct{ gw ujp.Gateway }

func (r simRegistry) LookupCompany(ctx context.Context, env, as, tax string) (einvoicing.RegistryCompany, error) {
	c, err := r.gw.Company(ctx, ujp.Identity{EUJPID: testOperator, EDB: as}, tax)
	if ujp.IsNotFound(err) {
		return einvoicing.RegistryCompany{}, einvoicing.ErrRegistryNotFound
	}
	if err != nil {
		return einvoicing.RegistryCompany{}, err
	}
	out := einvoicing.RegistryCompany{Name: c.Name, Address: einvoicing.Address{Street: c.Address.Street, Number: c.Address.Number,
		City: c.Address.City, Zip: c.Address.Zip}}
	if c.VatNumber != nil {
		out.VATNumber = *c.VatNumber
	}
	return out, nil
}

// TestIssueChecksBuyerRegistry: a buyer UJP's registry does not know, or
// names differently, or with another VAT number, city or postal code (what
// UJP compares, E10004-E10007), is a field error naming the registry, and
// nothing is created; a VAT number or postal code left out is the
// registry's.
func TestIssueChecksBuyerRegistry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		body := func(tax, name string) any {
			var v any
			_ = json.Unmarshal([]byte(fmt.Sprintf(`{"number":"F-1","issueDate":"2026-11-20",
 "buyer":{"taxNumber":%q,"name":%q,"address":{"street":"Широк сокак","number":"5","postalCode":"1000","city":"Скопје"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"1","unitPrice":"100","vatPercent":"18","taxIndicator":"DDV-A"}]}`, tax, name)), &v)
			return v
		}
		for _, tc := range []struct{ tax, name, vat, path string }{
			{ujpsim.TaxNeverExisted, "Некој ДОО", "", "buyer.taxNumber"},
			{ujpsim.TaxBuyer, "Купувач со друго име", "", "buyer.name"},
			// A VAT number other than the registry's (UJP: E10007).
			{ujpsim.TaxBuyer, "Тест Купувач ДОО Скопје", "МК4030000375897", "buyer.vatNumber"},
			{ujpsim.TaxSmallBiz, "Тест Занаетчија Битола", "МК" + ujpsim.TaxSmallBiz, "buyer.vatNumber"},
			// The registry's buyer is in Скопје, 1000 (UJP: E10004, E10005).
			{ujpsim.TaxBuyer, "Тест Купувач ДОО Скопје", "", "buyer.address.city"},
			{ujpsim.TaxBuyer, "Тест Купувач ДОО Скопје", "", "buyer.address.postalCode"},
		} {
			b := body(tc.tax, tc.name).(map[string]any)
			if tc.vat != "" {
				b["buyer"].(map[string]any)["vatNumber"] = tc.vat
			}
			if tc.tax == ujpsim.TaxSmallBiz { // registered in Битола
				b["buyer"].(map[string]any)["address"].(map[string]any)["city"] = "Битола"
				b["buyer"].(map[string]any)["address"].(map[string]any)["postalCode"] = "7000"
			}
			switch tc.path {
			case "buyer.address.city":
				b["buyer"].(map[string]any)["address"].(map[string]any)["city"] = "Битола"
			case "buyer.address.postalCode":
				b["buyer"].(map[string]any)["address"].(map[string]any)["postalCode"] = "1010"
			}
			st, m, raw := e.call("POST", "/v1/einvoices", b)
			errs, _ := m["errors"].([]any)
			if st != 422 || len(errs) != 1 || errs[0].(map[string]any)["path"] != tc.path || errs[0].(map[string]any)["codebook"] != einvoicing.CBRegistry {
				t.Fatalf("%s: %d %s", tc.path, st, raw)
			}
		}
		var n int
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM einvoices").Scan(&n); err != nil || n != 0 {
			t.Fatalf("%d e-invoices after refusals (%v)", n, err)
		}
		// Left out, the VAT number is the registry's (UJP refuses a VAT
		// payer's document without it: E10008), and so are a postal code
		// and street number sent as null (UJP requires them).
		b := body(ujpsim.TaxBuyer, "Тест Купувач ДОО Скопје").(map[string]any)
		addr := b["buyer"].(map[string]any)["address"].(map[string]any)
		addr["postalCode"], addr["number"] = nil, nil
		st, m, raw := e.call("POST", "/v1/einvoices", b)
		var doc ujpdoc.Request
		if b, _ := json.Marshal(m["document"]); st != 202 || json.Unmarshal(b, &doc) != nil ||
			doc.Document.Buyer.BuyerVatNumber == nil || *doc.Document.Buyer.BuyerVatNumber != "МК"+ujpsim.TaxBuyer {
			t.Fatalf("the registry's VAT number: %d %s", st, raw)
		}
		if a := doc.Document.Buyer.BuyerAddress; a.PostalCode != "1000" || a.StreetNumber != "2" || a.StreetAddress != "Широк сокак" || a.City != "Скопје" {
			t.Fatalf("the buyer's address: %+v", a)
		}
	})
}

// TestStornoAndCorrection: each creates a new linked document that is
// signed and submitted; the original moves to cancelled_by_storno /
// corrected with its event when UJP reports 07 / 09 for it (the change
// feed), not when the storno or correction is delivered. A storno UJP
// refuses fails with UJP's code and leaves the original as it was. Every
// refusal of the two endpoints comes from a real request.
func TestStornoAndCorrection(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		voided, corrected := e.issue("F-void"), e.issue("F-corr")
		reason := ujpdoc.Snapshot().VoidReasons[0].Code
		creason := ujpdoc.Snapshot().CorrectionReasons[0].Code

		// Not yet at UJP: nothing to void.
		if st, m, _ := e.call("POST", "/v1/einvoices/"+voided+"/storno", map[string]any{"reason": reason}); st != 409 || m["code"] != "einvoice_state_conflict" {
			t.Fatalf("storno before delivery: %d %v", st, m)
		}
		e.settle()
		e.wantStatus(voided, "delivered")

		if st, m, _ := e.call("POST", "/v1/einvoices/"+voided+"/storno", map[string]any{"reason": "S-99"}); st != 422 ||
			m["errors"].([]any)[0].(map[string]any)["codebook"] != ujpdoc.CBVoidReasons {
			t.Fatalf("bad void reason: %d %v", st, m)
		}
		// UJP refuses a storno (E1016: the original is not NEW there any
		// more, say): the storno fails with UJP's code, the original is
		// untouched, and another storno may be made.
		st, m, raw := e.call("POST", "/v1/einvoices/"+voided+"/storno", map[string]any{"reason": reason})
		if st != 202 {
			t.Fatalf("storno: %d %s", st, raw)
		}
		refused := m["id"].(string)
		if st, m := e.simulate(refused, "terminal_error", map[string]any{"ujpCode": "E1016"}); st != 202 {
			t.Fatalf("terminal: %d %v", st, m)
		}
		e.settle()
		if p := e.wantStatus(refused, "failed")["problems"].([]any); len(p) != 1 || p[0].(map[string]any)["code"] != "E1016" {
			t.Fatalf("refused storno's problems %v", p)
		}
		e.pollNow()
		e.wantStatus(voided, "delivered")
		if ev := e.events(voided); !equal(ev, []string{"einvoice.signature_required", "einvoice.submitted"}) {
			t.Fatalf("original's events after a refused storno %v", ev)
		}
		st, m, raw = e.call("POST", "/v1/einvoices/"+voided+"/storno", map[string]any{"reason": reason, "comment": "двојно фактурирано"})
		if st != 202 || m["kind"] != "storno" || m["originalId"] != voided || m["status"] != "awaiting_signature" {
			t.Fatalf("storno: %d %s", st, raw)
		}
		storno := m["id"].(string)
		orig := e.einvoice(voided)
		if g := m["totals"].(map[string]any)["gross"].(string); g != "-"+orig["totals"].(map[string]any)["gross"].(string) {
			t.Fatalf("storno gross %s, original %v", g, orig["totals"])
		}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+voided+"/storno", map[string]any{"reason": reason}); st != 409 || m["code"] != "supersede_pending" {
			t.Fatalf("second storno: %d %v", st, m)
		}
		e.wantStatus(voided, "delivered") // untouched until UJP takes the storno
		e.settle()
		e.wantStatus(storno, "delivered")
		// Delivered is not voided: the original moves when UJP says so,
		// and UJP keeps it in 01 until the buyer confirms the storno.
		e.pollNow()
		e.wantStatus(voided, "delivered")
		if d, _ := e.sim.Document(context.Background(), orig["euid"].(string)); d.Status != ujp.StatusSent {
			t.Fatalf("UJP's original before the buyer confirmed the storno: %s", d.Status)
		}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+voided+"/storno", map[string]any{"reason": reason}); st != 409 || m["code"] != "supersede_pending" {
			t.Fatalf("storno while the first is at UJP: %d %v", st, m)
		}
		// The buyer confirms the storno (UJP's strict reading moves the
		// original to 07 only then); the change feed reports the original.
		if st, m := e.simulate(storno, "buyer_accepts", nil); st != 202 {
			t.Fatalf("the buyer accepts the storno: %d %v", st, m)
		}
		e.pollNow()
		e.wantStatus(voided, "cancelled_by_storno")
		if ev := e.events(voided); !equal(ev, []string{"einvoice.signature_required", "einvoice.submitted", "einvoice.cancelled_by_storno"}) {
			t.Fatalf("original's events %v", ev)
		}
		if h := e.history(voided); h[len(h)-1] != "delivered→cancelled_by_storno:ujp_voided" {
			t.Fatalf("original's history %v", h)
		}
		if d, _ := e.sim.Document(context.Background(), orig["euid"].(string)); d.Status != ujp.StatusVoided {
			t.Fatalf("UJP's original is %s", d.Status)
		}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+storno+"/storno", map[string]any{"reason": reason}); st != 409 || m["code"] != "einvoice_state_conflict" {
			t.Fatalf("storno of a storno: %d %v", st, m)
		}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+voided+"/storno", map[string]any{"reason": reason}); st != 409 || m["code"] != "einvoice_state_conflict" {
			t.Fatalf("storno of a voided invoice: %d %v", st, m)
		}

		// Correction: a full replacement with its reason.
		body := func(withReason bool) any {
			var v map[string]any // the issue body, plus docStorno, reason and comment
			_ = json.Unmarshal([]byte(fmt.Sprintf(`{"number":"F-corr-2","issueDate":%q,
 "buyer":{"taxNumber":%q,"name":"Тест Купувач ДОО Скопје","address":{"street":"Широк сокак","number":"5","postalCode":"1000","city":"Скопје"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"2","unitPrice":"1000","vatPercent":"18","taxIndicator":"DDV-A"}]}`, e.now().Format(time.DateOnly), ujpsim.TaxBuyer)), &v)
			if withReason {
				v["docStorno"], v["reason"], v["comment"] = 2, creason, "погрешна количина"
			}
			return v
		}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+corrected+"/correction", body(false)); st != 422 || !hasPaths(m, "docStorno", "reason") {
			t.Fatalf("correction without reason: %d %v", st, m)
		}
		wrong := body(true).(map[string]any)
		wrong["docStorno"] = 1 // a storno's
		if st, m, _ := e.call("POST", "/v1/einvoices/"+corrected+"/correction", wrong); st != 422 || !hasPaths(m, "docStorno") {
			t.Fatalf("correction with docStorno 1: %d %v", st, m)
		}
		wrong["docStorno"], wrong["reason"] = 2, reason // a void reason
		if st, m, _ := e.call("POST", "/v1/einvoices/"+corrected+"/correction", wrong); st != 422 || !hasPaths(m, "reason") ||
			m["errors"].([]any)[0].(map[string]any)["codebook"] != ujpdoc.CBCorrectionReasons {
			t.Fatalf("correction with a void reason: %d %v", st, m)
		}
		// The old shape, a correction object, is not a field of the body.
		old := body(false).(map[string]any)
		old["correction"] = map[string]any{"reason": creason}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+corrected+"/correction", old); st != 422 || !hasPaths(m, "correction") {
			t.Fatalf("correction object: %d %v", st, m)
		}
		// A filed annual account closes the year.
		year := e.now().Year()
		if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET annual_account_filed_for = $1 WHERE id = $2", year, e.company); err != nil {
			t.Fatal(err)
		}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+corrected+"/correction", body(true)); st != 409 || m["code"] != "period_closed" {
			t.Fatalf("closed year: %d %v", st, m)
		}
		if st, m, _ := e.call("POST", "/v1/einvoices/"+corrected+"/storno", map[string]any{"reason": reason}); st != 409 || m["code"] != "period_closed" {
			t.Fatalf("closed year storno: %d %v", st, m)
		}
		if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET annual_account_filed_for = $1 WHERE id = $2", year-1, e.company); err != nil {
			t.Fatal(err)
		}
		st, m, raw = e.call("POST", "/v1/einvoices/"+corrected+"/correction", body(true))
		if st != 202 || m["kind"] != "correction" || m["originalId"] != corrected {
			t.Fatalf("correction: %d %s", st, raw)
		}
		correction := m["id"].(string)
		var doc ujpdoc.Request
		if b, _ := json.Marshal(m["document"]); json.Unmarshal(b, &doc) != nil || doc.Document.Header.DocStorno != ujpdoc.StornoCorrection ||
			doc.Document.Header.CorrectionReasonCode == nil || *doc.Document.Header.CorrectionReasonCode != creason {
			t.Fatalf("correction header %+v", doc.Document.Header)
		}
		e.settle()
		e.wantStatus(correction, "delivered")
		e.wantStatus(corrected, "delivered")
		e.pollNow()
		e.wantStatus(corrected, "corrected")
		if ev := e.events(corrected); !equal(ev, []string{"einvoice.signature_required", "einvoice.submitted", "einvoice.corrected"}) {
			t.Fatalf("corrected events %v", ev)
		}
		// The change feed reports the same moves later; nothing changes.
		e.advance(2 * time.Minute)
		e.pollNow()
		e.wantStatus(corrected, "corrected")
		e.wantStatus(voided, "cancelled_by_storno")
		if h := e.history(corrected); len(h) != 5 {
			t.Fatalf("history after the feed: %v", h)
		}
	})
}

// TestExpiredSignatureIsReplaced: a document request nobody signed in time
// is expired by the periodic job and replaced; signing the replacement
// (its payload now too old for UJP) leads, through one fresh signature, to
// delivery.
func TestExpiredSignatureIsReplaced(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-late")
		var first string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT id FROM signing_requests WHERE link_id = $1", id).Scan(&first); err != nil {
			t.Fatal(err)
		}
		e.advance(16 * time.Minute)
		if err := db.InTx(t.Context(), func(tx *store.Tx) error {
			_, err := jobs.Enqueue(t.Context(), tx, jobs.Spec{Kind: signing.KindExpireSigning})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.runner.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		old, err := einvoicing.GetSigningRequest(t.Context(), db.Reader(), first)
		if err != nil || old.State != "expired" || old.ReplacedBy == nil {
			t.Fatalf("expired request: %+v %v", old, err)
		}
		e.wantStatus(id, "awaiting_signature")
		e.settle()
		e.wantStatus(id, "delivered")
	})
}

// TestPurgeSignedReads: a week after, the change-feed and PDF reads are
// deleted; the document's signature stays.
func TestPurgeSignedReads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-1")
		e.settle()
		e.wantStatus(id, "delivered")
		e.pollNow()
		count := func(linkType string) int {
			var n int
			if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM signing_requests WHERE link_type = $1", linkType).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if count("ujp_changes") == 0 || count("einvoice_pdf") != 1 || count("einvoice") != 1 {
			t.Fatalf("before: changes %d, pdf %d, documents %d", count("ujp_changes"), count("einvoice_pdf"), count("einvoice"))
		}
		e.advance(einvoicing.SignedReadRetention + time.Hour)
		if err := db.InTx(t.Context(), func(tx *store.Tx) error {
			_, err := jobs.Enqueue(t.Context(), tx, jobs.Spec{Kind: einvoicing.KindPurgeSignedReads})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.runner.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		if count("ujp_changes") != 0 || count("einvoice_pdf") != 0 || count("einvoice") != 1 {
			t.Fatalf("after: changes %d, pdf %d, documents %d", count("ujp_changes"), count("einvoice_pdf"), count("einvoice"))
		}
	})
}

// hasPaths reports whether problem m has a field error at each of paths.
func hasPaths(m map[string]any, paths ...string) bool {
	errs, _ := m["errors"].([]any)
	for _, p := range paths {
		found := false
		for _, e := range errs {
			if e.(map[string]any)["path"] == p {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
