package reconcile

import (
	"context"
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
)

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// Core is the e-invoicing application layer the room is built on: its
	// moves of e-invoices, its events, the inbox's storing of incoming
	// documents, its pipeline's signed reads; required.
	Core *einvoicing.Service
	// Pipeline is the pipeline room, through which a run's reads meet UJP
	// (failures, access checks, staleness, the signer of a request);
	// required.
	Pipeline *pipeline.Service
	// Inbox is the inbox room, which stores the incoming documents a run
	// finds and applies the statuses it reads; required.
	Inbox *inbox.Service
	// Gateways are UJP by environment, as pipeline.Deps.Gateways: a
	// company of an environment without one is not reconciled by the
	// daily job, and the go-live check refuses the environment.
	Gateways map[string]ujp.Gateway
	// Operators are the operator's own UJP identity per environment
	// (DENAR_UJP_USER, DENAR_UJP_EDB; as codelists.Deps.Operators), as which
	// the go-live check calls.
	Operators map[string]ujp.Identity
	// Registry answers the go-live check's registry line; nil fails it.
	Registry einvoicing.Registry
}

// Config tunes the room; zero values take the defaults, but a zero Every
// registers no daily job (runs happen on demand only).
type Config struct {
	// Every is how often the daily job looks for days due and for quiet
	// runs; 0: no daily job.
	Every time.Duration
	// Hour is the hour of the day (Europe/Skopje, 0–23) from which the
	// previous day is due (cmd/denar's DENAR_RECONCILE_HOUR); 0: as soon
	// as the day's lists are final (5 minutes past midnight).
	Hour int
	// Quiet is how long a run may go without moving before the daily job
	// looks at it; default 15 minutes (a signing request's life).
	Quiet time.Duration
	// SignerInterval is the pipeline's least time between two calls of one
	// UJP user (pipeline.Config.SignerInterval), which the
	// go-live check's rate line states; 0: one second.
	SignerInterval time.Duration
}

func (c Config) withDefaults() Config {
	if c.Quiet <= 0 {
		c.Quiet = einvoicing.SigningTTL
	}
	c.Hour = min(max(c.Hour, 0), 23)
	return c
}

// Service is the reconciliation room: the reconciliation of a company's
// days with UJP's records (the use cases of /v1/reconciliations, the daily
// job and the signed reads of a run) and the go-live check.
type Service struct {
	db        *store.DB
	log       *slog.Logger
	cfg       Config
	core      *einvoicing.Service
	pipe      *pipeline.Service
	inbox     *inbox.Service
	gateways  map[string]ujp.Gateway
	operators map[string]ujp.Identity
	registry  einvoicing.Registry
}

// New builds the room and registers the handlers of its link types with
// the core (a run's reads, the go-live check's probes).
func New(d Deps, cfg Config) *Service {
	if d.Core == nil {
		panic("reconcile: New needs Deps.Core, the e-invoicing service")
	}
	if d.Pipeline == nil || d.Inbox == nil {
		panic("reconcile: New needs Deps.Pipeline and Deps.Inbox, the rooms it reads through and stores with")
	}
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), core: d.Core, pipe: d.Pipeline, inbox: d.Inbox,
		gateways: d.Gateways, operators: d.Operators, registry: d.Registry}
	if s.log == nil {
		s.log = slog.Default()
	}
	d.Core.HandleLink(einvoicing.LinkReconciliation, einvoicing.LinkHandler{Signed: enqueueReconcileQuery, Read: s.readReconciliation})
	// The check makes its probes' reads itself (checkSigned).
	d.Core.HandleLink(einvoicing.LinkUJPCheck, einvoicing.LinkHandler{
		Signed: func(context.Context, *store.Tx, einvoicing.SigningRequest) error { return nil }})
	return s
}

// RegisterJobs registers the room's job kinds on r: the daily job, when
// Config.Every is set. A run's reads are the core's query job
// (einvoicing.KindUJPQuery), which calls the room's link handler.
func (s *Service) RegisterJobs(r *jobs.Runner) {
	if s.cfg.Every > 0 {
		jobs.Register(r, s.reconcileAll, jobs.Options{Every: s.cfg.Every})
	}
}

// EventResources are the event catalogue's resources this room renders,
// with the Go type each is rendered as (webhooks.Deps.Resources takes them
// with the others').
func EventResources() map[string]any {
	return map[string]any{webhooks.ResourceReconciliation: Reconciliation{}}
}
