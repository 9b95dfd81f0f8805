package einvoiceapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// publicResolver resolves every name but "internal.example.mk" to a public
// address.
type publicResolver struct{}

func (publicResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "internal.example.mk":
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	case "wire.example.mk": // one public address, one Azure WireServer
		return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("168.63.129.16")}, nil
	case "imds6.example.mk":
		return []netip.Addr{netip.MustParseAddr("fd00:ec2::254")}, nil
	}
	if strings.HasSuffix(host, ".invalid") {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

// TestWebhookEndpointAccess: scopes, environments and company allow-lists
// bound who manages which endpoint; bad requests name their field.
func TestWebhookEndpointAccess(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		_, _, api := newAPIWith(db, einvoicing.Deps{Registry: fakeRegistry{}, Secrets: testSecrets(t)}, einvoicing.Config{},
			webhooks.Deps{Resolver: publicResolver{}}, webhooks.Config{})
		srv := httptest.NewServer(api.Handler())
		t.Cleanup(srv.Close)
		c := &capi{t: t, db: db, auth: &auth.Store{DB: db}, srv: srv}
		acct := c.account("business")
		company := func(env, tax string) string {
			id := denar.NewID("cmp")
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: id, AccountID: acct, Name: "Продавач", TaxNumber: tax,
					Status: "active", SigningMode: "bridge", Environment: env, Address: "{}", CreatedAt: tx.Now})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return id
		}
		sbA, sbB, prod := company(auth.EnvSandbox, "4030000000001"), company(auth.EnvSandbox, "4030000000028"), company(auth.EnvProduction, "4030000000001")
		other := c.account("business")
		foreign := denar.NewID("cmp")
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: foreign, AccountID: other, Name: "Туѓа", TaxNumber: "4030000000001",
				Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox, Address: "{}", CreatedAt: tx.Now})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		sandbox := c.key(acct, auth.EnvSandbox, nil, nil)
		production := c.key(acct, auth.EnvProduction, nil, nil)
		limited := c.key(acct, auth.EnvSandbox, nil, []string{sbA})
		readOnly := c.key(acct, auth.EnvSandbox, []string{"events:read"}, nil)
		body := func(u string, extra string) string {
			return `{"url":"` + u + `","events":["einvoice.submitted"]` + extra + `}`
		}
		create := func(key, b string) resp {
			t.Helper()
			return c.do("POST", "/v1/webhook-endpoints", key, b)
		}
		r := create(sandbox, body("https://hooks.example.mk/a", ""))
		if r.status != 201 || r.header.Get("Location") == "" {
			t.Fatalf("sandbox create: %d %s", r.status, r.body)
		}
		all := r.json(t)["id"].(string)

		for _, tc := range []struct {
			name, key, method, path, body string
			status                        int
			code, field                   string
		}{
			{"no webhooks:write", readOnly, "POST", "/v1/webhook-endpoints", body("https://hooks.example.mk/a", ""), 403, "insufficient_scope", ""},
			{"no webhooks:write to list", readOnly, "GET", "/v1/webhook-endpoints", "", 403, "insufficient_scope", ""},
			{"no webhooks:write to replay", readOnly, "POST", "/v1/events/evt_x/replay", "", 403, "insufficient_scope", ""},
			{"production key, sandbox endpoint", production, "GET", "/v1/webhook-endpoints/" + all, "", 403, "environment_mismatch", ""},
			{"production key patches it", production, "PATCH", "/v1/webhook-endpoints/" + all, `{"enabled":false}`, 403, "environment_mismatch", ""},
			{"limited key, endpoint for every company", limited, "GET", "/v1/webhook-endpoints/" + all, "", 403, "company_not_allowed", ""},
			{"limited key without companyIds", limited, "POST", "/v1/webhook-endpoints", body("https://hooks.example.mk/a", ""), 403, "company_not_allowed", ""},
			{"limited key, other company", limited, "POST", "/v1/webhook-endpoints", body("https://hooks.example.mk/a", `,"companyIds":["`+sbB+`"]`), 403, "company_not_allowed", ""},
			{"unknown company", sandbox, "POST", "/v1/webhook-endpoints", body("https://hooks.example.mk/a", `,"companyIds":["cmp_nope"]`), 403, "company_not_allowed", "companyIds[0]"},
			{"another account's company", sandbox, "POST", "/v1/webhook-endpoints", body("https://hooks.example.mk/a", `,"companyIds":["`+sbA+`","`+foreign+`"]`), 403, "company_not_allowed", "companyIds[1]"},
			{"company of the other environment", sandbox, "POST", "/v1/webhook-endpoints", body("https://hooks.example.mk/a", `,"companyIds":["`+prod+`"]`), 403, "environment_mismatch", "companyIds[0]"},
			{"patch to another account's company", sandbox, "PATCH", "/v1/webhook-endpoints/" + all, `{"companyIds":["` + foreign + `"]}`, 403, "company_not_allowed", "companyIds[0]"},
			{"patch to the other environment's company", sandbox, "PATCH", "/v1/webhook-endpoints/" + all, `{"companyIds":["` + prod + `"]}`, 403, "environment_mismatch", "companyIds[0]"},
			{"unknown event type", sandbox, "POST", "/v1/webhook-endpoints", `{"url":"https://hooks.example.mk/a","events":["einvoice.submitted","invoice.paid"]}`, 422, "validation_failed", "events[1]"},
			{"no event types", sandbox, "POST", "/v1/webhook-endpoints", `{"url":"https://hooks.example.mk/a","events":[]}`, 422, "validation_failed", "events"},
			{"no url", sandbox, "POST", "/v1/webhook-endpoints", `{"events":["*"]}`, 422, "validation_failed", ""},
			{"unknown field", sandbox, "POST", "/v1/webhook-endpoints", `{"url":"https://hooks.example.mk/a","events":["*"],"secret":"mine"}`, 422, "validation_failed", "secret"},
			{"production over http", production, "POST", "/v1/webhook-endpoints", body("http://hooks.example.mk/a", ""), 422, "webhook_url_refused", "url"},
			{"production, private name", production, "POST", "/v1/webhook-endpoints", body("https://internal.example.mk/a", ""), 422, "webhook_url_refused", "url"},
			{"sandbox, metadata address", sandbox, "POST", "/v1/webhook-endpoints", body("http://169.254.169.254/latest", ""), 422, "webhook_url_refused", "url"},
			{"sandbox, Azure WireServer", sandbox, "POST", "/v1/webhook-endpoints", body("http://168.63.129.16/machine", ""), 422, "webhook_url_refused", "url"},
			{"production, Azure WireServer", production, "POST", "/v1/webhook-endpoints", body("https://168.63.129.16/", ""), 422, "webhook_url_refused", "url"},
			{"production, a name resolving to Azure WireServer", production, "POST", "/v1/webhook-endpoints", body("https://wire.example.mk/", ""), 422, "webhook_url_refused", "url"},
			{"sandbox, a name resolving to AWS IMDS over IPv6", sandbox, "POST", "/v1/webhook-endpoints", body("http://imds6.example.mk/", ""), 422, "webhook_url_refused", "url"},
			{"sandbox, AWS IMDS over IPv6", sandbox, "POST", "/v1/webhook-endpoints", body("http://[fd00:ec2::254]/latest/meta-data", ""), 422, "webhook_url_refused", "url"},
			{"production, Alibaba metadata", production, "POST", "/v1/webhook-endpoints", body("https://100.100.100.200/", ""), 422, "webhook_url_refused", "url"},
			{"production, Google metadata name", production, "POST", "/v1/webhook-endpoints", body("https://metadata.google.internal/", ""), 422, "webhook_url_refused", "url"},
			{"sandbox, metadata.goog", sandbox, "POST", "/v1/webhook-endpoints", body("http://metadata.goog/", ""), 422, "webhook_url_refused", "url"},
			{"patch to Azure WireServer", sandbox, "PATCH", "/v1/webhook-endpoints/" + all, `{"url":"http://168.63.129.16/"}`, 422, "webhook_url_refused", "url"},
			{"sandbox, loopback not allowed here", sandbox, "POST", "/v1/webhook-endpoints", body("http://127.0.0.1:8080/", ""), 422, "webhook_url_refused", "url"},
			{"unresolvable", sandbox, "POST", "/v1/webhook-endpoints", body("https://nowhere.invalid/", ""), 422, "webhook_url_refused", "url"},
			{"patch to a refused url", sandbox, "PATCH", "/v1/webhook-endpoints/" + all, `{"url":"https://10.0.0.1/"}`, 422, "webhook_url_refused", "url"},
			{"unknown endpoint", sandbox, "GET", "/v1/webhook-endpoints/whe_nope", "", 404, "not_found", ""},
			{"recover without since", sandbox, "POST", "/v1/webhook-endpoints/" + all + "/recover", `{}`, 422, "validation_failed", ""},
			{"feed and list at once", sandbox, "GET", "/v1/events?after=start&cursor=x", "", 422, "validation_failed", "query.cursor"},
			{"not a feed cursor", sandbox, "GET", "/v1/events?after=abc", "", 422, "validation_failed", "query.after"},
			{"bad createdFrom", sandbox, "GET", "/v1/events?createdFrom=yesterday", "", 422, "validation_failed", "query.createdFrom"},
			{"events of a company outside the allow-list", limited, "GET", "/v1/events?companyId=" + sbB, "", 403, "company_not_allowed", ""},
		} {
			r := c.do(tc.method, tc.path, tc.key, tc.body)
			if r.status != tc.status {
				t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
			}
			p := r.json(t)
			if p["code"] != tc.code {
				t.Fatalf("%s: code %v, want %s", tc.name, p["code"], tc.code)
			}
			if tc.field != "" {
				errs, _ := p["errors"].([]any)
				found := false
				for _, e := range errs {
					if e.(map[string]any)["path"] == tc.field {
						found = true
					}
				}
				if !found {
					t.Fatalf("%s: errors %v, want path %s", tc.name, errs, tc.field)
				}
			}
		}

		// A limited key manages only endpoints within its companies.
		r = create(limited, body("https://hooks.example.mk/mine", `,"companyIds":["`+sbA+`"]`))
		if r.status != 201 {
			t.Fatalf("limited create: %d %s", r.status, r.body)
		}
		mine := r.json(t)["id"].(string)
		for key, want := range map[string][]string{limited: {mine}, sandbox: {mine, all}, production: {}} {
			r := c.do("GET", "/v1/webhook-endpoints", key, "")
			var got []string
			for _, it := range r.json(t)["data"].([]any) {
				got = append(got, it.(map[string]any)["id"].(string))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("list: %v, want %v", got, want)
			}
		}
		// A production endpoint needs https to a public host.
		if r := create(production, body("https://hooks.example.mk/prod", "")); r.status != 201 || r.json(t)["environment"] != "production" {
			t.Fatalf("production create: %d %s", r.status, r.body)
		}
		// PATCH: companyIds null means every company again; events replace.
		r = c.do("PATCH", "/v1/webhook-endpoints/"+mine, sandbox, `{"companyIds":null,"events":["*"],"description":"всё"}`)
		if m := r.json(t); r.status != 200 || len(m["companyIds"].([]any)) != 0 || m["events"].([]any)[0] != "*" || m["description"] != "всё" {
			t.Fatalf("patch: %d %s", r.status, r.body)
		}
		if r := c.do("GET", "/v1/webhook-endpoints/"+mine, limited, ""); r.status != 403 {
			t.Fatalf("limited key after widening: %d", r.status)
		}
		// The limit of endpoints per environment.
		for i := 3; i <= 20; i++ {
			if r := create(sandbox, body(fmt.Sprintf("https://hooks.example.mk/%d", i), "")); r.status != 201 {
				t.Fatalf("endpoint %d: %d %s", i, r.status, r.body)
			}
		}
		if r := create(sandbox, body("https://hooks.example.mk/21", "")); r.status != 409 || r.json(t)["code"] != "webhook_endpoint_limit" {
			t.Fatalf("21st endpoint: %d %s", r.status, r.body)
		}
		// Delete: gone, and a second delete is 404.
		if r := c.do("DELETE", "/v1/webhook-endpoints/"+all, sandbox, ""); r.status != 204 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if r := c.do("DELETE", "/v1/webhook-endpoints/"+all, sandbox, ""); r.status != 404 {
			t.Fatalf("second delete: %d %s", r.status, r.body)
		}
		// The catalogue.
		r = c.do("GET", "/v1/event-types", readOnly, "")
		kinds := r.json(t)["data"].([]any)
		if r.status != 200 || len(kinds) != len(webhooks.EventKinds()) {
			t.Fatalf("event types: %d %s", r.status, r.body)
		}
		seen := map[string]bool{}
		for _, k := range kinds {
			seen[k.(map[string]any)["type"].(string)] = true
		}
		for _, typ := range []string{"einvoice.validated_failed", "einvoice.signature_required", "einvoice.submitted", "einvoice.accepted",
			"einvoice.auto_accepted", "einvoice.rejected", "einvoice.cancelled_by_storno", "einvoice.corrected", "einvoice.failed",
			"inbox.received", "inbox.deadline_approaching", "inbox.auto_accepted", "signing_agent.offline", "signing_agent.online",
			"archive.export_ready", "einvoice.held"} {
			if !seen[typ] {
				t.Errorf("the catalogue lacks %s", typ)
			}
		}
	})
}
