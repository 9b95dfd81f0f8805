package codelists

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
)

// listsGateway serves code lists: a copy of lists at each read.
type listsGateway struct {
	ujp.Gateway
	mu    sync.Mutex
	lists *ujpdoc.Codebooks
	reads int
}

func (g *listsGateway) Codebooks(context.Context, ujp.Identity) (*ujpdoc.Codebooks, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reads++
	cb := *g.lists
	return &cb, nil
}

func (g *listsGateway) serve(cb *ujpdoc.Codebooks) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lists = cb
}

// TestCodeListChanges: UJP's lists are compared with the last ones
// recorded; a change is recorded once however many processes read it
// (and not again after a restart), told to every company of the
// environment as codelists.changed, and every process validates with the
// new lists within Config.Reload.
func TestCodeListChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		var sandbox []string
		for i := range 2 {
			c, err := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvSandbox, einvoicingtest.TaxNumber("40300002", i))
			if err != nil {
				t.Fatal(err)
			}
			sandbox = append(sandbox, c.CompanyID)
		}
		if _, err := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvProduction, einvoicingtest.TaxNumber("40300002", 7)); err != nil {
			t.Fatal(err)
		}
		gw := &listsGateway{lists: ujpdoc.Snapshot()}
		process := func() *Service {
			return New(withEvents(Deps{DB: db, Log: slog.New(slog.DiscardHandler), Gateways: map[string]ujp.Gateway{auth.EnvSandbox: gw},
				Operators: map[string]ujp.Identity{auth.EnvSandbox: {EUJPID: "OPERATOR", EDB: "4030000000001"}}}),
				Config{Reload: 20 * time.Millisecond})
		}
		a, b := process(), process()
		if cb := b.Lists(auth.EnvSandbox); cb != b.snapshot() {
			t.Fatal("lists before any was recorded are not the snapshot")
		}

		// UJP's lists as published: the snapshot's; recorded, no change.
		if ch, err := a.RefreshCodeLists(ctx, auth.EnvSandbox); err != nil || ch != nil {
			t.Fatalf("first read: %+v, %v", ch, err)
		}
		_, st := a.recordedLists(auth.EnvSandbox)
		if st.Version != 1 || !st.Lists[ujpdoc.CBTaxIndicators].Live {
			t.Fatalf("recorded state: %+v", st)
		}

		// UJP changes its lists; two processes read them at once.
		gw.serve(einvoicingtest.ChangedLists())
		changes := make(chan *CodeListChange, 2)
		var wg sync.WaitGroup
		for _, p := range []*Service{a, b} {
			wg.Go(func() {
				ch, err := p.RefreshCodeLists(ctx, auth.EnvSandbox)
				if err != nil {
					t.Error(err)
				}
				changes <- ch
			})
		}
		wg.Wait()
		close(changes)
		var change *CodeListChange
		for ch := range changes {
			if ch != nil {
				if change != nil {
					t.Fatal("the change was recorded twice")
				}
				change = ch
			}
		}
		if change == nil {
			t.Fatal("the change was not recorded")
		}
		const want = "document-types: changed 100 (name) · payment-types: removed P13 · tax-indicators: added DDV-14-3-10 · " +
			"document-type-tax-indicators: added 100/DDV-14-3-10"
		if change.Summary != want || change.Environment != auth.EnvSandbox {
			t.Fatalf("change: %s", change.Summary)
		}

		// A restarted process reads the same lists: nothing new.
		if ch, err := process().RefreshCodeLists(ctx, auth.EnvSandbox); err != nil || ch != nil {
			t.Fatalf("after a restart: %+v, %v", ch, err)
		}

		// One event per company of the environment, none elsewhere.
		rows, err := db.ReadDB().QueryContext(ctx, `SELECT company_id, environment, object_id, payload FROM events WHERE type = $1 ORDER BY company_id`,
			webhooks.EventCodeListsChanged)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var co, env, obj, payload string
			if err := rows.Scan(&co, &env, &obj, &payload); err != nil {
				t.Fatal(err)
			}
			var data struct{ Object CodeListChange }
			if err := json.Unmarshal([]byte(payload), &data); err != nil || data.Object.ID != change.ID || obj != change.ID ||
				env != auth.EnvSandbox || len(data.Object.Lists) != 4 || data.Object.Lists[1].Removed[0].Code != "P13" {
				t.Errorf("event of %s: %s (%v)", co, payload, err)
			}
			got = append(got, co)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		slices.Sort(sandbox)
		if !slices.Equal(got, sandbox) {
			t.Fatalf("events for %v, want one for each of %v", got, sandbox)
		}

		// Every process validates with the new lists: b, which did not
		// record the change, within Config.Reload.
		deadline := time.Now().Add(10 * time.Second)
		for {
			cb := b.Lists(auth.EnvSandbox)
			_, p13 := cb.Lookup(ujpdoc.CBPaymentTypes, "P13")
			dt, _ := cb.DocumentType("100")
			if !p13 && dt.Name == "Општа Фактура" && cb.IndicatorAllowed("100", "DDV-14-3-10") && !cb.IndicatorAllowed("110", "DDV-14-3-10") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process b still validates with the old lists: P13 %v, 100 %q", p13, dt.Name)
			}
			time.Sleep(10 * time.Millisecond)
		}
		_, st = b.recordedLists(auth.EnvSandbox)
		if st.Version != 2 || st.Lists[ujpdoc.CBPaymentTypes].Since.Equal(st.Lists[ujpdoc.CBCountries].Since) {
			t.Errorf("state after the change: version %d, payment types since %s, countries since %s", st.Version,
				st.Lists[ujpdoc.CBPaymentTypes].Since, st.Lists[ujpdoc.CBCountries].Since)
		}
	})
}

// TestCodeListJobs: the code-list job is registered, as a typed job, for
// each environment with a gateway and an operator, under the kinds stored
// before jobs were typed (ujp.codelists.<environment>); a job of that kind
// as stored then (a periodic one, without arguments) reads and records the
// environment's lists, and only that environment's.
func TestCodeListJobs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		gw := &listsGateway{lists: ujpdoc.Snapshot()}
		op := ujp.Identity{EUJPID: "OPERATOR", EDB: "4030000000001"}
		for _, c := range []struct {
			gateways  map[string]ujp.Gateway
			operators map[string]ujp.Identity
			want      []string
		}{
			{map[string]ujp.Gateway{auth.EnvSandbox: gw, auth.EnvProduction: gw}, map[string]ujp.Identity{auth.EnvSandbox: op, auth.EnvProduction: op},
				[]string{"ujp.codelists.production", "ujp.codelists.sandbox"}},
			{map[string]ujp.Gateway{auth.EnvSandbox: gw, auth.EnvProduction: gw}, map[string]ujp.Identity{auth.EnvSandbox: op},
				[]string{"ujp.codelists.sandbox"}},
			{map[string]ujp.Gateway{auth.EnvProduction: gw}, map[string]ujp.Identity{auth.EnvSandbox: op, auth.EnvProduction: op},
				[]string{"ujp.codelists.production"}},
		} {
			s := New(withEvents(Deps{DB: db, Log: slog.New(slog.DiscardHandler), Gateways: c.gateways, Operators: c.operators}), Config{})
			r := jobs.NewRunner(db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
			s.RegisterJobs(r)
			if got := r.Kinds(); !slices.Equal(got, c.want) {
				t.Fatalf("kinds %v, want %v", got, c.want)
			}
		}

		s := New(withEvents(Deps{DB: db, Log: slog.New(slog.DiscardHandler), Gateways: map[string]ujp.Gateway{auth.EnvSandbox: gw, auth.EnvProduction: gw},
			Operators: map[string]ujp.Identity{auth.EnvSandbox: op, auth.EnvProduction: op}}), Config{})
		r := jobs.NewRunner(db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
		s.RegisterJobs(r)
		var job int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			e, err := jobs.Enqueue(ctx, tx, jobs.Spec{Kind: "ujp.codelists.production", UniqueKey: "periodic:ujp.codelists.production"})
			job = e.ID
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n, err := r.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("ran %d jobs: %v", n, err)
		}
		if j, err := db.Reader().GetJob(ctx, job); err != nil || j.State != jobs.StateCompleted {
			t.Fatalf("the job as stored before jobs were typed: %+v %v", j, err)
		}
		if _, st := s.recordedLists(auth.EnvProduction); st.Version != 1 {
			t.Fatalf("production lists after its job: %+v", st)
		}
		if _, err := db.Reader().GetUJPCodeListsState(ctx, auth.EnvSandbox); err == nil {
			t.Fatal("the production job recorded the sandbox lists")
		}
	})
}
