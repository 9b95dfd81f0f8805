package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirPrivate: denar serve on a fresh data directory (the embedded
// SQLite store, a generated webhook key) makes it 0700 and every file in it
// — denar.db, its -wal and -shm, the access epoch, the key — 0600, and
// warns about nothing; started again after someone opened the directory
// and the database to others, it warns about each, naming the path and
// the mode, and serves.
func TestDataDirPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "denar-data")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DENAR_") {
			env = append(env, kv)
		}
	}
	env = append(env, "DENAR_DATA_DIR="+dir, "DENAR_LOG_FORMAT=json")
	s := startServer(t, env)
	want := map[string]bool{"denar.db": false, "denar.db-wal": false, "denar.db-shm": false, "denar.db-access": false, "webhook-secret.key": false}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v %v, want 0700", fi.Mode(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want 0600", e.Name(), fi.Mode())
		}
		if _, ok := want[e.Name()]; ok {
			want[e.Name()] = true
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("no %s in the data directory", name)
		}
	}
	s.stop(t)
	if strings.Contains(s.stderr.String(), "open to other users") {
		t.Fatalf("a fresh data directory was warned about:\n%s", s.stderr.String())
	}

	// Opened to others, by hand.
	db := filepath.Join(dir, "denar.db")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	s = s.restart(t)
	s.stop(t)
	warned := map[string]string{}
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var rec struct{ Level, Msg, Path, Mode string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Level == "WARN" && strings.Contains(rec.Msg, "open to other users") {
			warned[rec.Path] = rec.Mode
		}
	}
	if warned[dir] != "0755" || warned[db] != "0644" {
		t.Fatalf("warnings %v, want %s 0755 and %s 0644; log:\n%s", warned, dir, db, s.stderr.String())
	}
	for p := range warned {
		if p != dir && !strings.HasPrefix(p, db) {
			t.Errorf("warned about %s, which is private", p)
		}
	}
}
