package codelists

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
)

// Publisher is the port through which a change of the lists is told, in
// the transaction that records it (*webhooks.Service, as for the core's
// einvoicing.Publisher).
type Publisher interface {
	Publish(ctx context.Context, tx *store.Tx, drafts ...webhooks.Draft) error
}

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	// DB keeps the recorded lists; nil validates with the snapshot (a
	// test of the core that stores nothing).
	DB  *store.DB
	Log *slog.Logger
	// Gateways are UJP by environment (auth.EnvSandbox,
	// auth.EnvProduction); an environment without one keeps the lists
	// recorded (or the snapshot).
	Gateways map[string]ujp.Gateway
	// Operators are the operator's own UJP identity per environment
	// (DENAR_UJP_USER, DENAR_UJP_EDB), as which the lists are read; an
	// environment without one keeps the lists recorded (or the snapshot).
	Operators map[string]ujp.Identity
	// Events publishes codelists.changed; required.
	Events Publisher
}

// Config tunes the room; zero values take the defaults.
type Config struct {
	// Every is how often UJP's code lists are read (the periodic job of
	// each environment); default DefaultEvery.
	Every time.Duration
	// Reload is how long a process answers from its copy of the recorded
	// lists before it looks at the store again (a change recorded by
	// another process is followed within it); default DefaultReload.
	Reload time.Duration
}

// The defaults of Config, also the defaults of the settings that set
// them (cmd/denar reads them from here).
const (
	// DefaultEvery is how often UJP's code lists are read and compared
	// with the recorded ones.
	DefaultEvery = 6 * time.Hour
	// DefaultReload is how long a process validates with its copy of the
	// recorded lists before it looks at the store again.
	DefaultReload = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Every <= 0 {
		c.Every = DefaultEvery
	}
	if c.Reload <= 0 {
		c.Reload = DefaultReload
	}
	return c
}

// Service is the code-list room: the lists of each environment as
// validation uses them, their periodic read and GET /v1/codebooks.
type Service struct {
	db        *store.DB
	log       *slog.Logger
	cfg       Config
	gateways  map[string]ujp.Gateway
	operators map[string]ujp.Identity
	events    Publisher
	snapshot  func() *ujpdoc.Codebooks // the embedded lists, decoded once
	// lists are this process's copies of the recorded lists, by
	// environment (codelists.go).
	lists map[string]*codeLists
}

// New builds the room.
func New(d Deps, cfg Config) *Service {
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), gateways: d.Gateways, operators: d.Operators,
		events: d.Events, snapshot: sync.OnceValue(ujpdoc.Snapshot), lists: newCodeLists()}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.events == nil {
		panic("codelists: New needs Deps.Events, the publisher of events")
	}
	return s
}

// RegisterJobs registers the periodic read of UJP's lists of every
// environment with a gateway and an operator on r.
func (s *Service) RegisterJobs(r *jobs.Runner) {
	registerCodeListsOf[sandboxCodeLists](s, r)
	registerCodeListsOf[productionCodeLists](s, r)
}

// Lists returns the code lists validation uses in env: UJP's lists as last
// recorded, else the embedded snapshot (decoded once per service: decoding
// it is most of the CPU time of an issue). It satisfies the core's
// einvoicing.CodeLists port.
func (s *Service) Lists(env string) *ujpdoc.Codebooks {
	if cb, _ := s.recordedLists(env); cb != nil {
		return cb
	}
	return s.snapshot()
}
