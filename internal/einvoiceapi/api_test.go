package einvoiceapi_test

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/usage"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
)

// appConfig tunes the application layer the tests build, room by room
// (zero values take each room's defaults).
type appConfig struct {
	einvoicing.Config
	CodeLists codelists.Config
	Pipeline  pipeline.Config
	Reconcile reconcile.Config
	// Companies tunes the companies room; its RegistryTimeout is the
	// core's unless set, and its PublicURL is also the API's.
	Companies companies.Config
	// SigningPoll is how often agents' sockets look for requests besides
	// their wake-ups (einvoiceapi.Deps.SigningPoll).
	SigningPoll time.Duration
	// Gateways are UJP by environment, for the rooms that call it (the
	// pipeline, reconciliation, the code lists).
	Gateways map[string]ujp.Gateway
	// Operators are the operator's UJP identity per environment, as which
	// the code lists are read and the go-live check calls.
	Operators map[string]ujp.Identity
	// Sandbox drives the simulator behind the sandbox (the pipeline's and
	// the inbox's simulate use cases).
	Sandbox einvoicing.SandboxUJP
	// SandboxSetup registers sandbox signers with the simulator (the
	// signing room's).
	SandboxSetup signing.SandboxSetup
}

// app is the e-invoicing application layer a test's API was built with:
// the core, whose methods it has, and each room.
type app struct {
	*einvoicing.Service
	lists   *codelists.Service
	signing *signing.Service
	pipe    *pipeline.Service
	inbox   *inbox.Service
	recon   *reconcile.Service
	hooks   *webhooks.Service
}

// RegisterJobs registers the jobs of the core and of every room but the
// webhooks' (which run on a runner of their own) on r, as cmd/denar does.
func (a *app) RegisterJobs(r *jobs.Runner) {
	a.lists.RegisterJobs(r)
	a.Service.RegisterJobs(r)
	a.pipe.RegisterJobs(r)
	a.signing.RegisterJobs(r)
	a.inbox.RegisterJobs(r)
	a.recon.RegisterJobs(r)
}

// newAPI builds the e-invoicing application layer on db with d and cfg
// (DB and a silent logger filled in) and its HTTP service, as cmd/denar
// wires them.
func newAPI(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config) (*app, *httpx.Service) {
	return newApp(db, d, appConfig{Config: cfg}, webhooks.Deps{}, webhooks.Config{})
}

// newAPIWith is newAPI with the events and webhooks room built from hd
// and hc (DB, Log, Secrets and Resources filled in from d), returned too;
// the archive room has no blob store (its exports fail).
func newAPIWith(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config, hd webhooks.Deps, hc webhooks.Config) (*app, *webhooks.Service, *httpx.Service) {
	a, api := newApp(db, d, appConfig{Config: cfg}, hd, hc)
	return a, a.hooks, api
}

// newApp is newAPIWith with every room tuned by cfg. The reconciliation's
// daily job is off unless cfg.Reconcile.Every is set, and its check
// follows the pipeline's SignerInterval unless it has its own.
func newApp(db *store.DB, d einvoicing.Deps, cfg appConfig, hd webhooks.Deps, hc webhooks.Config) (*app, *httpx.Service) {
	d.DB = db
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RegistryTimeout == 0 {
		cfg.RegistryTimeout = 200 * time.Millisecond
	}
	hd.DB, hd.Log, hd.Secrets, hd.Resources = db, d.Log, d.Secrets, einvoiceapi.EventResources()
	hooks := webhooks.New(hd, hc)
	d.Events = hooks
	lists := codelists.New(codelists.Deps{DB: db, Log: d.Log, Gateways: cfg.Gateways, Operators: cfg.Operators, Events: hooks}, cfg.CodeLists)
	d.CodeLists = lists
	svc := einvoicing.New(d, cfg.Config)
	pipe := pipeline.New(pipeline.Deps{DB: db, Log: d.Log, EInvoicing: svc, Gateways: cfg.Gateways, Sandbox: cfg.Sandbox}, cfg.Pipeline)
	signer := signing.New(signing.Deps{DB: db, Log: d.Log, Core: svc, SandboxSetup: cfg.SandboxSetup}, signing.Config{})
	in := inbox.New(inbox.Deps{Core: svc, Pipeline: pipe, DB: db, Log: d.Log, Sandbox: cfg.Sandbox}, inbox.Config{})
	svc.UseInbox(in)
	if cfg.Reconcile.SignerInterval == 0 {
		cfg.Reconcile.SignerInterval = cfg.Pipeline.SignerInterval
	}
	recon := reconcile.New(reconcile.Deps{DB: db, Log: d.Log, Core: svc, Pipeline: pipe, Inbox: in, Gateways: cfg.Gateways,
		Operators: cfg.Operators, Registry: d.Registry}, cfg.Reconcile)
	if err := svc.CheckLinks(); err != nil {
		panic(err)
	}
	exports := archive.New(archive.Deps{DB: db, Log: d.Log, Events: hooks}, archive.Config{})
	if cfg.Companies.RegistryTimeout == 0 {
		cfg.Companies.RegistryTimeout = cfg.RegistryTimeout
	}
	cos := companies.New(companies.Deps{DB: db, Log: d.Log, Registry: d.Registry, Secrets: d.Secrets}, cfg.Companies)
	use := usage.New(usage.Deps{DB: db})
	api := einvoiceapi.New(einvoiceapi.Deps{Service: svc, Companies: cos, Webhooks: hooks, Archive: exports, Signing: signer, Pipeline: pipe, Inbox: in,
		Reconcile: recon, CodeLists: lists, Usage: use, Auth: &auth.Store{DB: db}, Idempotency: idempotency.New(db, 0), Ready: db.Ping, Log: d.Log,
		PublicURL: cfg.Companies.PublicURL, RateLimit: httpx.RateLimit{}, SigningPoll: cfg.SigningPoll})
	return &app{Service: svc, lists: lists, signing: signer, pipe: pipe, inbox: in, recon: recon, hooks: hooks}, api
}
