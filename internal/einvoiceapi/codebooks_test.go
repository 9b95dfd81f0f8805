package einvoiceapi_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
)

// TestCodebooks: GET /v1/codebooks lists every code list a caller sends
// codes of, GET /v1/codebooks/{name} its values, both saying whether they
// are UJP's lists or the embedded snapshot; any credential of the service
// reads them.
func TestCodebooks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newCAPI(t, db)
		acct := c.account("")
		key := c.key(acct, "sandbox", []string{"inbox:read"}, nil)

		r := c.do("GET", "/v1/codebooks", key, "")
		m := r.json(t)
		if r.status != 200 || m["source"] != "snapshot" || m["fetchedAt"] != nil || m["environment"] != "sandbox" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		lists := map[string]float64{}
		for _, x := range m["data"].([]any) {
			x := x.(map[string]any)
			lists[x["name"].(string)] = x["count"].(float64)
		}
		for _, n := range []string{"document-types", "ref-document-types", "payment-types", "currencies", "countries",
			"tax-groups", "tax-indicators", "void-reasons", "correction-reasons", "reject-reasons", "document-statuses"} {
			if lists[n] == 0 {
				t.Errorf("list %s missing or empty: %v", n, lists)
			}
		}

		r = c.do("GET", "/v1/codebooks/tax-indicators", key, "")
		m = r.json(t)
		if r.status != 200 || m["name"] != "tax-indicators" || m["source"] != "snapshot" {
			t.Fatalf("%d %s", r.status, r.body)
		}
		found := map[string]map[string]any{}
		for _, v := range m["values"].([]any) {
			v := v.(map[string]any)
			found[v["code"].(string)] = v
		}
		if a := found["DDV-A"]; a == nil || a["vatImpact"] != "STANDARD" || len(a["vatPercents"].([]any)) != 1 || a["vatPercents"].([]any)[0] != 18.0 {
			t.Errorf("DDV-A: %v", a)
		}
		if u := found["DDV-uvoz"]; u == nil || u["vatImpact"] != "PRENESEN" || len(u["vatPercents"].([]any)) != 3 {
			t.Errorf("DDV-uvoz: %v", u)
		}
		for name, code := range map[string]string{"void-reasons": "S-1", "correction-reasons": "C01", "reject-reasons": "\u041e-7",
			"payment-types": "P12", "document-types": "100", "ref-document-types": "NAR", "currencies": "EUR", "countries": "DE"} {
			r = c.do("GET", "/v1/codebooks/"+name, key, "")
			if r.status != 200 || !strings.Contains(string(r.body), `"code":"`+code+`"`) {
				t.Errorf("%s: %d, no %s: %.300s", name, r.status, code, r.body)
			}
		}

		r = c.do("GET", "/v1/codebooks/units", key, "")
		if m := r.json(t); r.status != 404 || m["code"] != "not_found" || !strings.Contains(m["detail"].(string), "tax-indicators") {
			t.Errorf("unknown list: %d %s", r.status, r.body)
		}
		if r = c.do("GET", "/v1/codebooks", "", ""); r.status != 401 {
			t.Errorf("no credential: %d", r.status)
		}

		// Once UJP's lists are read, they are served, with when: each
		// list is UJP's, unchanged since that first read.
		at := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
		db.Now = func() time.Time { return at }
		live := ujpdoc.Snapshot()
		live.VoidReasons = append(live.VoidReasons, ujpdoc.Code{Code: "S-4", Name: "Нова причина"})
		live.PaymentTypes = nil // served empty: the snapshot's are kept
		gw := &listsGateway{lists: live}
		a, s := newApp(db, einvoicing.Deps{Registry: fakeRegistry{}},
			appConfig{Companies: companies.Config{PublicURL: "http://mandates.test"}, Gateways: map[string]ujp.Gateway{"sandbox": gw},
				Operators: map[string]ujp.Identity{"sandbox": {EUJPID: "OPERATOR", EDB: "4030000000001"}}},
			webhooks.Deps{}, webhooks.Config{})
		if _, err := a.lists.RefreshCodeLists(t.Context(), "sandbox"); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		c2 := *c
		c2.srv = srv
		r = c2.do("GET", "/v1/codebooks/void-reasons", key, "")
		m = r.json(t)
		if r.status != 200 || m["source"] != "ujp" || m["fetchedAt"] != "2026-05-04T06:00:00Z" || !strings.Contains(string(r.body), `"S-4"`) ||
			m["live"] != true || m["unchangedSince"] != "2026-05-04T06:00:00Z" {
			t.Errorf("live lists: %d %s", r.status, r.body)
		}
		// Read again a day later, UJP's tax indicators changed: fetchedAt
		// moves, and the list that changed is unchanged since then.
		db.Now = func() time.Time { return at.Add(24 * time.Hour) }
		gw.lists.TaxIndicators = gw.lists.TaxIndicators[1:]
		if ch, err := a.lists.RefreshCodeLists(t.Context(), "sandbox"); err != nil || ch == nil || ch.Lists[0].List != ujpdoc.CBTaxIndicators {
			t.Fatalf("the change: %+v, %v", ch, err)
		}
		r = c2.do("GET", "/v1/codebooks", key, "")
		m = r.json(t)
		if m["fetchedAt"] != "2026-05-05T06:00:00Z" {
			t.Errorf("fetchedAt after the second read: %v", m["fetchedAt"])
		}
		byName := map[string]map[string]any{}
		for _, x := range m["data"].([]any) {
			byName[x.(map[string]any)["name"].(string)] = x.(map[string]any)
		}
		for name, want := range map[string][2]any{
			"tax-indicators": {true, "2026-05-05T06:00:00Z"}, "void-reasons": {true, "2026-05-04T06:00:00Z"},
			"payment-types": {false, nil}} {
			if got := byName[name]; got["live"] != want[0] || got["unchangedSince"] != want[1] {
				t.Errorf("%s: live %v since %v, want %v", name, got["live"], got["unchangedSince"], want)
			}
		}
	})
}

// listsGateway serves code lists (a copy of lists at each read).
type listsGateway struct {
	ujp.Gateway
	lists *ujpdoc.Codebooks
}

func (g *listsGateway) Codebooks(context.Context, ujp.Identity) (*ujpdoc.Codebooks, error) {
	cb := *g.lists
	return &cb, nil
}
