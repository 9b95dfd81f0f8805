// Command denar runs the payroll and e-invoicing services and their
// administration:
//
//	denar serve            both services, each on its own listener
//	denar migrate          apply database migrations and exit
//	denar openapi [-dir D] write each service's OpenAPI document
//	denar admin …          accounts, credentials and mail (see denar admin -h)
//	denar ujp-sim          the sandbox simulator of the tax authority (UJP)
//	denar ujp check        the go-live check of the connection to UJP
//
// Configuration comes from DENAR_* environment variables (see the README).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // Europe/Skopje for "today", also on machines without a tz database

	"github.com/denar-mk/denar/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if code := cli.ExitCode(err); code != 0 {
		if code == 1 {
			fmt.Fprintln(os.Stderr, "denar:", err)
		}
		stop()
		os.Exit(code)
	}
}

const usage = `denar: payroll and e-invoicing API for North Macedonia

Usage:
  denar serve                 start both services (payroll and e-invoicing)
  denar migrate               apply database migrations
  denar openapi [-dir DIR]    write the OpenAPI documents (default: api)
  denar admin COMMAND         manage accounts, plans, credentials and mail ("denar admin help" lists them)
  denar ujp-sim [-addr A] [-db URL] [-retention D]
                              serve the sandbox simulator of the tax authority's e-Faktura API
  denar ujp check --env E [--company C] [--sign] [--json]
                              check the connection to UJP before going live
  denar version               the build's version and commit
  denar help [COMMAND]        this text, or a command's ("denar COMMAND -h" too)

Configuration comes from DENAR_* environment variables (see the README).
Exit status: 0 success, 1 failure, 2 a wrong command line.
`

const versionUsage = `Usage: denar version

Prints the build's module version, the commit it was built from (with its
time and whether the tree had uncommitted changes) and the Go version.
`

// Run executes one denar command; tests call it directly.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Fail(stderr, usage, nil, "denar: no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], stdout, stderr)
	case "openapi":
		return runOpenAPI(args[1:], stdout, stderr)
	case "admin":
		return runAdmin(ctx, args[1:], stdout, stderr)
	case "ujp-sim":
		return runUJPSim(ctx, args[1:], stdout, stderr)
	case "ujp":
		return runUJP(ctx, args[1:], stdout, stderr)
	case "version":
		if err := cli.Parse(flag.NewFlagSet("denar version", flag.ContinueOnError), args[1:], 0, 0, versionUsage, stdout, stderr); err != nil {
			return err
		}
		fmt.Fprint(stdout, cli.Version("denar"))
		return nil
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" && !cli.IsHelp(args[1]) {
			// denar help COMMAND… is COMMAND… -h.
			return Run(ctx, append(append([]string{}, args[1:]...), "-h"), stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return cli.ErrHelp
	}
	return cli.Fail(stderr, usage, nil, fmt.Sprintf("denar: unknown command %q", args[0]))
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
