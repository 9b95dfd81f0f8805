package store

// Wake-ups on commit. A transaction that makes something another part of
// the program waits for (a signing request, for the sockets of the agents
// that sign it) names it with Tx.Notify(channel, key); whoever waits for it
// holds a Watch on the same channel and key and is woken once the
// transaction has committed, and never when it rolls back.
//
// On PostgreSQL, Notify is pg_notify inside the transaction: the server
// delivers it at commit, to every process listening (each process that
// watches a channel holds one LISTEN connection for it). On SQLite, which
// one process uses, it is an in-process wake-up after commit. Either way a
// wake-up is a hint to look again, never the data itself, and may be lost
// (a LISTEN connection being re-established, a watcher already woken):
// watchers keep their own periodic look as the fallback, so nothing that
// can fail happens after commit.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgChannel is the PostgreSQL channel of a store channel. SQL that
// notifies by itself (a statement of queries/ that writes and notifies in
// one round trip) uses the same name.
func pgChannel(channel string) string { return "denar_" + channel }

// listenRetry is how long a lost LISTEN connection waits before it is
// opened again.
const listenRetry = time.Second

// note is one Notify of a transaction.
type note struct{ channel, key string }

// Notify wakes the watchers of channel and key once tx commits. A
// transaction notifies each channel and key once, however often it calls
// Notify. On PostgreSQL it runs pg_notify in the transaction (its error is
// the transaction's); on SQLite it cannot fail.
func (tx *Tx) Notify(ctx context.Context, channel, key string) error {
	n := note{channel, key}
	for _, m := range tx.notes {
		if m == n {
			return nil
		}
	}
	if tx.Dialect == Postgres {
		if _, err := tx.conn.ExecContext(ctx, "SELECT pg_notify($1, $2)", pgChannel(channel), key); err != nil {
			return fmt.Errorf("store: notify %s: %w", channel, err)
		}
	} else if h := tx.hub; h != nil {
		tx.AfterCommit(func() { h.deliver(channel, key) })
	}
	tx.notes = append(tx.notes, n)
	return nil
}

// Watch returns a channel that receives a value after a transaction that
// called Notify(channel, key) commits, in this process or (PostgreSQL) in
// any process sharing the store, and the function that ends the watch.
// Wake-ups coalesce: a watcher that has not taken the last one gets no
// second. The channel also receives a value when the store may have missed
// notifications (a LISTEN connection re-established), so look again on
// every value.
func (db *DB) Watch(channel, key string) (<-chan struct{}, func()) {
	return db.hub.watch(db, channel, key)
}

// hub is the watchers of a DB and, on PostgreSQL, its LISTEN connections.
type hub struct {
	mu        sync.Mutex
	watchers  map[note]map[chan struct{}]struct{}
	listening map[string]bool
	ctx       context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

func newHub() *hub {
	ctx, stop := context.WithCancel(context.Background())
	return &hub{watchers: map[note]map[chan struct{}]struct{}{}, listening: map[string]bool{}, ctx: ctx, stop: stop}
}

func (h *hub) watch(db *DB, channel, key string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	n := note{channel, key}
	h.mu.Lock()
	if h.watchers[n] == nil {
		h.watchers[n] = map[chan struct{}]struct{}{}
	}
	h.watchers[n][c] = struct{}{}
	if db.dialect == Postgres && !h.listening[channel] && h.ctx.Err() == nil {
		h.listening[channel] = true
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.listen(db.pgURL, channel)
		}()
	}
	h.mu.Unlock()
	var once sync.Once
	return c, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.watchers[n], c)
			if len(h.watchers[n]) == 0 {
				delete(h.watchers, n)
			}
			h.mu.Unlock()
		})
	}
}

// deliver wakes the watchers of channel and key without blocking.
func (h *hub) deliver(channel, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.watchers[note{channel, key}] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// wakeAll wakes every watcher of channel: notifications may have been
// missed.
func (h *hub) wakeAll(channel string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for n, cs := range h.watchers {
		if n.channel != channel {
			continue
		}
		for c := range cs {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// listen holds a LISTEN connection for channel until the store closes,
// opening it again after listenRetry when it is lost. Each time it starts
// listening it wakes every watcher of the channel, for what was notified
// while it was not.
func (h *hub) listen(url, channel string) {
	for h.ctx.Err() == nil {
		conn, err := pgx.Connect(h.ctx, url)
		if err == nil {
			if _, err = conn.Exec(h.ctx, "LISTEN "+pgx.Identifier{pgChannel(channel)}.Sanitize()); err == nil {
				h.wakeAll(channel)
				for {
					n, err := conn.WaitForNotification(h.ctx)
					if err != nil {
						break
					}
					h.deliver(channel, n.Payload)
				}
			}
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = conn.Close(closeCtx)
			cancel()
		}
		select {
		case <-h.ctx.Done():
		case <-time.After(listenRetry):
		}
	}
}

// close ends the LISTEN connections and waits for them.
func (h *hub) close() {
	h.stop()
	h.wg.Wait()
}
