package signing

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// Core is the e-invoicing service the room's use cases call: what a
	// signature sets off (AfterSigned, the signed-links registry), the
	// e-invoice's request and its events; required.
	Core *einvoicing.Service
	// SandboxSetup registers sandbox certificates with the simulator; nil
	// when the sandbox talks to UJP's own test environment (sandbox
	// certificates then need their EUJP id, as production ones do).
	SandboxSetup SandboxSetup
}

// Config tunes the room; zero values take the defaults.
type Config struct {
	// ExpireEvery is how often the expiry job looks for requests past
	// their time; default defaultExpireEvery.
	ExpireEvery time.Duration
}

// defaultExpireEvery is how often the expiry job runs.
const defaultExpireEvery = time.Minute

func (c Config) withDefaults() Config {
	if c.ExpireEvery <= 0 {
		c.ExpireEvery = defaultExpireEvery
	}
	return c
}

// Service is the signing room: one method per use case of a signer or of
// the agents, and the expiry and ask-again jobs.
type Service struct {
	db   *store.DB
	log  *slog.Logger
	cfg  Config
	core *einvoicing.Service
	// sandboxSetup registers sandbox certificates with the simulator.
	sandboxSetup SandboxSetup
}

// New builds the room.
func New(d Deps, cfg Config) *Service {
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), core: d.Core, sandboxSetup: d.SandboxSetup}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.core == nil {
		panic("signing: New needs Deps.Core, the e-invoicing service")
	}
	return s
}

// KindExpireSigning expires signing requests nobody answered in time.
const KindExpireSigning = "signing.expire"

// expireSigningArgs are the arguments of the periodic expiry: none.
type expireSigningArgs struct{}

func (expireSigningArgs) Kind() string { return KindExpireSigning }

// RegisterJobs registers the room's job kinds on r: the periodic expiry
// of signing requests, the ask-again of a document whose signer refused
// for a passing reason (einvoicing.KindAskSignature, which the
// e-invoicing service enqueues) and, with a simulator to tell, the
// registration of a sandbox signer (KindSandboxSigner).
func (s *Service) RegisterJobs(r *jobs.Runner) {
	jobs.Register(r, s.expireSigning, jobs.Options{Every: s.cfg.ExpireEvery})
	jobs.Register(r, s.askSignatureAgain, jobs.Options{})
	if s.sandboxSetup != nil {
		jobs.Register(r, s.registerSandboxSigner, jobs.Options{
			Backoff: jobs.Schedule(time.Second, 5*time.Second, 30*time.Second, 2*time.Minute)})
	}
}
