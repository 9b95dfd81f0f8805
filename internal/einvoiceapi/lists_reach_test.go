package einvoiceapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestEveryListFillsItsPagesWithinReach walks every list endpoint of the
// e-invoicing API (the GET operations of api/einvoice.openapi.json that
// answer a page: companies, e-invoices, the inbox, signing requests,
// reconciliations, events, an event's deliveries, webhook endpoints and an
// endpoint's deliveries) with a sandbox key allowed five companies of its
// account and one production company, over more rows than a page (a small
// limit), the rows of a company outside the list, of the production
// company, and of another account interleaved with its own. Every page is
// full until the last, nextCursor is there exactly when rows remain, and
// the walk returns exactly the rows within the key's reach, each once. (An
// allow-list applied after a query's LIMIT gave short pages, or an empty
// one without a cursor that ended the walk early.)
func TestEveryListFillsItsPagesWithinReach(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		_, api := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
		srv := httptest.NewServer(api.Handler())
		t.Cleanup(srv.Close)
		as := &auth.Store{DB: db}
		acct, err := as.CreateAccount(ctx, "Биро", "")
		if err != nil {
			t.Fatal(err)
		}

		// Companies, created interleaved: a0…a4 allowed (sandbox), b0 and
		// b1 not allowed, p0 allowed but in production, x0 of another
		// account.
		n := 0
		newCompany := func(account, env string) einvoicingtest.Company {
			t.Helper()
			n++
			c, err := einvoicingtest.NewCompany(ctx, db, account, "test", env, einvoicingtest.TaxNumber("41", n))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		var a []einvoicingtest.Company
		a = append(a, newCompany(acct.ID, auth.EnvSandbox))
		b0 := newCompany(acct.ID, auth.EnvSandbox)
		p0 := newCompany(acct.ID, auth.EnvProduction)
		x0 := newCompany("", auth.EnvSandbox)
		a = append(a, newCompany(acct.ID, auth.EnvSandbox))
		b1 := newCompany(acct.ID, auth.EnvSandbox)
		for range 3 {
			a = append(a, newCompany(acct.ID, auth.EnvSandbox))
		}
		want := map[string][]string{} // list name → the ids the walk must return
		for _, c := range a {
			want["companies"] = append(want["companies"], c.CompanyID)
		}
		allowed := []string{p0.CompanyID}
		for _, c := range a {
			allowed = append(allowed, c.CompanyID)
		}
		_, key, err := as.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox,
			Scopes: []string{"companies:read", "einvoices:read", "inbox:read", "events:read", "webhooks:write"}, CompanyIDs: allowed})
		if err != nil {
			t.Fatal(err)
		}
		mixed := []einvoicingtest.Company{a[0], b0, p0, x0, a[1], b1}

		// E-invoices (each with its signing request), round by round.
		at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
		for i := range 7 {
			for _, c := range mixed {
				docs, err := einvoicingtest.Delivered(ctx, db, c, 1, einvoicingtest.Options{At: func(int) time.Time { return at.Add(time.Duration(i) * time.Minute) }})
				if err != nil {
					t.Fatal(err)
				}
				if c == a[0] {
					want["einvoices"] = append(want["einvoices"], docs[0].ID)
				}
			}
		}
		// Their signing requests, as the store holds them.
		for _, c := range a[:2] {
			rows, err := db.Reader().ListSigningRequests(ctx, dbq.ListSigningRequestsParams{AccountID: acct.ID, Environment: auth.EnvSandbox,
				AllCompanies: true, CompanyID: c.CompanyID, Lim: 1000})
			if err != nil || len(rows) != 7 {
				t.Fatalf("signing requests of %s: %d, %v", c.CompanyID, len(rows), err)
			}
			for _, r := range rows {
				want["signing requests"] = append(want["signing requests"], r.ID)
			}
		}

		// Inbox documents of a0 (a page is 25), reconciliations, events.
		var a0Events []string
		err = db.InTx(ctx, func(tx *store.Tx) error {
			for i := range inbox.InboxPageSize + 2 {
				for _, c := range mixed[:4] {
					id := denar.NewID("inb")
					if _, err := tx.InsertInboxDocument(ctx, dbq.InsertInboxDocumentParams{ID: id, AccountID: c.AccountID, CompanyID: c.CompanyID,
						Environment: c.Environment, Euid: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), Kind: "invoice", DocumentType: "100",
						Number: fmt.Sprintf("P-%d", i), IssueDate: "2026-11-02", TransactionDate: "2026-11-02", Seller: `{"name":"Продавач"}`,
						TotalNet: "100.00", TotalVat: "18.00", TotalGross: "118.00", Currency: "MKD", UjpStatus: "01", UjpStatusName: "Доставена",
						UjpStatusAt: tx.Now, DecisionState: "pending", Problems: "[]", DecideBy: "2026-11-20", Payload: []byte("{}"), ReceivedAt: tx.Now}); err != nil {
						return err
					}
					if c == a[0] {
						want["inbox"] = append(want["inbox"], id)
					}
				}
			}
			for day := 1; day <= 5; day++ {
				for _, c := range mixed {
					id := denar.NewID("rec")
					if _, err := tx.InsertReconciliation(ctx, dbq.InsertReconciliationParams{ID: id, AccountID: c.AccountID, CompanyID: c.CompanyID,
						Environment: c.Environment, Day: fmt.Sprintf("2026-11-%02d", day), Step: "{}", Now: tx.Now}); err != nil {
						return err
					}
					if c == a[0] || c == a[1] {
						want["reconciliations"] = append(want["reconciliations"], id)
					}
				}
			}
			for i := range 5 {
				for _, c := range mixed {
					id := denar.NewID("evt")
					if err := tx.CreateEvent(ctx, dbq.CreateEventParams{ID: id, AccountID: c.AccountID, CompanyID: c.CompanyID, Environment: c.Environment,
						Type: "einvoice.accepted", ObjectID: fmt.Sprintf("einv_%d", i), Payload: "{}", CreatedAt: tx.Now}); err != nil {
						return err
					}
					if c == a[0] || c == a[1] {
						want["events"] = append(want["events"], id)
					}
					if c == a[0] {
						a0Events = append(a0Events, id)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		// Webhook endpoints: the key manages those of its own companies
		// only (not one of every company, nor one of b0's), in its
		// environment. Each managed endpoint has a delivery of a0's first
		// event; the first one a delivery of each of a0's events. The
		// account's other sandbox endpoints (b0's, the account-wide one)
		// get a delivery of the same event too, which the key must not see.
		var managed, unmanaged []string
		err = db.InTx(ctx, func(tx *store.Tx) error {
			for range 3 {
				for _, ep := range []struct {
					account, env, companies string
				}{
					{acct.ID, auth.EnvSandbox, a[0].CompanyID},
					{acct.ID, auth.EnvSandbox, b0.CompanyID},
					{acct.ID, auth.EnvSandbox, ""},
					{acct.ID, auth.EnvProduction, a[0].CompanyID},
					{x0.AccountID, auth.EnvSandbox, x0.CompanyID},
					{acct.ID, auth.EnvSandbox, a[0].CompanyID + " " + a[1].CompanyID},
				} {
					r, err := tx.CreateWebhookEndpoint(ctx, dbq.CreateWebhookEndpointParams{ID: denar.NewID("we"), AccountID: ep.account,
						Environment: ep.env, Url: "https://hooks.example/in", EventTypes: "*", CompanyIds: ep.companies, Secret: "x", CreatedAt: tx.Now})
					if err != nil {
						return err
					}
					switch {
					case ep.account == acct.ID && ep.env == auth.EnvSandbox && strings.HasPrefix(ep.companies, a[0].CompanyID):
						managed = append(managed, r.ID)
					case ep.account == acct.ID && ep.env == auth.EnvSandbox:
						unmanaged = append(unmanaged, r.ID)
					}
				}
			}
			want["webhook endpoints"] = managed
			deliver := func(endpoint, event string) (string, error) {
				id := denar.NewID("dlv")
				return id, tx.CreateWebhookDelivery(ctx, dbq.CreateWebhookDeliveryParams{ID: id, AccountID: acct.ID, Environment: auth.EnvSandbox,
					EndpointID: endpoint, EventID: event, EventType: "einvoice.accepted", CompanyID: a[0].CompanyID,
					State: "pending", MaxAttempts: 1, CreatedAt: tx.Now})
			}
			for i, ep := range managed {
				if i < len(unmanaged) {
					if _, err := deliver(unmanaged[i], a0Events[0]); err != nil {
						return err
					}
				}
				id, err := deliver(ep, a0Events[0])
				if err != nil {
					return err
				}
				want["event deliveries"] = append(want["event deliveries"], id)
				if ep == managed[0] {
					want["endpoint deliveries"] = append(want["endpoint deliveries"], id)
				}
			}
			for _, ev := range a0Events[1:] {
				id, err := deliver(managed[0], ev)
				if err != nil {
					return err
				}
				want["endpoint deliveries"] = append(want["endpoint deliveries"], id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		get := func(path string, header map[string]string) map[string]any {
			t.Helper()
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
			}
			return m
		}
		onA0 := map[string]string{"X-Company-Id": a[0].CompanyID}
		for _, l := range []struct {
			name, path string
			header     map[string]string
			limit      int // 0: the list's fixed page (the inbox)
		}{
			{"companies", "/v1/companies", nil, 2},
			{"einvoices", "/v1/einvoices", onA0, 2},
			{"inbox", "/v1/inbox", onA0, 0},
			{"signing requests", "/v1/signing-requests", nil, 4},
			{"reconciliations", "/v1/reconciliations", nil, 3},
			{"events", "/v1/events", nil, 3},
			{"event deliveries", "/v1/events/" + a0Events[0] + "/deliveries", nil, 4},
			{"webhook endpoints", "/v1/webhook-endpoints", nil, 4},
			{"endpoint deliveries", "/v1/webhook-endpoints/" + managed[0] + "/deliveries", nil, 2},
		} {
			exp := want[l.name]
			size := l.limit
			if size == 0 {
				size = inbox.InboxPageSize
			}
			if len(exp) <= size {
				t.Fatalf("%s: %d rows within reach, not more than a page of %d", l.name, len(exp), size)
			}
			var got []string
			cursor := ""
			for page := 0; ; page++ {
				if page > len(exp) {
					t.Fatalf("%s: more pages than rows", l.name)
				}
				q := url.Values{}
				if l.limit > 0 {
					q.Set("limit", fmt.Sprint(l.limit))
				}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				m := get(l.path+"?"+q.Encode(), l.header)
				data, _ := m["data"].([]any)
				for _, d := range data {
					id, _ := d.(map[string]any)["id"].(string)
					got = append(got, id)
				}
				cursor, _ = m["nextCursor"].(string)
				if more, ok := m["hasMore"].(bool); ok && more != (cursor != "") {
					t.Errorf("%s page %d: hasMore %v with nextCursor %q", l.name, page, more, cursor)
				}
				left := len(exp) - len(got)
				switch {
				case left > 0 && (cursor == "" || len(data) != size):
					t.Fatalf("%s page %d: %d rows, nextCursor %q, with %d rows within reach still to come", l.name, page, len(data), cursor, left)
				case left <= 0 && cursor != "":
					t.Fatalf("%s page %d: a nextCursor after the last row within reach (%d rows seen, %d expected)", l.name, page, len(got), len(exp))
				}
				if cursor == "" {
					break
				}
			}
			slices.Sort(got)
			exp = slices.Clone(exp)
			slices.Sort(exp)
			if !slices.Equal(got, exp) {
				t.Errorf("%s: the walk returned %d rows %v, want the %d within reach %v", l.name, len(got), got, len(exp), exp)
			}
		}
	})
}
