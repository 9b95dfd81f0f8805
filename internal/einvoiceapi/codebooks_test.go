package einvoiceapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
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

		// Once UJP's lists are read, they are served, with when.
		at := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
		live := ujpdoc.Snapshot()
		live.FetchedAt = at
		live.VoidReasons = append(live.VoidReasons, ujpdoc.Code{Code: "S-4", Name: "Нова причина"})
		_, s := newAPI(db, einvoicing.Deps{Registry: fakeRegistry{}, Codebooks: func(string) *ujpdoc.Codebooks { return live }},
			einvoicing.Config{PublicURL: "http://mandates.test"})
		srv := httptest.NewServer(s.Handler())
		defer srv.Close()
		c2 := *c
		c2.srv = srv
		r = c2.do("GET", "/v1/codebooks/void-reasons", key, "")
		m = r.json(t)
		if r.status != 200 || m["source"] != "ujp" || m["fetchedAt"] != "2026-05-04T06:00:00Z" || !strings.Contains(string(r.body), `"S-4"`) {
			t.Errorf("live lists: %d %s", r.status, r.body)
		}
	})
}
