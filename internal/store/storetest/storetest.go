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
// A package that uses PostgreSQL calls storetest.Main from its TestMain so
// that the throwaway cluster is stopped after the tests.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
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
// "sqlite" and "postgres".
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, Postgres(t)) })
}

// EachURL is Each for tests that need a database URL rather than an open
// store (end-to-end tests that start the denar binary).
func EachURL(t *testing.T, fn func(t *testing.T, url string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLiteURL(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresURL(t)) })
}

// SQLiteURL returns the URL of a new SQLite file in a temporary directory.
func SQLiteURL(t testing.TB) string {
	t.Helper()
	return "sqlite://" + filepath.Join(t.TempDir(), "denar.db")
}

// SQLite returns a migrated store on a new SQLite file.
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	return open(t, SQLiteURL(t))
}

// Postgres returns a migrated store on a new PostgreSQL database.
func Postgres(t testing.TB) *store.DB {
	t.Helper()
	return open(t, PostgresURL(t))
}

func open(t testing.TB, url string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// PostgresURL creates an empty database and returns its URL. It is dropped
// when the test ends.
func PostgresURL(t testing.TB) string {
	t.Helper()
	admin, err := adminURL()
	if err != nil {
		if os.Getenv("DENAR_TEST_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL required (DENAR_TEST_REQUIRE_POSTGRES=1) but unavailable: %v", err)
		}
		t.Skipf("SKIP PostgreSQL: %v (set DENAR_TEST_DATABASE_URL or install initdb/pg_ctl)", err)
	}
	name := "denar_test_" + randomHex(6)
	conn, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatalf("postgres admin: %v", err)
	}
	defer conn.Close()
	if _, err := conn.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := sql.Open("pgx", admin)
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
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

var (
	clusterOnce sync.Once
	clusterURL  string
	clusterErr  error
	clusterDir  string
)

func adminURL() (string, error) {
	if u := os.Getenv("DENAR_TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	clusterOnce.Do(func() { clusterURL, clusterErr = startCluster() })
	return clusterURL, clusterErr
}

// Main runs the tests and then stops the throwaway cluster, if one was started.
func Main(m *testing.M) {
	code := m.Run()
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
