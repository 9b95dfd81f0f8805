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

func TestMain(m *testing.M) { storetest.Main(m) }

func TestClientsAndTokens(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		now := time.Now().UTC()
		db.Now = func() time.Time { return now }
		s := &auth.Store{DB: db}
		acct, err := s.CreateAccount(ctx, "Биро", "")
		if err != nil {
			t.Fatal(err)
		}
		other, _ := s.CreateAccount(ctx, "Друго", "")

		for _, tc := range []struct {
			name string
			p    auth.ClientParams
			want string // substring of the error; "" for success
		}{
			{"defaults", auth.ClientParams{AccountID: acct.ID, Environment: auth.EnvSandbox}, ""},
			{"bad environment", auth.ClientParams{AccountID: acct.ID, Environment: "staging"}, "unknown environment"},
			{"payroll scope", auth.ClientParams{AccountID: acct.ID, Environment: auth.EnvSandbox, Scopes: []string{"rates:read"}}, "does not exist"},
			{"no account", auth.ClientParams{AccountID: "acct_nope", Environment: auth.EnvSandbox}, "no account"},
			{"foreign company", auth.ClientParams{AccountID: other.ID, Environment: auth.EnvSandbox, CompanyIDs: []string{"cmp_nope"}}, "does not belong"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, secret, err := s.CreateClient(ctx, tc.p)
				if tc.want == "" {
					if err != nil || !strings.HasPrefix(secret, "dncs_") {
						t.Fatalf("%v %q", err, secret)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want %q", err, tc.want)
				}
			})
		}

		c, secret, err := s.CreateClient(ctx, auth.ClientParams{AccountID: acct.ID, Environment: auth.EnvSandbox,
			Scopes: []string{"companies:read", "einvoices:write"}})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.IssueToken(ctx, c.ID, secret, []string{"einvoices:write", "companies:read", "einvoices:write"})
		if err != nil || strings.Join(tok.Scopes, " ") != "companies:read einvoices:write" || tok.ExpiresIn != 900 {
			t.Fatalf("issue: %+v %v", tok, err)
		}
		p, err := s.Authenticate(ctx, auth.ServiceEInvoice, tok.AccessToken)
		if err != nil || p.Kind != "oauth_token" || p.CredentialID != c.ID || p.Environment != auth.EnvSandbox {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
		if _, err := s.Authenticate(ctx, auth.ServicePayroll, tok.AccessToken); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Fatalf("token on payroll: %v", err)
		}
		now = now.Add(auth.TokenTTL - time.Second)
		if _, err := s.Authenticate(ctx, auth.ServiceEInvoice, tok.AccessToken); err != nil {
			t.Fatalf("token one second before expiry: %v", err)
		}
		now = now.Add(time.Second)
		if _, err := s.Authenticate(ctx, auth.ServiceEInvoice, tok.AccessToken); !errors.Is(err, auth.ErrTokenExpired) {
			t.Fatalf("expired token: %v", err)
		}
		var oe *auth.OAuthError
		if _, err := s.IssueToken(ctx, c.ID, secret, []string{"inbox:read"}); !errors.As(err, &oe) || oe.Code != "invalid_scope" {
			t.Fatalf("scope beyond the client: %v", err)
		}
		if _, err := s.IssueToken(ctx, c.ID, secret+"x", nil); !errors.As(err, &oe) || oe.Code != "invalid_client" {
			t.Fatalf("wrong secret: %v", err)
		}
		if err := s.RevokeClient(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeClient(ctx, c.ID); err == nil {
			t.Fatal("revoked twice without error")
		}
	})
}
