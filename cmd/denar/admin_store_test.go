package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminDoesNotCreateAnEmptyDatabase: denar admin run where there is no
// database (another directory: ./denar-data is another one) names the
// database it would use and refuses, writing nothing; --create-database
// creates it; then every command names the database it uses.
func TestAdminDoesNotCreateAnEmptyDatabase(t *testing.T) {
	t.Parallel()
	admin := func(dir string, env []string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(denarBin, append([]string{"admin"}, args...)...)
		cmd.Dir, cmd.Env = dir, append(withoutDenarEnv(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
	}

	// From a directory without ./denar-data, DENAR_DATA_DIR unset.
	wd := t.TempDir()
	code, _, stderr := admin(wd, nil, "account", "list")
	want := filepath.Join(wd, "denar-data", "denar.db")
	if code != 1 || !strings.Contains(stderr, "no database at "+want) || !strings.Contains(stderr, `DENAR_DATA_DIR "./denar-data" in `+wd) ||
		!strings.Contains(stderr, "--create-database") {
		t.Fatalf("exit %d, stderr %q: want a refusal naming %s, DENAR_DATA_DIR and --create-database", code, stderr, want)
	}
	if entries, _ := os.ReadDir(wd); len(entries) > 0 {
		t.Fatalf("the refused command wrote %d entries", len(entries))
	}

	data := filepath.Join(t.TempDir(), "data")
	env := []string{"DENAR_DATA_DIR=" + data}
	db := filepath.Join(data, "denar.db")
	if code, _, stderr := admin(wd, env, "account", "list"); code != 1 || !strings.Contains(stderr, "no database at "+db) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := admin(wd, env, "account", "create", "--name", "Биро", "--create-database")
	if _, err := os.Stat(db); code != 0 || err != nil || !strings.Contains(stderr, "creating a new, empty database "+db) || !strings.Contains(stdout, "Биро") {
		t.Fatalf("--create-database: exit %d, %v, stdout %q, stderr %q", code, err, stdout, stderr)
	}
	code, stdout, stderr = admin(wd, env, "account", "list")
	if code != 0 || stderr != "denar admin: database "+db+"\n" || !strings.Contains(stdout, "Биро") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want the account and the database named", code, stdout, stderr)
	}
}

// TestAdminAsksAtATerminal: with a person at the terminal, a missing
// database is created only after a yes.
func TestAdminAsksAtATerminal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		answer string
		ok     bool
	}{{"y\n", true}, {"yes\n", true}, {"n\n", false}, {"\n", false}, {"", false}} {
		dir := t.TempDir()
		var stderr bytes.Buffer
		a := &admin{stdin: strings.NewReader(tt.answer), stderr: &stderr, terminal: func() bool { return true }}
		err := a.checkStore(Config{DataDir: dir, DatabaseURL: "sqlite://" + filepath.Join(dir, "denar.db")})
		if (err == nil) != tt.ok || !strings.Contains(stderr.String(), "Create a new, empty one? [y/N]") {
			t.Errorf("answer %q: %v, stderr %q", tt.answer, err, stderr.String())
		}
	}
}
