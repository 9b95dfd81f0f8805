package ujp

import (
	"context"
	"crypto/rand"
	"sync/atomic"
	"time"
)

// Priority orders the calls of one UJP user that wait for a turn: a higher
// priority goes first, and among equals the one waiting longest.
type Priority int

// The priorities of the client's calls. Registry look-ups and server time
// count as status reads; PriorityBackground (below every call the client
// makes on its own) is for work that can always wait, such as a later
// reconciliation.
const (
	PriorityBackground Priority = 10
	PriorityCodeList   Priority = 20
	PriorityPDF        Priority = 30
	PriorityRead       Priority = 40
	PriorityDecision   Priority = 50
	PrioritySend       Priority = 60
)

// opPriority is the priority of each call.
var opPriority = map[string]Priority{
	opSend:         PrioritySend,
	opAcceptReject: PriorityDecision,
	opSalesPDF:     PriorityPDF, opPurchasePDF: PriorityPDF, opArchive: PriorityPDF,
	opCodebooks: PriorityCodeList,
	// Everything else is a read: status, changes, ids, payloads, the
	// registry, server time.
}

// Turns hands out the turns of UJP users. UJP allows each user (X-EUJP-ID)
// one request a second, on every service (api-specification.txt:111); a
// Turns shared by every process that calls UJP as the same users keeps
// them all within it. internal/ujpturns keeps the turns in the store.
type Turns interface {
	// Take waits up to wait for the next turn of key at priority pri and
	// takes it: the call may go once Begin says so. waiter names who
	// waits; the same waiter keeps its place among the waiters of its
	// priority from one Take to the next.
	// When ctx carries work (WithTurnWork), Take runs it in the
	// transaction that takes the turn (nothing is held: the caller calls
	// at once); an error of the work leaves the turn untaken and is
	// Take's. When no turn comes within wait it returns a *BusyError
	// saying when to ask again.
	Take(ctx context.Context, key string, pri Priority, waiter string, wait time.Duration) error
	// Defer moves the next turn of key to no earlier than at (UJP's
	// Retry-After of an E4007).
	Defer(ctx context.Context, key string, at time.Time) error
	// Hold holds the next turn of key back until the call of the turn just
	// taken starts (Start), or until lapses if it never does (Client.Turn).
	Hold(ctx context.Context, key string, lapses time.Time) error
	// Start says that the call of a turn of key held (Hold) starts now: the
	// next turn is a spacing from now.
	Start(ctx context.Context, key string) error
	// Begin is said right before the request (of operation op) of a turn
	// of key goes out (after Take, or Start): it waits until a spacing
	// after the previous call of key the Turns knows of went out, and
	// returns the Call the caller tells when its request does go out and
	// when the round trip is over.
	Begin(ctx context.Context, key, op string) Call
}

// Call is a call of a UJP user on its way (Turns.Begin). UJP counts a
// call from when it arrives, so the next call of the user is spaced from
// when this one went out, not from its turn: a request held up between its
// turn and the wire (a goroutine not scheduled, a pause, a connection
// dialled) moves the next call later with it.
type Call interface {
	// Out says the request is handed to the transport now.
	Out()
	// Wrote says the request's headers are on their way to UJP now (on
	// the client's own connections, in the socket; through a caller's
	// transport, written by it).
	Wrote()
	// Done says the round trip is over (answered or failed).
	Done()
}

type (
	priorityKey struct{}
	waiterKey   struct{}
	turnWaitKey struct{}
	heldTurnKey struct{}
	workKey     struct{}
)

// WithPriority makes the calls made with ctx wait for their turn at p
// instead of their own priority.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// WithWaiter names who waits for the turns of the calls made with ctx (a
// job's id, say), so that it keeps its place in the queue from one attempt
// to the next; without it each call waits as a newcomer. since is when the
// waiter's wait began (when its work came due), which places it among the
// others of its priority the first time it asks; zero means when it asks.
func WithWaiter(ctx context.Context, waiter string, since time.Time) context.Context {
	return context.WithValue(ctx, waiterKey{}, waiterOf{waiter, since})
}

// waiterOf is what WithWaiter puts on a context.
type waiterOf struct {
	name  string
	since time.Time
}

// WaitingSince is when the waiter of ctx (WithWaiter) began to wait, or
// the zero time.
func WaitingSince(ctx context.Context) time.Time {
	w, _ := ctx.Value(waiterKey{}).(waiterOf)
	return w.since
}

// TurnWork is what a caller records together with its turn (Turn): tx is
// the transaction of the Turns that takes the turn (a *store.Tx for
// internal/ujpturns), so the turn and the caller's record of the call it
// is about to make commit together, or neither does.
type TurnWork func(ctx context.Context, tx any) error

// WithTurnWork has the turn taken with ctx (Turn) recorded in one
// transaction with w (see Turns.Take).
func WithTurnWork(ctx context.Context, w TurnWork) context.Context {
	return context.WithValue(ctx, workKey{}, w)
}

// TurnWorkOf is the work WithTurnWork set on ctx, or nil.
func TurnWorkOf(ctx context.Context) TurnWork {
	w, _ := ctx.Value(workKey{}).(TurnWork)
	return w
}

// WithTurnWait sets how long the calls made with ctx wait for a turn.
func WithTurnWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, turnWaitKey{}, d)
}

// heldTurn is a turn taken ahead of its call (Client.Turn).
type heldTurn struct {
	key     string
	used    atomic.Bool
	release func()
	// started: the turn was started when it was taken (WithTurnWork), so
	// its call only Begins, without a Start.
	started bool
}

// ReleaseTurn gives back the turn Turn took for ctx if no call used it
// (the work it was taken for did not happen): the user's next turn is a
// spacing from now rather than when the hold lapses. Calling it after the
// call did use the turn does nothing.
func ReleaseTurn(ctx context.Context) {
	if h, ok := ctx.Value(heldTurnKey{}).(*heldTurn); ok && h.used.CompareAndSwap(false, true) && h.release != nil {
		h.release()
	}
}

func (c *Client) turnKey(id Identity) string {
	return c.scope + "/" + id.EUJPID
}

// takeTurn waits for the caller's turn before a request of op, and for
// the user's previous call to have gone out a spacing ago: the Call it
// returns (nil without turns) is told when the request goes out.
func (c *Client) takeTurn(ctx context.Context, op string, id Identity) (Call, error) {
	if c.turns == nil {
		return nil, nil
	}
	key := c.turnKey(id)
	if h, ok := ctx.Value(heldTurnKey{}).(*heldTurn); ok && h.key == key && h.used.CompareAndSwap(false, true) {
		if !h.started {
			if err := c.turns.Start(context.WithoutCancel(ctx), key); err != nil {
				return nil, err
			}
		}
		return c.turns.Begin(ctx, key, op), nil
	}
	if err := c.waitTurn(ctx, op, id); err != nil {
		return nil, err
	}
	return c.turns.Begin(ctx, key, op), nil
}

// waitTurn waits for a turn of the caller's user for op and takes it.
func (c *Client) waitTurn(ctx context.Context, op string, id Identity) error {
	key := c.turnKey(id)
	pri, ok := ctx.Value(priorityKey{}).(Priority)
	if !ok {
		if pri, ok = opPriority[op]; !ok {
			pri = PriorityRead
		}
	}
	w, _ := ctx.Value(waiterKey{}).(waiterOf)
	waiter := w.name
	if waiter == "" {
		waiter = rand.Text()
	}
	wait, ok := ctx.Value(turnWaitKey{}).(time.Duration)
	if !ok {
		wait = c.turnWait
	}
	err := c.turns.Take(ctx, key, pri, waiter, wait)
	if b, ok := err.(*BusyError); ok {
		b.Op = op
	}
	return err
}

// Turn implements Gateway. With work on ctx (WithTurnWork) the turn is
// taken and the work done in one transaction of the Turns, and the call
// counts as started then: the next call as caller uses it without another
// write. Without work the turn is held until that call starts.
func (c *Client) Turn(ctx context.Context, caller Identity, pri Priority) (context.Context, error) {
	if c.turns == nil {
		return ctx, nil
	}
	if err := c.waitTurn(WithPriority(ctx, pri), "Turn", caller); err != nil {
		return ctx, err
	}
	key := c.turnKey(caller)
	if TurnWorkOf(ctx) != nil {
		// Done: no later call made with the context does it again.
		ctx = context.WithValue(ctx, workKey{}, TurnWork(nil))
		return context.WithValue(ctx, heldTurnKey{}, &heldTurn{key: key, started: true}), nil
	}
	// Nobody else of the user goes until the held call starts (or the
	// hold lapses, if it never does).
	if err := c.turns.Hold(ctx, key, c.now().Add(turnHold)); err != nil {
		return ctx, err
	}
	release := func() { _ = c.turns.Start(context.WithoutCancel(ctx), key) }
	return context.WithValue(ctx, heldTurnKey{}, &heldTurn{key: key, release: release}), nil
}

// turnHold is how long a turn taken ahead of its call (Turn) holds the
// user's next turn back when the call never comes.
const turnHold = 5 * time.Second
