package inbox

import (
	"context"
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	// Core is the application layer the room is built on: signing
	// requests and their link registry, events, code lists, the company
	// rule and the pipeline's UJP calls; required.
	Core *einvoicing.Service
	// Pipeline is the pipeline room, through which the inbox's reads and
	// decisions meet UJP (its failures, access checks, staleness and
	// timings); required.
	Pipeline *pipeline.Service
	DB       *store.DB
	Log      *slog.Logger
	// Sandbox drives the UJP simulator behind the sandbox environment
	// (einvoicing.Deps.Sandbox); nil makes the sandbox's inbox operations
	// 403 sandbox_only.
	Sandbox einvoicing.SandboxUJP
}

// Config tunes the inbox; zero values take the defaults.
type Config struct {
	// DeadlineEvery is how often the deadline job looks for reminders and
	// auto-acceptances due; default DefaultDeadlineEvery.
	DeadlineEvery time.Duration
}

// DefaultDeadlineEvery is how often the inbox's deadline job runs (also
// the default of the setting that sets it; cmd/denar reads it here).
const DefaultDeadlineEvery = time.Minute

func (c Config) withDefaults() Config {
	if c.DeadlineEvery <= 0 {
		c.DeadlineEvery = DefaultDeadlineEvery
	}
	return c
}

// KindDeadlines is the periodic job of the inbox's deadlines.
const KindDeadlines = "inbox.deadlines"

// deadlinesArgs: the periodic deadline job takes none.
type deadlinesArgs struct{}

func (deadlinesArgs) Kind() string { return KindDeadlines }

// Service is the inbox room: one method per use case, the handlers of its
// signed reads and decisions, and the deadline job.
type Service struct {
	core    *einvoicing.Service
	pipe    *pipeline.Service
	db      *store.DB
	log     *slog.Logger
	cfg     Config
	sandbox einvoicing.SandboxUJP
}

// New builds the room and registers the handlers of its link types on
// d.Core's signed-links registry. cmd/denar then wires it as the core's
// einvoicing.Inbox (Service.UseInbox).
func New(d Deps, cfg Config) *Service {
	if d.Core == nil {
		panic("inbox: New needs Deps.Core, the e-invoicing service")
	}
	if d.Pipeline == nil {
		panic("inbox: New needs Deps.Pipeline, the pipeline room")
	}
	s := &Service{core: d.Core, pipe: d.Pipeline, db: d.DB, log: d.Log, cfg: cfg.withDefaults(), sandbox: d.Sandbox}
	if s.log == nil {
		s.log = slog.Default()
	}
	for t, h := range s.linkHandlers() {
		d.Core.HandleLink(t, h)
	}
	return s
}

// linkHandlers are the handlers of the inbox's link types. A decision is
// the company's act: any refusal, passing or not, ends it with a problem,
// and so does an expiry; deciding again asks afresh. The reads are made
// by the query job.
func (s *Service) linkHandlers() map[string]einvoicing.LinkHandler {
	m := map[string]einvoicing.LinkHandler{}
	for _, t := range []string{einvoicing.LinkInboxDecision, einvoicing.LinkInboxStatus} {
		m[t] = einvoicing.LinkHandler{Signed: einvoicing.EnqueueQuery, Read: s.readInbox, Failed: s.decisionSignatureFailed}
	}
	for _, t := range []string{einvoicing.LinkInboxPDF, einvoicing.LinkPurchaseIDs, einvoicing.LinkPurchasePayloads, einvoicing.LinkPurchaseChanges} {
		m[t] = einvoicing.LinkHandler{Signed: einvoicing.EnqueueQuery, Read: s.readInbox}
	}
	return m
}

// RegisterJobs registers the room's job kinds on r: the deadline job.
func (s *Service) RegisterJobs(r *jobs.Runner) {
	jobs.Register(r, s.inboxDeadlines, jobs.Options{Every: s.cfg.DeadlineEvery})
}

// pipeCfg is the pipeline's tuning, which the decision's UJP calls follow.
func (s *Service) pipeCfg() pipeline.Config { return s.pipe.Config() }

// StartSync implements einvoicing.Inbox: in the poll's transaction, it
// starts the read of co's purchase side when the company's inbox is read
// at all (an active client company, not a payroll employer).
func (s *Service) StartSync(ctx context.Context, tx *store.Tx, co dbq.Company, today time.Time) error {
	if !inboxSyncDue(co) {
		return nil
	}
	return s.startInboxSync(ctx, tx, co, today)
}
