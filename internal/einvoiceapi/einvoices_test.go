package einvoiceapi_test

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestEInvoiceReads: list with filters and cursor pages, get, status
// history and events through HTTP, and 404 for another company's document.
func TestEInvoiceReads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		ctx := t.Context()
		acct := c.account("")
		co, other := denar.NewID("co"), denar.NewID("co")
		var ids []string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i, id := range []string{co, other} {
				if _, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: id, AccountID: acct, Name: "Продавач", TaxNumber: einvoicingtest.TaxNumber("4030000000", i+1),
					VatNumber: "МК" + einvoicingtest.TaxNumber("4030000000", i+1),
					Status:    "active", SigningMode: "bridge", Environment: "sandbox", Address: "{}", CreatedAt: tx.Now}); err != nil {
					return err
				}
			}
			for i := range 3 {
				status, euid := "awaiting_signature", sql.NullString{}
				if i == 2 {
					status, euid = "delivered", sql.NullString{String: "EUID-3", Valid: true}
				}
				inv, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: denar.NewID("einv"), AccountID: acct, CompanyID: co,
					Environment: "sandbox", Kind: "invoice", Status: status, DocumentType: "100", Number: fmt.Sprint("F-", i),
					IssueDate: fmt.Sprintf("2026-11-%02d", 10+i), Document: `{"header":{}}`, UjpDocID: denar.NewID("doc"),
					TotalNet: "100.00", TotalVat: "18.00", TotalGross: "118.00", Currency: "MKD", Problems: "[]",
					ClientReference: sql.NullString{String: fmt.Sprint("ref-", i), Valid: true}, Fingerprint: "fp",
					CreatedAt: tx.Now, UpdatedAt: tx.Now})
				if err != nil {
					return err
				}
				ids = append(ids, inv.ID)
				if euid.Valid {
					if _, err := tx.SetEInvoiceDelivered(ctx, dbq.SetEInvoiceDeliveredParams{ToStatus: status, Euid: euid,
						UpdatedAt: tx.Now, ID: inv.ID, FromStatus: status}); err != nil {
						return err
					}
				}
				if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: inv.ID,
					ToStatus: "awaiting_signature", Cause: "issued", At: tx.Now}); err != nil {
					return err
				}
				if err := tx.CreateEvent(ctx, dbq.CreateEventParams{ID: denar.NewID("evt"), AccountID: acct, CompanyID: co,
					Environment: "sandbox", Type: "einvoice.submitted", ObjectID: inv.ID, Payload: `{"id":"` + inv.ID + `"}`, CreatedAt: tx.Now}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		key := c.key(acct, "sandbox", []string{"einvoices:read", "events:read"}, nil)
		get := func(path, company string) resp {
			t.Helper()
			req, _ := http.NewRequest("GET", c.srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			if company != "" {
				req.Header.Set("X-Company-Id", company)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return resp{res.StatusCode, res.Header, b}
		}
		r := get("/v1/einvoices?limit=2", co)
		m := r.json(t)
		if r.status != 200 || len(m["data"].([]any)) != 2 || m["nextCursor"] == nil {
			t.Fatalf("page 1: %d %s", r.status, r.body)
		}
		r = get("/v1/einvoices?limit=2&cursor="+m["nextCursor"].(string), co)
		if m2 := r.json(t); r.status != 200 || len(m2["data"].([]any)) != 1 || m2["nextCursor"] != nil {
			t.Fatalf("page 2: %d %s", r.status, r.body)
		}
		if r = get("/v1/einvoices?limit=2&status=delivered&cursor="+m["nextCursor"].(string), co); r.status != 400 && r.status != 422 {
			t.Errorf("cursor reused with other filters: %d %s", r.status, r.body)
		}
		for q, want := range map[string]int{
			"status=delivered": 1, "euid=EUID-3": 1, "clientReference=ref-0": 1, "issuedFrom=2026-11-11": 2,
			"issuedTo=2026-11-10": 1, "documentType=110": 0, "issuedFrom=2026-11-11&issuedTo=2026-11-11": 1,
		} {
			r := get("/v1/einvoices?"+q, co)
			if got := len(r.json(t)["data"].([]any)); r.status != 200 || got != want {
				t.Errorf("%s: %d, %d items; want %d", q, r.status, got, want)
			}
		}
		if r := get("/v1/einvoices?issuedFrom=11.11.2026", co); r.status != 422 {
			t.Errorf("bad date: %d", r.status)
		}
		r = get("/v1/einvoices/"+ids[2], co)
		if m := r.json(t); r.status != 200 || m["euid"] != "EUID-3" || m["status"] != "delivered" || m["object"] != "einvoice" {
			t.Errorf("get: %d %s", r.status, r.body)
		}
		if r := get("/v1/einvoices/"+ids[2], other); r.status != 404 {
			t.Errorf("other company: %d %s", r.status, r.body)
		}
		r = get("/v1/einvoices/"+ids[0]+"/status-history", co)
		if d := r.json(t)["data"].([]any); r.status != 200 || len(d) != 1 || d[0].(map[string]any)["to"] != "awaiting_signature" {
			t.Errorf("history: %d %s", r.status, r.body)
		}
		r = get("/v1/events?objectId="+ids[1], "")
		if d := r.json(t)["data"].([]any); r.status != 200 || len(d) != 1 || d[0].(map[string]any)["type"] != "einvoice.submitted" {
			t.Errorf("events: %d %s", r.status, r.body)
		}
		if r := get("/v1/events?type=einvoice.accepted", ""); len(r.json(t)["data"].([]any)) != 0 {
			t.Errorf("events by type: %s", r.body)
		}
	})
}
