package einvoiceapi_test

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// newAPI builds the e-invoicing application layer on db with d and cfg
// (DB and a silent logger filled in) and its HTTP service, as cmd/denar
// wires them.
func newAPI(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config) (*app, *httpx.Service) {
	svc, _, api := newAPIWith(db, d, cfg, webhooks.Deps{}, webhooks.Config{})
	return svc, api
func newAPI(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config) (*einvoicing.Service, *httpx.Service) {
	a := newApp(db, d, cfg, webhooks.Deps{}, webhooks.Config{})
	return a.svc, a.api
}

// newAPIWith is newAPI with the events and webhooks room built from hd
// and hc (DB, Log, Secrets and Resources filled in from d), returned too;
// the archive room has no blob store (its exports fail).
func newAPIWith(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config, hd webhooks.Deps, hc webhooks.Config) (*einvoicing.Service, *webhooks.Service, *httpx.Service) {
	app, api := newApp(db, d, appConfig{Config: cfg}, hd, hc)
	return app.svc, app.hooks, api
}

// appConfig tunes the application layer the tests build: internal/einvoicing
// and its pipeline room.
type appConfig struct {
	einvoicing.Config
	Pipeline pipeline.Config
}

// testApp is the application layer newApp builds, room by room.
type testApp struct {
	svc   *einvoicing.Service
	pipe  *pipeline.Service
	hooks *webhooks.Service
}

// registerJobs registers the jobs of the service and its pipeline on r,
// as denar serve does.
func (a testApp) registerJobs(r *jobs.Runner) {
	a.svc.RegisterJobs(r)
	a.pipe.RegisterJobs(r)
}

// newApp is newAPIWith with the pipeline room tuned too, returning the rooms.
func newApp(db *store.DB, d einvoicing.Deps, cfg appConfig, hd webhooks.Deps, hc webhooks.Config) (testApp, *httpx.Service) {
	a := newApp(db, d, cfg, hd, hc)
	return a.svc, a.hooks, a.api
}

// app is the application layer room by room and its HTTP service.
type app struct {
	svc   *einvoicing.Service
	hooks *webhooks.Service
	inbox *inbox.Service
	api   *httpx.Service
}

// newApp builds what newAPIWith does and returns every room.
func newApp(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config, hd webhooks.Deps, hc webhooks.Config) app {
	d.DB = db
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RegistryTimeout == 0 {
		cfg.RegistryTimeout = 200 * time.Millisecond
	}
	hd.DB, hd.Log, hd.Secrets, hd.Resources = db, d.Log, d.Secrets, archive.EventResources()
	hooks := webhooks.New(hd, hc)
	d.Events = hooks
	svc := einvoicing.New(d, cfg.Config)
	pipe := pipeline.New(pipeline.Deps{DB: db, Log: d.Log, EInvoicing: svc, Gateways: d.Gateways}, cfg.Pipeline)
	svc := einvoicing.New(d, cfg)
	in := inbox.New(inbox.Deps{Core: svc, DB: db, Log: d.Log, Sandbox: d.Sandbox}, inbox.Config{})
	svc.UseInbox(in)
	if err := svc.CheckLinks(); err != nil {
		panic(err)
	}
	exports := archive.New(archive.Deps{DB: db, Log: d.Log, Events: hooks}, archive.Config{})
	api := einvoiceapi.New(einvoiceapi.Deps{Service: svc, Webhooks: hooks, Archive: exports, Pipeline: pipe, Auth: &auth.Store{DB: db}, Idempotency: idempotency.New(db, 0),
		Ready: db.Ping, Log: d.Log, PublicURL: cfg.PublicURL, RateLimit: httpx.RateLimit{}})
	return testApp{svc: svc, pipe: pipe, hooks: hooks}, api
	api := einvoiceapi.New(einvoiceapi.Deps{Service: svc, Webhooks: hooks, Archive: exports, Inbox: in, Auth: &auth.Store{DB: db}, Idempotency: idempotency.New(db, 0),
		Ready: db.Ping, Log: d.Log, PublicURL: cfg.PublicURL, RateLimit: httpx.RateLimit{}})
	return app{svc: svc, hooks: hooks, inbox: in, api: api}
}
