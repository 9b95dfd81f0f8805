package store

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// On SQLite every statement is compiled from its text each time it runs
// unless it is prepared, and compiling costs more than running the short
// statements denar issues. stmtCache keeps each query text prepared once
// per pool (database/sql then keeps it prepared on each connection that
// runs it), and the generated queries go through it. PostgreSQL needs
// none: pgx caches prepared statements per connection itself.
//
// Preparing on a pool takes a connection, and the writer pool has only
// one, which a transaction holds: a statement first met inside a
// transaction runs unprepared there and is prepared after the transaction
// ends (prepareWanted), never while a connection is held.
type stmtCache struct {
	db     *sql.DB
	mu     sync.RWMutex
	m      map[string]*sql.Stmt
	wanted map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// lookup returns the prepared statement of query, or nil after noting that
// it is wanted.
func (c *stmtCache) lookup(query string) *sql.Stmt {
	c.mu.RLock()
	st := c.m[query]
	c.mu.RUnlock()
	if st == nil {
		c.mu.Lock()
		if c.m[query] == nil {
			c.wanted[query] = true
		}
		c.mu.Unlock()
	}
	return st
}

// prepare returns query prepared on the pool, preparing it now if needed.
// The caller must hold no connection of the pool.
func (c *stmtCache) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := c.lookup(query); st != nil {
		return st, nil
	}
	// Prepared for the pool's lifetime, not for this request's; no lock is
	// held while waiting for a connection.
	st, err := c.db.PrepareContext(context.WithoutCancel(ctx), query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev := c.m[query]; prev != nil {
		_ = st.Close()
		return prev, nil
	}
	c.m[query] = st
	delete(c.wanted, query)
	return st, nil
}

// prepareWanted prepares the statements transactions met unprepared. Run
// it when no connection of the pool is held by the caller.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.RLock()
	n := len(c.wanted)
	c.mu.RUnlock()
	if n == 0 {
		return
	}
	c.mu.Lock()
	var qs []string
	for q := range c.wanted {
		qs = append(qs, q)
	}
	c.mu.Unlock()
	for _, q := range qs {
		// A failure leaves it unprepared; it is asked for again later.
		_, _ = c.prepare(ctx, q)
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		_ = st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// cachedDB runs queries on the pool through the cache (dbq.DBTX).
type cachedDB struct{ c *stmtCache }

func (d cachedDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := d.c.prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, utc(args)...)
}

func (d cachedDB) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return d.c.db.PrepareContext(ctx, q)
}

func (d cachedDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := d.c.prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, utc(args)...)
}

func (d cachedDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := d.c.prepare(ctx, q)
	if err != nil {
		// The pool reports the same error through the row.
		return d.c.db.QueryRowContext(ctx, q, utc(args)...)
	}
	return st.QueryRowContext(ctx, utc(args)...)
}

// cachedTx runs queries in a transaction through the cache: the pool's
// statement, prepared on the transaction's connection after its first use
// there; a statement not prepared yet runs as text.
type cachedTx struct {
	c  *stmtCache
	tx *sql.Tx
}

func (t cachedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := t.c.lookup(q); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, utc(args)...)
	}
	return t.tx.ExecContext(ctx, q, utc(args)...)
}

func (t cachedTx) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, q)
}

func (t cachedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := t.c.lookup(q); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, utc(args)...)
	}
	return t.tx.QueryContext(ctx, q, utc(args)...)
}

func (t cachedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := t.c.lookup(q); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, utc(args)...)
	}
	return t.tx.QueryRowContext(ctx, q, utc(args)...)
}

// utc returns args with every time in UTC. SQLite stores a time as text
// with its offset and compares such texts as text, so a bound in another
// zone (a day of Skopje) would be compared wrongly with the stored UTC
// times; an instant is the same in UTC, so nothing else changes.
func utc(args []any) []any {
	var out []any
	for i, a := range args {
		var u any
		switch v := a.(type) {
		case time.Time:
			if v.Location() == time.UTC {
				continue
			}
			u = v.UTC()
		case *time.Time:
			if v == nil || v.Location() == time.UTC {
				continue
			}
			t := v.UTC()
			u = &t
		case sql.NullTime:
			if !v.Valid || v.Time.Location() == time.UTC {
				continue
			}
			u = sql.NullTime{Time: v.Time.UTC(), Valid: true}
		default:
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = u
	}
	if out == nil {
		return args
	}
	return out
}
