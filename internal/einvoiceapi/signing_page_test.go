package einvoiceapi_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestSigningRequestPagesFillForAnAllowList: a key allowed one company of
// an account whose other company has many more signing requests pages
// through all of its own, every page but the last full, and the last page
// without a next cursor. (The allow-list was applied after the query's
// LIMIT: a page could come back short, or empty with no cursor, and the
// walk end early.)
func TestSigningRequestPagesFillForAnAllowList(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		e := newSignEnv(t, db)
		ctx := t.Context()
		var other string
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			c, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: e.account, Name: "Друга ДОО",
				TaxNumber: "4030000000010", VatNumber: "МК4030000000010", Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox, Address: "{}", CreatedAt: tx.Now})
			other = c.ID
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// One agent signs for both companies.
		agent, authz := e.pair(newTestCert(t))
		c2 := newTestCert(t)
		if st, m := e.do("POST", "/v1/agents/"+agent+"/certificates", authz, map[string]string{
			"certificateDer": base64.StdEncoding.EncodeToString(c2.cert.Raw), "companyId": other, "eujpId": "EUJP-other"}); st != 201 {
			t.Fatalf("certificate of the other company: %d %v", st, m)
		}
		// Newest first: the allowed company's 5 requests sit among 30 of
		// the other's, in runs longer than a page.
		mine := map[string]bool{}
		for i := range 35 {
			company := other
			if i%7 == 3 {
				company = e.company
			}
			var r einvoicing.SigningRequest
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				r, err = einvoicing.RequestSignature(ctx, tx, company, einvoicing.PurposeDocument, []byte(fmt.Sprintf(`{"n":%d}`, i)), einvoicing.SigningLink{Type: "einvoice", ID: fmt.Sprintf("inv_%d", i)})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if company == e.company {
				mine[r.ID] = true
			}
		}
		as := &auth.Store{DB: db}
		_, key, err := as.CreateKey(ctx, auth.KeyParams{AccountID: e.account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox,
			Scopes: []string{"einvoices:read"}, CompanyIDs: []string{e.company}})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		cursor := ""
		for page := 0; ; page++ {
			if page > 10 {
				t.Fatal("more pages than requests")
			}
			path := "/v1/signing-requests?limit=2"
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			st, m := e.do("GET", path, "Bearer "+key, nil)
			if st != 200 {
				t.Fatalf("page %d: %d %v", page, st, m)
			}
			data, _ := m["data"].([]any)
			for _, d := range data {
				id, _ := d.(map[string]any)["id"].(string)
				if !mine[id] {
					t.Errorf("page %d holds %s, not a request of the allowed company", page, id)
				}
				seen[id] = true
			}
			cursor, _ = m["nextCursor"].(string)
			if cursor == "" {
				break
			}
			if len(data) != 2 {
				t.Errorf("page %d has %d requests and a next cursor: a page is filled before it is answered", page, len(data))
			}
		}
		if len(seen) != len(mine) {
			t.Errorf("the walk saw %d of the allowed company's %d requests", len(seen), len(mine))
		}
	})
}
