package einvoiceapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestJustInTimeSigning: a backlog of documents of one signer is signed at
// the pace its UJP budget sends them. Issued at once, only SignAhead of
// them get a signing request; the others wait in awaiting_signature
// without one, and GET tells each where it stands. As sends complete, the
// next are asked for, so every signature is fresh when sent: with a
// re-sign age far below the time the whole backlog takes, no document is
// signed twice, and every one is delivered.
func TestJustInTimeSigning(t *testing.T) {
	t.Parallel()
	const ahead = 8
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel() // the two stores' backlogs at once: minutes each under -race
		// The backlog of 1,000 runs on PostgreSQL, where several processes
		// share the turns; on SQLite, whose single writer makes each send
		// several times slower under -race (five minutes for 1,000 in CI),
		// 300 show the same pacing: 8 requests at issue, none signed twice.
		n := 1000
		if db.Dialect() == store.SQLite {
			n = 300
		}
		if testing.Short() {
			n = 150
		}
		e := newPipeEnvWith(t, db, func(c *appConfig) {
			c.Pipeline.SignAhead = ahead
			// The backlog takes n sends of at least 50 ms each (the
			// window and the turn margin, then the PDF reads): signed
			// all at once, most of the 1,000 would be older than this
			// when their turn came, and signed again (past the 600th).
			// A paced document waits 8 sends: 30 s leaves room for a
			// loaded -race run, where a send has taken over a second.
			// (With -short's 150 the test shows the mechanism, not the
			// need.)
			c.Pipeline.ResignAfter = 30 * time.Second
		})
		ids := make([]string, n)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 4 {
					ids[i] = e.issue(fmt.Sprintf("JIT-%04d", i))
				}
			}()
		}
		wg.Wait()
		if got := e.documentRequests(); got != ahead {
			t.Fatalf("%d document signing requests after issuing %d, want %d (SignAhead)", got, n, ahead)
		}
		// The newest waits for its turn, everything else ahead of it.
		var last string
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT id FROM einvoices ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&last); err != nil {
			t.Fatal(err)
		}
		m := e.einvoice(last)
		q, _ := m["queue"].(map[string]any)
		if m["status"] != "awaiting_signature" || m["signingRequestId"] != nil || q["signing"] != "waiting_for_turn" || q["position"] != float64(n-1) {
			t.Fatalf("the last of %d: status %v, request %v, queue %v", n, m["status"], m["signingRequestId"], q)
		}

		ctx, cancel := context.WithCancel(t.Context())
		if err := e.runner.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cancel()
			_ = e.runner.Stop(context.Background())
		}()
		deadline := time.Now().Add(8 * time.Minute)
		maxOpen := 0
		for e.delivered() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d delivered", e.delivered(), n)
			}
			maxOpen = max(maxOpen, e.openDocumentRequests())
			if e.signAll() == 0 {
				e.agentWait()
			}
		}
		cancel()
		_ = e.runner.Stop(context.Background())
		for _, id := range []string{ids[0], ids[n/2], ids[n-1]} {
			if m := e.einvoice(id); m["status"] != "delivered" || m["queue"] != nil {
				t.Errorf("%s: status %v, queue %v", id, m["status"], m["queue"])
			}
		}
		if got := e.documentRequests(); got != n {
			t.Errorf("%d document signing requests for %d documents: signed again", got, n)
		}
		if maxOpen > ahead {
			t.Errorf("up to %d signing requests open at once, want at most %d", maxOpen, ahead)
		}
		if s := e.sends(); s != n {
			t.Errorf("%d sends for %d documents", s, n)
		}
		e.noRateLimit()
	})
}

// documentRequests counts the document signing requests of e-invoices.
func (e *pipeEnv) documentRequests() int {
	e.t.Helper()
	var n int
	if err := e.db.ReadDB().QueryRowContext(e.t.Context(), `SELECT COUNT(*) FROM signing_requests
		WHERE purpose = 'document' AND link_type = 'einvoice'`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// openDocumentRequests counts the document signing requests not yet signed.
func (e *pipeEnv) openDocumentRequests() int {
	e.t.Helper()
	var n int
	if err := e.db.ReadDB().QueryRowContext(e.t.Context(), `SELECT COUNT(*) FROM signing_requests
		WHERE purpose = 'document' AND link_type = 'einvoice' AND state IN ('pending', 'claimed')`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// delivered counts the delivered e-invoices.
func (e *pipeEnv) delivered() int {
	e.t.Helper()
	var n int
	if err := e.db.ReadDB().QueryRowContext(e.t.Context(), `SELECT COUNT(*) FROM einvoices WHERE status = 'delivered'`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// agentWait is the agent's long poll: it returns when a request is
// pending for it, or after a second.
func (e *pipeEnv) agentWait() {
	e.t.Helper()
	se := &signEnv{t: e.t, db: e.db, srv: e.srv}
	if st, m := se.do("GET", "/v1/agents/"+e.agent+"/signing-requests?wait=1", e.authz, nil); st != 200 {
		e.t.Fatalf("agent poll: %d %v", st, m)
	}
}

// TestBacklogWaitsWithoutWorkers: a signer's batch of signatures makes
// its sends due at once, but only the few nearest their turn wait in the
// user's queue holding a worker; the others give their workers back until
// they are near, so a backlog of one user does not take the workers the
// sends of other users need. All are delivered, each sent once.
func TestBacklogWaitsWithoutWorkers(t *testing.T) {
	t.Parallel()
	const n, workers = 24, 12
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// A window of 200 ms: the refused call's answer, and its
		// client's Defer, come back before the next turn even on a
		// loaded machine (at 20 ms, sends whose turns came while the
		// refused call was out went before it, rightly: the client
		// did not know yet).
		e := newPipeEnvWith(t, db, func(c *appConfig) { c.Pipeline.SignAhead = n }, withWindow(200*time.Millisecond))
		for i := range n {
			e.issue(fmt.Sprintf("LEAD-%02d", i))
		}
		if got := e.signAll(); got != n {
			t.Fatalf("signed %d, want %d", got, n)
		}
		most := 0
		e.runUntilDelivered(workers, n, func() {
			// Waiting for a turn now: the waiters still asking.
			var waiting int
			if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM ujp_waiters WHERE seen_at > $1`,
				e.now().Add(-900*time.Millisecond).UTC()).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			most = max(most, waiting)
		})
		// sendLead ahead, itself, and one that asked as its turn came.
		if limit := pipeline.SendLead + 2; most > limit {
			t.Errorf("up to %d sends waited in the user's queue holding a worker, want at most %d of %d workers", most, limit, workers)
		}
		if s := e.sends(); s != n {
			t.Errorf("%d sends for %d documents", s, n)
		}
		e.noRateLimit()
	})
}

// TestRateLimitedSendKeepsItsPlace: a send UJP refused for the rate
// (E4007) had its turn; it goes again before the sends that came due
// after it, not behind every one of them.
func TestRateLimitedSendKeepsItsPlace(t *testing.T) {
	t.Parallel()
	const n = 12
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnvWith(t, db, func(c *appConfig) { c.Pipeline.SignAhead = n })
		for i := range n {
			e.issue(fmt.Sprintf("RL-%02d", i))
		}
		if got := e.signAll(); got != n {
			t.Fatalf("signed %d, want %d", got, n)
		}
		var key string
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT pace_key FROM einvoices LIMIT 1`).Scan(&key); err != nil {
			t.Fatal(err)
		}
		_, eujp, _ := strings.Cut(key, "/")
		if err := e.sim.BurstRateLimit(t.Context(), eujp, 1); err != nil {
			t.Fatal(err)
		}
		e.runUntilDelivered(n, n, nil)
		// The refused one's rank among the deliveries.
		var rank int
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM einvoices
			WHERE delivered_at <= (SELECT e.delivered_at FROM einvoices e JOIN einvoice_status_history h ON h.einvoice_id = e.id WHERE h.ujp_code = 'E4007')`).Scan(&rank); err != nil {
			t.Fatal(err)
		}
		if rank > 3 {
			t.Errorf("the send refused with E4007 was delivered %d of %d, want among the first 3", rank, n)
		}
	})
}

// runUntilDelivered runs the application's jobs on a runner of its own
// with workers workers until n e-invoices are delivered, calling look (if
// set) between two looks at the count.
func (e *pipeEnv) runUntilDelivered(workers, n int, look func()) {
	e.t.Helper()
	r := jobs.NewRunner(e.db, jobs.Config{Workers: workers, Logger: slog.New(slog.DiscardHandler)})
	e.app.RegisterJobs(r)
	ctx, cancel := context.WithCancel(e.t.Context())
	if err := r.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = r.Stop(context.Background())
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for e.delivered() < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("%d of %d delivered", e.delivered(), n)
		}
		if look != nil {
			look()
		}
		time.Sleep(5 * time.Millisecond)
	}
}
