package einvoicing

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/usecase"
)

// Deps are the service's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// Registry answers the company pre-flight; nil makes every onboarding
	// 503 ujp_unavailable.
	Registry Registry
	// CodeLists are UJP's code lists by environment, as validation uses
	// them (the code-list room, *codelists.Service); required.
	CodeLists CodeLists
	// Secrets seals what a queued mail carries in confidence; the core
	// itself seals nothing: cmd/denar hands it to the companies room (the
	// mandate links).
	Secrets *auth.SecretBox
	// Events publishes the events of the use cases, in their transactions
	// (the webhooks package's Service); required.
	Events Publisher
}

// Config tunes the service; zero values take the defaults.
type Config struct {
	// RegistryTimeout bounds a wait for UJP's registry (the validation
	// job's); default 10 s.
	RegistryTimeout time.Duration
	// ValidationBudget is how long POST /v1/einvoices waits for UJP's
	// registry to check the buyer before it answers with the document in
	// validating and lets a job finish the check; default 1 s.
	ValidationBudget time.Duration
	// RefusalBackoff is how long after a signer refused for a passing
	// reason (token_missing, pin_locked) the document is asked for again;
	// default 5 minutes.
	RefusalBackoff time.Duration
}

// The defaults of Config, also the defaults of the settings that set
// them (cmd/denar reads them from here).
const (
	// DefaultRegistryTimeout bounds a wait for UJP's registry.
	DefaultRegistryTimeout = 10 * time.Second
	// DefaultValidationBudget is how long an issue waits for the buyer's
	// registry check before it answers 202 validating.
	DefaultValidationBudget = time.Second
	// DefaultRefusalBackoff is how long a document waits after a signer's
	// non-final refusal before it is asked for again.
	DefaultRefusalBackoff = 5 * time.Minute
)

func (c Config) withDefaults() Config {
	if c.RegistryTimeout <= 0 {
		c.RegistryTimeout = DefaultRegistryTimeout
	}
	if c.ValidationBudget <= 0 {
		c.ValidationBudget = DefaultValidationBudget
	}
	if c.RefusalBackoff <= 0 {
		c.RefusalBackoff = DefaultRefusalBackoff
	}
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
	// lists are UJP's code lists by environment (the code-list room).
	lists   CodeLists
	buyers  buyerCache
	headers headerCache
	homes   homeCache
	pacing  Pacing
	events  Publisher
	// links are the handlers of the signing requests' link types, by type
	// (signedlinks.go).
	links map[string]LinkHandler
	// inbox is the inbox room, which the poll starts the purchase-side
	// sync through (UseInbox; inboxport.go).
	inbox Inbox
}

// New builds the service.
func New(d Deps, cfg Config) *Service {
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), registry: d.Registry,
		lists:  d.CodeLists,
		events: d.Events, links: map[string]LinkHandler{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.events == nil {
		panic("einvoicing: New needs Deps.Events, the publisher of events")
	}
	if s.lists == nil {
		panic("einvoicing: New needs Deps.CodeLists, UJP's code lists")
	}
	s.handleLinks()
	return s
}

// Caller is who asks for a use case (usecase.Caller).
type Caller = usecase.Caller

// Now is the service's clock (the store's, which tests replace).
func (s *Service) Now() time.Time { return s.db.Now() }

// RegisterJobs registers the job kinds of the service on r: the
// validation of an issue and the periodic purge of signed reads; the
// periodic read of UJP's code lists is the code-list room's
// (codelists.Service.RegisterJobs). The submission pipeline, the change-feed polls and UJP's
// signed reads are the pipeline room's (pipeline.Service.RegisterJobs); the
// expiry of signing requests, the ask-again of a refused document and the
// sandbox's signers the signing room's; the inbox's deadlines the inbox room's; the
// daily reconciliation the reconcile room's; webhook deliveries are the
// webhooks package's
// (webhooks.Service.RegisterJobs), on a runner of their own; archive
// exports the archive package's.
func (s *Service) RegisterJobs(r *jobs.Runner) {
	jobs.Register(r, s.purgeSignedReads, jobs.Options{Every: 6 * time.Hour})
	jobs.Register(r, s.validate, jobs.Options{Timeout: s.cfg.RegistryTimeout + 5*time.Second,
		Backoff: validateBackoff()})
}
