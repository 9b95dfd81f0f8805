package einvoiceapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestDocumentedIssueBody: the reference's example body of POST
// /v1/einvoices, as GET /v1/openapi.json serves it, is issued by the
// sandbox seller (its buyer checked against the simulator's registry) and
// comes out with the totals the reference's example e-invoice shows.
func TestDocumentedIssueBody(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := newBenchWorld(t, db)
		resp, err := http.Get(w.srv.URL + "/v1/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var doc struct {
			Components struct {
				Schemas map[string]struct {
					Examples []json.RawMessage `json:"examples"`
				} `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		req, inv := doc.Components.Schemas["Request"].Examples, doc.Components.Schemas["EInvoice"].Examples
		if len(req) == 0 || len(inv) == 0 {
			t.Fatalf("no example of Request (%d) or EInvoice (%d)", len(req), len(inv))
		}
		var got, want struct {
			Status string
			Totals map[string]string
		}
		w.post("/v1/einvoices", "Bearer "+w.key, string(req[0]), http.StatusAccepted, &got)
		if err := json.Unmarshal(inv[0], &want); err != nil {
			t.Fatal(err)
		}
		if got.Status != "awaiting_signature" || len(got.Totals) == 0 {
			t.Errorf("issued as %+v", got)
		}
		for k, v := range want.Totals {
			if got.Totals[k] != v {
				t.Errorf("totals.%s = %s; the reference's e-invoice shows %s", k, got.Totals[k], v)
			}
		}
	})
}
