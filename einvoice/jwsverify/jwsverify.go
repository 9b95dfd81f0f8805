// Package jwsverify builds the JWS protected header a signing agent must use
// and verifies the compact JWS it returns. It is pure (no I/O, no store) so
// the server, tests and fuzz targets share exactly one implementation of the
// checks behind the signature_invalid, payload_mismatch and
// certificate_mismatch problems.
//
// UJP expects RS256 with the signer's certificate in x5c (research §1.3), so
// RS256 is the only algorithm accepted: the allow-list handed to go-jose rules
// out "none" and HMAC confusion before any key is touched.
package jwsverify

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Algorithms is the explicit allow-list passed to go-jose.
var Algorithms = []jose.SignatureAlgorithm{jose.RS256}

// MinRSABits is the smallest RSA modulus a signing certificate may carry.
const MinRSABits = 2048

// Sentinel errors map one-to-one onto problem codes of the e-invoicing API.
var (
	ErrSignatureInvalid    = errors.New("signature_invalid")
	ErrPayloadMismatch     = errors.New("payload_mismatch")
	ErrCertificateMismatch = errors.New("certificate_mismatch")
)

// ProtectedHeader returns the exact protected header JSON an agent must sign
// with: alg RS256 and the certificate chain (leaf first) in x5c. The server
// stores the base64url form it hands out and later requires the same bytes
// back, so agents never have to re-serialise JSON.
func ProtectedHeader(cert *x509.Certificate) ([]byte, error) {
	if cert == nil {
		return nil, errors.New("jwsverify: nil certificate")
	}
	h := struct {
		Alg string   `json:"alg"`
		X5C []string `json:"x5c"`
	}{"RS256", []string{base64.StdEncoding.EncodeToString(cert.Raw)}}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("jwsverify: marshal header: %w", err)
	}
	return b, nil
}

// B64 is the unpadded base64url encoding JWS uses.
func B64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// SigningInput is ASCII(base64url(header) '.' base64url(payload)), the bytes
// RS256 signs (RFC 7515 §5.1).
func SigningInput(header, payload []byte) string { return B64(header) + "." + B64(payload) }

// Verify checks a compact JWS against what the server asked to be signed:
// the protected header it issued (raw JSON), the payload bytes, and the
// certificate registered for the company. The error wraps one of the
// sentinels above; the order of checks decides which code the caller sees:
// unparseable or wrong alg → signature_invalid; a different payload or
// header → payload_mismatch; signed with another certificate →
// certificate_mismatch; anything else that fails RSA → signature_invalid.
func Verify(compact string, header, payload []byte, registered *x509.Certificate) error {
	if registered == nil {
		return errors.New("jwsverify: no registered certificate")
	}
	pub, ok := registered.PublicKey.(*rsa.PublicKey)
	if !ok {
		return fmt.Errorf("%w: registered certificate is not RSA", ErrCertificateMismatch)
	}
	parts := strings.Split(strings.TrimSpace(compact), ".")
	if len(parts) != 3 {
		return fmt.Errorf("%w: compact JWS must have three parts, got %d", ErrSignatureInvalid, len(parts))
	}
	jws, err := jose.ParseSignedCompact(strings.TrimSpace(compact), Algorithms)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSignatureInvalid, err)
	}
	if len(jws.Signatures) != 1 {
		return fmt.Errorf("%w: expected one signature", ErrSignatureInvalid)
	}
	if !bytes.Equal(jws.UnsafePayloadWithoutVerification(), payload) {
		return fmt.Errorf("%w: payload differs from the signing request", ErrPayloadMismatch)
	}
	// A certificate in x5c other than the registered one means the agent
	// signed with another key, whatever the RSA check would say.
	if leaf, err := x5cLeaf(parts[0]); err != nil {
		return fmt.Errorf("%w: %v", ErrSignatureInvalid, err)
	} else if leaf != nil && !bytes.Equal(leaf, registered.Raw) {
		return fmt.Errorf("%w: x5c leaf is not the registered certificate %s",
			ErrCertificateMismatch, registered.SerialNumber)
	}
	if _, err := jws.Verify(pub); err != nil {
		// go-jose's own words ("go-jose/go-jose: error in cryptographic
		// primitive") name a library, not what is wrong.
		return fmt.Errorf("%w: the signature does not verify with the request's certificate", ErrSignatureInvalid)
	}
	if parts[0] != B64(header) {
		return fmt.Errorf("%w: protected header differs from the one issued", ErrPayloadMismatch)
	}
	return nil
}

// x5cLeaf returns the DER of the first x5c entry of a base64url protected
// header, or nil when the header carries no x5c (go-jose keeps its parsed
// certificates private).
func x5cLeaf(b64 string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("protected header: %w", err)
	}
	var h struct {
		X5C []string `json:"x5c"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("protected header: %w", err)
	}
	if len(h.X5C) == 0 {
		return nil, nil
	}
	der, err := base64.StdEncoding.DecodeString(h.X5C[0])
	if err != nil {
		return nil, fmt.Errorf("x5c: %w", err)
	}
	return der, nil
}

// CheckCertificate parses a DER certificate and enforces what a signing
// certificate must satisfy at registration: valid at now, RSA ≥ 2048 bits.
func CheckCertificate(der []byte, now time.Time) (*x509.Certificate, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	if now.Before(cert.NotBefore) {
		return nil, fmt.Errorf("certificate not valid before %s", cert.NotBefore.UTC().Format(time.RFC3339))
	}
	if now.After(cert.NotAfter) {
		return nil, fmt.Errorf("certificate expired at %s", cert.NotAfter.UTC().Format(time.RFC3339))
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the certificate's key is %s; UJP's signatures are RS256, an RSA key is required", cert.PublicKeyAlgorithm)
	}
	if pub.N.BitLen() < MinRSABits {
		return nil, fmt.Errorf("RSA key has %d bits, at least %d required", pub.N.BitLen(), MinRSABits)
	}
	return cert, nil
}

// SelfSigned reports whether cert names itself as its issuer and is signed
// by its own key: a certificate no certification authority vouches for,
// such as the throw-away ones of the sandbox signer. UJP accepts only
// qualified certificates issued by an authority, so production refuses
// these at registration.
func SelfSigned(cert *x509.Certificate) bool {
	if !bytes.Equal(cert.RawIssuer, cert.RawSubject) {
		return false
	}
	return cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature) == nil
}

// ParseAgentAuthorization splits an "Authorization: Agent <id>.<secret>"
// header value. The id is "agt_…" and never contains a dot; the secret is
// everything after the first dot. Scheme matching is case-insensitive (RFC
// 9110 §11.1).
func ParseAgentAuthorization(v string) (id, secret string, err error) {
	scheme, rest, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Agent") {
		return "", "", errors.New("authorization scheme is not Agent")
	}
	rest = strings.TrimLeft(rest, " ")
	id, secret, ok = strings.Cut(rest, ".")
	if !ok || id == "" || secret == "" {
		return "", "", errors.New("agent credentials must be <id>.<secret>")
	}
	if !strings.HasPrefix(id, "agt_") || strings.ContainsAny(rest, " \t\r\n") {
		return "", "", errors.New("malformed agent credentials")
	}
	return id, secret, nil
}
