package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/denar-mk/denar/internal/store/storetest"
)

var denarBin string

func TestMain(m *testing.M) {
	flag := os.Getenv("DENAR_E2E_BIN")
	if flag != "" {
		denarBin = flag
		storetest.Main(m)
		return
	}
	dir, err := os.MkdirTemp("", "denar-e2e-")
	if err != nil {
		panic(err)
	}
	denarBin = filepath.Join(dir, "denar")
	build := exec.Command("go", "build", "-o", denarBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building denar for the end-to-end tests failed:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	storetest.Main(m)
}

// server is a running `denar serve` process.
type server struct {
	bin         string
	cmd         *exec.Cmd
	env         []string
	payroll     string // base URLs
	einvoice    string
	stdout      *syncBuffer
	stderr      *syncBuffer
	payrollKey  string
	einvoiceKey string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freeAddr returns a loopback address no socket holds now, for a server
// a test starts (and may kill and start again on the same address). It is
// taken below the kernel's ephemeral range where there is room: a port
// from that range (what ":0" hands out) can be taken meanwhile as the
// local end of any outgoing connection of a parallel test, and a
// restarted server then fails to bind.
func freeAddr(t *testing.T) string {
	t.Helper()
	if lo := ephemeralLow(); lo > 2048 {
		for range 100 {
			port := 1024 + rand.IntN(lo-1024)
			if !handOut(port) {
				continue // given to another test of this run, which may not have bound it yet
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue
			}
			addr := l.Addr().String()
			_ = l.Close()
			return addr
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// handedOut are the ports freeAddr gave to the tests of this run: between
// the probe's close and the server's bind another parallel test could
// otherwise be given the same port.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// handOut reserves port for this run; false when it was given already.
func handOut(port int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[port] {
		return false
	}
	handedOut.ports[port] = true
	return true
}

// ephemeralLow is the first port of Linux's ephemeral range, 0 when it
// cannot be read (another system).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	lo, _ := strconv.Atoi(f[0])
	return lo
}

func baseEnv(t *testing.T, dbURL string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DENAR_") {
			env = append(env, kv)
		}
	}
	return append(env, "DENAR_DATABASE_URL="+dbURL, "DENAR_DATA_DIR="+t.TempDir(), "DENAR_LOG_FORMAT=json",
		"DENAR_WEBHOOK_SECRET_KEY="+testWebhookKey,
		// UJP's rate limit, shortened (never off): the simulator's window
		// and the signer interval together.
		"DENAR_UJP_SIM_WINDOW="+e2eWindow.String(), "DENAR_UJP_SIGNER_INTERVAL="+e2eWindow.String())
}

// e2eWindow is the simulators' per-user rate window in end-to-end tests,
// and the signer interval with it.
const e2eWindow = 50 * time.Millisecond

// testWebhookKey seals webhook secrets in end-to-end tests: one key, so
// that several processes on one database open each other's secrets (as in
// production, where PostgreSQL requires the key).
const testWebhookKey = "3q2+7wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGho="

// startServer starts denar serve and waits until both services answer.
func startServer(t *testing.T, env []string) *server {
	t.Helper()
	return startServerBin(t, denarBin, env)
}

// startServerBin is startServer with another build of denar.
func startServerBin(t *testing.T, bin string, env []string) *server {
	t.Helper()
	s := &server{bin: bin, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	pa, ea := "", ""
	for _, kv := range env {
		// A restart keeps the addresses, so clients reconnect to it.
		if v, ok := strings.CutPrefix(kv, "DENAR_PAYROLL_ADDR="); ok {
			pa = v
		} else if v, ok := strings.CutPrefix(kv, "DENAR_EINVOICE_ADDR="); ok {
			ea = v
		}
	}
	s.env = append([]string{}, env...)
	if pa == "" || ea == "" {
		pa, ea = freeAddr(t), freeAddr(t)
		s.env = append(s.env, "DENAR_PAYROLL_ADDR="+pa, "DENAR_EINVOICE_ADDR="+ea)
	}
	s.payroll, s.einvoice = "http://"+pa, "http://"+ea
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = s.env
	s.cmd.Stdout = s.stdout
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("server log:\n%s", s.stderr.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for _, base := range []string{s.payroll, s.einvoice} {
		for {
			resp, err := http.Get(base + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never became healthy; log:\n%s", base, s.stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// "denar serving" is logged after the first-run banner was printed,
	// when there was one to print ("first-run bootstrap" is logged then).
	waitFor(t, "the server to log that it serves", func() bool { return strings.Contains(s.stderr.String(), "denar serving") })
	if strings.Contains(s.stderr.String(), "first-run bootstrap") {
		waitFor(t, "the first-run banner", func() bool { return strings.Contains(s.stdout.String(), "Try it:") })
	}
	out := s.stdout.String()
	if m := regexp.MustCompile(`payroll API key \(sandbox\):\s+(\S+)`).FindStringSubmatch(out); m != nil {
		s.payrollKey = m[1]
	}
	if m := regexp.MustCompile(`e-invoicing API key \(sandbox\):\s+(\S+)`).FindStringSubmatch(out); m != nil {
		s.einvoiceKey = m[1]
	}
	return s
}

// waitFor polls cond until it holds, for at most 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// restart starts the same build again with the same environment (and so
// the same addresses), after the process ended.
func (s *server) restart(t *testing.T) *server {
	t.Helper()
	return startServerBin(t, s.bin, s.env)
}

// stop sends SIGTERM and checks that the process exits cleanly.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("denar serve exited with %v after SIGTERM; log:\n%s", err, s.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("denar serve did not stop within 30 s of SIGTERM")
	}
}

func runAdminCmd(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(denarBin, append([]string{"admin"}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("denar admin %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

func call(t *testing.T, method, url, key string, headers map[string]string, body string) httpReply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpReply{status: resp.StatusCode, header: resp.Header, body: b}
}

func (r httpReply) code(t *testing.T) string {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("status %d with content type %q, want a problem: %s", r.status, ct, r.body)
	}
	var p struct {
		Type, Title, Detail, Instance, Code string
		Status                              int
		Errors                              []json.RawMessage
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem %s: %v", r.body, err)
	}
	if p.Status != r.status || p.Instance != r.header.Get("X-Request-Id") || p.Title == "" || p.Detail == "" || !strings.HasSuffix(p.Type, "#"+p.Code) || p.Errors == nil {
		t.Fatalf("malformed problem for status %d: %s", r.status, r.body)
	}
	return p.Code
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		env := baseEnv(t, dbURL)
		s := startServer(t, env)
		if s.payrollKey == "" || s.einvoiceKey == "" || !strings.Contains(s.stdout.String(), "curl") {
			t.Fatalf("first run printed no keys and curl line:\n%s", s.stdout.String())
		}

		t.Run("health", func(t *testing.T) {
			for _, base := range []string{s.payroll, s.einvoice} {
				for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
					r := call(t, "GET", base+path, "", nil, "")
					if r.status != 200 || r.header.Get("X-Request-Id") == "" {
						t.Errorf("%s%s: %d, request id %q", base, path, r.status, r.header.Get("X-Request-Id"))
					}
				}
			}
		})

		t.Run("unauthenticated", func(t *testing.T) {
			r := call(t, "GET", s.einvoice+"/v1/companies", "", nil, "")
			if r.status != 401 || r.code(t) != "unauthenticated" {
				t.Fatalf("no key: %d %s", r.status, r.body)
			}
			r = call(t, "GET", s.einvoice+"/v1/companies", s.payrollKey, nil, "")
			if r.status != 401 || r.code(t) != "unauthenticated" {
				t.Fatalf("payroll key on e-invoicing: %d %s", r.status, r.body)
			}
		})

		t.Run("bootstrap key works", func(t *testing.T) {
			r := call(t, "GET", s.einvoice+"/v1/companies", s.einvoiceKey, nil, "")
			if r.status != 200 || !bytes.Contains(r.body, []byte(`"data":[]`)) {
				t.Fatalf("bootstrap key: %d %s", r.status, r.body)
			}
		})

		t.Run("admin key lifecycle", func(t *testing.T) {
			var acct struct{ ID string }
			if err := json.Unmarshal([]byte(runAdminCmd(t, s.env, "account", "create", "--name", "Сметководство ДООЕЛ", "--json")), &acct); err != nil || acct.ID == "" {
				t.Fatalf("account create: %v", err)
			}
			var key struct{ ID, Key string }
			out := runAdminCmd(t, s.env, "key", "create", "--account", acct.ID, "--service", "einvoice", "--env", "sandbox", "--scope", "companies:read", "--json")
			if err := json.Unmarshal([]byte(out), &key); err != nil || key.ID == "" || key.Key == "" {
				t.Fatalf("key create printed %q: %v", out, err)
			}
			if r := call(t, "GET", s.einvoice+"/v1/companies", key.Key, nil, ""); r.status != 200 {
				t.Fatalf("new key: %d %s", r.status, r.body)
			}
			if list := runAdminCmd(t, s.env, "key", "list", "--account", acct.ID); !strings.Contains(list, key.ID) || strings.Contains(list, key.Key) {
				t.Fatalf("key list must show the id and never the secret:\n%s", list)
			}
			runAdminCmd(t, s.env, "key", "revoke", key.ID)
			if r := call(t, "GET", s.einvoice+"/v1/companies", key.Key, nil, ""); r.status != 401 || r.code(t) != "key_revoked" {
				t.Fatalf("revoked key: %d %s", r.status, r.body)
			}
		})

		t.Run("admin company create checks the ЕДБ", func(t *testing.T) {
			var acct struct{ ID string }
			if err := json.Unmarshal([]byte(runAdminCmd(t, s.env, "account", "create", "--name", "Плати ДООЕЛ", "--json")), &acct); err != nil || acct.ID == "" {
				t.Fatalf("account create: %v", err)
			}
			cmd := exec.Command(denarBin, "admin", "company", "create", "--account", acct.ID, "--name", "Работодавач", "--tax-number", "4030000000002")
			cmd.Env = s.env
			if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "check digit") {
				t.Fatalf("a wrong check digit: %v: %s", err, out)
			}
			var co struct{ ID, TaxNumber string }
			out := runAdminCmd(t, s.env, "company", "create", "--account", acct.ID, "--name", "Работодавач", "--tax-number", "4030000000010", "--json")
			if err := json.Unmarshal([]byte(out), &co); err != nil || co.TaxNumber != "4030000000010" {
				t.Fatalf("company create printed %q: %v", out, err)
			}
		})

		t.Run("idempotency", func(t *testing.T) {
			calc := s.payroll + "/v1/calculations"
			key := map[string]string{"Idempotency-Key": "e2e-1"}
			first := call(t, "POST", calc, s.payrollKey, key, `{"grossSalary":"30000"}`)
			if first.status != 200 || !bytes.Contains(first.body, []byte(`"salaryNet":"20533"`)) {
				t.Fatalf("calculation: %d %s", first.status, first.body)
			}
			again := call(t, "POST", calc, s.payrollKey, key, `{ "grossSalary" : "30000" }`)
			if again.status != 200 || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d replayed=%q", again.status, again.header.Get("Idempotent-Replayed"))
			}
			if r := call(t, "POST", calc, s.payrollKey, key, `{"grossSalary":"31000"}`); r.status != 409 || r.code(t) != "idempotency_conflict" {
				t.Fatalf("other body, same key: %d %s", r.status, r.body)
			}
			// Two concurrent requests with one new key: one runs; the other
			// is either told it is in progress or gets the replay.
			var wg sync.WaitGroup
			replies := make([]httpReply, 2)
			for i := range replies {
				wg.Go(func() {
					replies[i] = call(t, "POST", calc, s.payrollKey, map[string]string{"Idempotency-Key": "e2e-concurrent"}, `{"grossSalary":"45000"}`)
				})
			}
			wg.Wait()
			executed := 0
			for _, r := range replies {
				switch {
				case r.status == 200 && r.header.Get("Idempotent-Replayed") == "":
					executed++
				case r.status == 200 && r.header.Get("Idempotent-Replayed") == "true":
					if !bytes.Equal(r.body, replies[0].body) && !bytes.Equal(r.body, replies[1].body) {
						t.Fatalf("replay differs")
					}
				case r.status == 409:
					if c := r.code(t); c != "idempotency_in_progress" {
						t.Fatalf("concurrent request: %s", c)
					}
				default:
					t.Fatalf("concurrent request: %d %s", r.status, r.body)
				}
			}
			if executed != 1 {
				t.Fatalf("%d of two concurrent requests with one key executed, want 1", executed)
			}
		})

		t.Run("openapi", func(t *testing.T) {
			for _, base := range []string{s.payroll, s.einvoice} {
				r := call(t, "GET", base+"/v1/openapi.json", "", nil, "")
				if r.status != 200 {
					t.Fatalf("%s openapi: %d", base, r.status)
				}
				doc, err := openapi3.NewLoader().LoadFromData(r.body)
				if err != nil || doc.OpenAPI != "3.1.0" {
					t.Fatalf("%s: not OpenAPI 3.1: %v", base, err)
				}
				if err := doc.Validate(context.Background()); err != nil {
					t.Fatalf("%s: invalid OpenAPI: %v", base, err)
				}
			}
		})

		s.stop(t)

		// A second start on the same store never bootstraps again.
		again := startServer(t, env)
		if again.payrollKey != "" || strings.Contains(again.stdout.String(), "first run") {
			t.Fatalf("second start bootstrapped again:\n%s", again.stdout.String())
		}
		if r := call(t, "GET", again.einvoice+"/v1/companies", s.einvoiceKey, nil, ""); r.status != 200 {
			t.Fatalf("key from the first run after restart: %d %s", r.status, r.body)
		}
		again.stop(t)
	})
}

func TestBadConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, env, want string }{
		{"log format", "DENAR_LOG_FORMAT=xml", "DENAR_LOG_FORMAT"},
		{"database", "DENAR_DATABASE_URL=mysql://x/y", "DENAR_DATABASE_URL"},
		{"duration", "DENAR_IDEMPOTENCY_RETENTION=soon", "DENAR_IDEMPOTENCY_RETENTION"},
		{"bootstrap", "DENAR_BOOTSTRAP=maybe", "DENAR_BOOTSTRAP"},
		{"mail attempts", "DENAR_MAIL_MAX_ATTEMPTS=0", "DENAR_MAIL_MAX_ATTEMPTS"},
		{"mail retry delays", "DENAR_MAIL_RETRY_DELAYS=1m,-1s", "DENAR_MAIL_RETRY_DELAYS"},
		{"webhook key", "DENAR_WEBHOOK_SECRET_KEY=short", "DENAR_WEBHOOK_SECRET_KEY"},
		{"webhook timeout", "DENAR_WEBHOOK_TIMEOUT=0s", "DENAR_WEBHOOK_TIMEOUT"},
		{"webhook workers", "DENAR_WEBHOOK_WORKERS=0", "DENAR_WEBHOOK_WORKERS"},
		{"operator e-mail", "DENAR_OPERATOR_EMAIL=Ops <ops@example.mk>", "DENAR_OPERATOR_EMAIL"},
		{"UJP without the operator", "DENAR_UJP_PRODUCTION_URL=https://efaktura.ujp.gov.mk", "DENAR_UJP_USER"},
		{"serial format", "DENAR_UJP_SERIAL_FORMAT=octal", "DENAR_UJP_SERIAL_FORMAT"},
		{"signer interval under the simulator's window", "DENAR_UJP_SIM_WINDOW=2s", "DENAR_UJP_SIGNER_INTERVAL"},
	}
	for _, tt := range tests {
		cmd := exec.Command(denarBin, "serve")
		cmd.Env = append(baseEnv(t, "sqlite://"+filepath.Join(t.TempDir(), "x.db")), tt.env)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			t.Errorf("%s: serve started with %s", tt.name, tt.env)
			continue
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], tt.want) || strings.Contains(stderr.String(), "goroutine") {
			t.Errorf("%s: want one line naming %s, got:\n%s", tt.name, tt.want, stderr.String())
		}
	}
}
