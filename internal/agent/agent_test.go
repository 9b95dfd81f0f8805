package agent

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
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

// TestTerminalPolicy: one question for the batch's requests that are not
// signed automatically, answered for the lot (all, none, some by number);
// nobody to ask refuses them with unattended.
func TestTerminalPolicy(t *testing.T) {
	t.Parallel()
	batch := []signer.Request{{ID: "sgr_1", Purpose: "document"}, {ID: "sgr_2", Purpose: "query"},
		{ID: "sgr_3", Purpose: "decision"}, {ID: "sgr_4", Purpose: "document"}}
	for _, tc := range []struct {
		input string
		want  string // per request: s signed, d user_declined, u unattended
		asks  int    // questions asked (the first and any again after a wrong answer)
	}{
		{"y\n", "ssss", 1},
		{"да\n", "ssss", 1},
		{"n\n", "dsdd", 1},
		{"\n", "dsdd", 1},
		{"1 3\n", "ssds", 1},
		{"2-3\n", "dsss", 1},
		{"1,3-3\n", "ssds", 1},
		{"4\nmaybe\n3\n", "dsds", 3}, // 4 is out of range, maybe no answer: asked again
		{"", "usuu", 1},              // nobody to ask
	} {
		var out strings.Builder
		ds := TerminalPolicy(strings.NewReader(tc.input), &out, map[string]bool{"query": true})(context.Background(), batch)
		var got strings.Builder
		for _, d := range ds {
			switch {
			case d.Sign:
				got.WriteByte('s')
			case d.Reason == "user_declined":
				got.WriteByte('d')
			case d.Reason == "unattended":
				got.WriteByte('u')
			default:
				got.WriteString("?" + d.Reason)
			}
		}
		if got.String() != tc.want {
			t.Errorf("%q: %s, want %s", tc.input, got.String(), tc.want)
		}
		if n := strings.Count(out.String(), "3 documents to sign"); n != 1 {
			t.Errorf("%q: the batch was listed %d times, want once:\n%s", tc.input, n, out.String())
		}
		if n := strings.Count(out.String(), "Answer y"); n != tc.asks-1 {
			t.Errorf("%q: asked again %d times, want %d", tc.input, n, tc.asks-1)
		}
	}
	// Only automatic purposes: nobody is asked.
	var out strings.Builder
	ds := TerminalPolicy(strings.NewReader(""), &out, map[string]bool{"query": true})(context.Background(), batch[1:2])
	if !ds[0].Sign || out.Len() != 0 {
		t.Errorf("a query batch: %+v, asked %q", ds, out.String())
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestBatchPrompt: the one question before a batch shows for each document
// what a signer must see (its number, buyer or seller, total, company and
// the local time it expires), not ids and Go maps; golden in
// testdata/batch_prompt.txt.
func TestBatchPrompt(t *testing.T) {
	t.Parallel()
	skopje, err := time.LoadLocation("Europe/Skopje")
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	now := time.Date(2026, 11, 30, 16, 2, 0, 0, time.UTC)
	seller := "Тест Продавач ДООЕЛ Скопје"
	rs := []signer.Request{
		{ID: "sgr_1", CompanyID: "cmp_1", Purpose: "document", ExpiresAt: now.Add(5 * time.Minute), Links: map[string]string{"einvoice": "inv_1"},
			Summary: &signer.Summary{CompanyName: seller, Purpose: "issue e-invoice 2026-0042",
				DocumentNumber: s("2026-0042"), BuyerName: s("Тест Купувач ДОО Скопје"), GrossTotal: s("1180.00"), Currency: s("MKD")}},
		{ID: "sgr_2", CompanyID: "cmp_1", Purpose: "document", ExpiresAt: now.Add(6 * time.Minute), Links: map[string]string{"einvoice": "inv_2"},
			Summary: &signer.Summary{CompanyName: seller, Purpose: "issue e-invoice 2026-0043",
				DocumentNumber: s("2026-0043"), BuyerName: s("Бета ДОО Битола"), GrossTotal: s("59000.00"), Currency: s("MKD")}},
		{ID: "sgr_3", CompanyID: "cmp_2", Purpose: "decision", ExpiresAt: now.Add(8 * time.Hour), Links: map[string]string{"inbox": "inb_1"},
			Summary: &signer.Summary{CompanyName: "Алфа Трговија ДОО", Purpose: "accept incoming invoice F-17/2026",
				DocumentNumber: s("F-17/2026"), SellerName: s("Гама ДООЕЛ Тетово"), GrossTotal: s("2360.50"), Currency: s("EUR")}},
		// From a server without summaries: the purpose in words.
		{ID: "sgr_4", CompanyID: "cmp_3", Purpose: "document", ExpiresAt: now.Add(5 * time.Minute), Links: map[string]string{"einvoice": "inv_9"}},
	}
	got := BatchPrompt(rs, now, skopje)
	golden := filepath.Join("testdata", "batch_prompt.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("prompt:\n%s\nwant (%s; -update rewrites it):\n%s", got, golden, want)
	}
	for _, not := range []string{"sgr_", "cmp_1", "inv_1", "map["} {
		if strings.Contains(got, not) {
			t.Errorf("prompt shows %q", not)
		}
	}
	if got := BatchPrompt(rs[:1], now, time.Local); !strings.Contains(got, "(local time)") || !strings.Contains(got, "1 document to sign") ||
		!strings.HasSuffix(got, "Sign it? [y/N] ") {
		t.Errorf("prompt of one request: %q", got)
	}
}
