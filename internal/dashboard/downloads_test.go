package dashboard_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestDocumentDownloadsAreNotKept: the PDFs the dashboard serves (an issued
// e-invoice's, an incoming one's) are downloads no cache keeps, no page can
// frame and nothing can run as active content under the dashboard's
// origin, as its pages are.
func TestDocumentDownloadsAreNotKept(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := t.Context()
		inv := w.delivered("Ф-77", []einvoice.Line{{Description: "Услуга", Quantity: "1", UnitPrice: "100", VatPercent: "18", TaxIndicator: "DDV-A"}})
		pdf := []byte("%PDF-1.4 <script>alert(1)</script>")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.PutEInvoicePDF(ctx, dbq.PutEInvoicePDFParams{EinvoiceID: inv, Pdf: base64.StdEncoding.EncodeToString(pdf), CreatedAt: tx.Now}); err != nil {
				return err
			}
			return tx.PutInboxPDF(ctx, dbq.PutInboxPDFParams{DocumentID: w.docA, Pdf: base64.StdEncoding.EncodeToString(pdf), CreatedAt: tx.Now})
		})
		if err != nil {
			t.Fatal(err)
		}
		b := w.browser()
		b.signIn("viewer@a.mk")
		for _, path := range []string{
			"/dashboard/einvoices/" + w.companyA + "/" + inv + "/pdf",
			"/dashboard/inbox/" + w.companyA + "/" + w.docA + "/pdf",
		} {
			p := b.do("GET", path, nil)
			if p.status != http.StatusOK || p.body != string(pdf) {
				t.Fatalf("%s: %d %q", path, p.status, p.body)
			}
			h := p.header
			csp := h.Get("Content-Security-Policy")
			for name, ok := range map[string]bool{
				"Content-Type application/pdf":   h.Get("Content-Type") == "application/pdf",
				"Content-Disposition attachment": strings.HasPrefix(h.Get("Content-Disposition"), "attachment; filename="),
				"Cache-Control no-store":         h.Get("Cache-Control") == "no-store",
				"X-Frame-Options DENY":           h.Get("X-Frame-Options") == "DENY",
				"X-Content-Type-Options nosniff": h.Get("X-Content-Type-Options") == "nosniff",
				"CSP frame-ancestors 'none'":     strings.Contains(csp, "frame-ancestors 'none'"),
				"CSP default-src 'none'":         strings.Contains(csp, "default-src 'none'"),
				"CSP sandbox":                    strings.Contains(csp, "sandbox"),
			} {
				if !ok {
					t.Errorf("%s: no %s (headers %v)", path, name, h)
				}
			}
		}
	})
}
