// Package cli holds the conventions every denar command line follows
// (denar, denar-agent, denar-load): -h, --help and a first argument "help"
// print the command's usage on standard output and exit 0; an unknown
// command, an unknown flag, a bad flag value or an unexpected argument
// prints the problem and the usage on standard error and exits 2; any other
// failure exits 1.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ErrHelp is returned after the usage was printed because it was asked for.
var ErrHelp = errors.New("help shown")

// ErrUsage is returned after the usage was printed because the command line
// was wrong.
var ErrUsage = errors.New("usage error")

// ExitCode is the process exit status for a command's result.
func ExitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	}
	return 1
}

// IsHelp reports whether arg asks for help.
func IsHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// PrintUsage writes usage (which should end with a newline) and, when fs
// has flags, their defaults.
func PrintUsage(w io.Writer, usage string, fs *flag.FlagSet) {
	fmt.Fprint(w, usage)
	if fs == nil {
		return
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if !hasFlags {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// Parse parses args with fs and checks the number of positional arguments
// (between minArgs and maxArgs; maxArgs < 0: no limit). A request for help
// prints usage and fs's flags to stdout and returns ErrHelp; a bad command
// line prints what is wrong and the same text to stderr and returns
// ErrUsage.
func Parse(fs *flag.FlagSet, args []string, minArgs, maxArgs int, usage string, stdout, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		PrintUsage(stdout, usage, fs)
		return ErrHelp
	case err != nil:
		return Fail(stderr, usage, fs, err.Error())
	}
	rest := fs.Args()
	if len(rest) > 0 && IsHelp(rest[0]) {
		PrintUsage(stdout, usage, fs)
		return ErrHelp
	}
	switch {
	case len(rest) < minArgs:
		return Fail(stderr, usage, fs, fmt.Sprintf("%s: missing arguments", fs.Name()))
	case maxArgs >= 0 && len(rest) > maxArgs:
		return Fail(stderr, usage, fs, fmt.Sprintf("%s: unexpected argument %q", fs.Name(), rest[maxArgs]))
	}
	return nil
}

// Fail prints msg and the usage to stderr and returns ErrUsage.
func Fail(stderr io.Writer, usage string, fs *flag.FlagSet, msg string) error {
	fmt.Fprintln(stderr, strings.TrimRight(msg, "\n"))
	fmt.Fprintln(stderr)
	PrintUsage(stderr, usage, fs)
	return ErrUsage
}
