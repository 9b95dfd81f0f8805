package einvoiceapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
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
