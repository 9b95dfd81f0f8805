// Package auth holds accounts and their credentials: API keys (and, for the
// e-invoicing service, OAuth client credentials and their tokens). Secrets
// are shown once and stored only as SHA-256 hashes: they are 190 bits of
// randomness, so a slow password hash would add nothing but latency to
// every request.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/mail"
	"slices"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Services and environments a credential belongs to.
const (
	ServicePayroll  = "payroll"
	ServiceEInvoice = "einvoice"

	EnvSandbox    = "sandbox"
	EnvProduction = "production"
)

// Scopes of each service. A key created without --scope gets the service's
// default scopes.
var (
	PayrollScopes = []string{"calculations:write", "rates:read", "files:write"}
	// signing:agent lets a key submit signatures itself (inline signing); it
	// is never granted by default because it turns a key into a signer.
	EInvoiceScopes = []string{
		"companies:read", "companies:write",
		"einvoices:read", "einvoices:write",
		"inbox:read", "inbox:write",
		"events:read", "webhooks:write", "usage:read",
		"signing:agent",
	}
	EInvoiceDefaultScopes = []string{
		"companies:read", "companies:write",
		"einvoices:read", "einvoices:write",
		"inbox:read", "inbox:write",
		"events:read", "webhooks:write", "usage:read",
	}
)

// Kinds of credential.
const (
	KindAPIKey     = "api_key"
	KindOAuthToken = "oauth_token"
	KindAgent      = "agent"
)

// Principal is who a request acts for: the account, the credential it
// presented and what that credential may do.
type Principal struct {
	AccountID         string
	CredentialID      string
	Kind              string // KindAPIKey, KindOAuthToken or KindAgent
	Service           string
	Environment       string
	Scopes            []string
	CompanyIDs        []string // allow-list; empty means every company of the account
	ProductionEnabled bool
	// UserEmail is the signed-in person's address (KindUser only), for the
	// audit log.
	UserEmail string
	// employerIDs are up to two employer companies of the account, read
	// with a payroll key without allow-list (employersRead) when it is kept
	// (keyCache), so that resolving X-Company-Id needs no lookup of its own.
	employerIDs   []string
	employersRead bool
}

// HasScope reports whether the credential carries scope.
func (p *Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// AllowsCompany reports whether the allow-list (if any) contains id.
func (p *Principal) AllowsCompany(id string) bool {
	return len(p.CompanyIDs) == 0 || slices.Contains(p.CompanyIDs, id)
}

// Errors of Authenticate. They carry the problem code the API answers with.
var (
	ErrUnauthenticated = denar.Errorf("unauthenticated", "The request carries no valid credential. Send Authorization: Bearer <API key>.")
	ErrRevoked         = denar.Errorf("key_revoked", "This API key has been revoked. Create a new key.")
)

// Hash returns the stored form of a secret.
func Hash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomToken returns n base62 characters from the system's random source.
func RandomToken(n int) string {
	var b strings.Builder
	max := big.NewInt(int64(len(base62)))
	for range n {
		i, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("auth: random source failed: " + err.Error())
		}
		b.WriteByte(base62[i.Int64()])
	}
	return b.String()
}

// NewKeySecret returns a new API key for env. The prefix says which
// environment it belongs to, as a safety net for people pasting keys.
func NewKeySecret(env string) string {
	tag := "test"
	if env == EnvProduction {
		tag = "live"
	}
	return "dn_" + tag + "_" + RandomToken(32)
}

// Store wraps the database with the account and credential operations.
type Store struct {
	DB    *store.DB
	cache keyCache
}

// CreateAccount creates an account on plan ("sandbox" when empty).
func (s *Store) CreateAccount(ctx context.Context, name, plan string) (dbq.Account, error) {
	var acct dbq.Account
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		acct, err = CreateAccountTx(ctx, tx, name, plan)
		return err
	})
	return acct, err
}

// CreateAccountTx is CreateAccount inside the caller's transaction.
func CreateAccountTx(ctx context.Context, tx *store.Tx, name, plan string) (dbq.Account, error) {
	if plan == "" {
		plan = "sandbox"
	}
	p, err := planTx(ctx, tx, plan)
	if err != nil {
		return dbq.Account{}, err
	}
	if strings.TrimSpace(name) == "" {
		return dbq.Account{}, errors.New("account name is empty")
	}
	return tx.CreateAccount(ctx, dbq.CreateAccountParams{
		ID: denar.NewID("acct"), Name: name, Plan: plan, ProductionEnabled: p.Production, CreatedAt: tx.Now,
	})
}

// SetOwners sets the e-mail addresses of the account's owners: who is
// mailed about the account's webhook endpoints being disabled. None clears
// them (the operator address, if configured, is mailed instead).
func (s *Store) SetOwners(ctx context.Context, account string, emails []string) error {
	for _, e := range emails {
		a, err := mail.ParseAddress(e)
		if err != nil || a.Address != e {
			return fmt.Errorf("%q is not an e-mail address", e)
		}
	}
	n, err := s.DB.Writer().SetAccountOwners(ctx, dbq.SetAccountOwnersParams{ID: account, OwnerEmails: strings.Join(emails, " ")})
	if err != nil {
		return fmt.Errorf("set owners of %s: %w", account, err)
	}
	if n == 0 {
		return fmt.Errorf("no account %q", account)
	}
	return nil
}

// KeyParams describe a new API key.
type KeyParams struct {
	AccountID   string
	Service     string
	Environment string
	Scopes      []string
	CompanyIDs  []string
}

// CreateKey creates an API key and returns its row and the secret, which is
// not stored and cannot be shown again.
func (s *Store) CreateKey(ctx context.Context, p KeyParams) (dbq.ApiKey, string, error) {
	var key dbq.ApiKey
	var secret string
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		key, secret, err = CreateKeyTx(ctx, tx, p)
		return err
	})
	return key, secret, err
}

// CreateKeyTx is CreateKey inside the caller's transaction.
func CreateKeyTx(ctx context.Context, tx *store.Tx, p KeyParams) (dbq.ApiKey, string, error) {
	switch p.Service {
	case ServicePayroll:
		if len(p.Scopes) == 0 {
			p.Scopes = PayrollScopes
		}
	case ServiceEInvoice:
		if len(p.Scopes) == 0 {
			p.Scopes = EInvoiceDefaultScopes
		}
	}
	if err := validateCredential(ctx, tx, p.Service, p.AccountID, p.Environment, p.Scopes, p.CompanyIDs); err != nil {
		return dbq.ApiKey{}, "", err
	}
	secret := NewKeySecret(p.Environment)
	key, err := tx.CreateAPIKey(ctx, dbq.CreateAPIKeyParams{
		ID: denar.NewID("key"), AccountID: p.AccountID, Service: p.Service, Environment: p.Environment,
		Display: secret[:12], SecretHash: Hash(secret),
		Scopes: strings.Join(p.Scopes, " "), CompanyIds: strings.Join(p.CompanyIDs, " "),
		CreatedAt: tx.Now,
	})
	return key, secret, err
}

// validateCredential checks what API keys and OAuth clients have in common:
// a known service, environment and scopes, an existing account and an
// allow-list of that account's companies.
func validateCredential(ctx context.Context, tx *store.Tx, service, account, env string, scopes, companies []string) error {
	var allowed []string
	switch service {
	case ServicePayroll:
		allowed = PayrollScopes
	case ServiceEInvoice:
		allowed = EInvoiceScopes
	default:
		return fmt.Errorf("unknown service %q (payroll or einvoice)", service)
	}
	if env != EnvSandbox && env != EnvProduction {
		return fmt.Errorf("unknown environment %q (sandbox or production)", env)
	}
	for _, sc := range scopes {
		if !slices.Contains(allowed, sc) {
			return fmt.Errorf("scope %q does not exist for the %s service (known: %s)", sc, service, strings.Join(allowed, ", "))
		}
	}
	if _, err := tx.GetAccount(ctx, account); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no account %q", account)
		}
		return err
	}
	for _, c := range companies {
		if _, err := tx.GetAccountCompany(ctx, dbq.GetAccountCompanyParams{ID: c, AccountID: account}); err != nil {
			return fmt.Errorf("company %q does not belong to account %q", c, account)
		}
	}
	return nil
}

// RevokeKey revokes a key. Revoking twice is an error so that a typo in an
// id is never silently accepted.
func (s *Store) RevokeKey(ctx context.Context, id string) error {
	n, err := s.DB.Writer().RevokeAPIKey(ctx, dbq.RevokeAPIKeyParams{ID: id, RevokedAt: sql.NullTime{Time: s.DB.Now(), Valid: true}})
	if err != nil {
		return err
	}
	if n == 0 {
		if _, err := s.DB.Reader().GetAPIKey(ctx, id); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no API key %q", id)
		}
		return fmt.Errorf("API key %q is already revoked", id)
	}
	s.DB.AccessChanged() // before returning: no process may still accept the key
	return nil
}

// OtherServiceError is a valid credential of the other service: the
// caller sent its payroll key to the e-invoicing service, or the reverse.
// It is unauthenticated here, and says where the credential belongs.
type OtherServiceError struct {
	Service string // the credential's: ServicePayroll or ServiceEInvoice
}

func (e *OtherServiceError) Error() string {
	return "a credential of the " + e.Service + " service"
}

// Is makes it ErrUnauthenticated to errors.Is.
func (e *OtherServiceError) Is(target error) bool { return target == ErrUnauthenticated }

// Authenticate resolves a bearer secret presented to service into a
// principal. A key (or access token) of the other service is an
// *OtherServiceError, so that the answer can say where it belongs; a
// revoked one is answered as revoked only by its own service.
func (s *Store) Authenticate(ctx context.Context, service, secret string) (*Principal, error) {
	if secret == "" {
		return nil, ErrUnauthenticated
	}
	if strings.HasPrefix(secret, tokenPrefix) {
		return s.authenticateToken(ctx, service, secret)
	}
	hash := Hash(secret)
	epoch, cacheable := s.DB.AccessEpoch()
	if cacheable {
		if p, ok := s.cache.get(hash, epoch); ok && p.Service == service {
			return p, nil
		}
	}
	key, err := s.DB.Reader().GetAPIKeyByHash(ctx, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("auth: look up key: %w", err)
	}
	if key.Service != service {
		return nil, &OtherServiceError{Service: key.Service}
	}
	if key.RevokedAt.Valid {
		return nil, ErrRevoked
	}
	acct, err := s.DB.Reader().GetAccountWithPlan(ctx, key.AccountID)
	if err != nil {
		return nil, fmt.Errorf("auth: look up account: %w", err)
	}
	p := &Principal{
		AccountID: key.AccountID, CredentialID: key.ID, Kind: KindAPIKey,
		Service: key.Service, Environment: key.Environment,
		Scopes: strings.Fields(key.Scopes), CompanyIDs: strings.Fields(key.CompanyIds),
		ProductionEnabled: acct.Production,
	}
	if cacheable {
		if p.Service == ServicePayroll && len(p.CompanyIDs) == 0 {
			ids, err := s.DB.Reader().ListEmployerIDs(ctx, dbq.ListEmployerIDsParams{AccountID: p.AccountID, Lim: 2})
			if err != nil {
				return nil, fmt.Errorf("auth: list employers: %w", err)
			}
			p.employerIDs, p.employersRead = ids, true
		}
		s.cache.put(hash, epoch, p)
	}
	return p, nil
}

// Employers answer the payroll service's X-Company-Id questions: its
// companies are the account's employer companies.
type Employers struct{ DB *store.DB }

// CompanyEnvironment implements httpx.Companies.
func (e Employers) CompanyEnvironment(ctx context.Context, p *Principal, id string) (string, bool, error) {
	_, err := e.DB.Reader().GetEmployer(ctx, dbq.GetEmployerParams{ID: id, AccountID: p.AccountID})
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("employer %s: %w", id, err)
	}
	// Employers are not bound to an environment: payroll has no sandbox.
	return p.Environment, true, nil
}

// CompanyIDs implements httpx.Companies. A kept payroll key carries its
// account's first two employers, read at the same access epoch.
func (e Employers) CompanyIDs(ctx context.Context, p *Principal, limit int) ([]string, error) {
	if p.employersRead && limit <= 2 {
		return p.employerIDs[:min(len(p.employerIDs), limit)], nil
	}
	ids, err := e.DB.Reader().ListEmployerIDs(ctx, dbq.ListEmployerIDsParams{AccountID: p.AccountID, Lim: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("employers of %s: %w", p.AccountID, err)
	}
	return ids, nil
}
