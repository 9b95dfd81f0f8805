// Command denar-load measures POST /v1/calculations against a trivial JSON
// echo handler served through the same plumbing (authentication, request
// ids, logs, metrics) in the same run, and prints both rates and their
// ratio. Both run in this process on loopback, with a throwaway SQLite
// store; the numbers compare like with like on whatever machine runs it.
//
//	go run ./cmd/denar-load -duration 5s -workers 8
//
// With -files it measures memory instead: the peak resident memory of a
// real `denar serve` process answering several maximum-size file requests
// at once (see files.go).
//
//	go run ./cmd/denar-load -files [-bin ./denar] [-records 10000] [-concurrent 4]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/payrollapi"
	"github.com/denar-mk/denar/internal/store"
)

const calcBody = `{"grossSalary":"36037","effectiveDate":"2026-01-15","overtimeHours":8,"nightHours":16}`

const usage = `Usage:
  denar-load [-duration 5s] [-workers 8]
  denar-load -files [-bin ./denar] [-records 10000] [-concurrent 4] [-endpoints …] [-server-env DENAR_X=v]…

Measures POST /v1/calculations against a trivial echo handler served through
the same plumbing in the same run and prints both rates and their ratio; with
-files, the peak resident memory of a real denar serve under maximum-size
МПИН requests against its baseline.
`

func main() {
	if code := cli.ExitCode(run(os.Args[1:], os.Stdout, os.Stderr)); code != 0 {
		os.Exit(code)
	}
}

// run parses the command line and runs one measurement.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("denar-load", flag.ContinueOnError)
	duration := fs.Duration("duration", 5*time.Second, "how long each target is loaded (at most 60s)")
	workers := fs.Int("workers", 8, "concurrent clients")
	files := fs.Bool("files", false, "measure the peak memory of denar serve under maximum-size file requests instead")
	bin := fs.String("bin", "", "with -files: the denar binary to start (default: go build it)")
	records := fs.Int("records", 10000, "with -files: records per МПИН request")
	concurrent := fs.Int("concurrent", 4, "with -files: requests sent at once to each endpoint")
	endpoints := fs.String("endpoints", "/v1/files/mpin/validate,/v1/files/mpin/xml,/v1/files/mpin/txt", "with -files: the endpoints, comma-separated")
	var serverEnv []string
	fs.Func("server-env", "with -files: a DENAR_*=value setting for the server (repeatable), e.g. DENAR_HEAVY_CONCURRENCY=4", func(s string) error {
		if !strings.HasPrefix(s, "DENAR_") || !strings.Contains(s, "=") {
			return fmt.Errorf("want DENAR_NAME=value, not %q", s)
		}
		serverEnv = append(serverEnv, s)
		return nil
	})
	if err := cli.Parse(fs, args, 0, 0, usage, stdout, stderr); err != nil {
		return err
	}
	var err error
	if *files {
		err = runFiles(filesConfig{bin: *bin, serverEnv: serverEnv, records: *records, concurrent: *concurrent, endpoints: strings.Split(*endpoints, ",")})
	} else {
		err = measure(min(*duration, time.Minute), *workers)
	}
	if err != nil {
		fmt.Fprintln(stderr, "denar-load:", err)
	}
	return err
}

type echoBody struct {
	Body map[string]any
}

func measure(d time.Duration, workers int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denar-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "load.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	a := &auth.Store{DB: db}
	acct, err := a.CreateAccount(ctx, "load", "sandbox")
	if err != nil {
		return err
	}
	_, key, err := a.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	payroll := payrollapi.New(payrollapi.Deps{Auth: a, Companies: auth.Employers{DB: db}, Log: log})
	echo := httpx.NewService(httpx.Options{Name: auth.ServicePayroll, Title: "echo", Version: "1", Auth: a, Log: log})
	httpx.Register(echo, huma.Operation{OperationID: "echo", Method: http.MethodPost, Path: "/v1/echo"}, httpx.Spec{},
		func(_ context.Context, in *echoBody) (*echoBody, error) { return in, nil })

	payrollURL, stop1, err := serve(payroll.Handler())
	if err != nil {
		return err
	}
	defer stop1()
	echoURL, stop2, err := serve(echo.Handler())
	if err != nil {
		return err
	}
	defer stop2()

	fmt.Printf("denar-load: %d workers, %s per target, GOMAXPROCS-bound on this machine\n", workers, d)
	echoRate, echoErr := load(echoURL+"/v1/echo", key, calcBody, d, workers)
	calcRate, calcErr := load(payrollURL+"/v1/calculations", key, calcBody, d, workers)
	fmt.Printf("echo:         %10.0f requests/s (%d errors)\n", echoRate, echoErr)
	fmt.Printf("calculations: %10.0f requests/s (%d errors)\n", calcRate, calcErr)
	if echoRate > 0 {
		fmt.Printf("ratio calculations/echo: %.2f\n", calcRate/echoRate)
	}
	if echoErr+calcErr > 0 {
		return fmt.Errorf("%d requests failed", echoErr+calcErr)
	}
	return nil
}

func serve(h http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

// load sends POSTs from workers clients for d and returns successful
// requests per second and the count of failures.
func load(url, key, body string, d time.Duration, workers int) (float64, int64) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 10 * time.Second}
	var ok, failed atomic.Int64
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds(), failed.Load()
}
