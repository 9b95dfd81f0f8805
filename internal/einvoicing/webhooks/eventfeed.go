package webhooks

// The event feed: GET /v1/events?after=<cursor>, a forward-only list a
// client that cannot receive webhooks polls, sure to see every event once
// and in one order.
//
// Event ids are time-ordered but generated before their transaction
// commits, so transactions can commit out of id order: a reader that has
// seen evt_B can later find evt_A < evt_B committed, and a feed continuing
// "after evt_B" would never show it. So the feed does not page by id.
// Each event gets a feed position, seq, after it committed: the sequencer
// locks the one event_sequence row, numbers every committed event that has
// no seq yet (in id order) from the last number on, advances the row and
// commits. Sequencers take turns on that lock, and each numbers only events
// that had committed when it started, so the numbers that are visible
// always form a gap-free prefix 1..head: an event committing late gets a
// later number instead of a smaller id. The feed reads the head first and
// then the events with cursor < seq <= head, in seq order, and a cursor is
// the last seq the client has been given (or passed over).
//
// The sequencer runs when a feed is read (a write only when some event is
// unnumbered), so events appear in the feed as soon as they committed.

import (
	"context"
	"fmt"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// sequenceBatch bounds the events one sequencer transaction numbers.
const sequenceBatch = 5000

// FeedNow is the feed position "after everything there is now": a client
// that starts with it sees only what comes next. Position 0 is the start.
const FeedNow int64 = -1

// sequenceEvents gives every committed event without a feed position its
// position, oldest id first. Any number of processes may run it at once.
func (s *Service) sequenceEvents(ctx context.Context) error {
	for {
		pending, err := s.db.Reader().HasUnsequencedEvents(ctx)
		if err != nil {
			return fmt.Errorf("sequence events: %w", err)
		}
		if !pending {
			return nil
		}
		var n int64
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			last, err := tx.LockEventSequence(ctx)
			if err != nil {
				return err
			}
			if n, err = tx.SequenceEvents(ctx, dbq.SequenceEventsParams{Base: last, Lim: sequenceBatch}); err != nil || n == 0 {
				return err
			}
			return tx.AdvanceEventSequence(ctx, last+n)
		})
		if err != nil {
			return fmt.Errorf("sequence events: %w", err)
		}
		if n < sequenceBatch {
			return nil
		}
	}
}

// FeedPage is one read of the event feed.
type FeedPage struct {
	// Events oldest first.
	Events []Event
	// Next is the position to continue after: the last event returned, or
	// the head when the read reached it (events the filter or the
	// allow-list left out are passed over for good).
	Next int64
	// More is true when more events follow Next already.
	More bool
}

// EventFeed returns up to limit events of the caller's account and
// environment within its allow-list that follow position after (0 for
// the start, FeedNow for the current head), in feed order.
func (s *Service) EventFeed(ctx context.Context, p *auth.Principal, f EventFilter, after int64, limit int) (FeedPage, error) {
	q := s.db.Reader()
	if err := f.check(ctx, q, p); err != nil {
		return FeedPage{}, err
	}
	if err := s.sequenceEvents(ctx); err != nil {
		return FeedPage{}, err
	}
	head, err := q.EventHead(ctx)
	if err != nil {
		return FeedPage{}, fmt.Errorf("event feed head: %w", err)
	}
	if after == FeedNow {
		return FeedPage{Events: []Event{}, Next: head}, nil
	}
	if after < 0 || after > head {
		return FeedPage{}, denar.Invalid(denar.FieldError{Path: "query.after",
			Message: "this cursor is not a position of this service's event feed; start again with after=start or after=now"})
	}
	from, to := f.bounds()
	page := FeedPage{Events: make([]Event, 0, limit), Next: after}
	all, allowed := p.AllowList()
	rows, err := q.EventFeed(ctx, dbq.EventFeedParams{AccountID: p.AccountID, Environment: p.Environment, AllCompanies: all, Allowed: allowed,
		AfterSeq: after, Head: head, Type: store.NullText(f.Type), ObjectID: store.NullText(f.ObjectID),
		CompanyID: store.NullText(f.CompanyID), CreatedFrom: from, CreatedTo: to, Lim: int64(limit + 1)})
	if err != nil {
		return FeedPage{}, fmt.Errorf("event feed: %w", err)
	}
	for _, r := range rows {
		if len(page.Events) == limit {
			page.More = true
			return page, nil
		}
		page.Next = r.Seq.Int64
		page.Events = append(page.Events, eventView(r))
	}
	// Everything up to the head was read.
	page.Next = head
	return page, nil
}
