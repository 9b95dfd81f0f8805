// Package store is the one storage adapter of denar: it opens SQLite (the
// embedded default) or PostgreSQL (for several `denar serve` processes
// sharing one database), applies the embedded migrations of each dialect,
// and runs the sqlc-generated queries of package dbq on either engine.
//
// The same generated code serves both engines: the queries are written in
// the subset of SQL both understand and use $n placeholders, which SQLite
// accepts. The few statements that must differ (the job claim, for one)
// branch on Dialect.
package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/denar-mk/denar/internal/crashpoint"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Dialect names the SQL engine behind a DB.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

//go:embed migrations
var migrations embed.FS

// DB is an open store. On SQLite it holds two pools on the same file: one
// connection for writes (SQLite has a single writer; queueing writers in Go
// is cheaper than SQLITE_BUSY retries) and a pool for reads. On PostgreSQL
// both are the same pool.
type DB struct {
	dialect Dialect
	write   *sql.DB
	read    *sql.DB
	// SQLite only: prepared statements of the generated queries per pool.
	writeStmts, readStmts *stmtCache
	// Now is the clock every query that records time uses. Tests replace it.
	Now func() time.Time
	// epoch is the SQLite access epoch (epoch.go); nil on PostgreSQL.
	epoch atomic.Pointer[epoch]
	// group runs concurrent SQLite transactions in one commit (group.go).
	group grouper
	// ckpt copies SQLite's write-ahead log into the database file off the
	// writer (checkpoint.go); nil on PostgreSQL.
	ckpt *checkpointer
	// observe, when set (ObserveQueries), sees every generated query run.
	observe func(query string)
	// hub wakes the watchers of Tx.Notify (notify.go); pgURL is what its
	// LISTEN connections open on PostgreSQL.
	hub   *hub
	pgURL string
}

// ObserveQueries makes db call fn with the text of every generated query
// it runs from now on, before running it: storetest accounts with it for
// which queries the suite ran on which engine. Call it before db is used.
func (db *DB) ObserveQueries(fn func(query string)) { db.observe = fn }

// queries returns the generated queries on x, observed when asked.
func (db *DB) queries(x dbq.DBTX) *dbq.Queries {
	if db.observe != nil {
		x = observedDB{x, db.observe}
	}
	return dbq.New(x)
}

// observedDB tells see of each query before running it on DBTX.
type observedDB struct {
	dbq.DBTX
	see func(string)
}

func (o observedDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	o.see(q)
	return o.DBTX.ExecContext(ctx, q, args...)
}

func (o observedDB) PrepareContext(ctx context.Context, q string) (*sql.Stmt, error) {
	o.see(q)
	return o.DBTX.PrepareContext(ctx, q)
}

func (o observedDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	o.see(q)
	return o.DBTX.QueryContext(ctx, q, args...)
}

func (o observedDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	o.see(q)
	return o.DBTX.QueryRowContext(ctx, q, args...)
}

// Open connects to the database named by rawURL without migrating it.
// Accepted forms: postgres://… or postgresql://… for PostgreSQL;
// sqlite://PATH, sqlite:PATH, file:PATH or a plain file path for SQLite.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	dialect, target, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	db := &DB{dialect: dialect, Now: func() time.Time { return time.Now().UTC() }, hub: newHub()}
	switch dialect {
	case Postgres:
		db.pgURL = target
		pool, err := sql.Open("pgx", target)
		if err != nil {
			return nil, fmt.Errorf("store: open postgres: %w", err)
		}
		pool.SetMaxOpenConns(20)
		// As many idle as open: a connection closed for being one too many
		// idle is a new server process (and its statement cache) at the next
		// burst.
		pool.SetMaxIdleConns(20)
		pool.SetConnMaxIdleTime(5 * time.Minute)
		db.write, db.read = pool, pool
	case SQLite:
		if err := createPrivate(target); err != nil {
			return nil, err
		}
		// busy_timeout first: the other pragmas may already need the lock.
		// _txlock=immediate makes every transaction take the write lock at
		// BEGIN, so a read-then-write transaction never fails with
		// SQLITE_BUSY halfway through. temp_store(memory) on the writer
		// keeps the statement sub-journal in memory: every member of a
		// group commit (group.go) runs in a savepoint, which copies each
		// page it changes there first, and with the default the copy spills
		// to a temporary file past 64 KiB — a write(2) per page for every
		// transaction larger than a few rows. One savepoint's pages at a time
		// is all it holds. The writer's auto-checkpoint is only a backstop:
		// the checkpointer copies the log back (checkpoint.go).
		common := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
			"&_pragma=foreign_keys(1)&_time_format=sqlite"
		w, err := sql.Open("sqlite", "file:"+target+"?"+common+"&_pragma=temp_store(memory)&_txlock=immediate"+
			fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)", checkpointBackstop))
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite: %w", err)
		}
		w.SetMaxOpenConns(1)
		w.SetConnMaxIdleTime(0)
		r, err := sql.Open("sqlite", "file:"+target+"?"+common+"&_pragma=query_only(1)")
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("store: open sqlite reader: %w", err)
		}
		r.SetMaxOpenConns(8)
		// Keep them all: a connection closed when idle is reopened (the
		// file, its pragmas, its prepared statements) by the next reader.
		r.SetMaxIdleConns(8)
		db.write, db.read = w, r
		db.writeStmts, db.readStmts = newStmtCache(w), newStmtCache(r)
		e, err := openEpoch(target)
		if err != nil {
			db.Close()
			return nil, err
		}
		db.epoch.Store(e)
		if db.ckpt, err = startCheckpointer("file:" + target + "?" + common); err != nil {
			db.Close()
			return nil, err
		}
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.write.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect to %s: %w", dialect, err)
	}
	return db, nil
}

// createPrivate makes the directory of an SQLite database (0700) and the
// database file (0600) when they do not exist yet, so that what the store
// holds — hashes, sealed secrets, documents — is readable by its owner
// only. SQLite gives the files it adds beside the database (-wal, -shm)
// the database file's mode, and the access epoch is created 0600 too.
// Existing files keep their mode (denar serve warns about wide ones).
func createPrivate(target string) error {
	if dir := filepath.Dir(target); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("store: create directory for %s: %w", target, err)
		}
	}
	f, err := os.OpenFile(target, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case errors.Is(err, fs.ErrExist):
		return nil
	}
	return fmt.Errorf("store: create %s: %w", target, err)
}

// ParseURL splits a database URL into its dialect and the driver's data
// source (for SQLite, the file path).
func ParseURL(rawURL string) (Dialect, string, error) {
	switch {
	case rawURL == "":
		return "", "", errors.New("database URL is empty")
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		if _, err := url.Parse(rawURL); err != nil {
			return "", "", fmt.Errorf("database URL is not a valid postgres URL: %w", err)
		}
		return Postgres, rawURL, nil
	case strings.HasPrefix(rawURL, "sqlite://"):
		return sqlitePath(strings.TrimPrefix(rawURL, "sqlite://"))
	case strings.HasPrefix(rawURL, "sqlite:"):
		return sqlitePath(strings.TrimPrefix(rawURL, "sqlite:"))
	case strings.HasPrefix(rawURL, "file:"):
		return sqlitePath(strings.TrimPrefix(rawURL, "file:"))
	case strings.Contains(rawURL, "://"):
		return "", "", fmt.Errorf("database URL scheme %q is not supported (use postgres:// or sqlite://)", strings.SplitN(rawURL, "://", 2)[0])
	default:
		return sqlitePath(rawURL)
	}
}

func sqlitePath(p string) (Dialect, string, error) {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return "", "", errors.New("sqlite database URL takes no query parameters; denar sets the pragmas itself")
	}
	if p == "" {
		return "", "", errors.New("sqlite database URL has no file path")
	}
	return SQLite, p, nil
}

// Dialect reports the engine behind db.
func (db *DB) Dialect() Dialect { return db.dialect }

// Close closes both pools.
func (db *DB) Close() error {
	// The checkpointer first: its checkpoint must not outlive the pools.
	ckptErr := db.ckpt.close()
	db.hub.close()
	for _, c := range []*stmtCache{db.writeStmts, db.readStmts} {
		if c != nil {
			c.close()
		}
	}
	errs := []error{ckptErr}
	if db.write != nil {
		errs = append(errs, db.write.Close())
	}
	if db.read != nil && db.read != db.write {
		errs = append(errs, db.read.Close())
	}
	// A request still finishing while the store closes may read it: the
	// pointer goes first.
	errs = append(errs, db.epoch.Swap(nil).close())
	return errors.Join(errs...)
}

// Ping checks that the store answers; /readyz uses it.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.read.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// Migrate applies every pending migration of the dialect. On PostgreSQL a
// session advisory lock serialises processes that start at the same time.
func (db *DB) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations/"+string(db.dialect))
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	var opts []goose.ProviderOption
	gooseDialect := goose.DialectSQLite3
	if db.dialect == Postgres {
		gooseDialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	provider, err := goose.NewProvider(gooseDialect, db.write, sub, opts...)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate %s: %w", db.dialect, err)
	}
	return nil
}

// MigrationsDigest is the SHA-256, in hex, of the names and contents of the
// embedded migrations of dialect d: two binaries with the same digest build
// the same schema. Test helpers key their migrated template databases by it.
func MigrationsDigest(d Dialect) (string, error) {
	sub, err := fs.Sub(migrations, "migrations/"+string(d))
	if err != nil {
		return "", fmt.Errorf("store: migrations: %w", err)
	}
	h := sha256.New()
	err = fs.WalkDir(sub, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("store: migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Reader returns queries on the read pool. Use it for anything that does not
// write; on SQLite it never waits for the writer.
func (db *DB) Reader() *dbq.Queries {
	if db.readStmts != nil {
		return db.queries(cachedDB{db.readStmts})
	}
	return db.queries(db.read)
}

// ReadDB exposes the read pool for the few hand-written queries (dynamic
// list filters) that sqlc cannot express.
func (db *DB) ReadDB() *sql.DB { return db.read }

// Tx is a write transaction: the generated queries bound to it, and the raw
// transaction for adapters (jobs) that add their own statements to it.
type Tx struct {
	*dbq.Queries
	Tx      *sql.Tx
	Dialect Dialect
	Now     time.Time

	conn        dbq.DBTX // what the generated queries run on
	afterCommit []func()
	hub         *hub   // SQLite: whom Notify wakes after commit
	notes       []note // what Notify was called with
}

// Stored returns t as the engine keeps a timestamp and reads it back:
// PostgreSQL keeps microseconds (the driver drops the rest), SQLite the
// time as written. A row built from the values written, instead of read
// back, carries its times through Stored.
func (tx *Tx) Stored(t time.Time) time.Time {
	if tx.Dialect == Postgres {
		return t.Truncate(time.Microsecond)
	}
	return t
}

// Exec runs a statement of the caller's own in the transaction (a
// multi-row write the generated queries cannot express), through the same
// statement cache as the generated queries.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.conn.ExecContext(ctx, query, args...)
}

// Query is Exec for a statement that returns rows.
func (tx *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.conn.QueryContext(ctx, query, args...)
}

// AfterCommit registers fn to run once the transaction has committed, in
// the order registered. fn must not fail: by then the change is durable,
// and anything fallible belongs inside the transaction.
func (tx *Tx) AfterCommit(fn func()) { tx.afterCommit = append(tx.afterCommit, fn) }

// Savepoint runs fn inside a savepoint of the transaction: when fn
// fails, what it wrote is rolled back (and the functions it registered
// with AfterCommit are dropped), the rest of the transaction stays, and
// fn's error is returned. For work done in one transaction whose parts
// succeed or fail on their own (the items of a batch). A savepoint that
// cannot be rolled back leaves the transaction unusable: that error is
// returned instead of fn's, and the caller must end the transaction.
func (tx *Tx) Savepoint(ctx context.Context, fn func() error) error {
	if _, err := tx.conn.ExecContext(ctx, "SAVEPOINT denar_part"); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	registered, noted := len(tx.afterCommit), len(tx.notes)
	if err := fn(); err != nil {
		tx.afterCommit, tx.notes = tx.afterCommit[:registered], tx.notes[:noted]
		if _, rerr := tx.conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT denar_part"); rerr != nil {
			return fmt.Errorf("store: rollback to savepoint (after %v): %w", err, rerr)
		}
		if _, rerr := tx.conn.ExecContext(ctx, "RELEASE SAVEPOINT denar_part"); rerr != nil {
			return fmt.Errorf("store: release savepoint (after %v): %w", err, rerr)
		}
		return err
	}
	if _, err := tx.conn.ExecContext(ctx, "RELEASE SAVEPOINT denar_part"); err != nil {
		return fmt.Errorf("store: release savepoint: %w", err)
	}
	return nil
}

// InTx runs fn in one write transaction and commits it when fn returns nil.
// Everything a request changes goes through one InTx call, so a failure
// anywhere leaves nothing half-written.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	if db.dialect == SQLite && db.writeStmts != nil {
		return db.groupTx(ctx, fn)
	}
	return db.singleTx(ctx, fn, true)
}

// singleTx runs fn in a transaction of its own; runAfter runs the
// functions fn registered with AfterCommit.
func (db *DB) singleTx(ctx context.Context, fn func(tx *Tx) error, runAfter bool) (err error) {
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = sqlTx.Rollback()
		}
	}()
	var conn dbq.DBTX = sqlTx
	if db.writeStmts != nil {
		conn = cachedTx{db.writeStmts, sqlTx}
	}
	tx := &Tx{Queries: db.queries(conn), Tx: sqlTx, Dialect: db.dialect, Now: db.Now(), conn: conn, hub: db.hub}
	if err = fn(tx); err != nil {
		return err
	}
	crashpoint.Hit(crashpoint.StoreBeforeCommit)
	if err = sqlTx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	db.AccessChanged() // whatever the transaction wrote, kept reads of access are stale
	db.ckpt.poke()
	crashpoint.Hit(crashpoint.StoreAfterCommit)
	if db.writeStmts != nil {
		db.writeStmts.prepareWanted(ctx)
	}
	if runAfter {
		for _, fn := range tx.afterCommit {
			fn()
		}
	}
	return nil
}

// Writer returns queries on the write pool outside any transaction, for
// single statements whose atomicity the engine already guarantees.
func (db *DB) Writer() *dbq.Queries {
	if db.writeStmts != nil {
		return db.queries(cachedDB{db.writeStmts})
	}
	return db.queries(db.write)
}

// QueryRead runs a hand-written query on the read pool (a read of many
// rows by a list of ids, which the generated queries cannot express); on
// SQLite the statement is prepared once.
func (db *DB) QueryRead(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if db.readStmts != nil {
		return cachedDB{db.readStmts}.QueryContext(ctx, query, args...)
	}
	return db.read.QueryContext(ctx, query, args...)
}

// QueryWrite runs a query on the write pool outside any transaction (the
// job claim's UPDATE … RETURNING); on SQLite the statement is prepared once.
func (db *DB) QueryWrite(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if db.writeStmts != nil {
		return cachedDB{db.writeStmts}.QueryContext(ctx, query, args...)
	}
	return db.write.QueryContext(ctx, query, args...)
}

// WriteDB exposes the write pool for adapters with dialect-specific statements.
func (db *DB) WriteDB() *sql.DB { return db.write }
