package agent

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/sdk/signer"
)

func TestCredentialsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "credentials.json")
	want := signer.Credentials{Server: "http://x", AgentID: "agt_1", Secret: "s"}
	if err := SaveCredentials(path, want); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %o", st.Mode().Perm())
	}
	got, err := LoadCredentials(path)
	if err != nil || got != want {
		t.Fatalf("load: %+v %v", got, err)
	}
	_ = os.Chmod(path, 0o644)
	if _, err := LoadCredentials(path); err == nil {
		t.Fatal("world-readable credentials accepted")
	}
}

func writePEM(t *testing.T, dir string) (keyPath, certPath string, cert *x509.Certificate) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "t"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	cert, _ = x509.ParseCertificate(der)
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPath, certPath = filepath.Join(dir, "k.pem"), filepath.Join(dir, "c.pem")
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	return keyPath, certPath, cert
}

func TestLoadPEM(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	k1, c1, cert := writePEM(t, a)
	_, c2, _ := writePEM(t, b)
	key, err := LoadPEM(k1, c1)
	if err != nil || !key.Cert.Equal(cert) {
		t.Fatalf("LoadPEM: %v", err)
	}
	if _, err := LoadPEM(k1, c2); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Fatalf("mismatched pair: %v", err)
	}
}

func TestTerminalPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		purpose, input string
		sign           bool
		reason         string
	}{
		{"query", "", true, ""},
		{"document", "y\n", true, ""},
		{"decision", "да\n", true, ""},
		{"document", "n\n", false, "user_declined"},
		// Nobody to ask: a passing refusal, which keeps the document
		// waiting, never policy, which fails it.
		{"document", "", false, "unattended"},
	} {
		var out strings.Builder
		d := TerminalPolicy(strings.NewReader(tc.input), &out, map[string]bool{"query": true})(context.Background(), signer.Request{ID: "sgr_1", Purpose: tc.purpose})
		if d.Sign != tc.sign || d.Reason != tc.reason {
			t.Errorf("%s %q: %+v", tc.purpose, tc.input, d)
		}
	}
}

// TestPrompt: the question shows what a signer must see (the company, what
// the signature does, the number, the buyer or seller, the total and the
// local time it expires), not ids and Go maps.
func TestPrompt(t *testing.T) {
	t.Parallel()
	skopje, err := time.LoadLocation("Europe/Skopje")
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	expires := time.Now().UTC().Add(10 * time.Minute).Truncate(time.Minute)
	doc := signer.Request{ID: "sgr_1", CompanyID: "cmp_1", Purpose: "document", ExpiresAt: expires,
		Links: map[string]string{"einvoice": "inv_1"},
		Summary: &signer.Summary{CompanyName: "Тест Продавач ДООЕЛ Скопје", Purpose: "issue e-invoice 2026-0042",
			DocumentNumber: s("2026-0042"), BuyerName: s("Тест Купувач ДОО Скопје"), GrossTotal: s("1180.00"), Currency: s("MKD")}}
	got := Prompt(doc, skopje)
	for _, want := range []string{"Sign for Тест Продавач ДООЕЛ Скопје: issue e-invoice 2026-0042\n", "Тест Купувач ДОО Скопје",
		"1180.00 MKD", expires.In(skopje).Format("15:04") + " (Europe/Skopje time)", "[y/N]"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt %q lacks %q", got, want)
		}
	}
	for _, not := range []string{"sgr_1", "cmp_1", "inv_1", "map["} {
		if strings.Contains(got, not) {
			t.Errorf("prompt %q shows %q", got, not)
		}
	}
	if got := Prompt(doc, time.Local); !strings.Contains(got, "(local time)") {
		t.Errorf("prompt %q does not say the time is local", got)
	}
	// From a server without summaries: the purpose in words and the ids,
	// never a Go map.
	doc.Summary = nil
	if got := Prompt(doc, skopje); !strings.Contains(got, "issue a document") || !strings.Contains(got, "einvoice inv_1") || strings.Contains(got, "map[") {
		t.Errorf("prompt without a summary %q", got)
	}
}
