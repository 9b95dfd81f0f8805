package jwsverify

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type signer struct {
	key  *rsa.PrivateKey
	cert *x509.Certificate
}

func newSigner(t testing.TB, bits int, notBefore, notAfter time.Time) signer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "Test Signer DOOEL"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return signer{key, cert}
}

func (s signer) sign(t testing.TB, header, payload []byte) string {
	t.Helper()
	in := SigningInput(header, payload)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + B64(sig)
}

func TestVerify(t *testing.T) {
	now := time.Now()
	reg := newSigner(t, 2048, now.Add(-time.Hour), now.Add(time.Hour))
	other := newSigner(t, 2048, now.Add(-time.Hour), now.Add(time.Hour))
	header, err := ProtectedHeader(reg.cert)
	if err != nil {
		t.Fatal(err)
	}
	otherHeader, _ := ProtectedHeader(other.cert)
	payload := []byte(`{"invoice":"inv_1","total":"1180.00"}`)

	good := reg.sign(t, header, payload)
	parts := strings.Split(good, ".")
	mac := hmac.New(sha256.New, reg.cert.Raw)
	mac.Write([]byte(B64([]byte(`{"alg":"HS256"}`)) + "." + parts[1]))

	tests := []struct {
		name string
		jws  string
		want error
	}{
		{"valid", good, nil},
		{"tampered payload", parts[0] + "." + B64([]byte(`{"invoice":"inv_1","total":"1.00"}`)) + "." + parts[2], ErrPayloadMismatch},
		{"signed other payload", reg.sign(t, header, []byte("other")), ErrPayloadMismatch},
		{"another certificate in x5c", other.sign(t, otherHeader, payload), ErrCertificateMismatch},
		{"another key under our x5c", other.sign(t, header, payload), ErrSignatureInvalid},
		{"header without x5c", reg.sign(t, []byte(`{"alg":"RS256"}`), payload), ErrPayloadMismatch},
		{"corrupted signature", parts[0] + "." + parts[1] + "." + B64([]byte("xx")), ErrSignatureInvalid},
		{"alg none", B64([]byte(`{"alg":"none"}`)) + "." + parts[1] + ".", ErrSignatureInvalid},
		{"alg HS256 keyed by the certificate", B64([]byte(`{"alg":"HS256"}`)) + "." + parts[1] + "." + B64(mac.Sum(nil)), ErrSignatureInvalid},
		{"two parts", parts[0] + "." + parts[1], ErrSignatureInvalid},
		{"json serialization", `{"payload":"` + parts[1] + `"}`, ErrSignatureInvalid},
		{"empty", "", ErrSignatureInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(tc.jws, header, payload, reg.cert)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCheckCertificate(t *testing.T) {
	now := time.Now()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
	ecDER, err := x509.CreateCertificate(rand.Reader, ecTmpl, ecTmpl, &ec.PublicKey, ec)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		der     []byte
		wantErr string
	}{
		{"valid 2048", newSigner(t, 2048, now.Add(-time.Hour), now.Add(time.Hour)).cert.Raw, ""},
		{"rsa 1024", newSigner(t, 1024, now.Add(-time.Hour), now.Add(time.Hour)).cert.Raw, "at least 2048"},
		{"expired", newSigner(t, 2048, now.Add(-2*time.Hour), now.Add(-time.Hour)).cert.Raw, "expired"},
		{"not yet valid", newSigner(t, 2048, now.Add(time.Hour), now.Add(2*time.Hour)).cert.Raw, "not valid before"},
		{"ecdsa", ecDER, "key is ECDSA; UJP's signatures are RS256, an RSA key is required"},
		{"garbage", []byte("not a certificate"), "parse certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckCertificate(tc.der, now)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckCertificate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestOpenSSLInterop signs the signing input with a tool we did not write:
// `openssl dgst -sha256 -sign` produces a PKCS#1 v1.5 signature, i.e. RS256.
func TestOpenSSLInterop(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	now := time.Now()
	reg := newSigner(t, 2048, now.Add(-time.Hour), now.Add(time.Hour))
	wrong := newSigner(t, 2048, now.Add(-time.Hour), now.Add(time.Hour))
	header, _ := ProtectedHeader(reg.cert)
	payload := []byte(`{"query":"status","id":"UJP-42"}`)
	dir := t.TempDir()
	input := filepath.Join(dir, "input")
	if err := os.WriteFile(input, []byte(SigningInput(header, payload)), 0o600); err != nil {
		t.Fatal(err)
	}
	signWith := func(name string, key *rsa.PrivateKey) string {
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		keyPath := filepath.Join(dir, name+".pem")
		if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(openssl, "dgst", "-sha256", "-sign", keyPath, input).Output()
		if err != nil {
			t.Fatalf("openssl: %v", err)
		}
		return SigningInput(header, payload) + "." + B64(out)
	}
	if err := Verify(signWith("good", reg.key), header, payload, reg.cert); err != nil {
		t.Fatalf("openssl signature rejected: %v", err)
	}
	if err := Verify(signWith("wrong", wrong.key), header, payload, reg.cert); !errors.Is(err, ErrSignatureInvalid) {
		t.Fatalf("wrong-key openssl signature: got %v, want signature_invalid", err)
	}
}

func TestParseAgentAuthorization(t *testing.T) {
	tests := []struct {
		in, id, secret string
		ok             bool
	}{
		{"Agent agt_1.s3cr.et", "agt_1", "s3cr.et", true},
		{"agent agt_x.y", "agt_x", "y", true},
		{"Bearer agt_1.s", "", "", false},
		{"Agent agt_1", "", "", false},
		{"Agent .s", "", "", false},
		{"Agent agt_1.", "", "", false},
		{"Agent key_1.s", "", "", false},
		{"Agent agt_1.s x", "", "", false},
		{"", "", "", false},
	}
	for _, tc := range tests {
		id, secret, err := ParseAgentAuthorization(tc.in)
		if (err == nil) != tc.ok || id != tc.id || secret != tc.secret {
			t.Errorf("ParseAgentAuthorization(%q) = %q, %q, %v", tc.in, id, secret, err)
		}
	}
}

func FuzzVerify(f *testing.F) {
	now := time.Now()
	reg := newSigner(f, 2048, now.Add(-time.Hour), now.Add(time.Hour))
	header, _ := ProtectedHeader(reg.cert)
	payload := []byte("payload")
	f.Add(reg.sign(f, header, payload))
	f.Add(B64([]byte(`{"alg":"none"}`)) + "." + B64(payload) + ".")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, jws string) {
		err := Verify(jws, header, payload, reg.cert)
		if err != nil && !errors.Is(err, ErrSignatureInvalid) && !errors.Is(err, ErrPayloadMismatch) && !errors.Is(err, ErrCertificateMismatch) {
			t.Fatalf("error maps to no problem code: %v", err)
		}
		if err == nil && strings.Split(strings.TrimSpace(jws), ".")[0] != B64(header) {
			t.Fatalf("accepted a JWS with another protected header: %q", jws)
		}
	})
}

func FuzzParseAgentAuthorization(f *testing.F) {
	for _, s := range []string{"Agent agt_1.secret", "Agent agt_.x", "Agent  agt_1.s.t", "Basic x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		id, secret, err := ParseAgentAuthorization(v)
		if err != nil {
			return
		}
		if !strings.HasPrefix(id, "agt_") || strings.Contains(id, ".") || secret == "" {
			t.Fatalf("accepted %q as id %q secret %q", v, id, secret)
		}
	})
}

func TestSelfSigned(t *testing.T) {
	t.Parallel()
	now := time.Now()
	self := newSigner(t, 2048, now.Add(-time.Hour), now.Add(time.Hour))
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	issue := func(subject string, parent *x509.Certificate) *x509.Certificate {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: subject}, NotBefore: now.Add(-time.Hour),
			NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &self.key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		cert *x509.Certificate
		want bool
	}{
		{"self-signed", self.cert, true},
		{"issued by a CA", issue("Тест Продавач ДООЕЛ", caTmpl), false},
		// Named like its issuer, but signed by the issuer's key, not its own.
		{"issuer's name, issuer's signature", issue("Test CA", caTmpl), false},
	} {
		if got := SelfSigned(tc.cert); got != tc.want {
			t.Errorf("%s: SelfSigned = %v, want %v", tc.name, got, tc.want)
		}
	}
}
