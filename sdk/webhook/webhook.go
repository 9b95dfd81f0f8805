// Package webhook verifies the webhooks of the denar e-invoicing API on
// the receiving side. It imports nothing from the server; the scheme is
// the public one:
//
//	Service-Signature: t=<Unix time of sending>,v1=<hex>[,v1=<hex>]
//
// where each v1 is the HMAC-SHA256, keyed with the whole endpoint secret
// string (whsec_… as issued), of the text "<t>.<raw request body>". During
// the 24 hours after a secret rotation the header carries one v1 per valid
// secret; a receiver holding either secret accepts.
//
// Verify the raw bytes of the request body, before any JSON parsing, and
// refuse a timestamp more than Tolerance away from your clock, so that a
// captured request cannot be replayed later.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header is the request header that carries the signature.
const Header = "Service-Signature"

// Tolerance is how far a signature's timestamp may be from the receiver's
// clock (the API's Limits: 300 seconds).
const Tolerance = 300 * time.Second

// Errors of Verify.
var (
	ErrMalformed = errors.New("webhook: malformed Service-Signature header")
	ErrTimestamp = errors.New("webhook: signature timestamp outside the tolerance")
	ErrSignature = errors.New("webhook: no signature matches the secret")
)

// Signature is a parsed Service-Signature header.
type Signature struct {
	Timestamp int64
	V1        [][]byte
}

// Parse reads a Service-Signature header. Unknown schemes (other than t
// and v1) are ignored, so that a future scheme can be added next to v1.
func Parse(header string) (Signature, error) {
	var s Signature
	seenT := false
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Signature{}, ErrMalformed
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || seenT || n <= 0 {
				return Signature{}, ErrMalformed
			}
			s.Timestamp, seenT = n, true
		case "v1":
			b, err := hex.DecodeString(v)
			if err != nil || len(b) != sha256.Size {
				return Signature{}, ErrMalformed
			}
			s.V1 = append(s.V1, b)
		}
	}
	if !seenT || len(s.V1) == 0 {
		return Signature{}, ErrMalformed
	}
	return s, nil
}

// Verify checks that header signs body with secret, at a time within
// tolerance of now (a zero tolerance means Tolerance). Digests are
// compared in constant time.
func Verify(body []byte, header, secret string, tolerance time.Duration, now time.Time) error {
	s, err := Parse(header)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = Tolerance
	}
	if d := now.Sub(time.Unix(s.Timestamp, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: sent at %s, %s from now", ErrTimestamp, time.Unix(s.Timestamp, 0).UTC().Format(time.RFC3339), d.Round(time.Second))
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(s.Timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	want := m.Sum(nil)
	ok := false
	for _, got := range s.V1 {
		// Check every signature, so the time taken does not say which matched.
		if hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return ErrSignature
	}
	return nil
}
