package einvoicing

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
)

// Deps are the service's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// Registry answers the company pre-flight; nil makes every onboarding
	// 503 ujp_unavailable.
	Registry Registry
	// Codebooks returns UJP's current code lists for an environment; nil,
	// or a nil result, means the snapshot embedded in the binary.
	Codebooks func(env string) *ujpdoc.Codebooks
	// Sandbox drives the UJP simulator behind the sandbox environment; nil
	// when the sandbox talks to something else (simulate answers 403).
	Sandbox SandboxUJP
	// Gateways are UJP by environment (auth.EnvSandbox, auth.EnvProduction);
	// a missing one makes that environment's documents wait in held.
	Gateways map[string]ujp.Gateway
}

// Config tunes the service; zero values take the defaults.
type Config struct {
	// PublicURL is the base of links in mails (mandate pages).
	PublicURL string
	// MandateTTL is how long a mandate link works; default 14 days.
	MandateTTL time.Duration
	// RegistryTimeout bounds the company pre-flight; default 10 s.
	RegistryTimeout time.Duration
	// Pipeline tunes the submission pipeline.
	Pipeline PipelineConfig
	// ValidationBudget is how long POST /v1/einvoices waits for UJP's
	// registry to check the buyer before it answers with the document in
	// validating and lets a job finish the check; default 1 s.
	ValidationBudget time.Duration
	// RefusalBackoff is how long after a signer refused for a passing
	// reason (token_missing, pin_locked) the document is asked for again;
	// default 5 minutes.
	RefusalBackoff time.Duration
	// InboxDeadlineEvery is how often the inbox's deadline job looks for
	// reminders and auto-acceptances due; default 1 minute.
	InboxDeadlineEvery time.Duration
}

// DefaultMandateTTL is how long a mandate link works.
const DefaultMandateTTL = 14 * 24 * time.Hour

func (c Config) withDefaults() Config {
	if c.MandateTTL <= 0 {
		c.MandateTTL = DefaultMandateTTL
	}
	if c.RegistryTimeout <= 0 {
		c.RegistryTimeout = 10 * time.Second
	}
	if c.ValidationBudget <= 0 {
		c.ValidationBudget = time.Second
	}
	if c.RefusalBackoff <= 0 {
		c.RefusalBackoff = 5 * time.Minute
	}
	if c.InboxDeadlineEvery <= 0 {
		c.InboxDeadlineEvery = time.Minute
	}
	c.Pipeline = c.Pipeline.withDefaults()
	return c
}

// Service is the e-invoicing application layer: one method per use case.
// Each method that changes state takes the caller and a typed command and
// runs one transaction that writes the rows, their history, their events
// and their jobs, and — for a request with an Idempotency-Key — the
// response, so a crash or a retry can never make it happen twice.
type Service struct {
	db       *store.DB
	log      *slog.Logger
	cfg      Config
	registry Registry
	books    func(env string) *ujpdoc.Codebooks
	snapshot func() *ujpdoc.Codebooks // the embedded lists, decoded once
	sandbox  SandboxUJP
	gateways map[string]ujp.Gateway
	buyers   buyerCache
	headers  headerCache
	homes    homeCache
	pipe     *Pipeline
}

// New builds the service.
func New(d Deps, cfg Config) *Service {
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), registry: d.Registry,
		books: d.Codebooks, snapshot: sync.OnceValue(ujpdoc.Snapshot), sandbox: d.Sandbox, gateways: d.Gateways}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.pipe = &Pipeline{svc: s, db: d.DB, gateways: d.Gateways, cfg: s.cfg.Pipeline, log: s.log}
	return s
}

// Caller is who asks for a use case: the credential's principal and, for
// a request with an Idempotency-Key, its claim, which the use case's
// transaction completes with the answer.
type Caller struct {
	*auth.Principal
	Claim *idempotency.Claim
}

// write runs fn in one transaction and, when the caller holds an
// idempotency claim, stores fn's answer as the key's response in that same
// transaction. The transaction does not inherit the request's
// cancellation: once the work starts, a client that hangs up does not
// decide its outcome.
func write[T any](ctx context.Context, s *Service, c Caller, fn func(tx *store.Tx) (T, error)) (T, error) {
	var out T
	ctx = context.WithoutCancel(ctx)
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		v, err := fn(tx)
		if err != nil {
			return err
		}
		if err := c.Claim.Complete(ctx, tx, v); err != nil {
			return err
		}
		out = v
		return nil
	})
	return out, err
}

// Now is the service's clock (the store's, which tests replace).
func (s *Service) Now() time.Time { return s.db.Now() }

// RegisterJobs registers the job kinds of the service on r: the
// submission pipeline, the change-feed polls (sales and the inbox), UJP
// reads and decisions, the inbox's deadlines, and the periodic expiry and
// purge of signing requests.
func (s *Service) RegisterJobs(r *jobs.Runner) {
	s.pipe.holder = r.ID()
	s.pipe.register(r)
	r.Register(KindInboxDeadlines, jobs.WorkerFunc(s.inboxDeadlines), jobs.Options{Every: s.cfg.InboxDeadlineEvery})
}
