package einvoiceapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// TestReconciliationWithoutPayloads: when UJP refuses the company's signer
// the documents' payloads (its RD privilege revoked), a document UJP holds
// that is not ours by EUID is judged by its headline: our one document
// without an EUID of that number, date, gross amount and buyer (a send
// whose answer was lost) is repaired to UJP's status with UJP's EUID,
// nothing sent again; a document matching none (issued in UJP's portal) is
// imported without its payload.
func TestReconciliationWithoutPayloads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newReconEnv(t, db)
		ctx := t.Context()
		d0 := e.now().In(ujpdoc.Skopje).AddDate(0, 0, 1)
		day0 := d0.Format(time.DateOnly)
		e.setClock(skopjeAt(t, d0, "10:00:00"))

		ok := e.issue("H-OK")
		e.settleAll()
		e.wantStatus(ok, "delivered")
		failed := e.issue("H-FAILED")
		e.gw.loseNext.Store(1)
		e.settleAll()
		e.wantStatus(failed, "held")
		e.leaveAs(failed, "failed")
		portal, err := e.sim.IssuedInPortal(ctx, ujpsim.Portal{SellerTin: ujpsim.TaxSeller})
		if err != nil {
			t.Fatal(err)
		}
		var eujpID string
		if err := db.ReadDB().QueryRowContext(ctx, `SELECT eujp_id FROM signing_certificates WHERE company_id = $1 AND eujp_id <> ''`,
			e.company).Scan(&eujpID); err != nil {
			t.Fatal(err)
		}
		if err := e.sim.Revoke(ctx, eujpID, ujpsim.TaxSeller, ujpsim.PrivilegePayload); err != nil {
			t.Fatal(err)
		}
		sends := e.gw.sends.Load()

		e.setClock(skopjeAt(t, d0.AddDate(0, 0, 1), "00:10:00"))
		id := e.reconcile(e.company, day0)
		e.settleAll()
		r := e.reconciliation(e.company, id)
		wantFigures(t, r, "sales 3/2/1/1/1/0 purchase 0/0/0")
		if p := fmt.Sprint(r["problems"]); !strings.Contains(p, "privilege_missing") || !strings.Contains(p, "RD") {
			t.Fatalf("the run does not say it matched without payloads: %s", p)
		}

		m := e.wantStatus(failed, "delivered")
		if m["euid"] == nil || e.sellerDocs()[failed] != 1 || e.gw.sends.Load() != sends {
			t.Fatalf("the document whose answer was lost: euid %v, %d at UJP, %d sends after the reconciliation, %d before",
				m["euid"], e.sellerDocs()[failed], e.gw.sends.Load(), sends)
		}
		if h := e.history(failed); !strings.HasSuffix(h[len(h)-1], "→delivered:reconciled") {
			t.Fatalf("history %v", h)
		}
		var ext string
		if err := db.ReadDB().QueryRowContext(ctx, `SELECT id FROM einvoices WHERE euid = $1`, portal.EUID).Scan(&ext); err != nil {
			t.Fatal(err)
		}
		if xm := e.einvoice(ext); xm["kind"] != "external" || xm["status"] != "delivered" {
			t.Fatalf("the portal's document: %v", xm)
		}
	})
}

// TestReconciliationResumesASignedRead: a run gone quiet whose last read
// was signed and is still fresh (its job lost UJP's answer and waits to
// retry) is resumed by running that read again, not by asking the signer
// anew, and it is marked as moved, so the next pass leaves it alone; once
// UJP's answers come through it completes.
func TestReconciliationResumesASignedRead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newInboxEnv(t, db, func(c *appConfig) {
			c.Reconcile = reconcile.Config{Every: time.Hour, Quiet: time.Minute}
		})
		ctx := t.Context()
		d0 := e.now().In(ujpdoc.Skopje).AddDate(0, 0, 1)
		day0 := d0.Format(time.DateOnly)
		e.setClock(skopjeAt(t, d0, "10:00:00"))
		ok, gone := e.issue("Q-OK"), e.issue("Q-GONE")
		e.settleAll()
		e.wantStatus(ok, "delivered")
		if err := e.sim.LoseDocument(ctx, e.wantStatus(gone, "delivered")["euid"].(string)); err != nil {
			t.Fatal(err)
		}

		e.setClock(skopjeAt(t, d0.AddDate(0, 0, 1), "00:10:00"))
		e.dg.failStatus.Store(1000)
		id := e.reconcile(e.company, day0)
		e.settleAll()
		requests := func() int {
			return e.countRows(`SELECT COUNT(*) FROM signing_requests WHERE link_type = 'ujp_reconciliation' AND link_id LIKE $1`, id+"/%")
		}
		var step string
		var updated time.Time
		read := func() {
			t.Helper()
			if err := db.ReadDB().QueryRowContext(ctx, `SELECT step, updated_at FROM reconciliations WHERE id = $1`, id).Scan(&step, &updated); err != nil {
				t.Fatal(err)
			}
		}
		read()
		before, beforeStep, beforeUpdated := requests(), step, updated
		if n := e.countRows(`SELECT COUNT(*) FROM signing_requests WHERE link_type = 'ujp_reconciliation' AND link_id LIKE $1 AND state = 'signed'`, id+"/%"); n != before {
			t.Fatalf("%d of %d reads signed: the run should wait on UJP's answer, not on its signer", n, before)
		}

		// Quiet for longer than Quiet, the read signed a minute and a bit
		// ago: the daily job runs it again.
		e.advance(70 * time.Second)
		e.enqueue(reconcile.KindReconcile, map[string]string{})
		for range 3 {
			if _, err := e.runner.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		read()
		if n := requests(); n != before || step != beforeStep {
			t.Fatalf("the quiet run was asked afresh: %d reads (%d before), step %s (%s before)", n, before, step, beforeStep)
		}
		if !updated.After(beforeUpdated) {
			t.Fatalf("the resumed run was not marked as moved: updated %s, before %s", updated, beforeUpdated)
		}

		e.dg.failStatus.Store(0)
		for i := 0; ; i++ { // until the read's retry is due
			e.settleAll()
			if _, m, _, _ := e.reconDo(e.srv.URL, e.company, "GET", "/v1/reconciliations/"+id, nil, ""); m["state"] == "completed" {
				break
			}
			if i == 20 {
				t.Fatal("the resumed run did not complete")
			}
			e.advance(30 * time.Second)
		}
		wantFigures(t, e.reconciliation(e.company, id), "sales 1/2/1/0/0/1 purchase 0/0/0")
	})
}
