//go:build crashpoints && unix

package crashpoint

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestHelperProcess is the child of TestCrashpointKills: it passes the
// point five times, printing each pass, under the rule in DENAR_CRASHPOINTS.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("CRASHPOINT_HELPER") != "1" {
		t.Skip("helper process")
	}
	for i := 1; i <= 5; i++ {
		Hit(StoreAfterCommit)
		Hit(StoreBeforeCommit) // not armed: never fires
		os.Stdout.WriteString("passed\n")
	}
	os.Exit(0)
}

func TestCrashpointKills(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule   string
		passed int // lines printed before the kill; -1: never killed
		hit    string
	}{
		{rule: "store.after_commit@hit=3", passed: 2, hit: "fired at hit 3"},
		{rule: "store.after_commit@hit=9", passed: -1},
		{rule: "store.after_commit@p=1,seed=1", passed: 0, hit: "fired at hit 1"},
		{rule: "", passed: -1},
	}
	for _, tt := range tests {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "CRASHPOINT_HELPER=1", Env+"="+tt.rule)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		passed := strings.Count(string(out), "passed\n")
		var exit *exec.ExitError
		killed := errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signaled() && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		switch {
		case tt.passed < 0:
			if err != nil || passed != 5 {
				t.Errorf("%q: %v after %d passes, want a clean run of 5; stderr %s", tt.rule, err, passed, stderr.String())
			}
		case !killed || passed != tt.passed || !strings.Contains(stderr.String(), "crashpoint: "+StoreAfterCommit+" "+tt.hit):
			t.Errorf("%q: %v after %d passes, want SIGKILL after %d; stderr %s", tt.rule, err, passed, tt.passed, stderr.String())
		}
	}
}
