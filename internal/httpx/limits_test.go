package httpx_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store/storetest"
)

type echoIn struct {
	Body struct {
		Text string `json:"text"`
	}
}

type echoOut struct {
	Body struct {
		Length int `json:"length"`
	}
}

// limitsBench is a payroll-like service with a small body limit, one heavy
// operation that waits to be released, and a plain handler that reads its
// body itself.
type limitsBench struct {
	svc     *httpx.Service
	key     string
	entered chan struct{}
	release chan struct{}
}

func newLimitsBench(t *testing.T, heavy int) *limitsBench {
	t.Helper()
	db := storetest.SQLite(t)
	a := &auth.Store{DB: db}
	acct, err := a.CreateAccount(context.Background(), "limits", "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := a.CreateKey(context.Background(), auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
	if err != nil {
		t.Fatal(err)
	}
	b := &limitsBench{key: key, entered: make(chan struct{}, 4), release: make(chan struct{})}
	s := httpx.NewService(httpx.Options{Name: auth.ServicePayroll, Title: "limits", Version: "1", Auth: a,
		Companies: auth.Employers{DB: db}, Idempotency: idempotency.New(db, 0),
		Log: slog.New(slog.DiscardHandler), MaxBodyBytes: 200, HeavyConcurrency: heavy})
	echo := func(_ context.Context, in *echoIn) (*echoOut, error) {
		out := &echoOut{}
		out.Body.Length = len(in.Body.Text)
		return out, nil
	}
	httpx.Register(s, huma.Operation{OperationID: "echo", Method: http.MethodPost, Path: "/v1/echo"}, httpx.Spec{}, echo)
	httpx.Register(s, huma.Operation{OperationID: "bigEcho", Method: http.MethodPost, Path: "/v1/big-echo"}, httpx.Spec{MaxBodyBytes: 1000}, echo)
	httpx.Register(s, huma.Operation{OperationID: "heavy", Method: http.MethodPost, Path: "/v1/heavy"}, httpx.Spec{Heavy: true},
		func(ctx context.Context, in *echoIn) (*echoOut, error) {
			b.entered <- struct{}{}
			<-b.release
			return echo(ctx, in)
		})
	s.Mux.HandleFunc("POST /plain", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			httpx.WriteProblem(w, r, httpx.FromError(err))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	b.svc = s
	return b
}

type limReply struct {
	status int
	header http.Header
	body   string
}

func (r limReply) code(t *testing.T) string {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%d with content type %q, want a problem: %s", r.status, ct, r.body)
	}
	var p httpx.Problem
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatal(err)
	}
	return p.Code
}

// send posts body to url; chunked hides the length, as a streaming client
// does, so only reading the body can find it too large.
func send(t *testing.T, url, key, body string, chunked bool, headers ...string) limReply {
	t.Helper()
	var r io.Reader = strings.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // not a *strings.Reader: no Content-Length
	}
	req, err := http.NewRequest(http.MethodPost, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return limReply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func textBody(n int) string {
	const wrap = len(`{"text":""}`)
	return `{"text":"` + strings.Repeat("x", n-wrap) + `"}`
}

// TestBodyLimits: every route has a limit, the service's default or its
// own; a body over it is 413 payload_too_large whether its length is
// declared (refused before it is read or the credential looked at) or not
// (found while reading), with or without Idempotency-Key; a body of exactly
// the limit passes.
func TestBodyLimits(t *testing.T) {
	t.Parallel()
	b := newLimitsBench(t, 0)
	srv := httptest.NewServer(b.svc.Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name    string
		path    string
		key     string
		body    string
		chunked bool
		idem    bool
		status  int
		code    string
	}{
		{"at the default limit", "/v1/echo", b.key, textBody(200), false, false, 200, ""},
		{"over the default limit", "/v1/echo", b.key, textBody(201), false, false, 413, "payload_too_large"},
		{"over, length undeclared", "/v1/echo", b.key, textBody(201), true, false, 413, "payload_too_large"},
		{"over, with Idempotency-Key", "/v1/echo", b.key, textBody(5000), false, true, 413, "payload_too_large"},
		{"over, undeclared, with Idempotency-Key", "/v1/echo", b.key, textBody(5000), true, true, 413, "payload_too_large"},
		{"over, before authentication", "/v1/echo", "", textBody(201), false, false, 413, "payload_too_large"},
		{"under a larger own limit", "/v1/big-echo", b.key, textBody(1000), true, false, 200, ""},
		{"over the own limit", "/v1/big-echo", b.key, textBody(1001), true, false, 413, "payload_too_large"},
		{"plain handler at the default", "/plain", "", strings.Repeat("x", 200), true, false, 204, ""},
		{"plain handler over, declared", "/plain", "", strings.Repeat("x", 201), false, false, 413, "payload_too_large"},
		{"plain handler over, undeclared", "/plain", "", strings.Repeat("x", 201), true, false, 413, "payload_too_large"},
	}
	for i, tt := range tests {
		var h []string
		if tt.idem {
			h = []string{"Idempotency-Key", fmt.Sprintf("limits-%d", i)}
		}
		r := send(t, srv.URL+tt.path, tt.key, tt.body, tt.chunked, h...)
		if r.status != tt.status {
			t.Errorf("%s: %d, want %d: %s", tt.name, r.status, tt.status, r.body)
			continue
		}
		if tt.code != "" && r.code(t) != tt.code {
			t.Errorf("%s: code %s, want %s", tt.name, r.code(t), tt.code)
		}
	}
}

// TestHeavyConcurrency: with every slot for heavy work taken, the next
// heavy request is answered 503 server_busy with Retry-After at once;
// other operations go on; a freed slot is taken again.
func TestHeavyConcurrency(t *testing.T) {
	t.Parallel()
	b := newLimitsBench(t, 1)
	srv := httptest.NewServer(b.svc.Handler())
	t.Cleanup(srv.Close)
	first := make(chan limReply, 1)
	go func() { first <- send(t, srv.URL+"/v1/heavy", b.key, textBody(20), false) }()
	<-b.entered
	busy := send(t, srv.URL+"/v1/heavy", b.key, textBody(20), false)
	if busy.status != 503 || busy.code(t) != "server_busy" || busy.header.Get("Retry-After") == "" {
		t.Fatalf("second heavy request: %d %v %s", busy.status, busy.header, busy.body)
	}
	if r := send(t, srv.URL+"/v1/echo", b.key, textBody(20), false); r.status != 200 {
		t.Fatalf("light request while heavy work runs: %d %s", r.status, r.body)
	}
	b.release <- struct{}{}
	if r := <-first; r.status != 200 {
		t.Fatalf("first heavy request: %d %s", r.status, r.body)
	}
	third := make(chan limReply, 1)
	go func() { third <- send(t, srv.URL+"/v1/heavy", b.key, textBody(20), false) }()
	<-b.entered
	b.release <- struct{}{}
	if r := <-third; r.status != 200 {
		t.Fatalf("heavy request after the slot was freed: %d %s", r.status, r.body)
	}
}

// TestNoSniff: every response of a service says nosniff: success, the
// service's own routes, problems of every kind, unrouted paths.
func TestNoSniff(t *testing.T) {
	t.Parallel()
	b := newLimitsBench(t, 0)
	srv := httptest.NewServer(b.svc.Handler())
	t.Cleanup(srv.Close)
	for _, tt := range []struct{ method, path, key, body string }{
		{"POST", "/v1/echo", b.key, textBody(20)},
		{"POST", "/v1/echo", "", textBody(20)},
		{"POST", "/v1/echo", b.key, `{`},
		{"POST", "/v1/echo", b.key, textBody(500)},
		{"GET", "/v1/echo", "", ""},
		{"GET", "/nowhere", "", ""},
		{"GET", "/healthz", "", ""},
		{"GET", "/v1/openapi.json", "", ""},
		{"POST", "/plain", "", "x"},
	} {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		if tt.key != "" {
			req.Header.Set("Authorization", "Bearer "+tt.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q", tt.method, tt.path, resp.StatusCode, got)
		}
	}
}

// serve runs h on loopback behind httpx.NewServer with timeouts t.
func serve(t *testing.T, h http.Handler, to httpx.Timeouts) (*httpx.Server, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpx.NewServer(h, to, slog.New(slog.DiscardHandler))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return srv, l.Addr().String()
}

// stalledBody sends the headers of a POST and half its body, then waits
// for the server to close the connection, and returns how long that took.
func stalledBody(t *testing.T, addr, path, key string, extra ...string) time.Duration {
	t.Helper()
	start := time.Now() // before the server can start its clock
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
	if key != "" {
		head += "Authorization: Bearer " + key + "\r\n"
	}
	for i := 0; i+1 < len(extra); i += 2 {
		head += extra[i] + ": " + extra[i+1] + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"+`{"text":"half`); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("%s: connection still open after 30 s: %v", path, err)
	}
	return time.Since(start)
}

// TestStalledBodyCutOff: a client that stops sending its body loses the
// connection at the read timeout, whoever reads the body: huma, the
// idempotency layer (Idempotency-Key), or a plain handler.
func TestStalledBodyCutOff(t *testing.T) {
	t.Parallel()
	b := newLimitsBench(t, 0)
	const read = 500 * time.Millisecond
	_, addr := serve(t, b.svc.Handler(), httpx.Timeouts{Read: read, ReadHeader: read, Write: 10 * read})
	for _, tt := range []struct {
		name, path, key string
		extra           []string
	}{
		{"operation", "/v1/echo", b.key, nil},
		{"with Idempotency-Key", "/v1/echo", b.key, []string{"Idempotency-Key", "stalled"}},
		{"unauthenticated", "/v1/echo", "", nil},
		{"plain handler", "/plain", "", nil},
	} {
		if d := stalledBody(t, addr, tt.path, tt.key, tt.extra...); d < read || d > read+2*time.Second {
			t.Errorf("%s: connection closed after %s, want the read timeout %s", tt.name, d, read)
		}
	}
}

// TestLongWaitAndShutdown: a handler that called LongWait may take longer
// than the write timeout, and ends at once, answering, when the server
// shuts down; the handler of an upgraded connection is told to end through
// Draining and waited for.
func TestLongWaitAndShutdown(t *testing.T) {
	t.Parallel()
	const write = 300 * time.Millisecond
	mux := http.NewServeMux()
	waiting := make(chan struct{}, 1)
	mux.HandleFunc("GET /wait", func(w http.ResponseWriter, r *http.Request) {
		stop := httpx.LongWait(r.Context(), time.Minute)
		waiting <- struct{}{}
		select {
		case <-stop:
			_, _ = io.WriteString(w, "stopping")
		case <-time.After(3 * write): // longer than the write timeout
			_, _ = io.WriteString(w, "waited")
		}
	})
	svc := httpx.NewService(httpx.Options{Name: "test", Title: "t", Version: "1", Log: slog.New(slog.DiscardHandler)})
	svc.Mux.Handle("GET /wait", mux)
	upgraded := make(chan struct{}, 1)
	svc.HandleUpgrade("GET /socket", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		_ = rw.Flush()
		upgraded <- struct{}{}
		<-httpx.Draining(r.Context())
		_, _ = rw.WriteString("going away")
		_ = rw.Flush()
	}))
	srv, addr := serve(t, svc.Handler(), httpx.Timeouts{Read: write, ReadHeader: write, Write: write})

	get := func() (string, error) {
		resp, err := http.Get("http://" + addr + "/wait")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(); err != nil || body != "waited" {
		t.Fatalf("long wait past the write timeout: %q, %v", body, err)
	}
	<-waiting

	sock, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	_, _ = io.WriteString(sock, "GET /socket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
	<-upgraded
	polled := make(chan string, 1)
	go func() {
		body, err := get()
		if err != nil {
			body = err.Error()
		}
		polled <- body
	}()
	<-waiting
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %s with a long wait of a minute pending", d)
	}
	if body := <-polled; body != "stopping" {
		t.Errorf("long wait during shutdown answered %q", body)
	}
	_ = sock.SetReadDeadline(time.Now().Add(10 * time.Second))
	rest, _ := io.ReadAll(bufio.NewReader(sock))
	if !strings.HasSuffix(string(rest), "going away") {
		t.Errorf("upgraded connection got %q at shutdown", rest)
	}
}
