package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args          []string
		min, max      int
		want          error
		stdout, stder bool // whether the usage went there
		n             int  // -n after parsing
	}{
		{[]string{"-n", "3"}, 0, 0, nil, false, false, 3},
		{[]string{"-h"}, 0, 0, ErrHelp, true, false, 0},
		{[]string{"--help"}, 0, 0, ErrHelp, true, false, 0},
		{[]string{"-help"}, 0, 0, ErrHelp, true, false, 0},
		{[]string{"help"}, 0, 0, ErrHelp, true, false, 0},
		{[]string{"-n", "3", "help"}, 0, 1, ErrHelp, true, false, 3},
		{[]string{"--bogus"}, 0, 0, ErrUsage, false, true, 0},
		{[]string{"-n", "x"}, 0, 0, ErrUsage, false, true, 0},
		{[]string{"a"}, 0, 0, ErrUsage, false, true, 0},
		{[]string{}, 1, 1, ErrUsage, false, true, 0},
		{[]string{"a", "b"}, 1, -1, nil, false, false, 0},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			n := fs.Int("n", 0, "a number")
			var stdout, stderr bytes.Buffer
			err := Parse(fs, tc.args, tc.min, tc.max, "Usage: x [-n N]\n", &stdout, &stderr)
			if !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if got := strings.Contains(stdout.String(), "Usage: x") && strings.Contains(stdout.String(), "-n int"); got != tc.stdout {
				t.Fatalf("usage on stdout %v, want %v: %q", got, tc.stdout, stdout.String())
			}
			if got := strings.Contains(stderr.String(), "Usage: x"); got != tc.stder {
				t.Fatalf("usage on stderr %v, want %v: %q", got, tc.stder, stderr.String())
			}
			if err == nil && *n != tc.n {
				t.Fatalf("-n %d, want %d", *n, tc.n)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0}, {ErrHelp, 0}, {ErrUsage, 2}, {fmt.Errorf("wrapped: %w", ErrUsage), 2}, {errors.New("boom"), 1},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func ExampleParse() {
	fs := flag.NewFlagSet("greet", flag.ContinueOnError)
	name := fs.String("name", "world", "who to greet")
	var stdout, stderr bytes.Buffer
	err := Parse(fs, []string{"-name", "Ана"}, 0, 0, "Usage: greet [-name NAME]\n", &stdout, &stderr)
	fmt.Println(*name, ExitCode(err))
	err = Parse(flag.NewFlagSet("greet", flag.ContinueOnError), []string{"--loud"}, 0, 0, "Usage: greet\n", &stdout, &stderr)
	fmt.Println(ExitCode(err))
	// Output:
	// Ана 0
	// 2
}

func TestIsTerminal(t *testing.T) {
	t.Parallel()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, f := range map[string]*os.File{"the null device": null, "a file": file, "a pipe": r} {
		if IsTerminal(f) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}
