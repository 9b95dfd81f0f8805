package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/denar-mk/denar/internal/crashpoint"
)

// Group commit (SQLite). SQLite has one writer, and most of a short write
// transaction's cost is its commit: the WAL frames of every page it
// touched, the index pages that every insert of the moment touches again.
// Transactions that wait for the writer are therefore run together, each
// inside a savepoint of one transaction, and committed once: a member
// whose function fails (or panics) is rolled back to its savepoint and
// gets its error alone; the others commit together, and no InTx returns
// before its transaction has committed or failed. No goroutine of its own:
// the first caller to find no group running leads one, runs the batch
// that waited, and hands the lead to the first caller that arrived
// meanwhile.

// maxGroup bounds how many transactions one commit carries, so that one
// caller's wait stays short.
const maxGroup = 64

type grouper struct {
	mu      sync.Mutex
	queue   []*member
	running bool
}

type member struct {
	ctx  context.Context
	fn   func(*Tx) error
	lead chan struct{} // closed when this member is to run the next batch
	done chan struct{} // closed when its outcome is known

	err      error
	panicked bool
	panicVal any
	after    []func()
}

// groupTx is InTx on SQLite.
func (db *DB) groupTx(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	g := &db.group
	m := &member{ctx: ctx, fn: fn, lead: make(chan struct{}), done: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, m)
	leader := !g.running
	g.running = true
	g.mu.Unlock()
	if !leader {
		select {
		case <-m.done:
			return m.outcome()
		case <-m.lead:
		}
	}
	db.lead(g)
	<-m.done // in the batch just run
	return m.outcome()
}

// lead runs one batch, everything waiting in arrival order, then hands
// the lead on (deferred, so that even a goroutine ended inside a member's
// function does not leave the others waiting for ever).
func (db *DB) lead(g *grouper) {
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		if len(g.queue) > 0 {
			close(g.queue[0].lead)
		} else {
			g.running = false
		}
		g.mu.Unlock()
	}()
	db.runGroup(batch)
}

// errGroupAborted is the outcome of a member whose group ended before its
// outcome was known.
var errGroupAborted = errors.New("store: transaction group aborted")

func (m *member) outcome() error {
	if m.panicked {
		panic(m.panicVal)
	}
	if m.err != nil {
		return m.err
	}
	for _, fn := range m.after {
		fn()
	}
	return nil
}

// runGroup runs batch in one transaction and closes every member's done.
func (db *DB) runGroup(batch []*member) {
	for _, m := range batch {
		m.err = errGroupAborted
	}
	defer func() {
		for _, m := range batch {
			close(m.done)
		}
	}()
	// The transaction is the group's, not one caller's: a caller that goes
	// away must not roll back the others (detachedTx keeps its statements
	// from being interrupted too).
	sqlTx, err := db.write.BeginTx(context.Background(), nil)
	if err != nil {
		for _, m := range batch {
			m.err = fmt.Errorf("store: begin: %w", err)
		}
		return
	}
	// Whatever ends this function early (a goroutine ended inside a
	// member's function, say) must not leave the one writer connection in
	// an open transaction; after a commit or a rollback this is a no-op.
	defer func() { _ = sqlTx.Rollback() }()
	conn := detachedTx{cachedTx{db.writeStmts, sqlTx}}
	q := db.queries(conn)
	var ok []*member
	for i, m := range batch {
		if err := m.ctx.Err(); err != nil {
			m.err = fmt.Errorf("store: begin: %w", err)
			continue
		}
		if _, err := sqlTx.Exec("SAVEPOINT denar_member"); err != nil {
			db.fallBack(sqlTx, append(ok, batch[i:]...))
			return
		}
		tx := &Tx{Queries: q, Tx: sqlTx, Dialect: db.dialect, Now: db.Now(), conn: conn, hub: db.hub}
		panicked, pv, fnErr := runMember(m.fn, tx)
		if fnErr != nil || panicked {
			m.err, m.panicked, m.panicVal = fnErr, panicked, pv
			if _, err := sqlTx.Exec("ROLLBACK TO denar_member"); err != nil {
				// SQLite ended the whole transaction (an I/O error, say).
				db.fallBack(sqlTx, append(ok, batch[i+1:]...))
				return
			}
		} else {
			m.after = tx.afterCommit
		}
		if fnErr == nil && !panicked {
			ok = append(ok, m)
		}
		if _, err := sqlTx.Exec("RELEASE denar_member"); err != nil {
			db.fallBack(sqlTx, append(ok, batch[i+1:]...))
			return
		}
	}
	if len(ok) == 0 {
		_ = sqlTx.Rollback()
		return
	}
	crashpoint.Hit(crashpoint.StoreBeforeCommit)
	if err := sqlTx.Commit(); err != nil {
		for _, m := range ok {
			m.err, m.after = fmt.Errorf("store: commit: %w", err), nil
		}
		return
	}
	for _, m := range ok {
		m.err = nil
	}
	db.AccessChanged()
	db.ckpt.poke()
	crashpoint.Hit(crashpoint.StoreAfterCommit)
	db.writeStmts.prepareWanted(context.Background())
}

// fallBack abandons a group the engine broke and runs each member that had
// not failed on its own, in a transaction of its own.
func (db *DB) fallBack(sqlTx *sql.Tx, members []*member) {
	_ = sqlTx.Rollback()
	for _, m := range members {
		m.after = nil
		m.err = db.singleTx(m.ctx, func(tx *Tx) error {
			panicked, pv, err := runMember(m.fn, tx)
			if panicked {
				m.panicked, m.panicVal = true, pv
				return errGroupAborted
			}
			m.after = tx.afterCommit
			return err
		}, false)
		if m.err != nil {
			m.after = nil
		}
	}
}

func runMember(fn func(*Tx) error, tx *Tx) (panicked bool, pv any, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked, pv = true, p
		}
	}()
	return false, nil, fn(tx)
}

// detachedTx runs a group member's statements without its caller's
// cancellation: on SQLite an interrupted write rolls back the whole
// transaction, everyone's. A member's statements are short; its outcome
// reaches the database even when its client has gone, as the idempotency
// rules want.
type detachedTx struct{ t cachedTx }

func (d detachedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return d.t.ExecContext(context.WithoutCancel(ctx), q, args...)
}

func (d detachedTx) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return d.t.PrepareContext(context.WithoutCancel(ctx), q)
}

func (d detachedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return d.t.QueryContext(context.WithoutCancel(ctx), q, args...)
}

func (d detachedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return d.t.QueryRowContext(context.WithoutCancel(ctx), q, args...)
}
