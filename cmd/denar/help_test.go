package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// commandPaths is every command of the denar binary, from the tables the
// binary itself dispatches on (a new admin command is covered by adding it).
func commandPaths() [][]string {
	paths := [][]string{{}, {"serve"}, {"migrate"}, {"openapi"}, {"ujp-sim"}, {"version"}, {"admin"}}
	groups := map[string]bool{}
	for _, c := range adminCommands {
		g, _, _ := strings.Cut(c.name, " ")
		if !groups[g] {
			groups[g] = true
			paths = append(paths, []string{"admin", g})
		}
		paths = append(paths, append([]string{"admin"}, strings.Fields(c.name)...))
	}
	return paths
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

// runDenar runs the built binary with an empty data directory and no
// DENAR_* settings, and checks that the directory stays empty: asking for
// help or getting the command line wrong must not touch a store.
func runDenar(t *testing.T, args ...string) cmdResult {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, denarBin, args...)
	cmd.Env = append(withoutDenarEnv(), "DENAR_DATA_DIR="+dir, "DENAR_PAYROLL_ADDR=127.0.0.1:0", "DENAR_EINVOICE_ADDR=127.0.0.1:0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := cmdResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("denar %s: %v", strings.Join(args, " "), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("denar %s wrote %d entries into DENAR_DATA_DIR", strings.Join(args, " "), len(entries))
	}
	return res
}

func withoutDenarEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DENAR_") {
			env = append(env, kv)
		}
	}
	return env
}

func TestEveryCommandExplainsItself(t *testing.T) {
	t.Parallel()
	for _, path := range commandPaths() {
		name := strings.Join(append([]string{"denar"}, path...), " ")
		for _, ask := range []string{"-h", "--help", "help"} {
			t.Run(name+" "+ask, func(t *testing.T) {
				t.Parallel()
				r := runDenar(t, append(append([]string{}, path...), ask)...)
				if r.code != 0 || r.stderr != "" {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				if !strings.Contains(r.stdout, "Usage") || !strings.Contains(r.stdout, name) {
					t.Fatalf("stdout does not show the usage of %q:\n%s", name, r.stdout)
				}
			})
		}
		// A leaf command also explains itself through denar help.
		if len(path) > 0 {
			t.Run("denar help "+strings.Join(path, " "), func(t *testing.T) {
				t.Parallel()
				r := runDenar(t, append([]string{"help"}, path...)...)
				if r.code != 0 || !strings.Contains(r.stdout, name) {
					t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
				}
			})
		}
		t.Run(name+" --no-such-flag", func(t *testing.T) {
			t.Parallel()
			r := runDenar(t, append(append([]string{}, path...), "--no-such-flag")...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "Usage") {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestUnknownCommandsAreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"help", "frobnicate"},
		{"admin"},
		{"admin", "frobnicate"},
		{"admin", "account"},
		{"admin", "account", "frobnicate"},
		{"admin", "key", "revoke"}, // its argument missing
		{"admin", "key", "revoke", "key_1", "key_2"}, // one too many
		{"admin", "account", "list", "extra"},
		{"serve", "extra"},
		{"openapi", "-dir"}, // a flag without its value
		{"version", "extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			r := runDenar(t, args...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "Usage") {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestVersion: denar version prints the module version and the commit the
// binary was built from, as the build recorded them (go version -m reads
// the same record; go build stamps the commit in a git checkout, not in a
// git worktree or with -buildvcs=false, and the binary then says so).
func TestVersion(t *testing.T) {
	t.Parallel()
	r := runDenar(t, "version")
	if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "denar ") || !strings.Contains(r.stdout, "\ngo1.") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	out, err := exec.Command("go", "version", "-m", denarBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var rev, mod string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		case len(f) >= 3 && f[0] == "mod":
			mod = f[2]
		}
	}
	want := []string{"denar " + mod + "\n", "\ncommit unknown"}
	if rev != "" {
		want[1] = "\ncommit " + rev + " ("
	} else {
		t.Logf("the test binary records no commit (built in a git worktree or with -buildvcs=false)")
	}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("%q lacks %q", r.stdout, w)
		}
	}
}
