package einvoiceapi_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/sdk/signer"
)

// TestSDKWorkerSurvivesRestart runs the public signing worker against a
// server that is stopped and started again on the same address and
// database: the worker reconnects, signs what arrives, and nothing is
// signed twice.
func TestSDKWorkerSurvivesRestart(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)

		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		// A stopped server's connections all end, the WebSocket's (a
		// hijacked one, which http.Server.Close leaves open) included:
		// as when the process stops.
		var connMu sync.Mutex
		var conns []net.Conn
		serve := func(l net.Listener) *http.Server {
			_, api := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
			s := &http.Server{Handler: api.Handler(), ConnState: func(c net.Conn, st http.ConnState) {
				if st == http.StateNew {
					connMu.Lock()
					conns = append(conns, c)
					connMu.Unlock()
				}
			}}
			go func() { _ = s.Serve(l) }()
			return s
		}
		srv := serve(l)

		// Pairing through the SDK against the restartable server.
		st, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+e.key, nil)
		if st != 201 {
			t.Fatalf("pairing code: %d %v", st, m)
		}
		creds, err := signer.Pair(t.Context(), nil, "http://"+addr, m["code"].(string), "server")
		if err != nil {
			t.Fatal(err)
		}
		if err := signer.RegisterCertificateAs(t.Context(), http.DefaultClient, creds, c.cert, e.company, "EUJP-SERVER"); err != nil {
			t.Fatal(err)
		}

		var mu sync.Mutex
		signedCount := map[string]int{}
		got := make(chan string, 10)
		lost := &lostCounter{}
		w := &signer.Worker{Creds: creds, Signer: c.key, Wait: 2, Log: slog.New(lost),
			HTTP: &http.Client{Timeout: 10 * time.Second},
			OnSigned: func(r signer.Request, _ string) {
				mu.Lock()
				signedCount[r.ID]++
				mu.Unlock()
				got <- r.ID
			}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })

		waitSigned := func(id string) {
			t.Helper()
			select {
			case g := <-got:
				if g != id {
					t.Fatalf("signed %s, want %s", g, id)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("request %s not signed", id)
			}
			r, err := einvoicing.GetSigningRequest(t.Context(), db.Reader(), id)
			if err != nil || r.State != "signed" {
				t.Fatalf("server state of %s: %+v %v", id, r, err)
			}
		}
		first := e.request(einvoicing.PurposeDocument, `{"n":1}`)
		waitSigned(first.ID)

		// Restart: stop, create a request while down, start on the same address.
		if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Fatal(err)
		}
		connMu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		conns = nil
		connMu.Unlock()
		second := e.request(einvoicing.PurposeQuery, `{"n":2}`)
		// Start again only once the worker has lost its connection and
		// failed to reconnect at least once, so that its retry is tested.
		before := lost.n.Load()
		for deadline := time.Now().Add(20 * time.Second); lost.n.Load() < before+2; {
			if time.Now().After(deadline) {
				t.Fatalf("the worker did not notice the server stopping (%d warnings)", lost.n.Load()-before)
			}
			time.Sleep(10 * time.Millisecond)
		}
		l2, err := net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("cannot listen again on %s: %v", addr, err)
		}
		srv2 := serve(l2)
		defer srv2.Close()
		waitSigned(second.ID)

		// One more request, signed after the others: by then the worker
		// has been through its deliveries again, and nothing earlier was
		// signed a second time.
		third := e.request(einvoicing.PurposeQuery, `{"n":3}`)
		waitSigned(third.ID)
		mu.Lock()
		defer mu.Unlock()
		for id, n := range signedCount {
			if n != 1 {
				t.Errorf("request %s signed %d times", id, n)
			}
		}
		if len(signedCount) != 3 {
			t.Errorf("signed %v, want three requests", signedCount)
		}
	})
}

// lostCounter is a log handler that counts the signing worker's
// "signing connection lost" warnings.
type lostCounter struct{ n atomic.Int64 }

func (*lostCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *lostCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "signing connection lost" {
		h.n.Add(1)
	}
	return nil
}
func (h *lostCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *lostCounter) WithGroup(string) slog.Handler      { return h }

// TestDenarAgentBinary builds cmd/denar-agent and drives it as a customer
// would: pair with a code, register a PEM certificate, run --auto, sign.
func TestDenarAgentBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "denar-agent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/denar-mk/denar/cmd/denar-agent").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		kd, _ := x509.MarshalPKCS8PrivateKey(c.key)
		keyPath, certPath, creds := filepath.Join(t.TempDir(), "k.pem"), filepath.Join(t.TempDir(), "c.pem"), filepath.Join(t.TempDir(), "cred.json")
		_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
		_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw}), 0o600)
		_, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+e.key, nil)
		for _, args := range [][]string{
			{"pair", "--credentials", creds, "--server", e.srv.URL, "--code", m["code"].(string)},
			{"register-certificate", "--credentials", creds, "--company", e.company, "--eujp-id", "EUJP-AGENT", "--key", keyPath, "--cert", certPath},
		} {
			if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
		}
		if st, err := os.Stat(creds); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("credentials file: %v %v", st, err)
		}
		var logs strings.Builder
		cmd := exec.Command(bin, "run", "--credentials", creds, "--auto", "--key", keyPath, "--cert", certPath)
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		r := e.request(einvoicing.PurposeDocument, `{"invoice":"inv_bin"}`)
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := einvoicing.GetSigningRequest(t.Context(), db.Reader(), r.ID)
			if err == nil && got.State == "signed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not signed: %+v %v", got, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// countingTransport counts the HTTP requests a client makes.
type countingTransport struct {
	n    atomic.Int64
	base http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// socketMessages reads the server's count of messages received from agents
// on the signing WebSocket, by type.
func (e *signEnv) socketMessages() map[string]int {
	e.t.Helper()
	resp, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, `denar_signing_socket_messages_total{direction="received",type="`)
		if !ok {
			continue
		}
		typ, n, _ := strings.Cut(rest, `"} `)
		v, _ := strconv.Atoi(n)
		out[typ] = v
	}
	return out
}

// TestSDKWorkerBatches: 100 waiting requests cost the worker one claim, one
// signatures and one refusals exchange, over the WebSocket (messages the
// server counts) and over long-polling (HTTP requests the client counts);
// the one request the batch policy refuses is refused and every other is
// signed; the policy is asked once, with the whole batch.
func TestSDKWorkerBatches(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"websocket", "longpoll"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newSignEnv(t, db)
				c := newTestCert(t)
				st, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+e.key, nil)
				if st != 201 {
					t.Fatalf("pairing code: %d %v", st, m)
				}
				creds, err := signer.Pair(t.Context(), nil, e.srv.URL, m["code"].(string), "server")
				if err != nil {
					t.Fatal(err)
				}
				if err := signer.RegisterCertificateAs(t.Context(), http.DefaultClient, creds, c.cert, e.company, "EUJP-BATCH"); err != nil {
					t.Fatal(err)
				}
				const n = 100
				ids := make([]string, n)
				for i := range ids {
					ids[i] = e.request(einvoicing.PurposeQuery, fmt.Sprintf(`{"n":%d}`, i)).ID
				}
				refuse := ids[37]

				var asked atomic.Int64
				var askedSizes sync.Map
				var signed atomic.Int64
				ct := &countingTransport{base: http.DefaultTransport}
				w := &signer.Worker{Creds: creds, Signer: c.key, Wait: 1, Log: slog.New(slog.DiscardHandler),
					HTTP: &http.Client{Timeout: 2 * time.Minute, Transport: ct},
					BatchPolicy: func(_ context.Context, rs []signer.Request) []signer.Decision {
						askedSizes.Store(asked.Add(1), len(rs))
						out := make([]signer.Decision, len(rs))
						for i, r := range rs {
							out[i] = signer.Decision{Sign: r.ID != refuse}
							if !out[i].Sign {
								out[i].Reason, out[i].Message = "user_declined", "not this one"
							}
						}
						return out
					},
					OnSigned: func(signer.Request, string) { signed.Add(1) }}

				switch transport {
				case "longpoll":
					// One interaction: the long-poll, the claim, the
					// signatures, the refusal.
					if err := w.Once(t.Context()); err != nil {
						t.Fatal(err)
					}
					if got := ct.n.Load(); got != 4 {
						t.Errorf("%d HTTP requests for a batch of %d, want 4 (poll, claims, signatures, refusals)", got, n)
					}
				case "websocket":
					ctx, cancel := context.WithCancel(t.Context())
					done := make(chan error, 1)
					go func() { done <- w.Run(ctx) }()
					t.Cleanup(func() { cancel(); <-done })
					for deadline := time.Now().Add(3 * time.Minute); signed.Load() < n-1 || e.state(refuse) != "refused"; {
						if time.Now().After(deadline) {
							t.Fatalf("signed %d of %d, the refused one %s", signed.Load(), n-1, e.state(refuse))
						}
						time.Sleep(10 * time.Millisecond)
					}
					got := e.socketMessages()
					if got["claim"] != 1 || got["signatures"] != 1 || got["refusals"] != 1 || got["invalid"] != 0 {
						t.Errorf("agent messages for a batch of %d: %v, want one claim, one signatures, one refusals", n, got)
					}
					if ct.n.Load() != 1 {
						t.Errorf("%d HTTP requests besides the socket's upgrade", ct.n.Load()-1)
					}
				}
				if asked.Load() != 1 {
					t.Errorf("the batch policy was asked %d times, want once", asked.Load())
				}
				if sz, _ := askedSizes.Load(int64(1)); sz != n {
					t.Errorf("the batch policy was shown %v requests, want %d", sz, n)
				}
				if signed.Load() != n-1 {
					t.Errorf("signed %d, want %d", signed.Load(), n-1)
				}
				for _, id := range ids {
					want := "signed"
					if id == refuse {
						want = "refused"
					}
					if got := e.state(id); got != want {
						t.Errorf("%s: %s, want %s", id, got, want)
					}
				}
			})
		})
	}
}
