package auth

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// TokenTTL is how long an OAuth access token lives.
const TokenTTL = 900 * time.Second

// Token prefixes tell an access token from an API key when authenticating,
// so a request costs one look-up whatever it presents.
const tokenPrefix = "dnat_"

// ErrTokenExpired is returned for an access token past its lifetime. It is
// the plain unauthenticated problem with a detail that says what to do.
var ErrTokenExpired = denar.Errorf("unauthenticated", "The access token has expired; request a new one from POST /v1/oauth/token.")

// ErrClientRevoked answers an access token whose OAuth client has been
// revoked: the token dies with its client, before its expiry.
var ErrClientRevoked = denar.Errorf("key_revoked", "The OAuth client this access token was issued to has been revoked.")

// OAuthError is an RFC 6749 §5.2 error of the token endpoint.
type OAuthError struct {
	Code        string // invalid_request, invalid_client, invalid_scope, unsupported_grant_type
	Description string
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

// ClientParams describe new OAuth client credentials.
type ClientParams struct {
	AccountID   string
	Environment string
	Scopes      []string
	CompanyIDs  []string
}

// CreateClient creates OAuth client credentials for the e-invoicing service
// and returns the row and the secret, which is not stored.
func (s *Store) CreateClient(ctx context.Context, p ClientParams) (dbq.OauthClient, string, error) {
	// The key rules (environment, scopes, account, allow-list) are the
	// same; createClientTx validates as a key would be.
	var c dbq.OauthClient
	var secret string
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		c, secret, err = createClientTx(ctx, tx, p)
		return err
	})
	return c, secret, err
}

func createClientTx(ctx context.Context, tx *store.Tx, p ClientParams) (dbq.OauthClient, string, error) {
	if len(p.Scopes) == 0 {
		p.Scopes = EInvoiceDefaultScopes
	}
	if err := validateCredential(ctx, tx, ServiceEInvoice, p.AccountID, p.Environment, p.Scopes, p.CompanyIDs); err != nil {
		return dbq.OauthClient{}, "", err
	}
	secret := "dncs_" + RandomToken(40)
	c, err := tx.CreateOAuthClient(ctx, dbq.CreateOAuthClientParams{
		ID: denar.NewID("cli"), AccountID: p.AccountID, Environment: p.Environment,
		SecretHash: Hash(secret), Scopes: strings.Join(p.Scopes, " "),
		CompanyIds: strings.Join(p.CompanyIDs, " "), CreatedAt: tx.Now,
	})
	return c, secret, err
}

// RevokeClient revokes client credentials. Tokens already issued to the
// client stop working at once, in every process sharing the store:
// Authenticate reads the client's row with every token (tokens are never
// cached; the access epoch moves too, for anything kept about the
// account). Revoking twice is an error, as for keys.
func (s *Store) RevokeClient(ctx context.Context, id string) error {
	n, err := s.DB.Writer().RevokeOAuthClient(ctx, dbq.RevokeOAuthClientParams{ID: id, RevokedAt: sql.NullTime{Time: s.DB.Now(), Valid: true}})
	if err != nil {
		return err
	}
	if n == 0 {
		if _, err := s.DB.Reader().GetOAuthClient(ctx, id); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no OAuth client %q", id)
		}
		return fmt.Errorf("OAuth client %q is already revoked", id)
	}
	s.DB.AccessChanged()
	return nil
}

// Token is an issued access token.
type Token struct {
	AccessToken string
	ExpiresIn   int
	Scopes      []string
}

// IssueToken checks client credentials and issues an access token for the
// requested scopes (all the client's scopes when none are requested).
func (s *Store) IssueToken(ctx context.Context, clientID, secret string, scopes []string) (Token, error) {
	if clientID == "" || secret == "" {
		return Token{}, &OAuthError{"invalid_client", "Client authentication failed."}
	}
	c, err := s.DB.Reader().GetOAuthClient(ctx, clientID)
	if errors.Is(err, sql.ErrNoRows) {
		return Token{}, &OAuthError{"invalid_client", "Client authentication failed."}
	}
	if err != nil {
		return Token{}, fmt.Errorf("auth: look up client: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(Hash(secret)), []byte(c.SecretHash)) != 1 || c.RevokedAt.Valid {
		return Token{}, &OAuthError{"invalid_client", "Client authentication failed."}
	}
	have := strings.Fields(c.Scopes)
	if len(scopes) == 0 {
		scopes = have
	}
	for _, sc := range scopes {
		if !slices.Contains(have, sc) {
			return Token{}, &OAuthError{"invalid_scope", "The client may not request the scope " + sc + "."}
		}
	}
	scopes = slices.Compact(slices.Sorted(slices.Values(scopes)))
	tok := tokenPrefix + RandomToken(40)
	now := s.DB.Now()
	err = s.DB.Writer().CreateOAuthToken(ctx, dbq.CreateOAuthTokenParams{
		TokenHash: Hash(tok), ClientID: c.ID, Scopes: strings.Join(scopes, " "),
		CreatedAt: now, ExpiresAt: now.Add(TokenTTL),
	})
	if err != nil {
		return Token{}, fmt.Errorf("auth: store token: %w", err)
	}
	return Token{AccessToken: tok, ExpiresIn: int(TokenTTL / time.Second), Scopes: scopes}, nil
}

// authenticateToken resolves an access token. Tokens exist only for the
// e-invoicing service, which their prefix says: presented to another
// service one is an *OtherServiceError.
func (s *Store) authenticateToken(ctx context.Context, service, tok string) (*Principal, error) {
	if service != ServiceEInvoice {
		return nil, &OtherServiceError{Service: ServiceEInvoice}
	}
	t, err := s.DB.Reader().GetOAuthToken(ctx, Hash(tok))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("auth: look up token: %w", err)
	}
	if !s.DB.Now().Before(t.ExpiresAt) {
		return nil, ErrTokenExpired
	}
	c, err := s.DB.Reader().GetOAuthClient(ctx, t.ClientID)
	if err != nil {
		return nil, fmt.Errorf("auth: look up client: %w", err)
	}
	if c.RevokedAt.Valid {
		return nil, ErrClientRevoked
	}
	acct, err := s.DB.Reader().GetAccountWithPlan(ctx, c.AccountID)
	if err != nil {
		return nil, fmt.Errorf("auth: look up account: %w", err)
	}
	return &Principal{
		AccountID: c.AccountID, CredentialID: c.ID, Kind: KindOAuthToken,
		Service: ServiceEInvoice, Environment: c.Environment,
		Scopes: strings.Fields(t.Scopes), CompanyIDs: strings.Fields(c.CompanyIds),
		ProductionEnabled: acct.Production,
	}, nil
}
