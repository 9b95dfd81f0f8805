package einvoiceapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// CurrentStatus forwards to UJP but, while failStatus is positive, loses
// UJP's answer (as a process that dies after UJP answered, before it
// recorded the answer, would).
func (g *decisionGateway) CurrentStatus(ctx context.Context, caller ujp.Identity, jws string) (*ujp.DocStatus, error) {
	st, err := g.Gateway.CurrentStatus(ctx, caller, jws)
	if g.failStatus.Load() > 0 {
		g.failStatus.Add(-1)
		return nil, &ujp.UnavailableError{Op: "CurrentStatus", Err: context.DeadlineExceeded}
	}
	return st, err
}

// reconEnv is inboxEnv with the daily reconciliation job registered.
func newReconEnv(t *testing.T, db *store.DB) *inboxEnv {
	t.Helper()
	return newInboxEnv(t, db, func(c *appConfig) {
		c.Reconcile = reconcile.Config{Every: time.Hour}
	})
}

// skopjeAt is day's hh:mm:ss in Skopje.
func skopjeAt(t *testing.T, day time.Time, hms string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation("2006-01-02 15:04:05", day.In(ujpdoc.Skopje).Format(time.DateOnly)+" "+hms, ujpdoc.Skopje)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// reconDo calls the API with the account's e-invoicing key for company,
// with Idempotency-Key idem (a fresh one when "").
func (e *inboxEnv) reconDo(base, company, method, path string, body any, idem string) (int, map[string]any, []byte, http.Header) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("X-Company-Id", company)
	if idem == "" {
		idem = denar.NewID("idem")
	}
	req.Header.Set("Idempotency-Key", idem)
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
	return resp.StatusCode, m, raw, resp.Header
}

// reconcile asks for company's day and returns the reconciliation's id.
func (e *inboxEnv) reconcile(company, day string) string {
	e.t.Helper()
	st, m, raw, _ := e.reconDo(e.srv.URL, company, "POST", "/v1/reconciliations", map[string]string{"companyId": company, "date": day}, "")
	if st != 202 || m["state"] != "running" || m["object"] != "reconciliation" {
		e.t.Fatalf("reconcile %s %s: %d %s", company, day, st, raw)
	}
	return m["id"].(string)
}

// reconciliation reads one and fails unless it is completed.
func (e *inboxEnv) reconciliation(company, id string) map[string]any {
	e.t.Helper()
	st, m, raw, _ := e.reconDo(e.srv.URL, company, "GET", "/v1/reconciliations/"+id, nil, "")
	if st != 200 {
		e.t.Fatalf("get %s: %d %s", id, st, raw)
	}
	if m["state"] != "completed" || m["completedAt"] == nil {
		e.t.Fatalf("reconciliation %s not completed: %s", id, raw)
	}
	return m
}

// wantFigures compares a reconciliation's figures, as "sales a/d/m/r/disc/miss purchase a/i/add".
func wantFigures(t *testing.T, m map[string]any, want string) {
	t.Helper()
	n := func(side, k string) int { v, _ := deref(m, side, k).(float64); return int(v) }
	got := fmt.Sprintf("sales %d/%d/%d/%d/%d/%d purchase %d/%d/%d",
		n("sales", "atUJP"), n("sales", "atDenar"), n("sales", "matched"), n("sales", "repaired"), n("sales", "discovered"), n("sales", "missingAtUJP"),
		n("purchase", "atUJP"), n("purchase", "inInbox"), n("purchase", "added"))
	if got != want {
		t.Fatalf("figures %s, want %s (problems %v)", got, want, m["problems"])
	}
}

// leaveAs makes a document the service sent, whose answer was lost, stay
// in status as an older release (or an operator) could have left it: no
// look-up, no resubmission pending.
func (e *inboxEnv) leaveAs(id, status string) {
	e.t.Helper()
	ctx := e.t.Context()
	if _, err := e.db.WriteDB().ExecContext(ctx, `UPDATE einvoices SET status = $1, send_unknown_since = NULL WHERE id = $2`, status, id); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.db.WriteDB().ExecContext(ctx, `UPDATE jobs SET state = 'cancelled' WHERE state IN ('available', 'retryable') AND args LIKE $1`, "%"+id+"%"); err != nil {
		e.t.Fatal(err)
	}
}

// sellerDocs counts the seller's documents at UJP by docId.
func (e *inboxEnv) sellerDocs() map[string]int {
	e.t.Helper()
	docs, err := e.sim.Documents(e.t.Context(), ujpsim.TaxSeller)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, d := range docs {
		out[d.DocID]++
	}
	return out
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// TestReconciliation: against the strict simulator, a reconciliation of a
// finished day repairs documents whose send answer was lost and that were
// left failed or queued (to UJP's status, cause reconciled, nothing sent
// again), imports a document issued in UJP's portal as kind external
// (einvoice.discovered, read-only), flags a delivered document UJP lost
// (ujp_missing, einvoice.missing_at_ujp, not resubmitted), and adds to the
// inbox an incoming document the month-window sync cannot reach. A second
// run of the day finds nothing more to fix; the daily job reconciles the
// previous day of every company on its own, and a day with nothing to fix
// is clean.
func TestReconciliation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newReconEnv(t, db)
		ctx := t.Context()
		d0 := e.now().In(ujpdoc.Skopje).AddDate(0, 0, 1)
		day0 := d0.Format(time.DateOnly)
		e.setClock(skopjeAt(t, d0, "10:00:00"))

		ok := e.issue("R-OK")
		e.settleAll()
		e.wantStatus(ok, "delivered")
		failed, queued := e.issue("R-FAILED"), e.issue("R-QUEUED")
		e.gw.loseNext.Store(2)
		e.settleAll()
		e.wantStatus(failed, "held")
		e.wantStatus(queued, "held")
		e.leaveAs(failed, "failed")
		e.leaveAs(queued, "queued")
		gone := e.issue("R-GONE")
		e.settleAll()
		goneEUID := e.wantStatus(gone, "delivered")["euid"].(string)
		if err := e.sim.LoseDocument(ctx, goneEUID); err != nil {
			t.Fatal(err)
		}
		portal, err := e.sim.IssuedInPortal(ctx, ujpsim.Portal{SellerTin: ujpsim.TaxSeller})
		if err != nil {
			t.Fatal(err)
		}
		incoming := e.drop("")
		sends := e.gw.sends.Load()

		// The day has not ended: refused at date.
		e.setClock(skopjeAt(t, d0, "23:58:00"))
		st, _, raw, _ := e.reconDo(e.srv.URL, e.company, "POST", "/v1/reconciliations", map[string]string{"companyId": e.company, "date": day0}, "")
		if st != 422 || !strings.Contains(string(raw), `"path":"date"`) || !strings.Contains(string(raw), "has ended") {
			t.Fatalf("a day not ended: %d %s", st, raw)
		}

		e.setClock(skopjeAt(t, d0.AddDate(0, 0, 1), "00:10:00"))
		st, first, raw, _ := e.reconDo(e.srv.URL, e.company, "POST", "/v1/reconciliations", map[string]string{"companyId": e.company, "date": day0}, "recon-idem-1")
		if st != 202 || first["state"] != "running" || first["date"] != day0 || first["companyId"] != e.company {
			t.Fatalf("reconcile: %d %s", st, raw)
		}
		id := first["id"].(string)
		// The same Idempotency-Key replays; another key answers the same
		// day's reconciliation, still running (one row per day).
		st, replay, _, hdr := e.reconDo(e.srv.URL, e.company, "POST", "/v1/reconciliations", map[string]string{"companyId": e.company, "date": day0}, "recon-idem-1")
		if st != 202 || replay["id"] != id || hdr.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %d %v %v", st, replay, hdr)
		}
		if again := e.reconcile(e.company, day0); again != id {
			t.Fatalf("the same day asked again: %s, want %s", again, id)
		}
		e.settleAll()
		r := e.reconciliation(e.company, id)
		wantFigures(t, r, "sales 4/4/1/2/1/1 purchase 0/0/0")
		if r["clean"] != false || r["runs"] != float64(1) {
			t.Fatalf("clean %v runs %v", r["clean"], r["runs"])
		}
		if ev := e.events(id); !equal(ev, []string{"reconciliation.completed", "reconciliation.mismatch"}) {
			t.Fatalf("events of the reconciliation: %v", ev)
		}

		// Repaired to UJP's status, with UJP's EUID, nothing sent again.
		docs := e.sellerDocs()
		for _, doc := range []string{failed, queued} {
			m := e.wantStatus(doc, "delivered")
			if m["euid"] == nil || docs[doc] != 1 {
				t.Fatalf("%s: euid %v, %d documents at UJP", doc, m["euid"], docs[doc])
			}
			if h := e.history(doc); !strings.HasSuffix(h[len(h)-1], "→delivered:reconciled") {
				t.Fatalf("%s history %v", doc, h)
			}
			if p := fmt.Sprint(m["problems"]); p != "[]" {
				t.Fatalf("%s problems after the repair: %s", doc, p)
			}
		}
		if n := e.gw.sends.Load(); n != sends {
			t.Fatalf("%d sends after the reconciliation, %d before", n, sends)
		}

		// The delivered document UJP lost: flagged, not resubmitted.
		gm := e.wantStatus(gone, "delivered")
		if !strings.Contains(fmt.Sprint(gm["problems"]), reconcile.ProblemUJPMissing) {
			t.Fatalf("problems of the document UJP lost: %v", gm["problems"])
		}
		if ev := e.events(gone); countOf(ev, webhooks.EventMissingAtUJP) != 1 {
			t.Fatalf("events of the document UJP lost: %v", ev)
		}
		if docs[gone] != 0 {
			t.Fatalf("the document UJP lost was sent again")
		}

		// The document issued in UJP's portal: external, read-only.
		var ext string
		if err := db.ReadDB().QueryRowContext(ctx, `SELECT id FROM einvoices WHERE euid = $1`, portal.EUID).Scan(&ext); err != nil {
			t.Fatal(err)
		}
		xm := e.einvoice(ext)
		if xm["kind"] != "external" || xm["status"] != "delivered" || !strings.HasPrefix(fmt.Sprint(xm["number"]), "ПОРТАЛ-") || xm["document"] == nil ||
			xm["ujpDocId"] != "ujp:"+portal.EUID {
			t.Fatalf("the external document: %v", xm)
		}
		if ev := e.events(ext); !equal(ev, []string{webhooks.EventDiscovered}) {
			t.Fatalf("events of the external document: %v", ev)
		}
		if h := e.history(ext); len(h) == 0 || !strings.HasSuffix(h[0], ":discovered") {
			t.Fatalf("history of the external document: %v", h)
		}
		st, _, raw = e.call("POST", "/v1/einvoices/"+ext+"/storno", map[string]string{"reason": ujpdoc.Snapshot().VoidReasons[0].Code, "comment": "x"})
		if st != 409 || !strings.Contains(string(raw), "einvoice_external") {
			t.Fatalf("storno of an external document: %d %s", st, raw)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM usage_documents WHERE document_id = $1 AND direction = 'sent'`, ext); n != 1 {
			t.Fatalf("the external document counted %d times in usage", n)
		}

		// A second run of the day: nothing more to fix, no duplicate.
		if again := e.reconcile(e.company, day0); again != id {
			t.Fatalf("a completed day asked again: %s, want %s", again, id)
		}
		e.settleAll()
		r = e.reconciliation(e.company, id)
		wantFigures(t, r, "sales 4/4/4/0/0/1 purchase 0/0/0")
		if r["runs"] != float64(2) {
			t.Fatalf("runs %v", r["runs"])
		}
		if n := e.countRows(`SELECT COUNT(*) FROM einvoices WHERE euid = $1`, portal.EUID); n != 1 {
			t.Fatalf("%d e-invoices of the portal's document", n)
		}
		if ev := e.events(gone); countOf(ev, webhooks.EventMissingAtUJP) != 1 {
			t.Fatalf("the document UJP lost flagged again: %v", ev)
		}
		st, list, raw, _ := e.reconDo(e.srv.URL, e.company, "GET", "/v1/reconciliations?companyId="+e.company+"&date="+day0, nil, "")
		if data, _ := list["data"].([]any); st != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != id {
			t.Fatalf("list: %d %s", st, raw)
		}
		if st, _, raw, _ := e.reconDo(e.srv.URL, e.company, "GET", "/v1/reconciliations?date=May", nil, ""); st != 422 || !strings.Contains(string(raw), "query.date") {
			t.Fatalf("a bad date filter: %d %s", st, raw)
		}
		if st, _, _, _ := e.reconDo(e.srv.URL, e.company, "GET", "/v1/reconciliations/rcn_unknown", nil, ""); st != 404 {
			t.Fatalf("an unknown reconciliation: %d", st)
		}

		// Months later the buyer's inbox is synced for the first time: the
		// month window does not reach the day of the incoming document;
		// the day's reconciliation adds it.
		later := d0.AddDate(0, 0, 70)
		e.setClock(skopjeAt(t, later, "12:00:00"))
		e.syncBuyer()
		if _, found := e.inbox()[incoming]; found {
			t.Fatal("the month-window sync reached a document of 70 days ago; the test proves nothing")
		}
		bid := e.reconcile(e.buyer, day0)
		e.settleAll()
		// The seller's four documents of the day UJP holds went to this
		// buyer too: five incoming documents, none in the inbox yet.
		wantFigures(t, e.reconciliation(e.buyer, bid), "sales 0/0/0/0/0/0 purchase 5/0/5")
		d, found := e.inbox()[incoming]
		if !found {
			t.Fatal("the incoming document is not in the inbox after the reconciliation")
		}
		if ev := e.buyerEvents(d["id"].(string)); countOf(ev, webhooks.EventInboxReceived) != 1 {
			t.Fatalf("events of the added document: %v", ev)
		}

		// The daily job: the previous day of every company, clean.
		e.signAll()
		e.enqueue(reconcile.KindReconcile, map[string]string{})
		e.settleAll()
		yesterday := later.AddDate(0, 0, -1).Format(time.DateOnly)
		for _, co := range []string{e.company, e.buyer} {
			st, list, raw, _ := e.reconDo(e.srv.URL, co, "GET", "/v1/reconciliations?companyId="+co+"&date="+yesterday, nil, "")
			data, _ := list["data"].([]any)
			if st != 200 || len(data) != 1 {
				t.Fatalf("the daily job's reconciliation of %s %s: %d %s", co, yesterday, st, raw)
			}
			r := e.reconciliation(co, data[0].(map[string]any)["id"].(string))
			if r["clean"] != true {
				t.Fatalf("a day with nothing to fix is not clean: %v", r)
			}
			_, evs, _, _ := e.reconDo(e.srv.URL, co, "GET", "/v1/events?objectId="+r["id"].(string), nil, "")
			var ev []string
			for _, it := range evs["data"].([]any) {
				ev = append(ev, it.(map[string]any)["type"].(string))
			}
			if !equal(ev, []string{"reconciliation.completed"}) {
				t.Fatalf("events of a clean day: %v", ev)
			}
		}
	})
}

// TestReconciliationResumesAfterCrash: a run whose read keeps losing UJP's
// answer (the process dies after UJP answered) stops half-way, with the
// work done so far kept; the daily job resumes it, and it completes with
// the same figures as an uninterrupted run, nothing imported or flagged
// twice; a late duplicate of one of its reads changes nothing.
func TestReconciliationResumesAfterCrash(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newReconEnv(t, db)
		ctx := t.Context()
		d0 := e.now().In(ujpdoc.Skopje).AddDate(0, 0, 1)
		day0 := d0.Format(time.DateOnly)
		e.setClock(skopjeAt(t, d0, "10:00:00"))
		ok, gone := e.issue("C-OK"), e.issue("C-GONE")
		e.settleAll()
		e.wantStatus(ok, "delivered")
		if err := e.sim.LoseDocument(ctx, e.wantStatus(gone, "delivered")["euid"].(string)); err != nil {
			t.Fatal(err)
		}
		portal, err := e.sim.IssuedInPortal(ctx, ujpsim.Portal{SellerTin: ujpsim.TaxSeller})
		if err != nil {
			t.Fatal(err)
		}

		e.setClock(skopjeAt(t, d0.AddDate(0, 0, 1), "00:10:00"))
		e.dg.failStatus.Store(100)
		id := e.reconcile(e.company, day0)
		e.settleAll()
		for range 6 {
			e.advance(90 * time.Second)
			e.settleAll()
		}
		st, m, raw, _ := e.reconDo(e.srv.URL, e.company, "GET", "/v1/reconciliations/"+id, nil, "")
		if st != 200 || m["state"] != "running" {
			t.Fatalf("the run with its read failing: %d %s", st, raw)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM einvoices WHERE euid = $1`, portal.EUID); n != 1 {
			t.Fatalf("the work before the failing read was not kept: %d external documents", n)
		}

		e.dg.failStatus.Store(0)
		e.advance(20 * time.Minute)
		e.signAll()
		e.enqueue(reconcile.KindReconcile, map[string]string{})
		e.settleAll()
		r := e.reconciliation(e.company, id)
		wantFigures(t, r, "sales 2/2/1/0/1/1 purchase 0/0/0")
		if n := e.countRows(`SELECT COUNT(*) FROM einvoices WHERE euid = $1`, portal.EUID); n != 1 {
			t.Fatalf("%d e-invoices of the portal's document", n)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM events WHERE type = $1`, webhooks.EventDiscovered); n != 1 {
			t.Fatalf("%d einvoice.discovered", n)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM events WHERE type = $1`, webhooks.EventMissingAtUJP); n != 1 {
			t.Fatalf("%d einvoice.missing_at_ujp", n)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM events WHERE type = $1 AND object_id = $2`, webhooks.EventReconciliationCompleted, id); n != 1 {
			t.Fatalf("%d reconciliation.completed", n)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM reconciliations WHERE company_id = $1 AND day = $2`, e.company, day0); n != 1 {
			t.Fatalf("%d reconciliations of the day", n)
		}

		// Every signed read of the run run again, late (a retried job, a
		// process that wakes up): nothing moves.
		rows, err := db.ReadDB().QueryContext(ctx, `SELECT id FROM signing_requests WHERE link_type = 'ujp_reconciliation' AND state = 'signed'`)
		if err != nil {
			t.Fatal(err)
		}
		var srs []string
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			srs = append(srs, s)
		}
		rows.Close()
		if len(srs) < 5 {
			t.Fatalf("%d signed reads", len(srs))
		}
		for _, s := range srs {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := jobs.Enqueue(ctx, tx, jobs.Spec{Kind: einvoicing.KindUJPQuery, Args: map[string]string{"signingRequestId": s}})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		e.settleAll()
		again := e.reconciliation(e.company, id)
		wantFigures(t, again, "sales 2/2/1/0/1/1 purchase 0/0/0")
		if again["updatedAt"] != r["updatedAt"] {
			t.Fatalf("a late read moved the completed run: %v → %v", r["updatedAt"], again["updatedAt"])
		}
	})
}

// TestReconciliationTwoProcesses: two services (two processes) on one
// store ask for the same company's day at once and both run the daily
// job and the reads: one reconciliation, one run, each document imported
// once, one reconciliation.completed.
func TestReconciliationTwoProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newReconEnv(t, db)
		ctx := t.Context()
		other, api := newApp(db, einvoicing.Deps{},
			appConfig{Sandbox: e.sim, Gateways: map[string]ujp.Gateway{auth.EnvSandbox: e.gw},
				Pipeline:  pipeline.Config{RetryDelays: []time.Duration{time.Minute}, SignerInterval: simWindow},
				Reconcile: reconcile.Config{Every: time.Hour}}, webhooks.Deps{}, webhooks.Config{})
		srv2 := httptest.NewServer(api.Handler())
		t.Cleanup(srv2.Close)
		runner2 := jobs.NewRunner(db, jobs.Config{Workers: 4})
		other.RegisterJobs(runner2)

		d0 := e.now().In(ujpdoc.Skopje).AddDate(0, 0, 1)
		day0 := d0.Format(time.DateOnly)
		e.setClock(skopjeAt(t, d0, "10:00:00"))
		ok := e.issue("T-OK")
		e.settleAll()
		e.wantStatus(ok, "delivered")
		portal, err := e.sim.IssuedInPortal(ctx, ujpsim.Portal{SellerTin: ujpsim.TaxSeller})
		if err != nil {
			t.Fatal(err)
		}
		e.setClock(skopjeAt(t, d0.AddDate(0, 0, 1), "00:10:00"))
		e.signAll()

		// Both processes at once: each takes a POST, and each runs a
		// daily job.
		for range 2 {
			e.enqueue(reconcile.KindReconcile, map[string]string{})
		}
		var wg sync.WaitGroup
		ids := make([]string, 4)
		for i, base := range []string{e.srv.URL, srv2.URL, e.srv.URL, srv2.URL} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, m, raw, _ := e.reconDo(base, e.company, "POST", "/v1/reconciliations", map[string]string{"companyId": e.company, "date": day0}, "")
				if st != 202 {
					t.Errorf("POST at process %d: %d %s", i%2, st, raw)
					return
				}
				ids[i] = m["id"].(string)
			}()
		}
		for _, r := range []*jobs.Runner{e.runner, runner2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := r.RunOnce(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("one day, several reconciliations: %v", ids)
			}
		}
		// Both processes sign-and-run until nothing is left.
		for i := 0; ; i++ {
			if i == 300 {
				t.Fatal("did not settle")
			}
			signed := e.signAll()
			ran := make([]int, 2)
			for k, r := range []*jobs.Runner{e.runner, runner2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n, err := r.RunOnce(ctx)
					if err != nil {
						t.Error(err)
					}
					ran[k] = n
				}()
			}
			wg.Wait()
			if signed+ran[0]+ran[1] > 0 {
				continue
			}
			// A job snoozed for the signer's turn is due in moments.
			if e.countRows(`SELECT COUNT(*) FROM jobs WHERE state IN ('available', 'retryable') AND (unique_key IS NULL OR unique_key NOT LIKE 'periodic:%')`) == 0 {
				break
			}
			e.advance(time.Second)
		}
		r := e.reconciliation(e.company, ids[0])
		wantFigures(t, r, "sales 2/1/1/0/1/0 purchase 0/0/0")
		if r["runs"] != float64(1) {
			t.Fatalf("runs %v", r["runs"])
		}
		if n := e.countRows(`SELECT COUNT(*) FROM reconciliations WHERE company_id = $1 AND day = $2`, e.company, day0); n != 1 {
			t.Fatalf("%d reconciliations of the day", n)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM einvoices WHERE euid = $1`, portal.EUID); n != 1 {
			t.Fatalf("%d e-invoices of the portal's document", n)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM events WHERE type = $1`, webhooks.EventDiscovered); n != 1 {
			t.Fatalf("%d einvoice.discovered", n)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM events WHERE type = $1 AND object_id = $2`, webhooks.EventReconciliationCompleted, ids[0]); n != 1 {
			t.Fatalf("%d reconciliation.completed", n)
		}
	})
}
