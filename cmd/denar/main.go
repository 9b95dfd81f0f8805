// Command denar runs the payroll and e-invoicing services and their
// administration:
//
//	denar serve            both services, each on its own listener
//	denar migrate          apply database migrations and exit
//	denar openapi [-dir D] write each service's OpenAPI document
//	denar admin …          accounts, credentials and mail (see denar admin -h)
//	denar ujp-sim          the sandbox simulator of the tax authority (UJP)
//
// Configuration comes from DENAR_* environment variables (see the README).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // Europe/Skopje for "today", also on machines without a tz database
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "denar:", err)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

const usage = `denar: payroll and e-invoicing API for North Macedonia

Usage:
  denar serve                 start both services (payroll and e-invoicing)
  denar migrate               apply database migrations
  denar openapi [-dir DIR]    write the OpenAPI documents (default: api)
  denar admin COMMAND         manage accounts, credentials and mail; "denar admin" lists commands
  denar ujp-sim [-addr A] [-db URL] [-retention D]
                              serve the sandbox simulator of the tax authority's e-Faktura API
`

// Run executes one denar command; tests call it directly.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], stdout)
	case "openapi":
		return runOpenAPI(args[1:], stdout)
	case "admin":
		return runAdmin(ctx, args[1:], stdout, stderr)
	case "ujp-sim":
		return runUJPSim(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "denar: unknown command %q\n\n%s", args[0], usage)
	return errUsage
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
