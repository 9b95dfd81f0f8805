package auth_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h := auth.HashPassword("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q: not the documented PHC form", h)
	}
	if h == auth.HashPassword("correct horse battery") {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct {
		hash, pw string
		ok       bool
		bad      bool
	}{
		{h, "correct horse battery", true, false},
		{h, "correct horse batterY", false, false},
		{h, "", false, false},
		{"$argon2i$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA", "x", false, true},
		{"$argon2id$v=19$m=0,t=1,p=1$c2FsdA$aGFzaA", "x", false, true},
		{"plain", "plain", false, true},
		{strings.Replace(h, "m=19456", "m=99999999", 1), "correct horse battery", false, true},
	} {
		ok, err := auth.CheckPassword(tc.hash, tc.pw)
		if ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("CheckPassword(%q, %q) = %v, %v; want %v, error %v", tc.hash, tc.pw, ok, err, tc.ok, tc.bad)
		}
	}
}

// TestTOTPVectors checks the RFC 6238 appendix B vectors for SHA-1 (the
// last six digits of the eight given there).
func TestTOTPVectors(t *testing.T) {
	t.Parallel()
	secret := "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" // "12345678901234567890"
	for _, tc := range []struct {
		unix int64
		want string
	}{
		{59, "287082"}, {1111111109, "081804"}, {1111111111, "050471"},
		{1234567890, "005924"}, {2000000000, "279037"}, {20000000000, "353130"},
	} {
		got, err := auth.TOTPCode(secret, auth.TOTPStep(time.Unix(tc.unix, 0)))
		if err != nil || got != tc.want {
			t.Errorf("T=%d: %q %v, want %q", tc.unix, got, err, tc.want)
		}
	}
	uri := auth.TOTPURI("denar", "ana@example.mk", secret)
	if !strings.HasPrefix(uri, "otpauth://totp/denar:ana@example.mk?") || !strings.Contains(uri, "secret="+secret) {
		t.Fatalf("uri %s", uri)
	}
}

func TestUsersAndSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		db.Now = func() time.Time { return now }
		s := &auth.Store{DB: db}
		acct, err := s.CreateAccount(ctx, "Биро", "business")
		if err != nil {
			t.Fatal(err)
		}
		u := &auth.Users{DB: db, PerEmail: 3, PerAddress: 5}
		const pw = "долга лозинка 123"
		for _, tc := range []struct{ email, role, pw, want string }{
			{"Ana@Example.mk", auth.RoleOwner, pw, ""},
			{"ana@example.mk", auth.RoleStaff, pw, "exists"},
			{"not an address", auth.RoleStaff, pw, "not an e-mail"},
			{"b@example.mk", "admin", pw, "unknown role"},
			{"b@example.mk", auth.RoleViewer, "short", "at least 12"},
		} {
			_, err := u.CreateUser(ctx, acct.ID, tc.email, tc.role, tc.pw)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("create %s %s: %v, want %q", tc.email, tc.role, err, tc.want)
			}
		}
		if _, err := u.CreateUser(ctx, "acct_nope", "c@example.mk", auth.RoleViewer, pw); err == nil {
			t.Error("user of an unknown account created")
		}

		// Sign-in rotates the id: the previous session ends.
		s1, err := u.SignIn(ctx, "ana@example.mk", pw, "10.0.0.1", "")
		if err != nil || s1.State != auth.SessionActive || s1.Token == "" || s1.CSRF == "" {
			t.Fatalf("sign in: %+v %v", s1, err)
		}
		s2, err := u.SignIn(ctx, "ANA@example.mk", pw, "10.0.0.1", s1.Token)
		if err != nil || s2.Token == s1.Token {
			t.Fatalf("second sign-in: %+v %v", s2, err)
		}
		if _, err := u.Session(ctx, s1.Token); !errors.Is(err, auth.ErrNoSession) {
			t.Fatalf("the previous session survived the sign-in: %v", err)
		}
		got, err := u.Session(ctx, s2.Token)
		if err != nil || got.User.Email != "ana@example.mk" || got.Environment != auth.EnvSandbox {
			t.Fatalf("session: %+v %v", got, err)
		}
		p := got.Principal()
		if p.Kind != auth.KindUser || p.AccountID != acct.ID || !p.HasScope("webhooks:write") {
			t.Fatalf("principal %+v", p)
		}

		// Throttle: per e-mail after 3 failures (even with the right
		// password), per address after 5.
		for range 3 {
			if _, err := u.SignIn(ctx, "ana@example.mk", "wrong password!", "10.0.0.2", ""); !errors.Is(err, auth.ErrBadCredentials) {
				t.Fatalf("wrong password: %v", err)
			}
		}
		if _, err := u.SignIn(ctx, "ana@example.mk", pw, "10.0.0.3", ""); !errors.Is(err, auth.ErrThrottled) {
			t.Fatalf("fourth attempt: %v, want throttled", err)
		}
		for range 2 {
			_, _ = u.SignIn(ctx, "nobody@example.mk", "x", "10.0.0.2", "")
		}
		if _, err := u.SignIn(ctx, "other@example.mk", "x", "10.0.0.2", ""); !errors.Is(err, auth.ErrThrottled) {
			t.Fatalf("address after 5 failures: %v, want throttled", err)
		}
		now = now.Add(16 * time.Minute)
		if _, err := u.SignIn(ctx, "ana@example.mk", pw, "10.0.0.2", ""); err != nil {
			t.Fatalf("after the window: %v", err)
		}

		// TOTP: enrol, then the sign-in needs a code, each code works once.
		secret, err := u.StartTOTP(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		code, _ := auth.TOTPCode(secret, auth.TOTPStep(now))
		if err := u.ConfirmTOTP(ctx, p, "000000", nil); !errors.Is(err, auth.ErrBadCode) && code != "000000" {
			t.Fatalf("wrong confirmation code: %v", err)
		}
		if err := u.ConfirmTOTP(ctx, p, code, &auth.AuditEntry{Action: "totp.enable"}); err != nil {
			t.Fatal(err)
		}
		m, err := u.SignIn(ctx, "ana@example.mk", pw, "10.0.0.1", "")
		if err != nil || m.State != auth.SessionMFA {
			t.Fatalf("sign-in with TOTP: %+v %v", m, err)
		}
		if _, err := u.SecondFactor(ctx, m.Token, code, "10.0.0.1"); !errors.Is(err, auth.ErrBadCode) {
			t.Fatalf("the confirming code used again: %v", err)
		}
		now = now.Add(30 * time.Second)
		code, _ = auth.TOTPCode(secret, auth.TOTPStep(now))
		full, err := u.SecondFactor(ctx, m.Token, code, "10.0.0.1")
		if err != nil || full.State != auth.SessionActive || full.Token == m.Token {
			t.Fatalf("second factor: %+v %v", full, err)
		}
		if _, err := u.Session(ctx, m.Token); !errors.Is(err, auth.ErrNoSession) {
			t.Fatalf("the mfa session survived: %v", err)
		}
		log, err := u.AuditLog(ctx, p, 20)
		var actions []string
		for _, e := range log {
			actions = append(actions, e.Action)
			if e.UserEmail != "ana@example.mk" || e.AccountID != acct.ID {
				t.Errorf("audit row of someone else: %+v", e)
			}
		}
		// Newest first: the sign-in after the code, the enrolment, and the
		// three password sign-ins before (the mfa step is not a sign-in).
		if err != nil || strings.Join(actions, ",") != "session.sign_in,totp.enable,session.sign_in,session.sign_in,session.sign_in" {
			t.Fatalf("audit: %v %v", actions, err)
		}

		// Keys: created and revoked only within the account.
		other, _ := s.CreateAccount(ctx, "Друго", "")
		k, secretKey, err := u.CreateAccountKey(ctx, p, &auth.AuditEntry{Action: "key.create"})
		if err != nil || !strings.HasPrefix(secretKey, "dn_test_") {
			t.Fatal(k, err)
		}
		op := *p
		op.AccountID = other.ID
		if err := u.RevokeAccountKey(ctx, &op, k.ID, nil); !errors.Is(err, auth.ErrUserNotFound) {
			t.Fatalf("another account revoked the key: %v", err)
		}
		if err := u.RevokeAccountKey(ctx, p, k.ID, &auth.AuditEntry{Action: "key.revoke"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, auth.ServiceEInvoice, secretKey); !errors.Is(err, auth.ErrRevoked) {
			t.Fatalf("revoked key authenticates: %v", err)
		}

		// Expiry.
		now = now.Add(13 * time.Hour)
		if _, err := u.Session(ctx, full.Token); !errors.Is(err, auth.ErrNoSession) {
			t.Fatalf("expired session: %v", err)
		}
		if err := u.PurgeSessions(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
