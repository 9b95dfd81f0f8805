package ujpturns_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpturns"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func open(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// waitRow waits until waiter is in the queue of key.
func waitRow(t *testing.T, db *store.DB, key, waiter string) {
	t.Helper()
	waitRowOr(t, db, key, waiter, func() bool { return false })
}

// waitRowOr is waitRow that also ends when done reports true.
func waitRowOr(t *testing.T, db *store.DB, key, waiter string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if done() {
			return
		}
		var n int
		if err := db.ReadDB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM ujp_waiters WHERE key = $1 AND waiter = $2", key, waiter).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s never queued", waiter)
}

// TestTurnsByPriorityThenFIFO: while the user's turn is not due, calls of
// every priority queue up; they then go one a spacing apart, the highest
// priority first and, within a priority, in the order they came — whichever
// of two processes (two stores on one database) each waits in.
func TestTurnsByPriorityThenFIFO(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		dbs := []*store.DB{open(t, url), open(t, url)}
		cfg := ujpturns.Config{Interval: 30 * time.Millisecond, Margin: -1}
		turns := []*ujpturns.Turns{ujpturns.New(dbs[0], cfg), ujpturns.New(dbs[1], cfg)}
		ctx := context.Background()
		const key = "sandbox/EUJP-1"
		// The user's next turn is a while away, as after UJP's E4007.
		if err := turns[0].Defer(ctx, key, time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		callers := []struct {
			name string
			pri  ujp.Priority
			due  time.Duration // how long ago its work came due (WithWaiter); 0: when it asks
		}{
			{"codelist-1", ujp.PriorityCodeList, 0}, {"read-1", ujp.PriorityRead, 0}, {"send-1", ujp.PrioritySend, 0},
			{"pdf-1", ujp.PriorityPDF, 0}, {"read-2", ujp.PriorityRead, 0}, {"send-2", ujp.PrioritySend, 0},
			{"decision-1", ujp.PriorityDecision, 0}, {"background-1", ujp.PriorityBackground, 0}, {"send-3", ujp.PrioritySend, 0},
			// Asks last, but its work was due a minute ago (a company's
			// only document): it goes before the sends waiting since.
			{"send-due-earlier", ujp.PrioritySend, time.Minute},
		}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		for i, c := range callers {
			wg.Go(func() {
				ctx := ctx
				if c.due > 0 {
					ctx = ujp.WithWaiter(ctx, c.name, time.Now().Add(-c.due))
				}
				// Recorded as the turn is taken, in its transaction: a
				// turn taken early returns when it is due, and on a
				// loaded machine that timer may fire after the next
				// turn's.
				ctx = ujp.WithTurnWork(ctx, func(context.Context, any) error {
					mu.Lock()
					order = append(order, c.name)
					mu.Unlock()
					return nil
				})
				if err := turns[i%2].Take(ctx, key, c.pri, c.name, 20*time.Second); err != nil {
					t.Error(c.name, err)
				}
			})
			waitRow(t, dbs[0], key, c.name)
			time.Sleep(2 * time.Millisecond) // distinct since
		}
		wg.Wait()
		want := "send-due-earlier,send-1,send-2,send-3,decision-1,read-1,read-2,pdf-1,codelist-1,background-1"
		if got := strings.Join(order, ","); got != want {
			t.Fatalf("turns went %s, want %s", got, want)
		}
		var left int
		if err := dbs[0].ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM ujp_waiters").Scan(&left); err != nil || left != 0 {
			t.Fatalf("%d waiters left (%v)", left, err)
		}
	})
}

// TestTurnsExclusiveAcrossProcesses: calls of one user from two processes
// never start closer than the spacing: n turns take at least n-1 spacings.
func TestTurnsExclusiveAcrossProcesses(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		const spacing = 25 * time.Millisecond
		const perProcess = 10
		cfg := ujpturns.Config{Interval: spacing, Margin: -1}
		a, b := ujpturns.New(open(t, url), cfg), ujpturns.New(open(t, url), cfg)
		var mu sync.Mutex
		var taken []time.Time
		var wg sync.WaitGroup
		for i := range 2 * perProcess {
			turns := a
			if i%2 == 1 {
				turns = b
			}
			wg.Go(func() {
				if err := turns.Take(context.Background(), "production/EUJP-9", ujp.PrioritySend, fmt.Sprint("w", i), 30*time.Second); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				taken = append(taken, time.Now())
				mu.Unlock()
			})
		}
		// Another user is not held up by them: its turn comes before
		// theirs are all done.
		if err := a.Take(context.Background(), "production/EUJP-OTHER", ujp.PriorityRead, "o", 5*time.Second); err != nil {
			t.Fatal(err)
		}
		otherAt := time.Now()
		wg.Wait()
		if len(taken) != 2*perProcess {
			t.Fatalf("%d turns", len(taken))
		}
		first, last := taken[0], taken[0]
		for _, x := range taken {
			if x.Before(first) {
				first = x
			}
			if x.After(last) {
				last = x
			}
		}
		if !otherAt.Before(last) {
			t.Errorf("another user's turn came after all %d of the busy user's", len(taken))
		}
		// The last turn started at least 2n-1 spacings after the first;
		// the first's own return may have been late by up to one.
		if span, least := last.Sub(first), time.Duration(2*perProcess-2)*spacing; span < least {
			t.Fatalf("%d turns in %s; at one per %s they take at least %s", len(taken), span, spacing, least)
		}
	})
}

// TestBusyKeepsThePlace: a call that cannot have a turn soon gets a
// BusyError saying when to ask again, holds nobody up meanwhile, and,
// asking again, goes before a call of its priority that came after it.
func TestBusyKeepsThePlace(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		turns := ujpturns.New(db, ujpturns.Config{Interval: 20 * time.Millisecond, Margin: -1})
		ctx := context.Background()
		const key = "sandbox/EUJP-2"
		if err := turns.Defer(ctx, key, time.Now().Add(400*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		err := turns.Take(ctx, key, ujp.PrioritySend, "early", 10*time.Millisecond)
		var busy *ujp.BusyError
		if !errors.As(err, &busy) || busy.RetryIn < 100*time.Millisecond || busy.RetryIn > time.Second || !ujp.Retryable(err) {
			t.Fatalf("busy: %v", err)
		}
		// A lower priority is not held up by the send that gave up.
		if err := turns.Take(ctx, key, ujp.PriorityCodeList, "lists", 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := turns.Defer(ctx, key, time.Now().Add(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		for _, w := range []string{"late", "early"} {
			wg.Go(func() {
				if err := turns.Take(ctx, key, ujp.PrioritySend, w, 5*time.Second); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, w)
				mu.Unlock()
			})
			// Queued; or, on a machine so loaded that the deferred turn
			// came before this looked, gone with its turn (a waiter
			// whose turn is due takes it without queueing).
			waitRowOr(t, db, key, w, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return slices.Contains(order, w)
			})
		}
		wg.Wait()
		if got := strings.Join(order, ","); got != "early,late" {
			t.Fatalf("order %s: the send that asked first lost its place", got)
		}
	})
}

// TestHeldTurn: a turn taken ahead of its call holds the user's next turn
// back until the call starts, and only a spacing after it.
func TestHeldTurn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const spacing = 30 * time.Millisecond
		turns := ujpturns.New(db, ujpturns.Config{Interval: spacing, Margin: -1})
		ctx := context.Background()
		const key = "sandbox/EUJP-3"
		if err := turns.Take(ctx, key, ujp.PrioritySend, "sender", time.Second); err != nil {
			t.Fatal(err)
		}
		if err := turns.Hold(ctx, key, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got := make(chan time.Time, 1)
		go func() {
			if err := turns.Take(ctx, key, ujp.PriorityRead, "reader", 5*time.Second); err != nil {
				t.Error(err)
			}
			got <- time.Now()
		}()
		time.Sleep(200 * time.Millisecond) // the held call is slow to start
		select {
		case <-got:
			t.Fatal("a turn went while the held call had not started")
		default:
		}
		started := time.Now()
		if err := turns.Start(ctx, key); err != nil {
			t.Fatal(err)
		}
		at := <-got
		if d := at.Sub(started); d < spacing || d > time.Second {
			t.Fatalf("the next turn came %s after the held call started", d)
		}
	})
}

// TestWorkCommitsWithTheTurn: work on the context (ujp.WithTurnWork) runs
// in the transaction that takes the turn: what it writes commits with the
// turn, and the next turn is a spacing after it without a hold or a start.
// Work that fails leaves the turn untaken and writes nothing: the next
// caller goes at once.
func TestWorkCommitsWithTheTurn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const spacing = 40 * time.Millisecond
		turns := ujpturns.New(db, ujpturns.Config{Interval: spacing, Margin: -1})
		ctx := context.Background()
		const key = "sandbox/EUJP-WORK"
		// The work writes a waiter row of its own, standing for the
		// caller's record of its call (a document moving to submitting).
		mark := func(name string, fail error) ujp.TurnWork {
			return func(ctx context.Context, tx any) error {
				stx, ok := tx.(*store.Tx)
				if !ok {
					return fmt.Errorf("tx is %T", tx)
				}
				at := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
				if err := stx.PutUJPWaiter(ctx, dbq.PutUJPWaiterParams{Key: "mark/" + key, Waiter: name, Since: at, SeenAt: at}); err != nil {
					return err
				}
				return fail
			}
		}
		marked := func(name string) bool {
			var n int
			if err := db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM ujp_waiters WHERE key = $1 AND waiter = $2", "mark/"+key, name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		refused := errors.New("moved by another worker")
		before := db.Now().Add(-time.Millisecond)
		if err := turns.Take(ujp.WithTurnWork(ctx, mark("failed", refused)), key, ujp.PrioritySend, "a", time.Second); !errors.Is(err, refused) {
			t.Fatalf("failing work: %v", err)
		}
		if marked("failed") {
			t.Fatal("the failed work's write committed")
		}
		var until time.Time
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT until FROM ujp_slots WHERE key = $1", key).Scan(&until); err != nil {
			t.Fatal(err)
		}
		if until.After(before) {
			t.Fatalf("the failed work's turn was taken: the next is due at %s", until)
		}
		took := time.Now() // the turn is taken after this
		if err := turns.Take(ujp.WithTurnWork(ctx, mark("sent", nil)), key, ujp.PrioritySend, "b", time.Second); err != nil {
			t.Fatal(err)
		}
		turns.Begin(ctx, key, "ServerTime")
		if !marked("sent") {
			t.Fatal("the work did not commit with its turn")
		}
		if err := turns.Take(ctx, key, ujp.PriorityRead, "c", time.Second); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(took); d < spacing-5*time.Millisecond {
			t.Fatalf("the next turn came %s after the work's, want a spacing (%s)", d, spacing)
		}
	})
}

// TestTurnSpacedFromItsCall: a turn taken while the store keeps writers
// waiting (another writer holds the user's row, or SQLite's database)
// counts, on SQLite (one process), from when it was due, so the wait is
// not added to every turn of the user; on PostgreSQL, shared by processes,
// from when it was really taken, as a turn held ahead of its call (Start)
// counts from its start, and the call made on it, written after the wait,
// pushes the user's next turn to a spacing after it went out, which is
// what another process goes by.
func TestTurnSpacedFromItsCall(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		db := open(t, url)
		const spacing = 100 * time.Millisecond
		turns := ujpturns.New(db, ujpturns.Config{Interval: spacing, Margin: -1})
		ctx := context.Background()
		const key = "sandbox/EUJP-BUSY"
		// The slot exists (a first turn), and is due again.
		if err := turns.Take(ctx, key, ujp.PriorityRead, "first", time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(spacing)
		until := func() time.Time {
			slot, err := db.Reader().GetUJPSlot(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			return slot.Until
		}
		for _, step := range []struct {
			name string
			run  func() error
		}{
			{"take", func() error { return turns.Take(ctx, key, ujp.PriorityRead, "second", 5*time.Second) }},
			{"start", func() error { return turns.Start(ctx, key) }},
		} {
			// Another writer holds the slot's row (the database, on
			// SQLite) for a while: longer than a loaded -race run delays
			// a caller (over half a second seen).
			locked, release := make(chan struct{}), make(chan struct{})
			go func() {
				_ = db.InTx(ctx, func(tx *store.Tx) error {
					if err := tx.LockUJPSlot(ctx, key); err != nil {
						return err
					}
					close(locked)
					<-release
					return nil
				})
			}()
			<-locked
			asked := time.Now()
			time.AfterFunc(1500*time.Millisecond, func() { close(release) })
			if err := step.run(); err != nil {
				t.Fatal(err)
			}
			took := time.Now()
			switch got := until(); {
			case step.name == "take" && db.Dialect() == store.SQLite:
				// One process: counted from when it was due, not after
				// the store's wait.
				if got.Sub(asked) > spacing+time.Second {
					t.Fatalf("take: the next turn is at %s, %s after the ask; the store's wait was added to the turn",
						got.Format("15:04:05.000"), got.Sub(asked))
				}
			default:
				// Shared by processes (and a held turn's start): counted
				// from when it was really taken.
				if lag := took.Add(spacing).Sub(got); lag > time.Second {
					t.Fatalf("%s: the next turn is at %s, %s before a spacing after the turn was taken", step.name, got.Format("15:04:05.000"), lag)
				}
			}
			c := turns.Begin(ctx, key, "ServerTime")
			c.Out()
			c.Wrote()
			wrote := time.Now()
			c.Done()
			if db.Dialect() == store.SQLite {
				// One process: Begin spaces its next call.
				time.Sleep(spacing)
				continue
			}
			// The call went out after the wait: the next turn is a
			// spacing after it (pushed in the background).
			deadline := time.Now().Add(10 * time.Second)
			for until().Before(wrote.Add(spacing).Add(-5 * time.Millisecond)) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: the next turn is at %s, before a spacing after the call went out at %s", step.name,
						until().Format("15:04:05.000"), wrote.Format("15:04:05.000"))
				}
				time.Sleep(2 * time.Millisecond)
			}
			time.Sleep(spacing)
		}
	})
}

// TestCallsOfOneProcessStartASpacingApart: the calls a process makes as one
// user go out a spacing apart in real time, even when the store's clock
// says the next turn is due sooner (a commit the store delayed moves a
// call's real start later than the time the slot recorded).
func TestCallsOfOneProcessStartASpacingApart(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const spacing = 80 * time.Millisecond
		var skew atomic.Int64
		turns := ujpturns.New(db, ujpturns.Config{Interval: spacing, Margin: -1,
			Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
		ctx := context.Background()
		const key = "sandbox/EUJP-LOCAL"
		for _, held := range []bool{false, true} {
			if err := turns.Take(ctx, key, ujp.PrioritySend, "a", time.Second); err != nil {
				t.Fatal(err)
			}
			if held {
				if err := turns.Hold(ctx, key, time.Now().Add(time.Minute)); err != nil {
					t.Fatal(err)
				}
				if err := turns.Start(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			call := turns.Begin(ctx, key, "ServerTime")
			call.Out()
			first := time.Now()
			call.Done()
			// The store's clock jumps a spacing: its slot is due at once.
			skew.Add(int64(spacing))
			if err := turns.Take(ctx, key, ujp.PrioritySend, "b", time.Second); err != nil {
				t.Fatal(err)
			}
			next := turns.Begin(ctx, key, "ServerTime")
			next.Out()
			if d := time.Since(first); d < spacing-time.Millisecond {
				t.Fatalf("held %v: the next call of the process started %s after the last, want at least %s", held, d, spacing)
			}
			next.Done()
			skew.Add(int64(spacing))
		}
	})
}

// TestCallsGoASpacingAfterTheLastWentOut: many callers of one user in one
// process, some held up between their turn and the wire for longer than the
// margin, on both ways a call begins (a turn taken, a turn taken with
// work): each call goes out at least a spacing after the one before it
// really went out, as UJP stamps arrivals; a call whose transport writes
// it later than it was handed over moves the next one later with it.
//
// Not parallel: its sixteen waiters polling the store under -race slowed
// the order tests beside it past their one-second queueing.
func TestCallsGoASpacingAfterTheLastWentOut(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const spacing = 30 * time.Millisecond
		turns := ujpturns.New(db, ujpturns.Config{Interval: spacing, Margin: -1})
		ctx := context.Background()
		const key = "sandbox/EUJP-OUT"
		var mu sync.Mutex
		var out []time.Time
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				tctx := ctx
				if i%2 == 1 {
					tctx = ujp.WithTurnWork(ctx, func(context.Context, any) error { return nil })
				}
				if err := turns.Take(tctx, key, ujp.PrioritySend, fmt.Sprint("w", i), time.Minute); err != nil {
					t.Error(err)
					return
				}
				call := turns.Begin(ctx, key, "ServerTime")
				call.Out()
				if i%3 == 0 {
					// Held up on its way: written a spacing and a
					// half after it was handed over.
					time.Sleep(spacing + spacing/2)
				}
				at := time.Now() // what the transport reports next
				call.Wrote()
				mu.Lock()
				out = append(out, at)
				mu.Unlock()
				call.Done()
			})
		}
		wg.Wait()
		slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(out); i++ {
			if gap := out[i].Sub(out[i-1]); gap < spacing {
				t.Errorf("calls %d and %d went out %s apart, want at least %s", i, i+1, gap, spacing)
			}
		}
	})
}

// TestLateCallPushesTheNextTurn: on PostgreSQL, which several processes
// share, a call that goes out later than the margin after its turn
// was taken moves the user's next turn in the store to a spacing after it
// went out, so another process (another Turns on the database) waits for
// it; a call on time leaves the turn where it was. (SQLite has one
// process, whose calls Begin spaces.)
func TestLateCallPushesTheNextTurn(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		if !strings.HasPrefix(url, "postgres") {
			t.Skip("one process on SQLite: nothing to push for")
		}
		ctx := context.Background()
		var mu sync.Mutex
		now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		const interval, margin = 100 * time.Millisecond, 20 * time.Millisecond
		cfg := ujpturns.Config{Interval: interval, Margin: margin, Now: clock}
		dbA, dbB := open(t, url), open(t, url)
		a, b := ujpturns.New(dbA, cfg), ujpturns.New(dbB, cfg)
		const key = "sandbox/EUJP-LATE"
		until := func() time.Time {
			slot, err := dbA.Reader().GetUJPSlot(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			return slot.Until.UTC()
		}
		waitUntil := func(want time.Time) {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for !until().Equal(want) {
				if time.Now().After(deadline) {
					t.Fatalf("next turn at %s, want %s", until().Format("15:04:05.000"), want.Format("15:04:05.000"))
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		spacing := interval + margin

		// On time: written 5 ms after the turn, within the margin.
		if err := a.Take(ctx, key, ujp.PrioritySend, "on-time", time.Second); err != nil {
			t.Fatal(err)
		}
		taken := clock()
		advance(5 * time.Millisecond)
		c := a.Begin(ctx, key, "ServerTime")
		c.Out()
		c.Wrote()
		c.Done()
		// Another call of the same process would be spaced by Begin; a
		// late push would show as a later turn in the store.
		if got := until(); !got.Equal(taken.Add(spacing)) {
			t.Fatalf("a call on time moved the next turn to %s, want %s", got.Format("15:04:05.000"), taken.Add(spacing).Format("15:04:05.000"))
		}

		// Late: written 50 ms after its turn.
		advance(spacing)
		if err := a.Take(ctx, key, ujp.PrioritySend, "late", time.Second); err != nil {
			t.Fatal(err)
		}
		advance(50 * time.Millisecond)
		c = a.Begin(ctx, key, "ServerTime")
		c.Out()
		c.Wrote()
		wrote := clock()
		c.Done()
		waitUntil(wrote.Add(spacing))
		// A spacing after the turn (not after the call), the other
		// process finds the user's turn not yet due.
		advance(spacing - 50*time.Millisecond + time.Millisecond)
		var busy *ujp.BusyError
		if err := b.Take(ctx, key, ujp.PrioritySend, "other-process", 0); !errors.As(err, &busy) {
			t.Fatalf("the other process took a turn within the window of the late call: %v", err)
		}
		advance(50 * time.Millisecond)
		if err := b.Take(ctx, key, ujp.PrioritySend, "other-process", time.Second); err != nil {
			t.Fatalf("a spacing after the late call: %v", err)
		}
	})
}
