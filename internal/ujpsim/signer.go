package ujpsim

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// SandboxSigner is a throw-away signer for the sandbox: an RSA key and a
// self-signed certificate standing in for a company's qualified certificate.
// Tests and sandbox tooling use it; production signing happens on the
// customer's device and never in this process.
type SandboxSigner struct {
	EUJPID string
	EDB    string
	Key    *rsa.PrivateKey
	Cert   *x509.Certificate
	// X5C adds the certificate to the JWS header as the live integration
	// does; the simulator then checks it names the same serial.
	X5C bool
}

// NewSandboxSigner makes a 2048-bit key and a certificate valid from an hour
// ago for a year.
func NewSandboxSigner(eujpID, edb string) (*SandboxSigner, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("sandbox signer: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("sandbox signer: serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "Sandbox signer " + eujpID, SerialNumber: edb, Country: []string{"MK"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("sandbox signer: certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("sandbox signer: parse certificate: %w", err)
	}
	return &SandboxSigner{EUJPID: eujpID, EDB: edb, Key: key, Cert: cert, X5C: true}, nil
}

// Serial is the certificate's serial number in decimal (X-SERIAL-NUMBER
// of a simulator with the default SerialFormat).
func (s *SandboxSigner) Serial() string { return s.Cert.SerialNumber.String() }

// Sign marshals payload (or takes it as is when it is []byte) and returns a
// compact RS256 JWS.
func (s *SandboxSigner) Sign(payload any) (string, error) {
	b, ok := payload.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(payload); err != nil {
			return "", fmt.Errorf("sandbox signer: marshal payload: %w", err)
		}
	}
	opts := &jose.SignerOptions{}
	if s.X5C {
		opts = opts.WithHeader("x5c", []string{base64.StdEncoding.EncodeToString(s.Cert.Raw)})
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: s.Key}, opts)
	if err != nil {
		return "", fmt.Errorf("sandbox signer: %w", err)
	}
	obj, err := signer.Sign(b)
	if err != nil {
		return "", fmt.Errorf("sandbox signer: sign: %w", err)
	}
	return obj.CompactSerialize()
}
