package webhooks

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/usecase"
)

// TestListsFillTheirPage: with a key limited to one company, over more
// rows than a page, every list of this package (events by id, the event
// feed, webhook endpoints, an endpoint's and an event's deliveries) gives
// full pages until the last, each row it may see exactly once and none
// it may not: the allow-list is applied in the query, before its LIMIT.
func TestListsFillTheirPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		s := New(Deps{DB: db, Secrets: testBox(t), Resolver: mapResolver{"hooks.example.mk": {"93.184.215.14"}}}, Config{MaxEndpoints: 50})
		acct, cos := seedAccount(t, db, 3)
		a, b := cos[0], cos[1]
		owner := &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox}
		limited := &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox, CompanyIDs: []string{a, cos[2]}}
		const limit = 4

		// Endpoints: limited to a (the key manages them), to b, to a and b,
		// and to every company (it manages neither), interleaved.
		var wantEndpoints []string
		var everyCompany string
		for range 10 { // 50 endpoints, the most an account may have here
			for _, companies := range [][]string{{a}, {b}, {a, b}, nil, {cos[2], a}} {
				ep, err := s.CreateWebhookEndpoint(ctx, usecase.Caller{Principal: owner}, CreateWebhookEndpoint{URL: "https://hooks.example.mk/x",
					Events: []string{"*"}, CompanyIDs: companies})
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case len(companies) == 0:
					everyCompany = ep.ID
				case !slices.Contains(companies, b):
					wantEndpoints = append(wantEndpoints, ep.ID)
				}
			}
		}
		// Events: two of b for each of a, so that every page read past
		// LIMIT would miss most of a's.
		var wantEvents []string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := range 30 {
				co := b
				if i%3 == 0 {
					co = a
				}
				if err := writeEvent(ctx, tx, acct, co, auth.EnvSandbox, EventSubmitted, fmt.Sprintf("einv_%d", i), invoice{ID: "einv"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.Events(ctx, owner, EventFilter{}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range all {
			if e.CompanyID == a {
				wantEvents = append(wantEvents, e.ID)
			}
		}

		// walk reads a list page by page and checks every page but the
		// last is full.
		walk := func(name string, read func(after string) ([]string, error)) []string {
			t.Helper()
			var got []string
			after := ""
			for {
				ids, err := read(after)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				more := len(ids) > limit
				if more {
					ids = ids[:limit]
				}
				if more && len(ids) != limit {
					t.Fatalf("%s: a page of %d before the end", name, len(ids))
				}
				got = append(got, ids...)
				if !more {
					return got
				}
				after = ids[len(ids)-1]
			}
		}
		same := func(name string, got, want []string) {
			t.Helper()
			g, w := slices.Clone(got), slices.Clone(want)
			slices.Sort(g)
			slices.Sort(w)
			if !slices.Equal(g, w) {
				t.Errorf("%s: got %d rows %v, want %d %v", name, len(got), got, len(want), want)
			}
		}
		same("events", walk("events", func(after string) ([]string, error) {
			evs, err := s.Events(ctx, limited, EventFilter{}, after, limit)
			return eventIDs(evs), err
		}), wantEvents)
		same("webhook endpoints", walk("webhook endpoints", func(after string) ([]string, error) {
			eps, err := s.WebhookEndpoints(ctx, limited, after, limit)
			var ids []string
			for _, e := range eps {
				ids = append(ids, e.ID)
			}
			return ids, err
		}), wantEndpoints)
		if slices.Contains(wantEndpoints, everyCompany) {
			t.Fatal("the key manages an endpoint of every company")
		}

		// The feed: positions, not ids.
		var feed []string
		pos := int64(0)
		for {
			page, err := s.EventFeed(ctx, limited, EventFilter{}, pos, limit)
			if err != nil {
				t.Fatal(err)
			}
			if page.More && len(page.Events) != limit {
				t.Fatalf("event feed: a page of %d before the end", len(page.Events))
			}
			feed = append(feed, eventIDs(page.Events)...)
			pos = page.Next
			if !page.More {
				break
			}
		}
		same("event feed", feed, wantEvents)

		// Deliveries: an event of a went to every endpoint (all want "*"
		// and cover a but those limited to b); the limited key sees those
		// to the endpoints it manages, not those to endpoints of every
		// company. An endpoint limited to a got every event of a.
		ev := wantEvents[0]
		var wantTo []string
		ds, err := s.EventDeliveries(ctx, owner, ev, DeliveryFilter{}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		hidden := 0
		for _, d := range ds {
			if slices.Contains(wantEndpoints, d.EndpointID) {
				wantTo = append(wantTo, d.ID)
			} else {
				hidden++
			}
		}
		if hidden == 0 || len(wantTo) <= limit {
			t.Fatalf("the event went to %d endpoints the key manages and %d it does not; want more than a page and some", len(wantTo), hidden)
		}
		same("an event's deliveries", walk("an event's deliveries", func(after string) ([]string, error) {
			ds, err := s.EventDeliveries(ctx, limited, ev, DeliveryFilter{}, after, limit)
			return deliveryIDs(ds), err
		}), wantTo)
		ep := wantEndpoints[0]
		got := walk("an endpoint's deliveries", func(after string) ([]string, error) {
			ds, err := s.EndpointDeliveries(ctx, limited, ep, DeliveryFilter{}, after, limit)
			return deliveryIDs(ds), err
		})
		if len(got) != len(wantEvents) {
			t.Errorf("an endpoint's deliveries: %d, want one per event of %s (%d)", len(got), a, len(wantEvents))
		}
	})
}

func eventIDs(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func deliveryIDs(ds []WebhookDelivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestEventInReach: GET /v1/events/{id} answers by the one loader rule:
// an event of another account or none at all is 404; one of a company
// outside the allow-list is 403 company_not_allowed, before the
// environment; one of the other environment is 403 environment_mismatch.
func TestEventInReach(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		s := New(Deps{DB: db, Secrets: testBox(t), Resolver: mapResolver{}}, Config{})
		acct, cos := seedAccount(t, db, 2)
		other, otherCos := seedAccount(t, db, 1)
		ids := map[string]string{}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for name, ev := range map[string]struct{ account, company, env string }{
				"a":          {acct, cos[0], auth.EnvSandbox},
				"b":          {acct, cos[1], auth.EnvSandbox},
				"production": {acct, cos[0], auth.EnvProduction},
				"other":      {other, otherCos[0], auth.EnvSandbox},
			} {
				if err := writeEvent(ctx, tx, ev.account, ev.company, ev.env, EventSubmitted, "einv_"+name, invoice{ID: "einv"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		all, err := s.Events(ctx, &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox}, EventFilter{}, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		prod, err := s.Events(ctx, &auth.Principal{AccountID: acct, Environment: auth.EnvProduction}, EventFilter{}, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		oth, err := s.Events(ctx, &auth.Principal{AccountID: other, Environment: auth.EnvSandbox}, EventFilter{}, "", 10)
		if err != nil || len(all) != 2 || len(prod) != 1 || len(oth) != 1 {
			t.Fatalf("events: %d sandbox, %d production, %d of the other account, %v", len(all), len(prod), len(oth), err)
		}
		for _, e := range all {
			ids[e.CompanyID] = e.ID
		}
		limited := &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox, CompanyIDs: []string{cos[0]}}
		tests := []struct {
			name, id, code string
		}{
			{"own company", ids[cos[0]], ""},
			{"company outside the allow-list", ids[cos[1]], "company_not_allowed"},
			{"the other environment", prod[0].ID, "environment_mismatch"},
			{"another account", oth[0].ID, "not_found"},
			{"no such event", "evt_none", "not_found"},
		}
		for _, tt := range tests {
			_, err := s.Event(ctx, limited, tt.id)
			var de *denar.Error
			switch {
			case tt.code == "" && err != nil:
				t.Errorf("%s: %v", tt.name, err)
			case tt.code != "" && (!errors.As(err, &de) || de.Code != tt.code):
				t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
			}
		}
	})
}
