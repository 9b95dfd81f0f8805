// Package ujpturns keeps the turns of UJP users in the store, shared by
// every process on it: the ujp.Turns the gateway's client asks before each
// call. UJP allows each user (X-EUJP-ID) one request a second on every
// service (api-specification.txt:111), signed or not, so the calls of one
// user, whichever process makes them, start at least Spacing apart, and
// when several wait, the most urgent goes first (ujp.Priority: sends, then
// decisions, then status reads, then PDFs, then code lists); among equals,
// the one waiting longest.
//
// The state is two tables: ujp_slots, one row per user with the earliest
// start of its next call, and ujp_waiters, the calls waiting. Taking a turn
// is one conditional UPDATE of the user's row (it is due, and no fresh
// waiter goes first), so two processes never take the same turn on either
// engine. A waiter refreshes its row while it waits; one that stopped
// asking (its process died, it gave up) is passed over once its row is
// older than StaleAfter, and keeps its place for when it asks again. Work
// the caller records with its call (ujp.WithTurnWork: a document moving
// to submitting) is done in the transaction that takes the turn.
//
// Within one process the calls of a user also go out at least a spacing
// apart in real time, each counted from when the one before it really went
// out (Begin, ujp.Call): UJP counts a call from its arrival, and a call
// held up between its turn and the wire would otherwise arrive within the
// window of the next. On PostgreSQL a call of another process is spaced
// from the turn in the store, which a call that went out late pushes later
// (pushLate), the margin covering the rest. SQLite has one process, whose
// calls Begin spaces: there a turn counts from when it was due and may be
// taken a little early, so the writer queue of a busy store is not added
// to every turn.
package ujpturns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// DefaultMargin is added to the interval between the starts of two calls
// of one user: what separates the start we record from the moment UJP
// stamps the call's arrival (the network's jitter, a commit the store
// delays when two processes call as one user). DENAR_UJP_TURN_MARGIN sets
// it.
const DefaultMargin = 50 * time.Millisecond

// DefaultInterval is UJP's limit, one request a second per user: the
// default of DENAR_UJP_SIGNER_INTERVAL. Config.Interval itself has no
// default (zero spaces calls by the margin only, for tests).
const DefaultInterval = time.Second

// Config tunes Turns.
type Config struct {
	// Interval is the least time between the starts of two calls of one
	// user (DENAR_UJP_SIGNER_INTERVAL; UJP's limit is one a second).
	Interval time.Duration
	// Margin is added to Interval (default DefaultMargin; negative: none).
	Margin time.Duration
	// Now is the clock (default the store's).
	Now func() time.Time
	// Poll is how often a waiter looks again while the turn is not due
	// (default 20 ms).
	Poll time.Duration
	// StaleAfter is how long a waiter that stopped asking still holds its
	// place ahead of others (default 1 s); a waiter asks again every
	// StaleAfter/4 while it waits.
	StaleAfter time.Duration
}

// Turns is ujp.Turns on the store.
type Turns struct {
	db      *store.DB
	spacing time.Duration
	now     func() time.Time
	poll    time.Duration
	stale   time.Duration

	// last is the call of each user this process began last (Begin);
	// taken, when this process last took (or started) a turn of each user,
	// on the store's clock.
	mu    sync.Mutex
	last  map[string]*call
	taken map[string]time.Time
	// late is how long after its turn was taken a call may go out before
	// the user's next turn in the store is pushed later (the margin;
	// negative: never, on SQLite). early is how long before it is due a
	// turn may be taken.
	late, early time.Duration
	// margin is Config's; rtt is the least round trip of each key's
	// calls of an operation, as this process saw them (lateBy).
	margin time.Duration
	rtt    map[string]time.Duration
	// ensured: the keys whose slot exists; purged: when this process last
	// deleted a key's forgotten waiters.
	ensured map[string]bool
	purged  map[string]time.Time
}

var _ ujp.Turns = (*Turns)(nil)

// New returns the turns of the UJP users kept in db.
func New(db *store.DB, cfg Config) *Turns {
	switch {
	case cfg.Margin == 0:
		cfg.Margin = DefaultMargin
	case cfg.Margin < 0:
		cfg.Margin = 0
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 20 * time.Millisecond
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = time.Second
	}
	t := &Turns{db: db, spacing: max(cfg.Interval, 0) + cfg.Margin, now: cfg.Now, poll: cfg.Poll, stale: cfg.StaleAfter,
		last: map[string]*call{}, taken: map[string]time.Time{}, late: cfg.Margin,
		margin: cfg.Margin, rtt: map[string]time.Duration{},
		ensured: map[string]bool{}, purged: map[string]time.Time{}}
	// A turn may be taken a little before it is due (its call still
	// waits until then), so that the take's transaction (the store's
	// lock, the caller's work, the commit: tens of ms on a loaded
	// PostgreSQL) is not added to the user's turn.
	t.early = min(t.spacing/5, maxEarly)
	if db.Dialect() == store.SQLite {
		// One process: no turn needs pushing for another process.
		t.late = -1
	}
	if t.now == nil {
		t.now = func() time.Time { return db.Now() }
	}
	return t
}

// Spacing is the least time between the starts of two calls of one user.
func (t *Turns) Spacing() time.Duration { return t.spacing }

// dbTime is a time as stored: UTC (SQLite compares timestamps as text) and
// microseconds (what PostgreSQL keeps).
func dbTime(x time.Time) time.Time { return x.UTC().Truncate(time.Microsecond) }

// longAgo is when a new user's slot was last taken.
var longAgo = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// forgetAfter is when a waiter's row, not seen for that long, is deleted.
const forgetAfter = time.Hour

// Take implements ujp.Turns.
func (t *Turns) Take(ctx context.Context, key string, pri ujp.Priority, waiter string, wait time.Duration) error {
	if err := t.ensure(ctx, key); err != nil {
		return err
	}
	work := ujp.TurnWorkOf(ctx)
	now := t.now()
	since := dbTime(now)
	if s := ujp.WaitingSince(ctx); !s.IsZero() && s.Before(now) {
		since = dbTime(s) // its work came due earlier
	}
	queued := false // the waiter has a row in ujp_waiters
	if w, err := t.db.Reader().GetUJPWaiter(ctx, dbq.GetUJPWaiterParams{Key: key, Waiter: waiter}); err == nil {
		since, queued = w.Since, true // its place from an earlier ask
	} else if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("ujp turns %s: %w", key, err)
	}
	deadline := time.Now().Add(max(wait, 0)) // real time: the wait is the caller's
	var seen time.Time
	for {
		now = t.now()
		if now.Sub(seen) >= t.stale/4 {
			// It asks: it says so (and keeps saying so while it
			// waits), so that later askers go after it.
			if err := t.db.Writer().PutUJPWaiter(ctx, dbq.PutUJPWaiterParams{Key: key, Waiter: waiter, Priority: int32(pri),
				Since: since, SeenAt: dbTime(now)}); err != nil {
				return fmt.Errorf("ujp turns %s: %w", key, err)
			}
			seen, queued = now, true
		}
		slot, err := t.db.Reader().GetUJPSlot(ctx, key)
		if err != nil {
			return fmt.Errorf("ujp turns %s: %w", key, err)
		}
		if !slot.Until.After(now.Add(t.early)) && (slot.Holder != heldBy || !slot.Until.After(now)) {
			// Due since it was seen so, or due in a moment (early).
			due := now
			if slot.Until.After(due) {
				due = slot.Until
			}
			took, err := t.take(ctx, key, pri, waiter, since, queued, work, due)
			if err != nil {
				return err
			}
			if took {
				// Taken early: the call goes when the turn is due (a
				// Retry-After of UJP ends then too).
				if d := due.Sub(t.now()); d > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(d):
					}
				}
				return nil
			}
		}
		due := max(slot.Until.Sub(now), 0)
		if slot.Holder == heldBy {
			// A call about to start holds the slot: its next turn is a
			// spacing after it, not when the hold lapses.
			due = min(due, t.spacing)
		}
		left := time.Until(deadline)
		if due > left || left <= 0 {
			return t.busy(ctx, key, pri, waiter, since, now, now.Add(due))
		}
		sleep := min(max(due, time.Millisecond), t.poll, left)
		select {
		case <-ctx.Done():
			if queued {
				t.leave(key, waiter)
			}
			return &ujp.UnavailableError{Op: "Turn", Err: ctx.Err()}
		case <-time.After(sleep):
		}
	}
}

// ensure makes sure key has its slot (once per process and key).
func (t *Turns) ensure(ctx context.Context, key string) error {
	t.mu.Lock()
	ok := t.ensured[key]
	t.mu.Unlock()
	if ok {
		return nil
	}
	if err := t.db.Writer().EnsureUJPSlot(ctx, dbq.EnsureUJPSlotParams{Key: key, Until: longAgo}); err != nil {
		return fmt.Errorf("ujp turns %s: %w", key, err)
	}
	t.mu.Lock()
	t.ensured[key] = true
	t.mu.Unlock()
	return nil
}

// take tries to take the turn now, in one transaction with the waiter's
// leaving the queue and the caller's work, if any. due is when the waiter
// found the turn due.
func (t *Turns) take(ctx context.Context, key string, pri ujp.Priority, waiter string, since time.Time, queued bool, work ujp.TurnWork, due time.Time) (bool, error) {
	took := false
	var workErr error
	purge := t.purgeDue(key)
	err := t.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockUJPSlot(ctx, key); err != nil {
			return err
		}
		// Taken early (up to early before it is due), the turn starts when
		// it is due, and its call waits until then (Take). Taken late, on
		// PostgreSQL, which several processes share, the turn starts when
		// it is really taken: a writer kept waiting longer than the
		// margin, stamped before the wait, would start that much closer
		// to another process's next call than UJP allows. SQLite has one
		// process, whose calls Begin spaces from when each went out, so
		// there the turn starts when it was due even so: its writer queue
		// (busy at month-end) is then neither added to every turn of the
		// user nor between a turn and its call.
		now := t.now()
		start, at := now, now
		switch {
		case due.After(now):
			start, at = due, due
		case tx.Dialect == store.SQLite:
			start = due
		}
		n, err := tx.TakeUJPTurn(ctx, dbq.TakeUJPTurnParams{NextAt: dbTime(start.Add(t.spacing)), Waiter: waiter, Key: key,
			Now: dbTime(at), FreshAfter: dbTime(now.Add(-t.stale)), Priority: int32(pri), Since: since})
		if err != nil || n == 0 {
			return err
		}
		took = true
		t.tookAt(key, start)
		if queued {
			if err := tx.DeleteUJPWaiter(ctx, dbq.DeleteUJPWaiterParams{Key: key, Waiter: waiter}); err != nil {
				return err
			}
		}
		if purge {
			if err := tx.PurgeUJPWaiters(ctx, dbq.PurgeUJPWaitersParams{Key: key, Before: dbTime(now.Add(-forgetAfter))}); err != nil {
				return err
			}
		}
		if work != nil {
			if err := work(ctx, tx); err != nil {
				workErr = err
				return err
			}
		}
		return nil
	})
	if workErr != nil {
		return false, workErr // the caller's, as it made it
	}
	if err != nil {
		return false, fmt.Errorf("ujp turns %s: %w", key, err)
	}
	return took, nil
}

// purgeDue reports whether a turn of key taken now should also delete
// the waiters gone for good: once a minute per key and process, not on
// every turn.
func (t *Turns) purgeDue(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if time.Since(t.purged[key]) < purgeEvery {
		return false
	}
	t.purged[key] = time.Now()
	return true
}

// purgeEvery is how often a process deletes a key's forgotten waiters.
const purgeEvery = time.Minute

// busy gives up waiting: the waiter's row stays, marked as no longer
// asking (so it holds nobody up), with its place for the next ask; the
// error says when a turn may be free for it.
func (t *Turns) busy(ctx context.Context, key string, pri ujp.Priority, waiter string, since, now, until time.Time) error {
	ahead, err := t.db.Reader().UJPWaitersAhead(ctx, dbq.UJPWaitersAheadParams{Key: key, Waiter: waiter,
		FreshAfter: dbTime(now.Add(-t.stale)), Priority: int32(pri), Since: since})
	if err != nil {
		return fmt.Errorf("ujp turns %s: %w", key, err)
	}
	t.leave(key, waiter)
	retry := max(until.Sub(now), 0) + time.Duration(ahead)*t.spacing
	return &ujp.BusyError{Key: key, RetryIn: max(retry, t.spacing)}
}

// leave marks a waiter as no longer asking, keeping its since.
func (t *Turns) leave(key, waiter string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w, err := t.db.Reader().GetUJPWaiter(ctx, dbq.GetUJPWaiterParams{Key: key, Waiter: waiter})
	if err != nil {
		return
	}
	// Seen a staleness ago: passed over now, forgotten only after
	// forgetAfter.
	_ = t.db.Writer().PutUJPWaiter(ctx, dbq.PutUJPWaiterParams{Key: key, Waiter: waiter, Priority: w.Priority,
		Since: w.Since, SeenAt: dbTime(t.now().Add(-t.stale))})
}

// Defer implements ujp.Turns.
func (t *Turns) Defer(ctx context.Context, key string, at time.Time) error {
	if err := t.ensure(ctx, key); err != nil {
		return err
	}
	if err := t.db.Writer().DeferUJPSlot(ctx, dbq.DeferUJPSlotParams{Key: key, At: dbTime(at)}); err != nil {
		return fmt.Errorf("ujp turns %s: %w", key, err)
	}
	return nil
}

// maxEarly bounds how long before it is due a turn is taken.
const maxEarly = 50 * time.Millisecond

// heldBy marks the holder of a slot whose turn was taken ahead of its call.
const heldBy = "held"

// Hold implements ujp.Turns.
func (t *Turns) Hold(ctx context.Context, key string, lapses time.Time) error {
	if err := t.db.Writer().HoldUJPSlot(ctx, dbq.HoldUJPSlotParams{Key: key, Until: dbTime(lapses), Holder: heldBy}); err != nil {
		return fmt.Errorf("ujp turns %s: %w", key, err)
	}
	return nil
}

// Start implements ujp.Turns.
func (t *Turns) Start(ctx context.Context, key string) error {
	// Stamped once the slot is locked, as take does.
	err := t.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockUJPSlot(ctx, key); err != nil {
			return err
		}
		now := t.now()
		t.tookAt(key, now)
		return tx.StartUJPSlot(ctx, dbq.StartUJPSlotParams{Key: key, NextAt: dbTime(now.Add(t.spacing))})
	})
	if err != nil {
		return fmt.Errorf("ujp turns %s: %w", key, err)
	}
	return nil
}

// Begin implements ujp.Turns: the calls of key this process makes go out
// one after the other, each a spacing after the one before it really went
// out (the previous call's Out, or its transport's Wrote when that comes
// later). It waits for the previous call to be on its way first: until its
// transport wrote it or its round trip ended, but no longer than 20
// spacings (at least minWrittenWait) after it was handed to the transport
// (a transport that does not say when it wrote, such as a simulator in the
// process, has delivered the call when it was handed over). A previous
// call answered unusually late moves the next one later by as much
// (lateBy).
func (t *Turns) Begin(_ context.Context, key, op string) ujp.Call {
	c := &call{begun: make(chan struct{}), out: make(chan struct{}), final: make(chan struct{}),
		turns: t, rttKey: key + " " + op}
	t.mu.Lock()
	prev := t.last[key]
	t.last[key] = c
	taken := t.taken[key]
	t.mu.Unlock()
	if !taken.IsZero() && t.late >= 0 {
		c.late = func() { t.pushLate(key, taken) }
	}
	if prev != nil {
		t.after(prev)
	}
	c.mu.Lock()
	c.at = time.Now()
	c.mu.Unlock()
	close(c.begun)
	return c
}

// tookAt notes that this process took a turn of key at now.
func (t *Turns) tookAt(key string, now time.Time) {
	t.mu.Lock()
	t.taken[key] = now
	t.mu.Unlock()
}

// pushLate is told when a call of key whose turn was taken at taken is
// written: when that is more than the margin later, the user's next turn
// in the store moves to a spacing after now, so that a call of another
// process does not reach UJP within the window of this late one (the
// calls of this process are spaced by Begin). Within the margin nothing
// is written: the next call goes a window and the margin after the turn,
// so at least a window after this one. It writes in the background, the
// call being on its way: the push is a hint that narrows the race, the
// margin still covers what it misses.
func (t *Turns) pushLate(key string, taken time.Time) {
	now := t.now()
	if now.Sub(taken) <= t.late {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = t.Defer(ctx, key, now.Add(t.spacing))
	}()
}

// after waits until a spacing after prev went out.
func (t *Turns) after(prev *call) {
	<-prev.begun // it waits for its own turn to go: always ends
	bound := max(4*t.spacing, minOutWait)
	// A caller that never says its call went out (a bug) holds the
	// calls after it up for bound, then counts as gone when it began.
	select {
	case <-prev.out:
	case <-time.After(bound):
	}
	// A transport that writes late (a dial, a loaded machine) is waited
	// for; one that never says (in the process, until the client knows)
	// is over when it answers, or counted from when it was handed over
	// after a while.
	if wait := time.Until(prev.sent().Add(max(20*t.spacing, minWrittenWait))); wait > 0 {
		select {
		case <-prev.final:
		case <-time.After(wait):
		}
	}
	for {
		at := prev.sent()
		if wait := time.Until(at.Add(t.spacing)); wait > 0 {
			time.Sleep(wait)
		}
		// Written later than it was known while this one slept: the
		// spacing counts from then.
		if prev.sent().After(at) {
			continue
		}
		// Answered late: it may have reached UJP late too.
		if wait := time.Until(at.Add(t.spacing + t.lateBy(prev))); wait > 0 {
			time.Sleep(wait)
		}
		return
	}
}

// lateBy is how much later than the margin allows a finished call may
// have reached UJP, which stamps a call when it reads it: the margin
// covers the usual delay between our write and that stamp; a call
// answered later than the least round trip of its user's calls of the
// same operation by more than the margin was held up on the way (the
// network, UJP's front, a process not scheduled: 7 ms seen on a loaded
// 2-core machine), or inside UJP, and the next call, written a spacing
// after it, could arrive within the window of a call held up on the way
// in. The next one waits for the difference, at most the margin again:
// most of a long round trip is UJP's work, after the stamp, and a call
// slow to answer must not cost its user a turn. A call not answered yet
// when the next is due adds nothing (the round trip's end is not
// known).
func (t *Turns) lateBy(c *call) time.Duration {
	c.mu.Lock()
	written, answered := c.written, c.answered
	c.mu.Unlock()
	if written.IsZero() || answered.IsZero() {
		return 0
	}
	t.mu.Lock()
	least, ok := t.rtt[c.rttKey]
	t.mu.Unlock()
	if !ok {
		return 0
	}
	return min(max(answered.Sub(written)-least-t.margin, 0), t.margin)
}

// observe notes a round trip of a call: the least one of its key and
// operation drifts up slowly towards what the calls take when it is no
// longer reached (a slower path to UJP), so that one fast call long ago
// does not count every later one as late.
func (t *Turns) observe(rttKey string, rtt time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if least, ok := t.rtt[rttKey]; ok && rtt >= least {
		t.rtt[rttKey] = least + (rtt-least)/rttDrift
		return
	}
	t.rtt[rttKey] = rtt
}

// rttDrift: the least round trip moves a 1/rttDrift of the way to each
// longer one.
const rttDrift = 256

// minOutWait is the least time a call waits for the one before it to be
// handed to its transport, and minWrittenWait then to be written (Begin).
const (
	minOutWait     = 250 * time.Millisecond
	minWrittenWait = 2 * time.Second
)

// call is a call this process began (Begin), as ujp.Call.
type call struct {
	begun          chan struct{} // closed when Begin let it go
	out            chan struct{} // closed when handed to its transport (or over)
	final          chan struct{} // closed when written, or its round trip over
	mu             sync.Mutex
	at             time.Time // the latest moment it was seen going out
	outed, finaled bool
	late           func() // told when the call is written (Turns.pushLate)
	// written and answered: when the call was first written and when its
	// round trip ended after that (Turns.lateBy), noted to turns under
	// rttKey (its key and operation).
	written, answered time.Time
	turns             *Turns
	rttKey            string
}

var _ ujp.Call = (*call)(nil)

// sent is when the call went out, as far as is known.
func (c *call) sent() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *call) mark(now time.Time, out, final bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.After(c.at) {
		c.at = now
	}
	if (out || final) && !c.outed {
		c.outed = true
		close(c.out)
	}
	if final && !c.finaled {
		c.finaled = true
		close(c.final)
	}
}

// Out implements ujp.Call.
func (c *call) Out() { c.mark(time.Now(), true, false) }

// Wrote implements ujp.Call.
func (c *call) Wrote() {
	now := time.Now()
	c.mark(now, true, true)
	c.mu.Lock()
	if c.written.IsZero() {
		c.written = now
	}
	c.mu.Unlock()
	if c.late != nil {
		c.late()
	}
}

// Done implements ujp.Call: the round trip's end does not move when the
// call went out.
func (c *call) Done() {
	now := time.Now()
	c.mu.Lock()
	first := !c.written.IsZero() && c.answered.IsZero()
	if first {
		c.answered = now
	}
	rtt := c.answered.Sub(c.written)
	c.mu.Unlock()
	if first && c.turns != nil {
		c.turns.observe(c.rttKey, rtt)
	}
	c.mark(time.Time{}, true, true)
}
