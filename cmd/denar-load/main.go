// Command denar-load measures the payroll service's POST /v1/calculations
// against a plain net/http handler that decodes and re-encodes the same
// JSON, side by side in one run, at several numbers of concurrent clients,
// and prints the rates and their ratio (target: at least 0.5 at every
// level). It then times a 500-input POST /v1/calculations/batch against
// the engine computing the same 500 inputs (target: at most 3×).
//
// The service runs as `denar serve` runs it — authentication with a real
// API key in a SQLite store, request ids, metrics, a JSON access log (to
// io.Discard: its formatting is counted, not the terminal), rate limit off
// — on loopback. The clients are kept cheap (raw keep-alive HTTP/1.1 over
// TCP, requests prepared once) so that they measure the servers, not
// themselves. Both targets share the machine with the clients, so the
// ratio compares like with like on whatever machine runs it.
//
//	go run ./cmd/denar-load
//	go run ./cmd/denar-load -duration 5s -clients 8,32,128 -cpuprofile cpu.out -mutexprofile mutex.out -blockprofile block.out
//
// With -files it measures memory instead: the peak resident memory of a
// real `denar serve` process answering several maximum-size requests to
// each file endpoint at once, against the target of 400 MB (see files.go).
//
//	go run ./cmd/denar-load -files [-bin ./denar] [-records N] [-concurrent 4] [-shapes lean,full]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/internal/payrollapi"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/payroll"
)

// calcBody is a typical calculation: a gross, a date, premium hours.
const calcBody = `{"grossSalary":"36037","effectiveDate":"2026-01-15","overtimeHours":8,"nightHours":16}`

type options struct {
	duration                            time.Duration
	rounds                              int
	clients                             []int
	batchRuns                           int
	cpuProfile, mutexProfile, blockProf string
}

const usage = `Usage:
  denar-load [-clients 8,32,128] [-duration 4s] [-rounds 8] [-batch-runs 30]
             [-cpuprofile F] [-mutexprofile F] [-blockprofile F]
  denar-load -files [-bin ./denar] [-records N] [-concurrent 4] [-endpoints …] [-shapes lean,full] [-idempotency-key]
             [-server-env DENAR_X=v]…

Measures POST /v1/calculations against a plain JSON handler in the same run
and prints the rates and their ratio (target at least 0.5), then a 500-input
batch against the engine (target at most 3×); with -files, the peak resident
memory of a real denar serve under four maximum-size requests at once to
each file endpoint (target under 400 MB). Exit status:
0 targets met, 1 failure, 2 a wrong command line, 3 a target missed.
`

func main() {
	os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
}

// command runs denar-load with args and returns the exit status.
func command(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("denar-load", flag.ContinueOnError)
	clients := fs.String("clients", "8,32,128", "comma-separated numbers of concurrent clients")
	fs.DurationVar(&o.duration, "duration", 4*time.Second, "load per target and level (at most 60s)")
	fs.IntVar(&o.rounds, "rounds", 8, "alternations of the two targets per level, so that both see the same background load")
	fs.IntVar(&o.batchRuns, "batch-runs", 30, "500-input batches timed over HTTP and in the engine")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the calculation load to this file")
	fs.StringVar(&o.mutexProfile, "mutexprofile", "", "write a mutex contention profile to this file")
	fs.StringVar(&o.blockProf, "blockprofile", "", "write a blocking profile to this file")
	files := fs.Bool("files", false, "measure the peak memory of denar serve under maximum-size file requests instead")
	bin := fs.String("bin", "", "with -files: the denar binary to start (default: go build it)")
	records := fs.Int("records", 0, "with -files: records per request (default: as many as the body limit admits)")
	concurrent := fs.Int("concurrent", 4, "with -files: requests sent at once to each endpoint")
	endpoints := fs.String("endpoints", strings.Join(fileEndpoints, ","), "with -files: the endpoints, comma-separated")
	idempotent := fs.Bool("idempotency-key", false, "with -files: send each request with its own Idempotency-Key, as the SDK does")
	shapes := fs.String("shapes", "lean,full", "with -files: the record shapes, comma-separated: lean (required fields: the most records) and full (every field)")
	var serverEnv []string
	fs.Func("server-env", "with -files: a DENAR_*=value, GOMEMLIMIT=value or GOGC=value setting for the server (repeatable), e.g. DENAR_HEAVY_CONCURRENCY=4", func(s string) error {
		name, _, ok := strings.Cut(s, "=")
		if !ok || (!strings.HasPrefix(name, "DENAR_") && name != "GOMEMLIMIT" && name != "GOGC") {
			return fmt.Errorf("want DENAR_NAME=value, GOMEMLIMIT=value or GOGC=value, not %q", s)
		}
		serverEnv = append(serverEnv, s)
		return nil
	})
	if err := cli.Parse(fs, args, 0, 0, usage, stdout, stderr); err != nil {
		return cli.ExitCode(err)
	}
	if *files {
		c := filesConfig{bin: *bin, serverEnv: serverEnv, records: *records, limit: payrollapi.MaxFileBody,
			concurrent: *concurrent, endpoints: strings.Split(*endpoints, ","), shapes: strings.Split(*shapes, ","), idempotent: *idempotent}
		for _, s := range c.shapes {
			if s != "lean" && s != "full" {
				return cli.ExitCode(cli.Fail(stderr, usage, fs, "denar-load: -shapes takes lean and full"))
			}
		}
		if c.records < 0 || c.concurrent < 1 {
			return cli.ExitCode(cli.Fail(stderr, usage, fs, "denar-load: -records and -concurrent want positive numbers"))
		}
		ok, err := runFiles(c)
		if err != nil {
			fmt.Fprintln(stderr, "denar-load:", err)
			return 1
		}
		if !ok {
			return 3
		}
		return 0
	}
	o.duration = min(o.duration, time.Minute)
	for _, c := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 || n > 4096 {
			return cli.ExitCode(cli.Fail(stderr, usage, fs, "denar-load: -clients wants numbers from 1 to 4096"))
		}
		o.clients = append(o.clients, n)
	}
	ok, err := run(o)
	if err != nil {
		fmt.Fprintln(stderr, "denar-load:", err)
		return 1
	}
	if !ok {
		return 3
	}
	return 0
}

// echo is the baseline: a plain net/http handler that decodes the body as
// JSON and encodes it back.
func echo(w http.ResponseWriter, r *http.Request) {
	var v any
	if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func run(o options) (bool, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denar-load-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "load.db"))
	if err != nil {
		return false, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return false, err
	}
	a := &auth.Store{DB: db}
	acct, err := a.CreateAccount(ctx, "load", "sandbox")
	if err != nil {
		return false, err
	}
	_, key, err := a.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
	if err != nil {
		return false, err
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	service := payrollapi.New(payrollapi.Deps{Auth: a, Companies: auth.Employers{DB: db}, Log: log})

	payrollAddr, stop1, err := serve(service.Handler())
	if err != nil {
		return false, err
	}
	defer stop1()
	echoAddr, stop2, err := serve(http.HandlerFunc(echo))
	if err != nil {
		return false, err
	}
	defer stop2()

	calc := request(payrollAddr, "/v1/calculations", key, calcBody)
	plain := request(echoAddr, "/echo", "", calcBody)
	// Both answer correctly before anything is measured.
	for _, t := range []struct {
		addr string
		req  []byte
		want string
	}{{payrollAddr, calc, `"salaryNet":"26621"`}, {echoAddr, plain, `"grossSalary":"36037"`}} {
		if body, err := once(t.addr, t.req); err != nil || !bytes.Contains(body, []byte(t.want)) {
			return false, fmt.Errorf("warm-up answer %q, %v", body, err)
		}
	}

	if o.mutexProfile != "" {
		runtime.SetMutexProfileFraction(5)
	}
	if o.blockProf != "" {
		runtime.SetBlockProfileRate(10_000) // one event per 10 µs blocked
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return false, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return false, err
		}
	}

	o.rounds = max(1, o.rounds)
	fmt.Printf("denar-load: %d CPUs, GOMAXPROCS %d, %s per target and level, in %d alternating slices each%s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), o.duration, o.rounds, loadAverage())
	fmt.Printf("%8s %14s %14s %8s\n", "clients", "echo req/s", "calc req/s", "ratio")
	ok := true
	for _, n := range o.clients {
		var echoRate, calcRate rate
		for range o.rounds {
			echoRate.add(load(echoAddr, plain, n, o.duration/time.Duration(o.rounds)))
			calcRate.add(load(payrollAddr, calc, n, o.duration/time.Duration(o.rounds)))
		}
		if echoRate.failed+calcRate.failed > 0 {
			return false, fmt.Errorf("%d clients: %d echo and %d calculation requests failed", n, echoRate.failed, calcRate.failed)
		}
		ratio := calcRate.perSecond() / echoRate.perSecond()
		verdict := "ok"
		if ratio < 0.5 {
			verdict, ok = "BELOW 0.5", false
		}
		fmt.Printf("%8d %14.0f %14.0f %8.2f  %s\n", n, echoRate.perSecond(), calcRate.perSecond(), ratio, verdict)
	}
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	for _, p := range []struct{ name, file string }{{"mutex", o.mutexProfile}, {"block", o.blockProf}} {
		if p.file == "" {
			continue
		}
		f, err := os.Create(p.file)
		if err != nil {
			return false, err
		}
		if err := pprof.Lookup(p.name).WriteTo(f, 0); err != nil {
			return false, err
		}
		f.Close()
	}

	batchOK, err := batch(payrollAddr, key, o.batchRuns)
	return ok && batchOK, err
}

// batch times a 500-input batch over HTTP and in the engine (the same
// inputs decoded, each computed), one request at a time, and compares the
// medians.
func batch(addr, key string, runs int) (bool, error) {
	inputs := make([]payroll.Input, payroll.MaxBatch)
	var body strings.Builder
	body.WriteString(`{"inputs":[`)
	for i := range inputs {
		if i > 0 {
			body.WriteByte(',')
		}
		in := fmt.Sprintf(`{"grossSalary":"%d","effectiveDate":"2026-09-15","overtimeHours":%d}`, 25000+97*i, i%12)
		body.WriteString(in)
		if err := json.Unmarshal([]byte(in), &inputs[i]); err != nil {
			return false, err
		}
	}
	body.WriteString("]}")
	req := request(addr, "/v1/calculations/batch", key, body.String())
	conn, err := dial(addr)
	if err != nil {
		return false, err
	}
	defer conn.close()
	now := time.Now()
	var httpTimes, engineTimes []time.Duration
	for i := range runs + 2 { // two warm-up rounds
		t0 := time.Now()
		status, out, err := conn.do(req)
		d := time.Since(t0)
		if err != nil || status != http.StatusOK || !bytes.HasPrefix(out, []byte(`{"data":[`)) {
			return false, fmt.Errorf("batch: %d %v", status, err)
		}
		t0 = time.Now()
		for j := range inputs {
			if _, err := payroll.Calculate(&inputs[j], now); err != nil {
				return false, err
			}
		}
		e := time.Since(t0)
		if i >= 2 {
			httpTimes, engineTimes = append(httpTimes, d), append(engineTimes, e)
		}
	}
	h, e := median(httpTimes), median(engineTimes)
	ratio := float64(h) / float64(e)
	verdict, ok := "ok", true
	if ratio > 3 {
		verdict, ok = "ABOVE 3", false
	}
	fmt.Printf("500-input batch: engine %.2f ms, over HTTP %.2f ms (medians of %d), ratio %.2f  %s\n",
		ms(e), ms(h), runs, ratio, verdict)
	// The fastest runs show the cost without the waits of a busy machine
	// (each request wakes a server thread and then the client's).
	hb, eb := slices.Min(httpTimes), slices.Min(engineTimes)
	fmt.Printf("                 fastest: engine %.2f ms, over HTTP %.2f ms, ratio %.2f\n",
		ms(eb), ms(hb), float64(hb)/float64(eb))
	return ok, nil
}

// loadAverage is ", load average X" from /proc/loadavg, or "" elsewhere: a
// busy machine makes every figure of the run noisier.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return ", load average " + f[0]
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func serve(h http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() { _ = srv.Close() }, nil
}

// request is a complete HTTP/1.1 request, prepared once.
func request(addr, path, key, body string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, addr, len(body))
	if key != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", key)
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	return b.Bytes()
}

type rate struct {
	ok, failed int64
	elapsed    time.Duration
}

func (r *rate) add(o rate) {
	r.ok += o.ok
	r.failed += o.failed
	r.elapsed += o.elapsed
}

func (r rate) perSecond() float64 { return float64(r.ok) / r.elapsed.Seconds() }

// load sends req over n keep-alive connections for d and counts the 200s.
func load(addr string, req []byte, n int, d time.Duration) rate {
	var ok, failed atomic.Int64
	conns := make([]*conn, n)
	for i := range conns {
		c, err := dial(addr)
		if err != nil {
			return rate{failed: 1, elapsed: d}
		}
		conns[i] = c
	}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			defer c.close()
			for time.Now().Before(deadline) {
				status, _, err := c.do(req)
				if err != nil || status != http.StatusOK {
					failed.Add(1)
					if err != nil {
						return
					}
					continue
				}
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	return rate{ok: ok.Load(), failed: failed.Load(), elapsed: time.Since(start)}
}

// conn is one keep-alive HTTP/1.1 connection of a client that reads just
// enough of each response to find its end.
type conn struct {
	c    net.Conn
	r    *bufio.Reader
	body []byte
}

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (c *conn) close() { _ = c.c.Close() }

func once(addr string, req []byte) ([]byte, error) {
	c, err := dial(addr)
	if err != nil {
		return nil, err
	}
	defer c.close()
	status, body, err := c.do(req)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d", status)
	}
	return body, err
}

var errResponse = errors.New("malformed response")

// do writes req and reads one response: status, headers, and a body of
// Content-Length bytes or in chunks.
func (c *conn) do(req []byte) (int, []byte, error) {
	if _, err := c.c.Write(req); err != nil {
		return 0, nil, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 12 {
		return 0, nil, errResponse
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, errResponse
	}
	length, chunked := -1, false
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		if len(h) <= 2 {
			break
		}
		name, value, _ := bytes.Cut(bytes.TrimSpace(h), []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, nil, errResponse
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")) && bytes.EqualFold(value, []byte("chunked")):
			chunked = true
		}
	}
	c.body = c.body[:0]
	if !chunked {
		if length < 0 {
			return 0, nil, errResponse
		}
		c.body = slices.Grow(c.body, length)[:length]
		_, err := io.ReadFull(c.r, c.body)
		return status, c.body, err
	}
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(h)), 16, 32)
		if err != nil {
			return 0, nil, errResponse
		}
		if size == 0 {
			if _, err := c.r.ReadSlice('\n'); err != nil { // the CRLF after the last chunk
				return 0, nil, err
			}
			return status, c.body, nil
		}
		n := len(c.body)
		c.body = slices.Grow(c.body, int(size))[:n+int(size)]
		if _, err := io.ReadFull(c.r, c.body[n:]); err != nil {
			return 0, nil, err
		}
		if _, err := c.r.Discard(2); err != nil {
			return 0, nil, err
		}
	}
}
