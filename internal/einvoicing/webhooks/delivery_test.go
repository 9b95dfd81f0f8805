package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/usecase"
	"github.com/denar-mk/denar/sdk/webhook"
)

func testBox(t testing.TB) *auth.SecretBox {
	t.Helper()
	b, err := auth.NewSecretBox(bytes.Repeat([]byte{0x42}, auth.SecretKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countingReceiver verifies every request and counts them by event id.
type countingReceiver struct {
	srv    *httptest.Server
	secret atomic.Value // string
	mu     sync.Mutex
	byID   map[string]int
	bad    atomic.Int64
	total  atomic.Int64
	onHit  atomic.Pointer[func(total int64)]
}

func newCountingReceiver(t testing.TB) *countingReceiver {
	r := &countingReceiver{byID: map[string]int{}}
	r.secret.Store("")
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if webhook.Verify(body, req.Header.Get(webhook.Header), r.secret.Load().(string), webhook.Tolerance, time.Now()) != nil {
			r.bad.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ev struct{ ID string }
		_ = json.Unmarshal(body, &ev)
		r.mu.Lock()
		r.byID[ev.ID]++
		r.mu.Unlock()
		n := r.total.Add(1)
		w.WriteHeader(http.StatusNoContent)
		if f := r.onHit.Load(); f != nil {
			(*f)(n)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// invoice stands for the e-invoice an event is about (the einvoicing
// package's EInvoice, which this package does not import).
type invoice struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Status    string          `json:"status"`
	Problems  json.RawMessage `json:"problems"`
	Document  json.RawMessage `json:"document"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`
}

// writeEvent publishes one event about object in tx, as a use case of
// the e-invoicing application does through its port.
func writeEvent(ctx context.Context, tx *store.Tx, account, company, env, typ, objectID string, object any) error {
	return (&Service{}).Publish(ctx, tx, Draft{AccountID: account, CompanyID: company, Environment: env, Type: typ,
		ObjectID: objectID, Object: object})
}

// writeEvents writes n events of company co, in transactions of 500.
func writeEvents(t testing.TB, db *store.DB, acct, co, env string, n int) []string {
	t.Helper()
	var ids []string
	for done := 0; done < n; {
		batch := min(500, n-done)
		err := db.InTx(context.Background(), func(tx *store.Tx) error {
			for i := range batch {
				view := invoice{ID: fmt.Sprintf("einv_%d", done+i), Object: "einvoice", Status: "delivered", Problems: json.RawMessage("[]"),
					Document: json.RawMessage("{}"), CreatedAt: tx.Now, UpdatedAt: tx.Now}
				if err := writeEvent(context.Background(), tx, acct, co, env, EventSubmitted, view.ID, view); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		done += batch
	}
	rows, err := db.Reader().ListEvents(context.Background(), listAll(acct, env, n))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestWebhookFanOut: an event goes to the endpoints of its account and
// environment that subscribe to its type and cover its company, and to no
// other.
func TestWebhookFanOut(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		res := mapResolver{"hooks.example.mk": {"93.184.215.14"}}
		s := New(Deps{DB: db, Secrets: testBox(t), Resolver: res}, Config{})
		acct, cos := seedAccount(t, db, 2)
		other, _ := seedAccount(t, db, 0)
		sb := &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox}
		pr := &auth.Principal{AccountID: acct, Environment: auth.EnvProduction}
		mk := func(p *auth.Principal, events, companies []string) string {
			t.Helper()
			ep, err := s.CreateWebhookEndpoint(ctx, usecase.Caller{Principal: p}, CreateWebhookEndpoint{URL: "https://hooks.example.mk/x", Events: events, CompanyIDs: companies})
			if err != nil {
				t.Fatal(err)
			}
			return ep.ID
		}
		all := mk(sb, []string{"*"}, nil)
		submitted := mk(sb, []string{EventSubmitted}, nil)
		onlyB := mk(sb, []string{EventSubmitted, EventAccepted}, []string{cos[1]})
		prod := mk(pr, []string{"*"}, nil)
		mk(&auth.Principal{AccountID: other, Environment: auth.EnvSandbox}, []string{"*"}, nil)
		write := func(co, env, typ string) string {
			t.Helper()
			var id string
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := writeEvent(ctx, tx, acct, co, env, typ, "einv_x", invoice{ID: "einv_x"}); err != nil {
					return err
				}
				rows, err := tx.ListEvents(ctx, listAll(acct, env, 1))
				id = rows[0].ID
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return id
		}
		for _, tc := range []struct {
			co, env, typ string
			want         []string
		}{
			{cos[0], auth.EnvSandbox, EventSubmitted, []string{all, submitted}},
			{cos[1], auth.EnvSandbox, EventSubmitted, []string{all, submitted, onlyB}},
			{cos[1], auth.EnvSandbox, EventAccepted, []string{all, onlyB}},
			{cos[0], auth.EnvSandbox, EventRejected, []string{all}},
			{cos[0], auth.EnvProduction, EventSubmitted, []string{prod}},
		} {
			ev := write(tc.co, tc.env, tc.typ)
			rows, err := db.Reader().ListEventDeliveries(ctx, listDeliveries(ev, acct, tc.env))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, r := range rows {
				got[r.EndpointID] = true
				if r.State != deliveryPending || r.EventType != tc.typ {
					t.Fatalf("delivery %+v", r)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%s %s of %s went to %v, want %v", tc.env, tc.typ, tc.co, got, tc.want)
			}
			for _, w := range tc.want {
				if !got[w] {
					t.Fatalf("%s %s of %s went to %v, want %v", tc.env, tc.typ, tc.co, got, tc.want)
				}
			}
		}
		// A type outside the catalogue is a programming error.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			return writeEvent(ctx, tx, acct, cos[0], auth.EnvSandbox, "einvoice.paid", "einv_x", invoice{})
		})
		if err == nil {
			t.Fatal("an event type outside the catalogue was written")
		}
	})
}

// TestWebhookTwoProcessesExactlyOnce: two processes (two pools, two
// runners) on one PostgreSQL database deliver 500 events to a receiver,
// each exactly once.
func TestWebhookTwoProcessesExactlyOnce(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	ctx := t.Context()
	open := func() *store.DB {
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return db
	}
	dbs := []*store.DB{open(), open()}
	recv := newCountingReceiver(t)
	cfg := Config{AllowPrivateSandbox: true}
	var svcs []*Service
	for _, db := range dbs {
		svcs = append(svcs, New(Deps{DB: db, Secrets: testBox(t), Log: slog.New(slog.DiscardHandler)}, cfg))
	}
	acct, cos := seedAccount(t, dbs[0], 1)
	ep, err := svcs[0].CreateWebhookEndpoint(ctx, usecase.Caller{Principal: &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox}},
		CreateWebhookEndpoint{URL: recv.srv.URL, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	recv.secret.Store(*ep.Secret)
	const n = 500
	ids := writeEvents(t, dbs[0], acct, cos[0], auth.EnvSandbox, n)
	all := make(chan struct{})
	hit := func(total int64) {
		if total == n {
			close(all)
		}
	}
	recv.onHit.Store(&hit)
	var runners []*jobs.Runner
	for i, s := range svcs {
		r := jobs.NewRunner(dbs[i], jobs.Config{ID: fmt.Sprintf("process-%d", i+1), Workers: 8, PollInterval: 5 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)})
		s.RegisterJobs(r)
		runners = append(runners, r)
	}
	for _, r := range runners {
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-all:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%d of %d delivered", recv.total.Load(), n)
	}
	// Wait until every outcome is recorded, then stop both.
	for {
		var left int
		if err := dbs[0].ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM jobs WHERE kind = $1 AND state <> 'completed'", kindWebhookDeliver).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, r := range runners {
		if err := r.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if recv.bad.Load() != 0 || recv.total.Load() != n {
		t.Fatalf("%d requests, %d with a bad signature", recv.total.Load(), recv.bad.Load())
	}
	for _, id := range ids {
		if recv.byID[id] != 1 {
			t.Errorf("event %s delivered %d times", id, recv.byID[id])
		}
	}
	var attempts, deliveries int
	if err := dbs[1].ReadDB().QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(attempts), 0) FROM webhook_deliveries WHERE state = 'succeeded'").Scan(&deliveries, &attempts); err != nil {
		t.Fatal(err)
	}
	if deliveries != n || attempts != n {
		t.Fatalf("%d succeeded deliveries with %d attempts, want %d and %d", deliveries, attempts, n, n)
	}
}

func listAll(acct, env string, n int) dbq.ListEventsParams {
	return dbq.ListEventsParams{AccountID: acct, Environment: env, AllCompanies: true, Lim: int64(n)}
}

func listDeliveries(event, acct, env string) dbq.ListEventDeliveriesParams {
	return dbq.ListEventDeliveriesParams{EventID: event, AccountID: acct, Environment: env, AllCompanies: true, Lim: 100}
}

// TestWebhookBatchOutcomes: one batch holds deliveries that succeed, that
// fail, and one that moves on while its request is in flight. Each is
// recorded as a single attempt would be: successes with their attempt, the
// job completed and the endpoint healthy; failures retried on the ladder
// with the endpoint failing; the moved-on delivery keeps its new state and
// gets no attempt.
func TestWebhookBatchOutcomes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		var moveOn atomic.Value // delivery id abandoned by the receiver before it answers
		moveOn.Store("")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			id := r.Header.Get("Service-Delivery-Id")
			if id == moveOn.Load().(string) {
				if _, err := db.Writer().AbandonWebhookDelivery(context.Background(), dbq.AbandonWebhookDeliveryParams{ID: id,
					Reason: abandonedEndpointDisabled, Now: db.Now()}); err != nil {
					t.Error(err)
				}
			}
			if r.URL.Path == "/fail" {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(srv.Close)
		s := New(Deps{DB: db, Secrets: testBox(t), Log: slog.New(slog.DiscardHandler)},
			Config{AllowPrivateSandbox: true, Concurrency: 3})
		acct, cos := seedAccount(t, db, 1)
		p := usecase.Caller{Principal: &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox}}
		ok, err := s.CreateWebhookEndpoint(ctx, p, CreateWebhookEndpoint{URL: srv.URL + "/ok", Events: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		bad, err := s.CreateWebhookEndpoint(ctx, p, CreateWebhookEndpoint{URL: srv.URL + "/fail", Events: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		events := writeEvents(t, db, acct, cos[0], auth.EnvSandbox, 4)
		deliveryTo := func(ev, ep string) dbq.WebhookDelivery {
			t.Helper()
			rows, err := db.Reader().ListEventDeliveries(ctx, listDeliveries(ev, acct, auth.EnvSandbox))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range rows {
				if d.EndpointID == ep {
					return d
				}
			}
			t.Fatalf("no delivery of %s to %s", ev, ep)
			return dbq.WebhookDelivery{}
		}
		moved := deliveryTo(events[3], ok.ID).ID
		moveOn.Store(moved)

		r := jobs.NewRunner(db, jobs.Config{Workers: 64, Logger: slog.New(slog.DiscardHandler)})
		s.RegisterJobs(r)
		if n, err := r.RunOnce(ctx); err != nil || n != 8 {
			t.Fatalf("RunOnce = %d, %v; want the 8 deliveries in one batch", n, err)
		}
		for _, ev := range events {
			for _, ep := range []string{ok.ID, bad.ID} {
				d := deliveryTo(ev, ep)
				att, err := db.Reader().ListWebhookAttempts(ctx, d.ID)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case d.ID == moved:
					if d.State != deliveryAbandoned || d.Attempts != 0 || len(att) != 0 {
						t.Errorf("moved-on delivery: %+v, %d attempts", d, len(att))
					}
				case ep == ok.ID:
					if d.State != deliverySucceeded || d.Attempts != 1 || d.LastStatusClass != "2xx" || len(att) != 1 ||
						!att[0].Succeeded || att[0].StatusCode.Int32 != 204 || att[0].Trigger != "scheduled" || att[0].Number != 1 {
						t.Errorf("succeeded delivery: %+v, attempts %+v", d, att)
					}
				default:
					if d.State != deliveryFailed || d.Attempts != 1 || !d.NextAttemptAt.Valid || !d.NextAttemptAt.Time.Equal(d.LastAttemptAt.Time.Add(time.Minute)) ||
						len(att) != 1 || att[0].Succeeded || att[0].StatusCode.Int32 != 503 || att[0].ResponseBody != "down for maintenance\n" {
						t.Errorf("failed delivery: %+v, attempts %+v", d, att)
					}
				}
			}
		}
		states := map[string]int{}
		js, err := db.Reader().ListJobsByKind(ctx, kindWebhookDeliver)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			states[j.State]++
		}
		if states[jobs.StateCompleted] != 4 || states[jobs.StateRetryable] != 4 {
			t.Errorf("jobs by state = %v, want 4 completed (3 delivered, 1 moved on) and 4 retryable", states)
		}
		okEp, err := db.Reader().GetWebhookEndpointByID(ctx, ok.ID)
		if err != nil {
			t.Fatal(err)
		}
		badEp, err := db.Reader().GetWebhookEndpointByID(ctx, bad.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !okEp.LastSuccessAt.Valid || okEp.FailingSince.Valid || badEp.LastSuccessAt.Valid || !badEp.FailingSince.Valid {
			t.Errorf("health: ok %+v, failing %+v", okEp, badEp)
		}
	})
}

// TestEventJSON: a delivery's body is byte for byte what json.Marshal makes
// of the event, for payloads as the service stores them.
func TestEventJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 9, 0, 0, 123456000, time.UTC)
	for _, data := range []any{
		map[string]any{"object": map[string]any{"id": "einv_1", "buyer": "Тест <ДООЕЛ> & син", "line": "a\u2028b"}},
		map[string]any{"object": map[string]any{}},
		map[string]any{"object": []int{1, 2, 3}},
	} {
		payload, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		// The head's strings are quoted by hand when nothing in them needs
		// escaping: events whose strings each hold one byte that does.
		evs := []Event{eventView(dbq.Event{ID: "evt_1", CompanyID: "co_1", Environment: auth.EnvSandbox, Type: EventSubmitted,
			Payload: string(payload), CreatedAt: at})}
		for i, odd := range []string{"<", ">", "&", `"`, `\`, "\x01", "\x7f", "т", "\u2028", "\xff"} {
			evs = append(evs, eventView(dbq.Event{ID: "evt_" + odd, CompanyID: "co" + odd, Environment: odd, Type: EventSubmitted + odd,
				Payload: string(payload), CreatedAt: at.In(time.FixedZone("", i*3600))}))
		}
		for _, ev := range evs {
			want, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := eventJSON(ev)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("eventJSON:\n%s\nwant\n%s", got, want)
			}
		}
	}
}

// TestDeliveryOutcomeIsHOT delivers events on PostgreSQL and expects every
// update of their deliveries to have been HOT (migration 00016): an
// outcome writes no index entry. An index on a column the outcome changes
// (state, say), or a fillfactor that leaves no room in the page, fails it.
func TestDeliveryOutcomeIsHOT(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	ctx := t.Context()
	recv := newCountingReceiver(t)
	s := New(Deps{DB: db, Secrets: testBox(t), Log: slog.New(slog.DiscardHandler)},
		Config{AllowPrivateSandbox: true, Concurrency: 8})
	acct, cos := seedAccount(t, db, 1)
	ep, err := s.CreateWebhookEndpoint(ctx, usecase.Caller{Principal: &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox}},
		CreateWebhookEndpoint{URL: recv.srv.URL, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	recv.secret.Store(*ep.Secret)
	const n = 100
	writeEvents(t, db, acct, cos[0], auth.EnvSandbox, n)
	r := jobs.NewRunner(db, jobs.Config{Workers: 2 * WebhookBatch, PollInterval: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	s.RegisterJobs(r)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every delivery succeeded", func() bool {
		var done int64
		if err := db.WriteDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'succeeded'`).Scan(&done); err != nil {
			t.Fatal(err)
		}
		return done == n
	})
	if err := r.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// A backend reports its counts when it has been idle a while, or when
	// it exits: the idle connections are closed so that they do.
	db.WriteDB().SetMaxIdleConns(0)
	db.WriteDB().SetMaxIdleConns(2)
	var upd, hot int64
	waitFor(t, "the updates counted", func() bool {
		if err := db.WriteDB().QueryRowContext(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
WHERE relname = 'webhook_deliveries'`).Scan(&upd, &hot); err != nil {
			t.Fatal(err)
		}
		return upd >= n
	})
	if upd != n || hot != upd {
		t.Fatalf("webhook_deliveries: %d updates, %d of them HOT; want %d, all HOT", upd, hot, n)
	}
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
