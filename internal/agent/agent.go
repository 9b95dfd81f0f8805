// Package agent is the customer-side part of denar-agent: its credentials
// file, the key sources (PEM, PKCS#12, and PKCS#11 behind the pkcs11 build
// tag) and the per-purpose signing policy. The signing loop itself is the
// public sdk/signer worker. It imports no server package (archtest).
package agent

import (
	"bufio"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/pkcs12"

	"github.com/denar-mk/denar/sdk/signer"
)

// SaveCredentials writes c to path with mode 0600: the file holds the agent
// secret, which the server cannot show again.
func SaveCredentials(path string, c signer.Credentials) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("credentials directory: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write credentials: %w", err)
	}
	return os.Rename(tmp, path)
}

// LoadCredentials reads a credentials file and refuses one readable by
// others.
func LoadCredentials(path string) (signer.Credentials, error) {
	var c signer.Credentials
	st, err := os.Stat(path)
	if err != nil {
		return c, fmt.Errorf("credentials: %w (run denar-agent pair first)", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return c, fmt.Errorf("credentials file %s has mode %o; chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("credentials %s: %w", path, err)
	}
	return c, nil
}

// Key is a signing key and its certificate.
type Key struct {
	Signer crypto.Signer
	Cert   *x509.Certificate
	Close  func() error
}

// LoadPEM reads a PEM private key (PKCS#1 or PKCS#8, RSA) and a PEM
// certificate.
func LoadPEM(keyPath, certPath string) (Key, error) {
	kb, err := os.ReadFile(keyPath)
	if err != nil {
		return Key{}, err
	}
	cb, err := os.ReadFile(certPath)
	if err != nil {
		return Key{}, err
	}
	kblk, _ := pem.Decode(kb)
	cblk, _ := pem.Decode(cb)
	if kblk == nil || cblk == nil {
		return Key{}, errors.New("key or certificate is not PEM")
	}
	var key any
	if key, err = x509.ParsePKCS8PrivateKey(kblk.Bytes); err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(kblk.Bytes); err != nil {
			return Key{}, fmt.Errorf("parse key %s: %w", keyPath, err)
		}
	}
	cert, err := x509.ParseCertificate(cblk.Bytes)
	if err != nil {
		return Key{}, fmt.Errorf("parse certificate %s: %w", certPath, err)
	}
	return matched(key, cert)
}

// LoadPKCS12 reads a .p12/.pfx file with one key and its certificate.
func LoadPKCS12(path, password string) (Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, err
	}
	key, cert, err := pkcs12.Decode(b, password)
	if err != nil {
		return Key{}, fmt.Errorf("PKCS#12 %s: %w", path, err)
	}
	return matched(key, cert)
}

func matched(key any, cert *x509.Certificate) (Key, error) {
	rk, ok := key.(*rsa.PrivateKey)
	if !ok {
		return Key{}, fmt.Errorf("key is %T; UJP signatures are RS256, an RSA key is required", key)
	}
	if pub, ok := cert.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(&rk.PublicKey) {
		return Key{}, errors.New("the certificate does not belong to the key")
	}
	return Key{Signer: rk, Cert: cert, Close: func() error { return nil }}, nil
}

// TerminalPolicy signs the purposes in auto without asking and asks on the
// terminal for the others (document and decision by default: they commit
// the company; query only reads). With no terminal, it refuses with policy.
func TerminalPolicy(in io.Reader, out io.Writer, auto map[string]bool) signer.Policy {
	var mu sync.Mutex
	rd := bufio.NewReader(in)
	return func(_ context.Context, r signer.Request) signer.Decision {
		if auto[r.Purpose] {
			return signer.Decision{Sign: true}
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "Sign %s %s for company %s (links %v, expires %s)? [y/N] ",
			r.Purpose, r.ID, r.CompanyID, r.Links, r.ExpiresAt.Format("15:04:05"))
		line, err := rd.ReadString('\n')
		if err != nil && line == "" {
			return signer.Decision{Reason: "policy", Message: "no terminal to ask on; run with --auto or --auto-purposes"}
		}
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" || a == "да" {
			return signer.Decision{Sign: true}
		}
		return signer.Decision{Reason: "user_declined", Message: "declined on the terminal"}
	}
}
