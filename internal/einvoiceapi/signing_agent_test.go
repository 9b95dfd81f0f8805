package einvoiceapi_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
