package dashboard_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// apiEnums are the string values of every enum of the e-invoicing API's
// OpenAPI document, and, for the values a page seeds by group, the enum
// of each named schema property.
func apiEnums(t *testing.T) (all map[string]bool, of func(schema, prop string) []string) {
	t.Helper()
	raw, err := os.ReadFile("../../api/einvoice.openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	all = map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["enum"].([]any); ok {
				for _, s := range e {
					if s, ok := s.(string); ok {
						all[s] = true
					}
				}
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	of = func(schema, prop string) []string {
		p := schemas[schema].(map[string]any)["properties"].(map[string]any)[prop].(map[string]any)
		var out []string
		for _, s := range p["enum"].([]any) {
			out = append(out, s.(string))
		}
		if len(out) == 0 {
			t.Fatalf("%s.%s has no enum", schema, prop)
		}
		return out
	}
	return all, of
}

var (
	invisible = regexp.MustCompile(`(?s)<(head|pre|code|script|style)\b.*?</(head|pre|code|script|style)>|<[^>]*>`)
	apiPath   = regexp.MustCompile(`/[^\s]*`)
	words     = regexp.MustCompile(`[a-z0-9][a-z0-9_.*]*[a-z0-9_*]|[a-z]`)
)

// visibleText is what a reader sees of a page: no tags, attributes, the
// document's head, or the code and preformatted text that shows API data
// as it is (an event's JSON, an id, a scope), nor the API paths a text
// names.
func visibleText(page string) string {
	return apiPath.ReplaceAllString(html.UnescapeString(invisible.ReplaceAllString(page, " ")), " ")
}

// TestPagesShowNoRawEnums renders every page of the dashboard in Macedonian,
// with documents in every status of the API, every kind, history causes,
// problems, refusals, events of every type, webhook deliveries in every
// state with their attempts, and checks that no page shows a raw enum value
// of the API (the list is the OpenAPI document's) or a Go-formatted value.
func TestPagesShowNoRawEnums(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	w := newWorld(t, db)
	ctx := t.Context()
	enums, of := apiEnums(t)
	statuses := of("EInvoice", "status")
	kinds := of("EInvoice", "kind")
	var invs []string
	causes := []string{"issued", "signed", "submission", "retry", "submitted", "ujp_outage", "ujp_rejected", "buyer_accepted",
		"deadline_passed", "storno_delivered", "correction_delivered", "ujp_status", "signature_refused", "validation_failed"}
	epID := denar.NewID("whe")
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i, st := range statuses {
			id := denar.NewID("einv")
			invs = append(invs, id)
			doc := `{"requestTimestamp":"x","document":{"buyer":{"buyerTin":"4030000000002","buyerName":"Купувач ДОО"},"docItems":[]}}`
			problems := `[{"code":"signature_refused","message":"the signer refused (unattended)","reason":"unattended","signingRequestId":"sgr_x"},` +
				`{"code":"ujp_rejected","message":"E10006 Погрешен назив"}]`
			if _, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: id, AccountID: w.acctA, CompanyID: w.companyA,
				Environment: auth.EnvSandbox, Kind: kinds[i%len(kinds)], Status: st, DocumentType: "100", Number: fmt.Sprintf("F-%d", i),
				IssueDate: "2026-03-02", Document: doc, UjpDocID: id, TotalNet: "1", TotalVat: "0", TotalGross: "1",
				Currency: "MKD", Problems: problems, Fingerprint: "f" + id, CreatedAt: tx.Now, UpdatedAt: tx.Now}); err != nil {
				return err
			}
			from := sql.NullString{}
			for j, to := range []string{statuses[(i+len(statuses)-1)%len(statuses)], st} {
				if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: id, FromStatus: from,
					ToStatus: to, Cause: causes[(i+j)%len(causes)], At: tx.Now}); err != nil {
					return err
				}
				from = sql.NullString{String: to, Valid: true}
			}
		}
		ep, err := tx.CreateWebhookEndpoint(ctx, dbq.CreateWebhookEndpointParams{ID: epID, AccountID: w.acctA, Environment: auth.EnvSandbox,
			Url: "https://hooks.example.com/denar", EventTypes: "einvoice.failed inbox.received", Secret: "x", CreatedAt: tx.Now})
		if err != nil {
			return err
		}
		states := of("WebhookDelivery", "state")
		for i, k := range webhooks.EventKinds() {
			ev := denar.NewID("evt")
			data := fmt.Sprintf(`{"object":{"id":%q,"object":"einvoice","number":"F-%d","companyId":%q,"status":"failed"}}`, invs[i%len(invs)], i, w.companyA)
			if err := tx.CreateEvent(ctx, dbq.CreateEventParams{ID: ev, AccountID: w.acctA, CompanyID: w.companyA, Environment: auth.EnvSandbox,
				Type: k.Type, ObjectID: invs[i%len(invs)], Payload: data, CreatedAt: tx.Now}); err != nil {
				return err
			}
			st := states[i%len(states)]
			reason := ""
			if st == "abandoned" {
				reason = "retries_exhausted"
			}
			del := denar.NewID("whd")
			if err := tx.CreateWebhookDelivery(ctx, dbq.CreateWebhookDeliveryParams{ID: del, AccountID: w.acctA, Environment: auth.EnvSandbox,
				EndpointID: ep.ID, EventID: ev, EventType: k.Type, CompanyID: w.companyA, State: st, AbandonedReason: reason,
				MaxAttempts: 8, CreatedAt: tx.Now}); err != nil {
				return err
			}
			for n, trig := range []string{"scheduled", "manual"} {
				if err := tx.CreateWebhookAttempt(ctx, dbq.CreateWebhookAttemptParams{ID: denar.NewID("wha"), DeliveryID: del, Number: int32(n + 1),
					Trigger: trig, StartedAt: tx.Now, DurationMs: 12, StatusCode: sql.NullInt32{Int32: 500, Valid: true}}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.WriteDB().ExecContext(ctx, "UPDATE webhook_endpoints SET failing_since = $1 WHERE id = $2", time.Now().Add(-time.Hour), epID); err != nil {
		t.Fatal(err)
	}
	var eventIDs []string
	evs, err := w.hooks.Events(ctx, &auth.Principal{AccountID: w.acctA, Environment: auth.EnvSandbox}, webhooks.EventFilter{}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		eventIDs = append(eventIDs, e.ID)
	}

	b := w.browser()
	b.signIn("owner@a.mk")
	pages := []string{"/dashboard/", "/dashboard/companies", "/dashboard/einvoices", "/dashboard/einvoices?status=failed",
		"/dashboard/inbox", "/dashboard/inbox/" + w.companyA + "/" + w.docA, "/dashboard/events", "/dashboard/webhooks",
		"/dashboard/webhooks/" + epID, "/dashboard/keys", "/dashboard/usage", "/dashboard/security", "/dashboard/audit",
		"/dashboard/users", "/dashboard/no-such-page", "/dashboard/einvoices/" + w.companyA + "/" + invs[0] + "/correction"}
	for _, id := range invs {
		pages = append(pages, "/dashboard/einvoices/"+w.companyA+"/"+id)
	}
	for _, id := range eventIDs[:5] {
		pages = append(pages, "/dashboard/events/"+id)
	}
	goFormatted := []string{"<no value>", "map[", "%!", "<nil>", "&{", "0001-01-01"}
	for _, path := range pages {
		p := b.do("GET", path, nil)
		if p.status >= 500 {
			t.Errorf("%s: %d", path, p.status)
			continue
		}
		text := visibleText(p.body)
		var raw []string
		for _, word := range words.FindAllString(text, -1) {
			if enums[word] && !slices.Contains(raw, word) {
				raw = append(raw, word)
			}
		}
		if len(raw) > 0 {
			t.Errorf("%s shows raw API values %v", path, raw)
		}
		for _, g := range goFormatted {
			if strings.Contains(p.body, g) {
				t.Errorf("%s shows a Go-formatted value %q", path, g)
			}
		}
	}
	// The test sees what it must: the English page shows the raw-looking
	// words it would refuse in Macedonian, as English words.
	b.do("GET", "/dashboard/lang/en?next="+url.QueryEscape("/dashboard/"), nil)
	if p := b.do("GET", "/dashboard/einvoices/"+w.companyA+"/"+invs[0], nil); p.status != http.StatusOK || !strings.Contains(visibleText(p.body), "The signer refused") {
		t.Errorf("English e-invoice page: %d", p.status)
	}
}
