package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		code     int
		inStdout bool
	}{
		{[]string{"-h"}, 0, true},
		{[]string{"--help"}, 0, true},
		{[]string{"help"}, 0, true},
		{[]string{"--no-such-flag"}, 2, false},
		{[]string{"-rounds", "many"}, 2, false},
		{[]string{"-server-env", "PATH=/"}, 2, false},
		{[]string{"-clients", "0"}, 2, false},
		{[]string{"extra"}, 2, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := command(tc.args, &stdout, &stderr)
			shown, other := stdout.String(), stderr.String()
			if !tc.inStdout {
				shown, other = other, shown
			}
			if code != tc.code || other != "" || !strings.Contains(shown, "Usage") || !strings.Contains(shown, "denar-load") {
				t.Fatalf("exit %d (want %d), stdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
		})
	}
}
