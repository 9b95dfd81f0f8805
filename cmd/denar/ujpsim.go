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
	"time"

	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// runUJPSim serves the sandbox simulator of the tax authority's e-Faktura
// API on its own listener, so the service can be tested against a network
// peer that is slow, fails, or goes away.
func runUJPSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ujp-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	state := fs.String("state", "", "JSON file holding the simulator's documents across restarts (default: in memory)")
	qr := fs.String("qr-base", "", "base of qr_link (default https://efakturatest.ujp.gov.mk)")
	jsonLogs := fs.Bool("json", false, "log as JSON")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	var log *slog.Logger
	if *jsonLogs {
		log = slog.New(slog.NewJSONHandler(stderr, nil))
	} else {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}
	sim, err := ujpsim.New(ujpsim.Options{StatePath: *state, QRBase: *qr, Logger: log})
	if err != nil {
		return fmt.Errorf("ujp-sim: %w", err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("ujp-sim: listen on %s: %w", *addr, err)
	}
	// The services' defaults for slow clients (httpx.Timeouts), and the
	// same security headers.
	srv := httpx.NewServer(logRequests(sim.Handler(), log), httpx.Timeouts{}, log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	fmt.Fprintf(stdout, "denar ujp-sim: serving the UJP e-Faktura simulator on http://%s (admin API under /_sim/)\n", l.Addr())
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("ujp-sim: %w", err)
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// logRequests logs one line per request to the simulator: what it was asked
// (method, path, the caller's X-EDB) and what it answered, so an operator or
// a test can follow the traffic of a sandbox.
func logRequests(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		log.Info("ujp-sim request", "method", r.Method, "path", r.URL.Path, "edb", r.Header.Get("X-EDB"), "status", sw.status)
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
