// Package storetest runs store tests on both engines. Each gives a test a
// fresh, migrated SQLite database in a temporary directory and a fresh,
// migrated PostgreSQL database: from DENAR_TEST_DATABASE_URL when it is set
// (the URL of a role that may CREATE DATABASE), or else from a throwaway
// cluster this package starts itself with initdb and pg_ctl on a free
// loopback port and removes when the test binary ends.
//
// Without either, the PostgreSQL half skips with a visible message, unless
// DENAR_TEST_REQUIRE_POSTGRES=1, and then it fails.
//
// Migrating is done once, not per test (Each, SQLite, Postgres and the
// Migrated… URLs; EachURL, SQLiteURL and PostgresURL give empty databases,
// for tests of the migrations themselves). On PostgreSQL the first test of any
// test binary builds a template database, denar_tmpl_<digest>, named after
// the digest of the embedded migrations, and every test database is a
// CREATE DATABASE … TEMPLATE copy of it. Test binaries of several packages
// (go test ./... runs them in parallel) and several worktrees share one
// cluster: a PostgreSQL advisory lock keyed by the digest makes one of them
// build a given template while the others wait, and a template is marked
// finished (IS_TEMPLATE) only once every migration is in, so a builder that
// died half-way leaves a database the next one drops and rebuilds. Templates
// are kept: the next run with the same migrations starts from them. On
// SQLite a migrated file is made once per test binary and copied.
//
// A package that uses PostgreSQL calls storetest.Main from its TestMain so
// that the throwaway cluster is stopped after the tests.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
)

// Each runs fn once on SQLite and once on PostgreSQL, as subtests named
// "sqlite" and "postgres", each with a new migrated store.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// EachURL is Each for tests that need the URL of an empty database rather
// than an open store (tests of the migrations themselves, or of processes
// that migrate at start).
func EachURL(t *testing.T, fn func(t *testing.T, url string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLiteURL(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresURL(t)) })
}

// EachMigratedURL is EachURL with databases already migrated (end-to-end
// tests that start the denar binary, which then finds nothing to migrate).
func EachMigratedURL(t *testing.T, fn func(t *testing.T, url string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, MigratedSQLiteURL(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, MigratedPostgresURL(t)) })
}

// SQLiteURL returns the URL of a new, empty SQLite file in a temporary
// directory.
func SQLiteURL(t testing.TB) string {
	t.Helper()
	return "sqlite://" + filepath.Join(t.TempDir(), "denar.db")
}

// MigratedSQLiteURL returns the URL of a new SQLite file in a temporary
// directory, a copy of the migrated template.
func MigratedSQLiteURL(t testing.TB) string {
	t.Helper()
	data, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("migrated sqlite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "denar.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return "sqlite://" + path
}

// SQLite returns a migrated store on a new SQLite file.
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	return open(t, MigratedSQLiteURL(t))
}

// Postgres returns a migrated store on a new PostgreSQL database.
func Postgres(t testing.TB) *store.DB {
	t.Helper()
	return open(t, MigratedPostgresURL(t))
}

// Open opens the store at url (from EachURL, SQLiteURL, PostgresURL or
// their Migrated… forms) as a process would, closing it when the test ends:
// a test that needs several stores on one database (several processes)
// opens each with it, so that the queries they run are recorded under
// QueryLogEnv like those of a store from Each. It does not migrate.
func Open(t testing.TB, url string) *store.DB {
	t.Helper()
	return open(t, url)
}

// open opens a database that is already migrated.
func open(t testing.TB, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	observe(db)
	t.Cleanup(func() { db.Close() })
	return db
}

// PostgresURL creates an empty database and returns its URL. It is dropped
// when the test ends.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return postgresDatabase(t, false)
}

// MigratedPostgresURL creates a new database, a copy of the migrated
// template, and returns its URL. It is dropped when the test ends.
func MigratedPostgresURL(t testing.TB) string {
	t.Helper()
	return postgresDatabase(t, true)
}

func postgresDatabase(t testing.TB, migrated bool) string {
	t.Helper()
	admin, err := adminURL()
	if err != nil {
		if os.Getenv("DENAR_TEST_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL required (DENAR_TEST_REQUIRE_POSTGRES=1) but unavailable: %v", err)
		}
		t.Skipf("SKIP PostgreSQL: %v (set DENAR_TEST_DATABASE_URL or install initdb/pg_ctl)", err)
	}
	conn, err := adminPool(admin)
	if err != nil {
		t.Fatalf("postgres admin: %v", err)
	}
	create := "CREATE DATABASE "
	name := "denar_test_" + randomHex(6)
	if migrated {
		tmpl, err := pgTemplate(admin, conn)
		if err != nil {
			t.Fatalf("migrated postgres template: %v", err)
		}
		create = "CREATE DATABASE " + name + " TEMPLATE " + tmpl
	} else {
		create += name
	}
	if _, err := conn.Exec(create); err != nil {
		t.Fatalf("%s: %v", create, err)
	}
	t.Cleanup(func() {
		_, _ = conn.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	return withDatabase(admin, name)
}

func withDatabase(admin, name string) string {
	// Replace the path of the admin URL with the new database name.
	rest := admin
	scheme := ""
	if i := strings.Index(rest, "://"); i >= 0 {
		scheme, rest = rest[:i+3], rest[i+3:]
	}
	query := ""
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query = rest[:i], rest[i:]
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	return scheme + rest + "/" + name + query
}

// The per-process state: the admin pool and the templates, each made once.
// The first error sticks, so a broken cluster fails every test the same way
// instead of retrying per test.
var (
	clusterOnce sync.Once
	clusterURL  string
	clusterErr  error
	clusterDir  string

	adminOnce sync.Once
	adminDB   *sql.DB
	adminErr  error

	pgTmplOnce sync.Once
	pgTmplName string
	pgTmplErr  error

	sqliteOnce sync.Once
	sqliteData []byte
	sqliteErr  error
)

func adminURL() (string, error) {
	if u := os.Getenv("DENAR_TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	clusterOnce.Do(func() { clusterURL, clusterErr = startCluster() })
	return clusterURL, clusterErr
}

// adminPool is one connection pool on the admin URL for the whole process:
// creating and dropping databases then costs no new connection each time.
func adminPool(url string) (*sql.DB, error) {
	adminOnce.Do(func() {
		adminDB, adminErr = sql.Open("pgx", url)
		if adminErr == nil {
			adminDB.SetMaxIdleConns(4)
		}
	})
	return adminDB, adminErr
}

func pgTemplate(url string, admin *sql.DB) (string, error) {
	pgTmplOnce.Do(func() {
		digest, err := store.MigrationsDigest(store.Postgres)
		if err != nil {
			pgTmplErr = err
			return
		}
		pgTmplName = "denar_tmpl_" + digest[:16]
		_, pgTmplErr = buildPGTemplate(url, admin, pgTmplName)
	})
	return pgTmplName, pgTmplErr
}

// buildPGTemplate makes sure the migrated template database name exists,
// building it unless another process already has; built reports whether
// this call did. The name must identify the migrations (it carries their
// digest).
func buildPGTemplate(url string, admin *sql.DB, name string) (built bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Session advisory locks belong to a connection: hold one for the
	// whole build.
	conn, err := admin.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	sum := sha256.Sum256([]byte("denar storetest template " + name))
	key := int64(binary.BigEndian.Uint64(sum[:8]))
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return false, fmt.Errorf("template lock: %w", err)
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", key) }()

	var isTemplate bool
	err = conn.QueryRowContext(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&isTemplate)
	switch {
	case err == nil && isTemplate:
		return false, nil // built before, by this run or an earlier one
	case err == nil:
		// Left by a builder that died before it finished; nobody else can
		// be building it, we hold the lock.
		if _, err := conn.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return false, fmt.Errorf("drop unfinished template: %w", err)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return false, fmt.Errorf("create template: %w", err)
	}
	db, err := store.Open(ctx, withDatabase(url, name))
	if err != nil {
		return false, err
	}
	err = db.Migrate(ctx)
	db.Close()
	if err != nil {
		return false, err
	}
	// No connections from now on: CREATE DATABASE … TEMPLATE needs the
	// template idle, and nothing may change it after the marker below.
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true"); err != nil {
		return false, fmt.Errorf("mark template: %w", err)
	}
	return true, nil
}

// sqliteTemplate returns the bytes of a migrated SQLite database, made once
// per process in a temporary directory that is removed at once.
func sqliteTemplate() ([]byte, error) {
	sqliteOnce.Do(func() { sqliteData, sqliteErr = buildSQLiteTemplate() })
	return sqliteData, sqliteErr
}

func buildSQLiteTemplate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "denar-sqlite-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "denar.db")
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+path)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// Everything into the main file, so that the file alone is the database.
	if _, err := db.WriteDB().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("sqlite template: write-ahead log not checkpointed (%d bytes)", fi.Size())
	}
	return os.ReadFile(path)
}

// Main runs the tests and then stops the throwaway cluster, if one was started.
func Main(m *testing.M) {
	code := m.Run()
	if adminDB != nil {
		adminDB.Close()
	}
	stopCluster()
	os.Exit(code)
}

func startCluster() (string, error) {
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return "", fmt.Errorf("initdb not found")
	}
	pgctl, err := exec.LookPath("pg_ctl")
	if err != nil {
		return "", fmt.Errorf("pg_ctl not found")
	}
	dir, err := os.MkdirTemp("", "denar-pg-")
	if err != nil {
		return "", err
	}
	clusterDir = dir
	// PostgreSQL refuses to run as root; as root, run it as the postgres user.
	var asUser []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", fmt.Errorf("running as root and there is no postgres user to run the cluster as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", err
		}
		asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(args ...string) ([]byte, error) {
		full := append(append([]string{}, asUser...), args...)
		cmd := exec.Command(full[0], full[1:]...)
		return cmd.CombinedOutput()
	}
	data := filepath.Join(dir, "data")
	if out, err := run(initdb, "-D", data, "-A", "trust", "-U", "denar", "-E", "UTF8", "--no-sync", "--locale=C"); err != nil {
		return "", fmt.Errorf("initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -F -c max_connections=200 -c fsync=off -c full_page_writes=off", port, dir)
	if out, err := run(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start"); err != nil {
		return "", fmt.Errorf("pg_ctl start: %v: %s", err, out)
	}
	url := fmt.Sprintf("postgres://denar@127.0.0.1:%d/postgres?sslmode=disable", port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := sql.Open("pgx", url)
		if err == nil {
			err = conn.PingContext(ctx)
			conn.Close()
		}
		if err == nil {
			return url, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("postgres did not accept connections: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func stopCluster() {
	if clusterDir == "" {
		return
	}
	pgctl, err := exec.LookPath("pg_ctl")
	if err == nil {
		args := []string{pgctl, "-D", filepath.Join(clusterDir, "data"), "-m", "immediate", "-w", "stop"}
		if os.Geteuid() == 0 {
			args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
		}
		_ = exec.Command(args[0], args[1:]...).Run()
	}
	_ = os.RemoveAll(clusterDir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
