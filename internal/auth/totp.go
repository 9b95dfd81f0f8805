package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// TOTP as in RFC 6238 with the parameters every authenticator app
// understands: HMAC-SHA-1, 6 digits, 30-second steps counted from the Unix
// epoch. A code of the step before or after the current one is accepted
// too (clocks drift), and each step's code works once.
const (
	totpPeriod = 30
	totpDigits = 6
	totpSkew   = 1
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewTOTPSecret returns a new 160-bit secret in base32 (RFC 4226 §4
// recommends 160 bits).
func NewTOTPSecret() string {
	k := make([]byte, 20)
	if _, err := rand.Read(k); err != nil {
		panic("auth: random source failed: " + err.Error())
	}
	return b32.EncodeToString(k)
}

// TOTPStep is the RFC 6238 time step of t.
func TOTPStep(t time.Time) int64 { return t.Unix() / totpPeriod }

// TOTPCode is the code of secret (base32) at step (RFC 4226 HOTP with the
// step as counter, dynamic truncation, 6 digits).
func TOTPCode(secret string, step int64) (string, error) {
	key, err := b32.DecodeString(strings.ToUpper(strings.TrimSpace(secret)))
	if err != nil {
		return "", fmt.Errorf("auth: TOTP secret: %w", err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%0*d", totpDigits, bin%1_000_000), nil
}

// matchTOTP returns the step whose code code is, within the skew around
// now, or 0.
func matchTOTP(secret, code string, now time.Time) int64 {
	code = strings.TrimSpace(code)
	if len(code) != totpDigits {
		return 0
	}
	cur := TOTPStep(now)
	for s := cur - totpSkew; s <= cur+totpSkew; s++ {
		want, err := TOTPCode(secret, s)
		if err != nil {
			return 0
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return s
		}
	}
	return 0
}

// TOTPURI is the otpauth:// URI an authenticator app enrols from (the
// Key Uri Format of Google Authenticator, which every app reads).
func TOTPURI(issuer, account, secret string) string {
	label := url.PathEscape(issuer + ":" + account)
	q := url.Values{"secret": {secret}, "issuer": {issuer}, "algorithm": {"SHA1"}, "digits": {"6"}, "period": {"30"}}
	return "otpauth://totp/" + label + "?" + q.Encode()
}
