package auth_test

import (
	"bytes"
	"errors"
	"fmt"
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
		u := &auth.Users{DB: db, PerEmail: 3, PerAddress: 5, Secrets: testBox(t)}
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
		var stored string
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT totp_secret FROM users WHERE id = $1", p.CredentialID).Scan(&stored); err != nil ||
			!strings.HasPrefix(stored, "v1.") || strings.Contains(stored, secret) {
			t.Fatalf("stored TOTP seed %q (%v): not sealed", stored, err)
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
		k, secretKey, err := u.CreateAccountKey(ctx, p, auth.KeyChoice{Scopes: auth.EInvoiceDefaultScopes}, &auth.AuditEntry{Action: "key.create"})
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

// TestUserManagement changes roles, removes users and changes a password,
// keeping the account's last owner, within the account only.
func TestUserManagement(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		s := &auth.Store{DB: db}
		acct, _ := s.CreateAccount(ctx, "Биро", "business")
		other, _ := s.CreateAccount(ctx, "Друго", "business")
		u := &auth.Users{DB: db}
		const pw = "долга лозинка 123"
		mk := func(acct, email, role string) auth.User {
			usr, err := u.CreateUser(ctx, acct, email, role, pw)
			if err != nil {
				t.Fatal(err)
			}
			return usr
		}
		owner, owner2, staff := mk(acct.ID, "o1@b.mk", auth.RoleOwner), mk(acct.ID, "o2@b.mk", auth.RoleOwner), mk(acct.ID, "s@b.mk", auth.RoleStaff)
		foreign := mk(other.ID, "x@c.mk", auth.RoleOwner)
		sess, err := u.SignIn(ctx, "o1@b.mk", pw, "10.0.0.1", "")
		if err != nil {
			t.Fatal(err)
		}
		p := sess.Principal()

		if _, err := u.SetUserRole(ctx, p, foreign.ID, auth.RoleViewer, nil); !errors.Is(err, auth.ErrUserNotFound) {
			t.Fatalf("another account's user: %v", err)
		}
		if _, err := u.SetUserRole(ctx, p, staff.ID, "admin", nil); err == nil || !strings.Contains(fmt.Sprint(err), "role") {
			t.Fatalf("unknown role: %v", err)
		}
		if got, err := u.SetUserRole(ctx, p, staff.ID, auth.RoleViewer, &auth.AuditEntry{Action: "user.role"}); err != nil || got.Role != auth.RoleViewer {
			t.Fatalf("staff to viewer: %+v %v", got, err)
		}
		// Two owners demote each other at once: one keeps the role.
		errs := make(chan error, 2)
		go func() { _, err := u.SetUserRole(ctx, p, owner2.ID, auth.RoleStaff, nil); errs <- err }()
		go func() { _, err := u.SetUserRole(ctx, p, owner.ID, auth.RoleStaff, nil); errs <- err }()
		e1, e2 := <-errs, <-errs
		if (e1 == nil) == (e2 == nil) || (!errors.Is(e1, auth.ErrLastOwner) && !errors.Is(e2, auth.ErrLastOwner)) {
			t.Fatalf("two owners demoted at once: %v, %v", e1, e2)
		}
		us, _ := u.AccountUsers(ctx, p)
		owners := 0
		for _, x := range us {
			if x.Role == auth.RoleOwner {
				owners++
			}
		}
		if owners != 1 {
			t.Fatalf("%d owners left", owners)
		}
		// Put both back as owners for the removal cases.
		for _, id := range []string{owner.ID, owner2.ID} {
			if _, err := u.SetUserRole(ctx, p, id, auth.RoleOwner, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := u.RemoveUser(ctx, p, owner.ID, nil); !errors.Is(err, auth.ErrSelf) {
			t.Fatalf("removing oneself: %v", err)
		}
		if err := u.RemoveUser(ctx, p, foreign.ID, nil); !errors.Is(err, auth.ErrUserNotFound) {
			t.Fatalf("removing another account's user: %v", err)
		}
		s2, _ := u.SignIn(ctx, "o2@b.mk", pw, "10.0.0.1", "")
		if err := u.RemoveUser(ctx, p, owner2.ID, &auth.AuditEntry{Action: "user.remove"}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Session(ctx, s2.Token); !errors.Is(err, auth.ErrNoSession) {
			t.Fatalf("a removed user's session: %v", err)
		}
		// Now o1 is the last owner: another principal of the account (o2 is
		// gone; use staff promoted) cannot remove or demote it.
		if _, err := u.SetUserRole(ctx, p, staff.ID, auth.RoleOwner, nil); err != nil {
			t.Fatal(err)
		}
		if err := u.RemoveUser(ctx, p, staff.ID, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := u.SetUserRole(ctx, p, owner.ID, auth.RoleStaff, nil); !errors.Is(err, auth.ErrLastOwner) {
			t.Fatalf("demoting the last owner: %v", err)
		}
		// The address of a removed user may be used again.
		if _, err := u.CreateUser(ctx, acct.ID, "o2@b.mk", auth.RoleViewer, pw); err != nil {
			t.Fatalf("the removed user's address: %v", err)
		}

		// Password: the current one is required, the new one is long
		// enough, other sessions end, this one stays.
		other1, _ := u.SignIn(ctx, "o1@b.mk", pw, "10.0.0.2", "")
		if err := u.ChangePassword(ctx, sess, "10.0.0.1", "not the password", "новата лозинка 2026", nil); !errors.Is(err, auth.ErrWrongPassword) {
			t.Fatalf("wrong current password: %v", err)
		}
		if err := u.ChangePassword(ctx, sess, "10.0.0.1", pw, "short", nil); err == nil || !strings.Contains(err.Error(), "at least 12") {
			t.Fatalf("a short password: %v", err)
		}
		if err := u.ChangePassword(ctx, sess, "10.0.0.1", pw, "новата лозинка 2026", &auth.AuditEntry{Action: "user.password"}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Session(ctx, other1.Token); !errors.Is(err, auth.ErrNoSession) {
			t.Fatalf("another session survived the change: %v", err)
		}
		if _, err := u.Session(ctx, sess.Token); err != nil {
			t.Fatalf("the changing session ended: %v", err)
		}
		if _, err := u.SignIn(ctx, "o1@b.mk", pw, "10.0.0.3", ""); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("the old password: %v", err)
		}
		if _, err := u.SignIn(ctx, "o1@b.mk", "новата лозинка 2026", "10.0.0.3", ""); err != nil {
			t.Fatalf("the new password: %v", err)
		}
		log, _ := u.AuditLog(ctx, p, 50)
		seen := map[string]bool{}
		for _, e := range log {
			seen[e.Action] = true
		}
		for _, a := range []string{"user.role", "user.remove", "user.password"} {
			if !seen[a] {
				t.Errorf("no %s in the audit log", a)
			}
		}

		// Keys: the environment and scopes of choice, checked.
		for _, tc := range []struct {
			c    auth.KeyChoice
			want string
		}{
			{auth.KeyChoice{Scopes: nil}, "scopes"},
			{auth.KeyChoice{Scopes: []string{"einvoices:read", "root"}}, "scopes[1]"},
			{auth.KeyChoice{Environment: "staging", Scopes: []string{"einvoices:read"}}, "environment"},
		} {
			if _, _, err := u.CreateAccountKey(ctx, p, tc.c, nil); err == nil || !strings.Contains(fmt.Sprint(err), tc.want) {
				t.Errorf("key %+v: %v, want an error of %s", tc.c, err, tc.want)
			}
		}
		k, sec, err := u.CreateAccountKey(ctx, p, auth.KeyChoice{Environment: auth.EnvProduction, Scopes: []string{"einvoices:read", "signing:agent"}}, nil)
		if err != nil || !strings.HasPrefix(sec, "dn_live_") || strings.Join(k.Scopes, " ") != "einvoices:read signing:agent" {
			t.Fatalf("production key: %+v %v", k, err)
		}
		kp, err := s.Authenticate(ctx, auth.ServiceEInvoice, sec)
		if err != nil || kp.Environment != auth.EnvProduction || !kp.HasScope("signing:agent") || kp.HasScope("einvoices:write") {
			t.Fatalf("the key's principal: %+v %v", kp, err)
		}
		sandboxOnly := *p
		sandboxOnly.ProductionEnabled = false
		if _, _, err := u.CreateAccountKey(ctx, &sandboxOnly, auth.KeyChoice{Environment: auth.EnvProduction, Scopes: []string{"einvoices:read"}}, nil); err == nil {
			t.Fatal("a production key on a plan without production")
		}
	})
}

func testBox(t testing.TB) *auth.SecretBox {
	t.Helper()
	b, err := auth.NewSecretBox(bytes.Repeat([]byte{0x24}, auth.SecretKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTOTPSeedsSealedInPlace: a seed stored in clear before seeds were
// sealed keeps working (sign-in with a code) before SealTOTPSeeds runs and
// after; SealTOTPSeeds seals it (and only it: a second run seals nothing),
// and without a key no enrolment starts.
func TestTOTPSeedsSealedInPlace(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		db.Now = func() time.Time { return now }
		acct, err := (&auth.Store{DB: db}).CreateAccount(ctx, "Биро", "business")
		if err != nil {
			t.Fatal(err)
		}
		u := &auth.Users{DB: db, Secrets: testBox(t)}
		const pw = "долга лозинка 123"
		usr, err := u.CreateUser(ctx, acct.ID, "old@example.mk", auth.RoleOwner, pw)
		if err != nil {
			t.Fatal(err)
		}
		seed := auth.NewTOTPSecret()
		if _, err := db.WriteDB().ExecContext(ctx, "UPDATE users SET totp_secret = $1, totp_enabled = TRUE WHERE id = $2", seed, usr.ID); err != nil {
			t.Fatal(err)
		}
		signIn := func() {
			t.Helper()
			now = now.Add(time.Minute)
			m, err := u.SignIn(ctx, "old@example.mk", pw, "10.0.0.1", "")
			if err != nil || m.State != auth.SessionMFA {
				t.Fatalf("sign-in: %+v %v", m, err)
			}
			code, _ := auth.TOTPCode(seed, auth.TOTPStep(now))
			if s, err := u.SecondFactor(ctx, m.Token, code, "10.0.0.1"); err != nil || s.State != auth.SessionActive {
				t.Fatalf("second factor: %+v %v", s, err)
			}
		}
		signIn() // a clear seed, as stored before
		if n, err := u.SealTOTPSeeds(ctx); err != nil || n != 1 {
			t.Fatalf("sealed %d, %v", n, err)
		}
		if n, err := u.SealTOTPSeeds(ctx); err != nil || n != 0 {
			t.Fatalf("second run sealed %d, %v", n, err)
		}
		var stored string
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT totp_secret FROM users WHERE id = $1", usr.ID).Scan(&stored); err != nil ||
			!strings.HasPrefix(stored, "v1.") || strings.Contains(stored, seed) {
			t.Fatalf("stored %q %v", stored, err)
		}
		signIn() // sealed now
		noKey := &auth.Users{DB: db}
		if _, err := noKey.StartTOTP(ctx, &auth.Principal{CredentialID: usr.ID}); !errors.Is(err, auth.ErrNoSecretKey) {
			t.Fatalf("enrolment without a key: %v", err)
		}
	})
}
