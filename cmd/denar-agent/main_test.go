package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/cli"
)

// TestEveryCommandExplainsItself runs the agent's command line the way main
// does (run, then cli.ExitCode for the exit status).
func TestEveryCommandExplainsItself(t *testing.T) {
	t.Parallel()
	exec := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), args, &stdout, &stderr)
		return cli.ExitCode(err), stdout.String(), stderr.String()
	}
	for _, path := range [][]string{{}, {"pair"}, {"register-certificate"}, {"run"}} {
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
