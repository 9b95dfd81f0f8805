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
	"slices"
	"strings"
	"sync"
	"time"

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
// the company; query only reads), showing what the request signs
// (Prompt). When nobody can be asked (the input is closed) it refuses with
// unattended, which keeps a document waiting, never with policy, which
// would fail it.
func TerminalPolicy(in io.Reader, out io.Writer, auto map[string]bool) signer.Policy {
	var mu sync.Mutex
	rd := bufio.NewReader(in)
	return func(_ context.Context, r signer.Request) signer.Decision {
		if auto[r.Purpose] {
			return signer.Decision{Sign: true}
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(out, Prompt(r, time.Local))
		line, err := rd.ReadString('\n')
		if err != nil && line == "" {
			return signer.Decision{Reason: "unattended", Message: "nobody to ask: the agent's input is closed; run it at a terminal, or with --auto or --auto-purposes"}
		}
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" || a == "да" {
			return signer.Decision{Sign: true}
		}
		return signer.Decision{Reason: "user_declined", Message: "declined on the terminal"}
	}
}

// purposeWords say what a purpose signs when the request has no summary.
var purposeWords = map[string]string{
	"document": "issue a document", "decision": "accept or reject an incoming invoice", "query": "read from UJP",
}

// Prompt is the question asked before signing r: for whom, what the
// signature does, the document's number, buyer or seller and total, and
// when the request expires in loc's time; a request without a summary
// (an older server) is described by its purpose and ids.
func Prompt(r signer.Request, loc *time.Location) string {
	var b strings.Builder
	line := func(label string, v *string) {
		if v != nil && *v != "" {
			fmt.Fprintf(&b, "  %-8s %s\n", label, *v)
		}
	}
	if s := r.Summary; s != nil {
		fmt.Fprintf(&b, "Sign for %s: %s\n", s.CompanyName, s.Purpose)
		line("number", s.DocumentNumber)
		line("buyer", s.BuyerName)
		line("seller", s.SellerName)
		if s.GrossTotal != nil {
			total := *s.GrossTotal
			if s.Currency != nil {
				total += " " + *s.Currency
			}
			line("total", &total)
		}
	} else {
		what := purposeWords[r.Purpose]
		if what == "" {
			what = r.Purpose
		}
		fmt.Fprintf(&b, "Sign for company %s: %s\n", r.CompanyID, what)
		types := make([]string, 0, len(r.Links))
		for typ := range r.Links {
			types = append(types, typ)
		}
		slices.Sort(types)
		for _, typ := range types {
			fmt.Fprintf(&b, "  %-8s %s %s\n", "for", typ, r.Links[typ])
		}
	}
	at := r.ExpiresAt.In(loc)
	expires := at.Format("15:04")
	if y, m, d := at.Date(); y != time.Now().In(loc).Year() || m != time.Now().In(loc).Month() || d != time.Now().In(loc).Day() {
		expires = at.Format("2 Jan 2006 15:04")
	}
	zone := "local time"
	if loc != time.Local {
		zone = loc.String() + " time"
	}
	fmt.Fprintf(&b, "  %-8s %s (%s)\n", "expires", expires, zone)
	b.WriteString("Sign? [y/N] ")
	return b.String()
}
