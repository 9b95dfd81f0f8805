package agent

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"time"
)

// SandboxKey makes a throw-away signing key for the sandbox: a 2048-bit RSA
// key and a self-signed certificate valid from an hour ago for 30 days,
// held only in memory. The service accepts such a certificate for sandbox
// companies only (422 self_signed_certificate for production ones), and
// the sandbox's UJP simulator takes it as the company's.
func SandboxKey(label string) (Key, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return Key{}, fmt.Errorf("sandbox key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return Key{}, fmt.Errorf("sandbox key: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{CommonName: "denar sandbox signer " + label, OrganizationalUnit: []string{"sandbox, not for production"},
			Country: []string{"MK"}},
		NotBefore: now.Add(-time.Hour),
		NotAfter:  now.AddDate(0, 0, 30),
		KeyUsage:  x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Key{}, fmt.Errorf("sandbox key: certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Key{}, fmt.Errorf("sandbox key: %w", err)
	}
	return Key{Signer: key, Cert: cert, Close: func() error { return nil }}, nil
}
