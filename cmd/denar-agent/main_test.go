package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/agent"
	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/sdk/signer"
)

// TestEveryCommandExplainsItself runs the agent's command line the way main
// does (run, then cli.ExitCode for the exit status).
func TestEveryCommandExplainsItself(t *testing.T) {
	t.Parallel()
	exec := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), args, nil, &stdout, &stderr)
		return cli.ExitCode(err), stdout.String(), stderr.String()
	}
	for _, path := range [][]string{{}, {"pair"}, {"register-certificate"}, {"run"}, {"version"}} {
		name := strings.Join(append([]string{"denar-agent"}, path...), " ")
		for _, ask := range []string{"-h", "--help", "help"} {
			t.Run(name+" "+ask, func(t *testing.T) {
				t.Parallel()
				code, out, errOut := exec(append(append([]string{}, path...), ask)...)
				if code != 0 || errOut != "" || !strings.Contains(out, "Usage") || !strings.Contains(out, name) {
					t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
				}
			})
		}
		if len(path) > 0 {
			t.Run("denar-agent help "+path[0], func(t *testing.T) {
				t.Parallel()
				if code, out, _ := exec("help", path[0]); code != 0 || !strings.Contains(out, name) {
					t.Fatalf("exit %d:\n%s", code, out)
				}
			})
		}
	}
	for _, args := range [][]string{
		{}, {"frobnicate"}, {"help", "frobnicate"}, {"--no-such-flag"},
		{"pair", "--no-such-flag"}, {"register-certificate", "--no-such-flag"}, {"run", "--no-such-flag"},
		{"run", "extra"}, {"pair"}, // pair without --server and --code
		{"run", "--auto", "--batch", "0"}, {"run", "--auto", "--batch", "101"},
		{"version", "extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errOut := exec(args...)
			if code != 2 || out != "" || !strings.Contains(errOut, "Usage") {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
			}
		})
	}
}

// TestVersion: denar-agent version prints the build (cli.FormatVersion
// words it; the denar binary's end-to-end test checks the commit).
func TestVersion(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"version"}, nil, &stdout, &stderr)
	if cli.ExitCode(err) != 0 || stderr.Len() > 0 || !strings.HasPrefix(stdout.String(), "denar-agent ") || !strings.Contains(stdout.String(), "\ncommit ") {
		t.Fatalf("%v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
}

// TestRunNeedsSomeoneToAsk: without a terminal (a service, a pipe: here
// the null device), run refuses to start unless it signs every purpose by
// itself, and says what to pass; before, it started and refused every
// document with policy, failing each for good.
func TestRunNeedsSomeoneToAsk(t *testing.T) {
	t.Parallel()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	creds := filepath.Join(t.TempDir(), "missing.json")
	for _, tt := range []struct {
		args    []string
		refused string // the purposes named, "" when it gets past the check
	}{
		{[]string{"--key", "k.pem", "--cert", "c.pem"}, "document and decision"},
		{[]string{"--key", "k.pem", "--cert", "c.pem", "--auto-purposes", "query,document"}, "decision"},
		{[]string{"--key", "k.pem", "--cert", "c.pem", "--auto-purposes", "document,decision,query"}, ""},
		{[]string{"--key", "k.pem", "--cert", "c.pem", "--auto"}, ""},
	} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), append([]string{"run", "--credentials", creds}, tt.args...), null, &stdout, &stderr)
		refused := strings.Contains(stderr.String(), "no terminal to ask")
		switch {
		case tt.refused != "" && (cli.ExitCode(err) != 2 || !refused || !strings.Contains(stderr.String(), "sign "+tt.refused+" requests") ||
			!strings.Contains(stderr.String(), "--auto") || !strings.Contains(stderr.String(), "--auto-purposes document,decision,query")):
			t.Errorf("%v: exit %d, stderr %q: want a refusal naming %s and what to pass", tt.args, cli.ExitCode(err), stderr.String(), tt.refused)
		case tt.refused == "" && (refused || err == nil || !strings.Contains(err.Error(), "missing.json")):
			t.Errorf("%v: %v, stderr %q: want past the check, to the missing credentials", tt.args, err, stderr.String())
		}
	}
}

// TestSandboxSignerRefusesProduction: credentials paired in production are
// refused before anything is made or sent (the server refuses a
// self-signed certificate for a production company as well).
func TestSandboxSignerRefusesProduction(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "credentials.json")
	if err := agent.SaveCredentials(path, signer.Credentials{Server: "http://127.0.0.1:1", AgentID: "agt_x", Secret: "s",
		Environment: "production"}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"run", "--sandbox-self-signed", "--company", "cmp_x", "--credentials", path}, nil, &stdout, &stderr)
	if cli.ExitCode(err) != 1 || !strings.Contains(err.Error(), "sandbox companies only") {
		t.Fatalf("err %v", err)
	}
	for _, args := range [][]string{
		{"run", "--sandbox-self-signed", "--credentials", path},                                 // no --company
		{"run", "--sandbox-self-signed", "--company", "cmp_x", "--key", "k.pem", "--cert", "c"}, // key flags
		{"run", "--company", "cmp_x", "--key", "k.pem", "--cert", "c.pem"},                      // --company without sandbox
	} {
		stdout.Reset()
		stderr.Reset()
		if code := cli.ExitCode(run(t.Context(), args, nil, &stdout, &stderr)); code != 2 || !strings.Contains(stderr.String(), "Usage") {
			t.Errorf("%v: exit %d, stderr %s", args, code, stderr.String())
		}
	}
}
