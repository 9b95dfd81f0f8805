package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/sdk/webhook"
)

// sign is the scheme as the API documents it, written out independently of
// the server's implementation.
func sign(t time.Time, body string, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	h := "t=" + ts
	for _, s := range secrets {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte(ts + "." + body))
		h += ",v1=" + hex.EncodeToString(m.Sum(nil))
	}
	return h
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_780_000_000, 0)
	body := `{"id":"evt_1"}`
	for _, tc := range []struct {
		name   string
		header string
		body   string
		secret string
		want   error
	}{
		{"valid", sign(now, body, "whsec_a"), body, "whsec_a", nil},
		{"second of two signatures", sign(now, body, "whsec_new", "whsec_old"), body, "whsec_old", nil},
		{"first of two signatures", sign(now, body, "whsec_new", "whsec_old"), body, "whsec_new", nil},
		{"wrong secret", sign(now, body, "whsec_a"), body, "whsec_b", webhook.ErrSignature},
		{"secret without its prefix", sign(now, body, "whsec_a"), body, "a", webhook.ErrSignature},
		{"body changed", sign(now, body, "whsec_a"), body + " ", "whsec_a", webhook.ErrSignature},
		{"299 s old", sign(now.Add(-299*time.Second), body, "whsec_a"), body, "whsec_a", nil},
		{"301 s old", sign(now.Add(-301*time.Second), body, "whsec_a"), body, "whsec_a", webhook.ErrTimestamp},
		{"301 s ahead", sign(now.Add(301*time.Second), body, "whsec_a"), body, "whsec_a", webhook.ErrTimestamp},
		{"unknown scheme ignored", sign(now, body, "whsec_a") + ",v0=abc", body, "whsec_a", nil},
		{"no v1", "t=" + strconv.FormatInt(now.Unix(), 10), body, "whsec_a", webhook.ErrMalformed},
		{"no t", "v1=" + strings.Repeat("00", 32), body, "whsec_a", webhook.ErrMalformed},
		{"two t", sign(now, body, "whsec_a") + ",t=1", body, "whsec_a", webhook.ErrMalformed},
		{"short v1", "t=1,v1=00", body, "whsec_a", webhook.ErrMalformed},
		{"empty", "", body, "whsec_a", webhook.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.Verify([]byte(tc.body), tc.header, tc.secret, 0, now)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzParse: no header makes Parse panic, and what it accepts has a
// timestamp and 32-byte signatures.
func FuzzParse(f *testing.F) {
	f.Add(sign(time.Unix(1_780_000_000, 0), "{}", "whsec_a", "whsec_b"))
	f.Add("t=1,v1=zz")
	f.Add(",,,")
	f.Fuzz(func(t *testing.T, h string) {
		s, err := webhook.Parse(h)
		if err != nil {
			return
		}
		if s.Timestamp <= 0 || len(s.V1) == 0 {
			t.Fatalf("accepted %q as %+v", h, s)
		}
		for _, v := range s.V1 {
			if len(v) != sha256.Size {
				t.Fatalf("accepted a %d-byte signature", len(v))
			}
		}
	})
}
