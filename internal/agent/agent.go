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
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
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

// TerminalPolicy decides a batch on the terminal: the requests whose
// purpose is in auto are signed without asking; the others (document and
// decision by default: they commit the company; query only reads) are
// listed in ONE question (BatchPrompt) answered for the lot: y signs them
// all, n (or nothing) declines them all, numbers ("1 3-5") sign those
// lines and decline the rest. When nobody can be asked (the input is
// closed) it refuses with unattended, which keeps a document waiting,
// never with policy, which would fail it.
func TerminalPolicy(in io.Reader, out io.Writer, auto map[string]bool) signer.BatchPolicy {
	var mu sync.Mutex
	rd := bufio.NewReader(in)
	return func(_ context.Context, rs []signer.Request) []signer.Decision {
		ds := make([]signer.Decision, len(rs))
		var ask []int // indexes of rs a person decides
		for i, r := range rs {
			if auto[r.Purpose] {
				ds[i] = signer.Decision{Sign: true}
			} else {
				ask = append(ask, i)
			}
		}
		if len(ask) == 0 {
			return ds
		}
		shown := make([]signer.Request, len(ask))
		for j, i := range ask {
			shown[j] = rs[i]
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(out, BatchPrompt(shown, time.Now(), time.Local))
		for {
			line, err := rd.ReadString('\n')
			if err != nil && line == "" {
				for _, i := range ask {
					ds[i] = signer.Decision{Reason: "unattended", Message: "nobody to ask: the agent's input is closed; run it at a terminal, or with --auto or --auto-purposes"}
				}
				return ds
			}
			sign, ok := parseAnswer(line, len(ask))
			if !ok {
				fmt.Fprintf(out, "Answer y (sign all %d), n (sign none) or the numbers to sign, e.g. 1 3-5: ", len(ask))
				continue
			}
			for j, i := range ask {
				if sign[j] {
					ds[i] = signer.Decision{Sign: true}
				} else {
					ds[i] = signer.Decision{Reason: "user_declined", Message: "declined on the terminal"}
				}
			}
			return ds
		}
	}
}

// parseAnswer reads an answer to the batch question about n documents: y
// (all), n or nothing (none), or line numbers and ranges ("1 3-5", "1,3").
func parseAnswer(line string, n int) ([]bool, bool) {
	sign := make([]bool, n)
	a := strings.ToLower(strings.TrimSpace(line))
	switch a {
	case "y", "yes", "да", "д":
		for i := range sign {
			sign[i] = true
		}
		return sign, true
	case "", "n", "no", "не", "н":
		return sign, true
	}
	for _, f := range strings.FieldsFunc(a, func(r rune) bool { return r == ' ' || r == ',' }) {
		lo, hi, isRange := strings.Cut(f, "-")
		from, err := strconv.Atoi(lo)
		if err != nil {
			return nil, false
		}
		to := from
		if isRange {
			if to, err = strconv.Atoi(hi); err != nil {
				return nil, false
			}
		}
		if from < 1 || to > n || from > to {
			return nil, false
		}
		for i := from; i <= to; i++ {
			sign[i-1] = true
		}
	}
	return sign, true
}

// purposeWords say what a purpose signs when the request has no summary.
var purposeWords = map[string]string{
	"document": "issue a document", "decision": "accept or reject an incoming invoice", "query": "read from UJP",
}

// BatchPrompt is the one question asked before signing rs: a numbered
// line per request with its document number, buyer (or seller, for a
// decision on an incoming invoice), total, company and the time it expires
// in loc's time (with the date unless it is now's day), then the answer
// expected. A request without a summary (an older server) is described by
// its purpose and what it is for.
func BatchPrompt(rs []signer.Request, now time.Time, loc *time.Location) string {
	var b strings.Builder
	zone := "local time"
	if loc != time.Local {
		zone = loc.String() + " time"
	}
	what := "documents"
	if len(rs) == 1 {
		what = "document"
	}
	fmt.Fprintf(&b, "%d %s to sign:\n", len(rs), what)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tdocument\tbuyer / seller\ttotal\tcompany\texpires (%s)\n", zone)
	y, m, d := now.In(loc).Date()
	for i, r := range rs {
		doc, party, total, company := "", "", "", ""
		if s := r.Summary; s != nil {
			company = s.CompanyName
			doc = s.Purpose
			if s.DocumentNumber != nil && *s.DocumentNumber != "" {
				doc = *s.DocumentNumber
				if r.Purpose == "decision" {
					doc = "decision on " + doc
				}
			}
			switch {
			case s.BuyerName != nil && *s.BuyerName != "":
				party = *s.BuyerName
			case s.SellerName != nil && *s.SellerName != "":
				party = "seller: " + *s.SellerName
			}
			if s.GrossTotal != nil {
				total = *s.GrossTotal
				if s.Currency != nil {
					total += " " + *s.Currency
				}
			}
		} else {
			doc = purposeWords[r.Purpose]
			if doc == "" {
				doc = r.Purpose
			}
			types := make([]string, 0, len(r.Links))
			for typ := range r.Links {
				types = append(types, typ+" "+r.Links[typ])
			}
			slices.Sort(types)
			if len(types) > 0 {
				doc += " (" + strings.Join(types, ", ") + ")"
			}
			company = r.CompanyID
		}
		at := r.ExpiresAt.In(loc)
		expires := at.Format("15:04")
		if ay, am, ad := at.Date(); ay != y || am != m || ad != d {
			expires = at.Format("2 Jan 2006 15:04")
		}
		fmt.Fprintf(tw, "%3d\t%s\t%s\t%s\t%s\t%s\n", i+1, dash(doc), dash(party), dash(total), dash(company), expires)
	}
	_ = tw.Flush()
	if len(rs) == 1 {
		b.WriteString("Sign it? [y/N] ")
	} else {
		fmt.Fprintf(&b, "Sign all %d? [y = all, N = none, or the numbers to sign, e.g. 1 3-5] ", len(rs))
	}
	return b.String()
}

// dash stands for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
