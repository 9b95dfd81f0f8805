//go:build pkcs11

package einvoiceapi_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/agent"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/sdk/signer"
)

const softhsmModule = "/usr/lib/softhsm/libsofthsm2.so"

// TestPKCS11Batch: denar-agent's worker with its key on a SoftHSM token
// signs a batch of 30 requests pushed on the WebSocket, and a second batch
// after it, with one PIN entry (one login) for the lot; every signature is
// the server's to verify and accept.
func TestPKCS11Batch(t *testing.T) {
	util, err := exec.LookPath("softhsm2-util")
	if _, serr := os.Stat(softhsmModule); err != nil || serr != nil {
		if os.Getenv("DENAR_TEST_REQUIRE_SOFTHSM") == "1" {
			t.Fatalf("SoftHSM2 required but missing: %v %v", err, serr)
		}
		t.Skip("SoftHSM2 not installed (apt-get install softhsm2)")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "softhsm2.conf")
	_ = os.MkdirAll(filepath.Join(dir, "tokens"), 0o700)
	_ = os.WriteFile(conf, []byte("directories.tokendir = "+filepath.Join(dir, "tokens")+"\nobjectstore.backend = file\n"), 0o600)
	t.Setenv("SOFTHSM2_CONF", conf)
	sh := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(util, args...).CombinedOutput(); err != nil {
			t.Fatalf("softhsm2-util %v: %v\n%s", args, err, out)
		}
	}
	sh("--init-token", "--free", "--label", "denar-batch", "--pin", "1234", "--so-pin", "5678")
	c := newTestCert(t)
	kd, _ := x509.MarshalPKCS8PrivateKey(c.key)
	keyPath, certPath := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw}), 0o600)
	sh("--import", keyPath, "--token", "denar-batch", "--label", "signer", "--id", "01", "--pin", "1234")
	_ = os.Remove(keyPath) // the key lives on the token only

	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		var pins atomic.Int64
		k, err := agent.LoadPKCS11PIN(softhsmModule, "denar-batch", func() (string, error) { pins.Add(1); return "1234", nil }, "signer", certPath)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		st, m := e.do("POST", "/v1/agents/pairing-codes", "Bearer "+e.key, nil)
		if st != 201 {
			t.Fatalf("pairing code: %d %v", st, m)
		}
		creds, err := signer.Pair(t.Context(), nil, e.srv.URL, m["code"].(string), "token")
		if err != nil {
			t.Fatal(err)
		}
		if err := signer.RegisterCertificateAs(t.Context(), http.DefaultClient, creds, k.Cert, e.company, "EUJP-TOKEN"); err != nil {
			t.Fatal(err)
		}
		var signed atomic.Int64
		w := &signer.Worker{Creds: creds, Signer: k.Signer, Log: slog.New(slog.DiscardHandler),
			HTTP: &http.Client{Timeout: 10 * time.Second}, OnSigned: func(signer.Request, string) { signed.Add(1) }}
		if _, ok := w.Signer.(signer.Session); !ok {
			t.Fatal("the token signer does not sign in sessions")
		}
		var ids []string
		add := func(n int) {
			for i := range n {
				ids = append(ids, e.request(einvoicing.PurposeQuery, fmt.Sprintf(`{"n":%d}`, len(ids)+i)).ID)
			}
		}
		add(30)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		defer func() { cancel(); <-done }()
		waitSigned := func(n int64) {
			t.Helper()
			for deadline := time.Now().Add(30 * time.Second); signed.Load() < n; {
				if time.Now().After(deadline) {
					t.Fatalf("signed %d of %d", signed.Load(), n)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		waitSigned(30)
		add(30)
		waitSigned(60)
		for _, id := range ids {
			if s := e.state(id); s != "signed" {
				t.Errorf("%s: %s", id, s)
			}
		}
		if got := e.socketMessages(); got["signatures"] > 4 {
			t.Errorf("%d signatures messages for two batches", got["signatures"])
		}
		if pins.Load() != 1 || k.Signer.(interface{ Logins() int }).Logins() != 1 {
			t.Errorf("PIN asked %d times (%d logins) for 60 signatures, want once", pins.Load(), k.Signer.(interface{ Logins() int }).Logins())
		}
	})
}
