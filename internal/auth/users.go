package auth

// The dashboard's people: users of an account with a role, their password
// (Argon2id) and optional second factor (TOTP), their sessions, the
// sign-in throttle and the audit log. Everything is in the store, so that
// several `denar serve` processes share sessions and the throttle.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// KindUser is the kind of a principal built from a dashboard session.
const KindUser = "user"

// Roles of a dashboard user.
const (
	RoleOwner  = "owner"  // everything, including API keys, webhooks and users
	RoleStaff  = "staff"  // documents and inbox decisions
	RoleViewer = "viewer" // read only
)

// Roles lists the roles, strongest first.
var Roles = []string{RoleOwner, RoleStaff, RoleViewer}

// RoleScopes are the e-invoicing scopes a role acts with: the same scopes
// an API key carries, so that the application layer's checks apply to
// people as they do to integrations.
func RoleScopes(role string) []string {
	read := []string{"companies:read", "einvoices:read", "inbox:read", "events:read", "usage:read"}
	switch role {
	case RoleOwner:
		return slices.Clone(EInvoiceDefaultScopes)
	case RoleStaff:
		return append(read, "einvoices:write", "inbox:write")
	case RoleViewer:
		return read
	}
	return nil
}

// Session states.
const (
	SessionMFA    = "mfa"    // the password was right; the second factor is due
	SessionActive = "active" // signed in
)

// Errors of the sign-in. They are the dashboard's, shown on its pages.
var (
	ErrBadCredentials = errors.New("wrong e-mail address or password")
	ErrThrottled      = errors.New("too many failed sign-ins; try again later")
	ErrBadCode        = errors.New("wrong or already used code")
	ErrNoSession      = errors.New("no session")
	ErrUserNotFound   = errors.New("not found")
)

// Users keeps the dashboard's users and sessions.
type Users struct {
	DB *store.DB
	// SessionTTL is how long a session lasts from sign-in; default 12 h.
	SessionTTL time.Duration
	// MFATTL is how long the second-factor step waits; default 5 minutes.
	MFATTL time.Duration
	// ThrottleWindow is the window failed sign-ins are counted over;
	// default 15 minutes.
	ThrottleWindow time.Duration
	// PerEmail and PerAddress are the failures allowed in the window for
	// one e-mail address and one client address; defaults 5 and 20.
	PerEmail, PerAddress int
	// Secrets seals TOTP seeds at rest (the webhook secrets' box, the
	// key of DENAR_WEBHOOK_SECRET_KEY); without it no second factor can be
	// enrolled (denar serve always has one).
	Secrets *SecretBox
}

// ErrNoSecretKey refuses a TOTP enrolment without a key to seal the seed.
var ErrNoSecretKey = errors.New("auth: no secret key to seal TOTP seeds with (DENAR_WEBHOOK_SECRET_KEY)")

// totpSeed returns the base32 seed of user id as stored: sealed, or (a
// seed stored before seeds were sealed and not yet sealed by
// SealTOTPSeeds) in clear. "" when none.
func (u *Users) totpSeed(id, stored string) (string, error) {
	if stored == "" || !Sealed(stored) {
		return stored, nil
	}
	if u.Secrets == nil {
		return "", ErrNoSecretKey
	}
	seed, err := u.Secrets.Open(stored, id)
	if err != nil {
		return "", fmt.Errorf("TOTP seed of %s: %w", id, err)
	}
	return seed, nil
}

// SealTOTPSeeds seals every TOTP seed still stored in clear (from before
// seeds were sealed) and returns how many it sealed. denar serve runs it at
// start; a seed that changed meanwhile is left to its writer, which seals.
// Reading accepts both forms, so nobody is locked out at any moment.
func (u *Users) SealTOTPSeeds(ctx context.Context) (int, error) {
	if u.Secrets == nil {
		return 0, ErrNoSecretKey
	}
	rows, err := u.DB.Reader().ListClearTOTPSecrets(ctx)
	if err != nil {
		return 0, fmt.Errorf("clear TOTP seeds: %w", err)
	}
	sealed := 0
	for _, r := range rows {
		n, err := u.DB.Writer().SealUserTOTPSecret(ctx, dbq.SealUserTOTPSecretParams{ID: r.ID, Clear: r.TotpSecret,
			Sealed: u.Secrets.Seal(r.TotpSecret, r.ID)})
		if err != nil {
			return sealed, fmt.Errorf("seal the TOTP seed of %s: %w", r.ID, err)
		}
		sealed += int(n)
	}
	return sealed, nil
}

func (u *Users) sessionTTL() time.Duration {
	if u.SessionTTL > 0 {
		return u.SessionTTL
	}
	return DefaultSessionTTL
}

// DefaultSessionTTL is how long a dashboard session lasts from sign-in.
const DefaultSessionTTL = 12 * time.Hour

func (u *Users) mfaTTL() time.Duration {
	if u.MFATTL > 0 {
		return u.MFATTL
	}
	return 5 * time.Minute
}

func (u *Users) window() time.Duration {
	if u.ThrottleWindow > 0 {
		return u.ThrottleWindow
	}
	return 15 * time.Minute
}

func (u *Users) limits() (email, addr int64) {
	email, addr = 5, 20
	if u.PerEmail > 0 {
		email = int64(u.PerEmail)
	}
	if u.PerAddress > 0 {
		addr = int64(u.PerAddress)
	}
	return email, addr
}

// User is a dashboard user as shown.
type User struct {
	ID, AccountID, Email, Role string
	TOTPEnabled                bool
	CreatedAt                  time.Time
}

func userOf(r dbq.User) User {
	return User{ID: r.ID, AccountID: r.AccountID, Email: r.Email, Role: r.Role, TOTPEnabled: r.TotpEnabled, CreatedAt: r.CreatedAt}
}

// NormalizeEmail checks an address and returns its stored form (lower case).
func NormalizeEmail(email string) (string, error) {
	a, err := mail.ParseAddress(strings.TrimSpace(email))
	if err != nil || a.Name != "" || a.Address != strings.TrimSpace(email) {
		return "", fmt.Errorf("%q is not an e-mail address", email)
	}
	return strings.ToLower(a.Address), nil
}

// CreateUser adds a user to account with role and password.
func (u *Users) CreateUser(ctx context.Context, account, email, role, password string) (User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	if !slices.Contains(Roles, role) {
		return User{}, fmt.Errorf("unknown role %q (owner, staff or viewer)", role)
	}
	if n := len([]rune(password)); n < MinPasswordLen {
		return User{}, fmt.Errorf("the password has %d characters; at least %d are required", n, MinPasswordLen)
	}
	hash := HashPassword(password)
	var out User
	err = u.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetAccount(ctx, account); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no account %q", account)
		} else if err != nil {
			return err
		}
		if _, err := tx.GetUserByEmail(ctx, email); err == nil {
			return fmt.Errorf("a user with the address %s exists", email)
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		r, err := tx.CreateUser(ctx, dbq.CreateUserParams{ID: denar.NewID("usr"), AccountID: account, Email: email, Role: role,
			PasswordHash: hash, CreatedAt: tx.Now})
		out = userOf(r)
		return err
	})
	return out, err
}

// Session is a dashboard session.
type Session struct {
	// Token is the cookie's value; set only by the calls that create a
	// session (it is stored hashed).
	Token             string
	User              User
	State             string
	CSRF              string
	Environment       string
	ProductionEnabled bool
	ExpiresAt         time.Time
}

// Principal is who the session acts as in the application layer: the
// user, in the session's environment, with the role's scopes.
func (s Session) Principal() *Principal {
	return &Principal{AccountID: s.User.AccountID, CredentialID: s.User.ID, Kind: KindUser, Service: ServiceEInvoice,
		Environment: s.Environment, Scopes: RoleScopes(s.User.Role), ProductionEnabled: s.ProductionEnabled,
		UserEmail: s.User.Email}
}

func newSessionToken() string { return "ds_" + RandomToken(32) }

// throttled reports whether email or addr has used up its failures.
func (u *Users) throttled(ctx context.Context, q *dbq.Queries, now time.Time, email, addr string) (bool, error) {
	le, la := u.limits()
	since := now.Add(-u.window())
	ne, err := q.CountSignInFailures(ctx, dbq.CountSignInFailuresParams{Throttle: "email:" + email, Since: since})
	if err != nil {
		return false, fmt.Errorf("sign-in throttle: %w", err)
	}
	na, err := q.CountSignInFailures(ctx, dbq.CountSignInFailuresParams{Throttle: "addr:" + addr, Since: since})
	if err != nil {
		return false, fmt.Errorf("sign-in throttle: %w", err)
	}
	return ne >= le || na >= la, nil
}

// fail records a failed attempt for email and addr.
func (u *Users) fail(ctx context.Context, email, addr string) error {
	return u.DB.InTx(ctx, func(tx *store.Tx) error {
		for _, k := range []string{"email:" + email, "addr:" + addr} {
			if err := tx.RecordSignInFailure(ctx, dbq.RecordSignInFailureParams{Throttle: k, At: tx.Now}); err != nil {
				return fmt.Errorf("sign-in throttle: %w", err)
			}
		}
		return nil
	})
}

// dummyHash is checked against when the address is unknown, so that the
// answer takes as long as for a known address.
var dummyHash = sync.OnceValue(func() string { return hashPassword("denar-no-such-user", defaultPasswordParams) })

// SignIn checks email and password from the client address addr. It
// refuses with ErrThrottled once the address or the e-mail had too many
// failures in the window, and with ErrBadCredentials for a wrong pair
// (the same error whether the address exists or not). On success it ends
// the session previous (the cookie the browser came with, if any) and
// starts a new one with a new id: state mfa when the user has a second
// factor, else active.
func (u *Users) SignIn(ctx context.Context, email, password, addr, previous string) (Session, error) {
	norm, err := NormalizeEmail(email)
	if err != nil {
		norm = strings.ToLower(strings.TrimSpace(email))
	}
	now := u.DB.Now()
	if t, err := u.throttled(ctx, u.DB.Reader(), now, norm, addr); err != nil {
		return Session{}, err
	} else if t {
		return Session{}, ErrThrottled
	}
	row, err := u.DB.Reader().GetUserByEmail(ctx, norm)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("sign-in: %w", err)
	}
	hash := dummyHash()
	if found {
		hash = row.PasswordHash
	}
	ok, err := CheckPassword(hash, password)
	if err != nil {
		return Session{}, fmt.Errorf("sign-in: %s: %w", norm, err)
	}
	if !found || !ok || row.DisabledAt.Valid {
		if err := u.fail(ctx, norm, addr); err != nil {
			return Session{}, err
		}
		return Session{}, ErrBadCredentials
	}
	state, ttl := SessionActive, u.sessionTTL()
	if row.TotpEnabled {
		state, ttl = SessionMFA, u.mfaTTL()
	}
	var s Session
	err = u.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.ForgetSignInFailures(ctx, "email:"+norm); err != nil {
			return err
		}
		var err error
		s, err = startSession(ctx, tx, row, state, EnvSandbox, ttl, previous, addr)
		return err
	})
	return s, err
}

// startSession ends previous (if any) and creates a session for row; an
// active one is a sign-in, audited with the client address addr.
func startSession(ctx context.Context, tx *store.Tx, row dbq.User, state, env string, ttl time.Duration, previous, addr string) (Session, error) {
	if previous != "" {
		if _, err := tx.DeleteUserSession(ctx, Hash(previous)); err != nil {
			return Session{}, fmt.Errorf("end the previous session: %w", err)
		}
	}
	tok, csrf := newSessionToken(), RandomToken(32)
	exp := tx.Now.Add(ttl)
	if err := tx.CreateUserSession(ctx, dbq.CreateUserSessionParams{IDHash: Hash(tok), UserID: row.ID, State: state, Csrf: csrf,
		Environment: env, CreatedAt: tx.Now, ExpiresAt: exp}); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	acct, err := tx.GetAccountWithPlan(ctx, row.AccountID)
	if err != nil {
		return Session{}, fmt.Errorf("session account: %w", err)
	}
	s := Session{Token: tok, User: userOf(row), State: state, CSRF: csrf, Environment: env,
		ProductionEnabled: acct.Production, ExpiresAt: exp}
	if state == SessionActive {
		if err := RecordAuditTx(ctx, tx, s.Principal(), &AuditEntry{Action: "session.sign_in", Target: row.ID, RemoteAddr: addr}); err != nil {
			return Session{}, err
		}
	}
	return s, nil
}

// SecondFactor completes a sign-in in state mfa with a TOTP code: the mfa
// session ends and an active one, with a new id, starts. Wrong codes count
// against the throttle like wrong passwords.
func (u *Users) SecondFactor(ctx context.Context, token, code, addr string) (Session, error) {
	s, err := u.Session(ctx, token)
	if err != nil {
		return Session{}, err
	}
	if s.State != SessionMFA {
		return Session{}, ErrNoSession
	}
	now := u.DB.Now()
	if t, err := u.throttled(ctx, u.DB.Reader(), now, s.User.Email, addr); err != nil {
		return Session{}, err
	} else if t {
		return Session{}, ErrThrottled
	}
	var out Session
	err = u.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetUser(ctx, s.User.ID)
		if err != nil {
			return fmt.Errorf("user %s: %w", s.User.ID, err)
		}
		seed, err := u.totpSeed(row.ID, row.TotpSecret)
		if err != nil {
			return err
		}
		step := matchTOTP(seed, code, tx.Now)
		if step == 0 {
			return ErrBadCode
		}
		if n, err := tx.UseTOTPStep(ctx, dbq.UseTOTPStepParams{ID: row.ID, Step: step}); err != nil {
			return err
		} else if n == 0 {
			return ErrBadCode
		}
		out, err = startSession(ctx, tx, row, SessionActive, EnvSandbox, u.sessionTTL(), token, addr)
		return err
	})
	if errors.Is(err, ErrBadCode) {
		if ferr := u.fail(ctx, s.User.Email, addr); ferr != nil {
			return Session{}, ferr
		}
	}
	return out, err
}

// Session returns the session of a cookie value; ErrNoSession when there
// is none, it expired, or its user is disabled.
func (u *Users) Session(ctx context.Context, token string) (Session, error) {
	if token == "" {
		return Session{}, ErrNoSession
	}
	r, err := u.DB.Reader().GetUserSession(ctx, Hash(token))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, fmt.Errorf("session: %w", err)
	}
	if !u.DB.Now().Before(r.ExpiresAt) || r.DisabledAt.Valid {
		return Session{}, ErrNoSession
	}
	return Session{User: User{ID: r.UserID, AccountID: r.AccountID, Email: r.Email, Role: r.Role, TOTPEnabled: r.TotpEnabled},
		State: r.State, CSRF: r.Csrf, Environment: r.Environment, ProductionEnabled: r.ProductionEnabled, ExpiresAt: r.ExpiresAt}, nil
}

// SignOut ends session s, audited.
func (u *Users) SignOut(ctx context.Context, s Session, a *AuditEntry) error {
	return u.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.DeleteUserSession(ctx, Hash(s.Token)); err != nil {
			return err
		}
		return RecordAuditTx(ctx, tx, s.Principal(), a)
	})
}

// ErrProductionNotEnabled refuses switching to production on a plan
// without it.
var ErrProductionNotEnabled = errors.New("the account's plan does not include production")

// SetEnvironment switches the session's environment (sandbox or
// production), audited.
func (u *Users) SetEnvironment(ctx context.Context, s Session, env string, a *AuditEntry) error {
	if env != EnvSandbox && env != EnvProduction {
		return fmt.Errorf("unknown environment %q", env)
	}
	if env == EnvProduction && !s.ProductionEnabled {
		return ErrProductionNotEnabled
	}
	p := s.Principal()
	return u.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.SetSessionEnvironment(ctx, dbq.SetSessionEnvironmentParams{IDHash: Hash(s.Token), Environment: env}); err != nil {
			return err
		}
		p.Environment = env
		return RecordAuditTx(ctx, tx, p, a)
	})
}

// StartTOTP gives the user a new TOTP secret (until a code confirms it, the
// second factor stays off) and returns it; it is stored sealed. A user
// whose second factor is on gets ErrBadCode: it is not replaced from a
// session.
func (u *Users) StartTOTP(ctx context.Context, p *Principal) (string, error) {
	if u.Secrets == nil {
		return "", ErrNoSecretKey
	}
	secret := NewTOTPSecret()
	n, err := u.DB.Writer().SetUserTOTPSecret(ctx, dbq.SetUserTOTPSecretParams{ID: p.CredentialID,
		TotpSecret: u.Secrets.Seal(secret, p.CredentialID)})
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", ErrBadCode
	}
	return secret, nil
}

// ConfirmTOTP turns the second factor on with a code of the secret
// StartTOTP gave, audited.
func (u *Users) ConfirmTOTP(ctx context.Context, p *Principal, code string, a *AuditEntry) error {
	return u.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetUser(ctx, p.CredentialID)
		if err != nil {
			return fmt.Errorf("user %s: %w", p.CredentialID, err)
		}
		seed, err := u.totpSeed(row.ID, row.TotpSecret)
		if err != nil {
			return err
		}
		step := matchTOTP(seed, code, tx.Now)
		if step == 0 || row.TotpEnabled {
			return ErrBadCode
		}
		if n, err := tx.EnableUserTOTP(ctx, dbq.EnableUserTOTPParams{ID: row.ID, Step: step}); err != nil {
			return err
		} else if n == 0 {
			return ErrBadCode
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
}

// AccountUsers lists the users of the principal's account.
func (u *Users) AccountUsers(ctx context.Context, p *Principal) ([]User, error) {
	rows, err := u.DB.Reader().ListAccountUsers(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	out := make([]User, 0, len(rows))
	for _, r := range rows {
		out = append(out, userOf(r))
	}
	return out, nil
}

// APIKey is an API key as the dashboard lists it (never its secret).
type APIKey struct {
	ID, Display, Environment string
	Scopes                   []string
	CompanyIDs               []string
	CreatedAt                time.Time
	RevokedAt                *time.Time
}

// AccountKeys lists the e-invoicing API keys of the principal's account,
// newest first.
func (u *Users) AccountKeys(ctx context.Context, p *Principal) ([]APIKey, error) {
	rows, err := u.DB.Reader().ListAccountAPIKeys(ctx, dbq.ListAccountAPIKeysParams{AccountID: p.AccountID, Service: ServiceEInvoice})
	if err != nil {
		return nil, err
	}
	out := make([]APIKey, 0, len(rows))
	for _, r := range rows {
		k := APIKey{ID: r.ID, Display: r.Display, Environment: r.Environment, Scopes: strings.Fields(r.Scopes),
			CompanyIDs: strings.Fields(r.CompanyIds), CreatedAt: r.CreatedAt}
		if r.RevokedAt.Valid {
			t := r.RevokedAt.Time
			k.RevokedAt = &t
		}
		out = append(out, k)
	}
	return out, nil
}

// KeyChoice is what an owner picks for a new key: its environment (the
// principal's when empty) and scopes (a subset of EInvoiceScopes, at least
// one).
type KeyChoice struct {
	Environment string
	Scopes      []string
}

// check validates the choice for p: field errors "environment" (unknown,
// or production on a plan without it) and "scopes" / "scopes[i]".
func (c *KeyChoice) check(p *Principal) error {
	var fe denar.FieldErrors
	if c.Environment == "" {
		c.Environment = p.Environment
	}
	switch c.Environment {
	case EnvSandbox:
	case EnvProduction:
		if !p.ProductionEnabled {
			fe.Add("environment", "the account's plan does not include production")
		}
	default:
		fe.Add("environment", "%q is not an environment (sandbox or production)", c.Environment)
	}
	if len(c.Scopes) == 0 {
		fe.Add("scopes", "choose at least one scope")
	}
	var scopes []string
	for i, sc := range c.Scopes {
		switch {
		case !slices.Contains(EInvoiceScopes, sc):
			fe.Add(fmt.Sprintf("scopes[%d]", i), "%q is not a scope of the e-invoicing service", sc)
		case !slices.Contains(scopes, sc):
			scopes = append(scopes, sc)
		}
	}
	c.Scopes = scopes
	return fe.Err()
}

// CreateAccountKey creates an e-invoicing API key of the principal's
// account with the environment and scopes of choice, audited, in one
// transaction. The secret is returned once.
func (u *Users) CreateAccountKey(ctx context.Context, p *Principal, choice KeyChoice, a *AuditEntry) (APIKey, string, error) {
	if err := choice.check(p); err != nil {
		return APIKey{}, "", err
	}
	var out APIKey
	var secret string
	err := u.DB.InTx(ctx, func(tx *store.Tx) error {
		k, sec, err := CreateKeyTx(ctx, tx, KeyParams{AccountID: p.AccountID, Service: ServiceEInvoice, Environment: choice.Environment,
			Scopes: choice.Scopes})
		if err != nil {
			return err
		}
		out = APIKey{ID: k.ID, Display: k.Display, Environment: k.Environment, Scopes: strings.Fields(k.Scopes), CreatedAt: k.CreatedAt}
		secret = sec
		if a != nil {
			a.Target = k.ID
			a.Detail = k.Environment + " " + k.Scopes
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
	return out, secret, err
}

// RevokeAccountKey revokes a key of the principal's account, audited;
// ErrUserNotFound for a key of another account, unknown or already
// revoked.
func (u *Users) RevokeAccountKey(ctx context.Context, p *Principal, id string, a *AuditEntry) error {
	err := u.DB.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.RevokeAccountAPIKey(ctx, dbq.RevokeAccountAPIKeyParams{ID: id, AccountID: p.AccountID,
			RevokedAt: sql.NullTime{Time: tx.Now, Valid: true}})
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrUserNotFound
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
	if err == nil {
		u.DB.AccessChanged()
	}
	return err
}

// OAuthClient is an OAuth client as the dashboard lists it (never its
// secret).
type OAuthClient struct {
	ID, Environment string
	Scopes          []string
	CreatedAt       time.Time
	RevokedAt       *time.Time
}

// AccountClients lists the OAuth clients of the principal's account,
// newest first.
func (u *Users) AccountClients(ctx context.Context, p *Principal) ([]OAuthClient, error) {
	rows, err := u.DB.Reader().ListAccountOAuthClients(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	out := make([]OAuthClient, 0, len(rows))
	for _, r := range rows {
		c := OAuthClient{ID: r.ID, Environment: r.Environment, Scopes: strings.Fields(r.Scopes), CreatedAt: r.CreatedAt}
		if r.RevokedAt.Valid {
			t := r.RevokedAt.Time
			c.RevokedAt = &t
		}
		out = append(out, c)
	}
	return out, nil
}

// CreateAccountClient creates OAuth client credentials of the principal's
// account in its environment (the default scopes), audited, in one
// transaction; the secret is returned once.
func (u *Users) CreateAccountClient(ctx context.Context, p *Principal, a *AuditEntry) (OAuthClient, string, error) {
	var out OAuthClient
	var secret string
	err := u.DB.InTx(ctx, func(tx *store.Tx) error {
		c, sec, err := createClientTx(ctx, tx, ClientParams{AccountID: p.AccountID, Environment: p.Environment})
		if err != nil {
			return err
		}
		out = OAuthClient{ID: c.ID, Environment: c.Environment, Scopes: strings.Fields(c.Scopes), CreatedAt: c.CreatedAt}
		secret = sec
		if a != nil {
			a.Target = c.ID
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
	return out, secret, err
}

// RevokeAccountClient revokes an OAuth client of the principal's account
// (its tokens stop working at once), audited; ErrUserNotFound for another
// account's, an unknown or a revoked client.
func (u *Users) RevokeAccountClient(ctx context.Context, p *Principal, id string, a *AuditEntry) error {
	err := u.DB.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.RevokeAccountOAuthClient(ctx, dbq.RevokeAccountOAuthClientParams{ID: id, AccountID: p.AccountID,
			RevokedAt: sql.NullTime{Time: tx.Now, Valid: true}})
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrUserNotFound
		}
		return RecordAuditTx(ctx, tx, p, a)
	})
	return err
}

// AuditEntry is what a dashboard act records: the action, its object and
// a detail, and the client's address. Who and where come from the
// principal. Nonce, when set, is the token of the form that asked for the
// act: a second act with the same nonce by the same user fails with
// ErrAlreadyDone, and its transaction (the act included) rolls back.
type AuditEntry struct {
	Action, Target, Detail, RemoteAddr string
	Nonce                              string
}

// ErrAlreadyDone refuses a form submitted a second time.
var ErrAlreadyDone = errors.New("this form was already submitted; its action was done once")

// RecordAuditTx writes a to the audit log in tx, as p (nil a: nothing).
// The unique (user, nonce) index settles two concurrent submissions of one
// form; the look-up before gives the usual case its own error.
func RecordAuditTx(ctx context.Context, tx *store.Tx, p *Principal, a *AuditEntry) error {
	if a == nil {
		return nil
	}
	nonce := sql.NullString{String: a.Nonce, Valid: a.Nonce != ""}
	if nonce.Valid {
		n, err := tx.AuditNonceUsed(ctx, dbq.AuditNonceUsedParams{UserID: p.CredentialID, FormNonce: nonce})
		if err != nil {
			return fmt.Errorf("audit %s: %w", a.Action, err)
		}
		if n > 0 {
			return ErrAlreadyDone
		}
	}
	if err := tx.RecordAudit(ctx, dbq.RecordAuditParams{AccountID: p.AccountID, UserID: p.CredentialID, UserEmail: p.UserEmail,
		Environment: p.Environment, Action: a.Action, Target: a.Target, Detail: a.Detail, RemoteAddr: a.RemoteAddr,
		FormNonce: nonce, At: tx.Now}); err != nil {
		if nonce.Valid && store.IsUniqueViolation(err) {
			return ErrAlreadyDone // the same form, committed meanwhile
		}
		return fmt.Errorf("audit %s: %w", a.Action, err)
	}
	return nil
}

// AuditRecord is a row of the audit log.
type AuditRecord = dbq.AuditLog

// AuditLog lists the newest limit entries of the principal's account.
func (u *Users) AuditLog(ctx context.Context, p *Principal, limit int) ([]AuditRecord, error) {
	return u.DB.Reader().ListAudit(ctx, dbq.ListAuditParams{AccountID: p.AccountID, Lim: int64(limit)})
}

// PurgeSessions deletes expired sessions and failures older than the
// throttle window (a periodic job).
func (u *Users) PurgeSessions(ctx context.Context) error {
	now := u.DB.Now()
	if _, err := u.DB.Writer().PurgeUserSessions(ctx, now); err != nil {
		return err
	}
	_, err := u.DB.Writer().PurgeSignInFailures(ctx, now.Add(-u.window()))
	return err
}
