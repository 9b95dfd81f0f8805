//go:build pkcs11

package agent

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/sdk/signer"
)

const softhsmModule = "/usr/lib/softhsm/libsofthsm2.so"

// TestPKCS11SoftHSM creates a SoftHSM2 token in a temporary config, imports
// a key, and signs a signing request through the module; the server's
// verifier accepts the JWS.
func TestPKCS11SoftHSM(t *testing.T) {
	util, err := exec.LookPath("softhsm2-util")
	if _, serr := os.Stat(softhsmModule); err != nil || serr != nil {
		if os.Getenv("DENAR_TEST_REQUIRE_SOFTHSM") == "1" {
			t.Fatalf("SoftHSM2 required but missing: %v %v", err, serr)
		}
		t.Skip("SoftHSM2 not installed (apt-get install softhsm2); set DENAR_TEST_REQUIRE_SOFTHSM=1 to fail instead")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "softhsm2.conf")
	if err := os.MkdirAll(filepath.Join(dir, "tokens"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("directories.tokendir = "+filepath.Join(dir, "tokens")+"\nobjectstore.backend = file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOFTHSM2_CONF", conf)
	sh := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(util, args...).CombinedOutput(); err != nil {
			t.Fatalf("softhsm2-util %v: %v\n%s", args, err, out)
		}
	}
	sh("--init-token", "--free", "--label", "denar-test", "--pin", "1234", "--so-pin", "5678")

	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(42), Subject: pkix.Name{CommonName: "Token DOOEL"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	cert, _ := x509.ParseCertificate(der)
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPath, certPath := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	sh("--import", keyPath, "--token", "denar-test", "--label", "signer", "--id", "01", "--pin", "1234")

	if _, err := LoadPKCS11(softhsmModule, "denar-test", "0000", "signer", certPath); err == nil {
		t.Fatal("wrong PIN accepted")
	}
	k, err := LoadPKCS11(softhsmModule, "denar-test", "1234", "signer", certPath)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()

	header, _ := jwsverify.ProtectedHeader(cert)
	for i, payload := range []string{`{"invoice":"inv_1"}`, `{"query":"status"}`} {
		r := signer.Request{ID: "sgr_" + string(rune('a'+i)), ProtectedHeader: jwsverify.B64(header), Payload: jwsverify.B64([]byte(payload))}
		jws, err := signer.Sign(k.Signer, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := jwsverify.Verify(jws, header, []byte(payload), cert); err != nil {
			t.Fatalf("token signature rejected: %v", err)
		}
	}
	// The token's signature is the same PKCS#1 v1.5 signature Go computes.
	sum := sha256.Sum256([]byte("x"))
	sig, err := k.Signer.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil || rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		t.Fatalf("raw token signature: %v (%s)", err, base64.StdEncoding.EncodeToString(sig))
	}
}

// TestPKCS11SessionLogsInOncePerSession: the token signer logs in once and
// signs any number of batches in that session; when the token ends the
// session (logged out, as when it is pulled out and put back) the next
// batch logs in once again; a PIN the token refuses then refuses the batch
// with pin_locked; a token that is gone with token_missing.
func TestPKCS11SessionLogsInOncePerSession(t *testing.T) {
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
	sh("--init-token", "--free", "--label", "denar-test", "--pin", "1234", "--so-pin", "5678")
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(43), Subject: pkix.Name{CommonName: "Token DOOEL"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPath, certPath := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	sh("--import", keyPath, "--token", "denar-test", "--label", "signer", "--id", "01", "--pin", "1234")

	pin := "1234"
	asked := 0
	k, err := LoadPKCS11PIN(softhsmModule, "denar-test", func() (string, error) { asked++; return pin, nil }, "signer", certPath)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ts := k.Signer.(*tokenSigner)
	var sess signer.Session = ts
	batch := func() {
		t.Helper()
		if err := sess.Begin(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer sess.End()
		for i := range 10 {
			sum := sha256.Sum256([]byte{byte(i)})
			sig, err := ts.Sign(rand.Reader, sum[:], crypto.SHA256)
			if err != nil || rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
				t.Fatalf("signature %d: %v", i, err)
			}
		}
	}
	batch()
	batch()
	if asked != 1 || ts.Logins() != 1 {
		t.Fatalf("two batches of 10: PIN asked %d times, %d logins; want 1", asked, ts.Logins())
	}
	// The token ends the session: one more login for the next batch.
	if err := ts.ctx.Logout(ts.session); err != nil {
		t.Fatal(err)
	}
	batch()
	batch()
	if asked != 2 || ts.Logins() != 2 {
		t.Fatalf("after the session ended: PIN asked %d times, %d logins; want 2", asked, ts.Logins())
	}
	// A wrong PIN refuses the batch with pin_locked.
	_ = ts.ctx.Logout(ts.session)
	pin = "0000"
	var re *signer.RefusalError
	if err := sess.Begin(t.Context()); !errors.As(err, &re) || re.Reason != "pin_locked" {
		t.Fatalf("wrong PIN: %v", err)
	}
	// A token that is gone: token_missing.
	ts.label = "not-plugged-in"
	ts.open = false
	if err := sess.Begin(t.Context()); !errors.As(err, &re) || re.Reason != "token_missing" {
		t.Fatalf("missing token: %v", err)
	}
}
