package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// runUJPSim serves the sandbox simulator of the tax authority's e-Faktura
// API on its own listener, so the service can be tested against a network
// peer that is slow, fails, or goes away. Its state is in its own store
// (-db), and its own job runner applies the retention rule there.
const ujpSimUsage = `Usage: denar ujp-sim [-addr ADDR] [-db URL] [-retention D] [-qr-base URL] [-clock-offset D] [-window D] [-serial-format decimal|hex] [-json]
       denar ujp-sim user add | certificate add | grant | revoke | privileges ...  (denar ujp-sim user add -h)

Serves the sandbox simulator of UJP's e-Faktura API as its own process, with
its state in its own store. DENAR_UJP_SIM_TOKEN (at least 16 characters) is
the bearer token of its /_sim control API and must be set. See docs/sandbox.md.
`

func runUJPSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if ok, err := ujpSimAdmin(ctx, args, stdout, stderr); ok {
		return err
	}
	fs := flag.NewFlagSet("denar ujp-sim", flag.ContinueOnError)
	dataDir := os.Getenv("DENAR_DATA_DIR")
	if dataDir == "" {
		dataDir = "./denar-data"
	}
	retention := ujpsim.DefaultRetention
	if v := os.Getenv("DENAR_UJP_SIM_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("configuration: DENAR_UJP_SIM_RETENTION: %v", err)
		}
		retention = d
	}
	window := ujpsim.DefaultWindow
	if v := os.Getenv("DENAR_UJP_SIM_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("configuration: DENAR_UJP_SIM_WINDOW must be a positive duration, not %q", v)
		}
		window = d
	}
	fs.DurationVar(&window, "window", window, "the per-user rate window: one request per window per X-EUJP-ID, never off (default DENAR_UJP_SIM_WINDOW or 1s, UJP's)")
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	dbURL := fs.String("db", "sqlite://"+filepath.Join(dataDir, "ujp-sim.db"),
		"the simulator's own store: sqlite://PATH or postgres://… (not denar serve's database)")
	fs.DurationVar(&retention, "retention", retention, "how long stored documents are kept (at least 1h; default DENAR_UJP_SIM_RETENTION or 90 days)")
	qr := fs.String("qr-base", "", "base of qr_link (default https://efakturatest.ujp.gov.mk)")
	jsonLogs := fs.Bool("json", false, "log as JSON")
	serialFormat := fs.String("serial-format", ujpsim.SerialDecimal, "how X-SERIAL-NUMBER must be written: decimal or hex")
	offset := time.Duration(0)
	if v := os.Getenv("DENAR_CLOCK_OFFSET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("configuration: DENAR_CLOCK_OFFSET: %v", err)
		}
		offset = d
	}
	fs.DurationVar(&offset, "clock-offset", offset, "shift the simulator's clock (requestTimestamp checks, receipt times, deadlines) by this much, "+
		"to rehearse dates with a denar serve given the same DENAR_CLOCK_OFFSET (default DENAR_CLOCK_OFFSET or 0)")
	if err := cli.Parse(fs, args, 0, 0, ujpSimUsage, stdout, stderr); err != nil {
		return err
	}
	token := os.Getenv("DENAR_UJP_SIM_TOKEN")
	if len(token) < minSimToken {
		return fmt.Errorf("configuration: DENAR_UJP_SIM_TOKEN must be set to the control token of /_sim (at least %d characters; "+
			"denar serve uses the same with DENAR_UJP_SANDBOX_BACKEND=ujp-sim)", minSimToken)
	}
	if retention < time.Hour {
		return fmt.Errorf("configuration: -retention must be at least 1h, not %s", retention)
	}
	if _, _, err := store.ParseURL(*dbURL); err != nil {
		return fmt.Errorf("configuration: -db: %v", err)
	}
	var log *slog.Logger
	if *jsonLogs {
		log = slog.New(slog.NewJSONHandler(stderr, nil))
	} else {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("ujp-sim: listen on %s: %w", *addr, err)
	}
	defer l.Close()
	db, err := store.Open(ctx, *dbURL)
	if err != nil {
		return fmt.Errorf("ujp-sim: %w", err)
	}
	defer db.Close()
	if offset != 0 {
		db.Now = func() time.Time { return time.Now().UTC().Add(offset) }
		log.Warn("ujp-sim: the clock is shifted", "offset", offset, "now", db.Now())
	}
	if err := db.Migrate(ctx); err != nil {
		return fmt.Errorf("ujp-sim: %w", err)
	}
	if window <= 0 {
		return fmt.Errorf("configuration: -window must be positive (the rate limit is never off), not %s", window)
	}
	sim, err := ujpsim.New(db, ujpsim.Options{QRBase: *qr, Logger: log, ControlToken: token, Now: db.Now,
		Window: window, SerialFormat: *serialFormat})
	if err != nil {
		return fmt.Errorf("ujp-sim: %w", err)
	}
	runner := jobs.NewRunner(db, jobs.Config{Logger: log})
	sim.RegisterPurge(runner, retention)
	if err := runner.Start(ctx); err != nil {
		return fmt.Errorf("ujp-sim: job runner: %w", err)
	}
	// The services' defaults for slow clients (httpx.Timeouts), and the
	// same security headers.
	srv := httpx.NewServer(logRequests(sim.Handler(), log), httpx.Timeouts{}, log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	fmt.Fprintf(stdout, "denar ujp-sim: serving the UJP e-Faktura simulator on http://%s (admin API under /_sim/, token DENAR_UJP_SIM_TOKEN; %s store; retention %s)\n",
		l.Addr(), db.Dialect(), retention)
	var serveErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("ujp-sim: %w", err)
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && serveErr == nil {
		serveErr = err
	}
	if err := runner.Stop(shutdownCtx); err != nil {
		log.Error("ujp-sim: job runner shutdown", "err", err)
	}
	return serveErr
}

// logRequests logs one line per request to the simulator: what it was asked
// (method, path, the caller's X-EUJP-ID and X-EDB), when it arrived, and
// what it answered, so an operator or a test can follow the traffic of a
// sandbox (and see which call came too soon for the rate window).
func logRequests(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		log.Info("ujp-sim request", "method", r.Method, "path", r.URL.Path, "user", r.Header.Get("X-EUJP-ID"), "edb", r.Header.Get("X-EDB"),
			"arrived", arrived.UTC().Format("15:04:05.000000"), "status", sw.status)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
