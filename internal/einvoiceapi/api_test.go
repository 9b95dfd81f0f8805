package einvoiceapi_test

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
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
}

// newAPIWith is newAPI with the events and webhooks room built from hd
// and hc (DB, Log, Secrets and Resources filled in from d), returned too;
// the archive room has no blob store (its exports fail).
func newAPIWith(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config, hd webhooks.Deps, hc webhooks.Config) (*app, *webhooks.Service, *httpx.Service) {
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
	svc := einvoicing.New(d, cfg)
	exports := archive.New(archive.Deps{DB: db, Log: d.Log, Events: hooks}, archive.Config{})
	signer := signing.New(signing.Deps{DB: db, Log: d.Log, Core: svc}, signing.Config{})
	api := einvoiceapi.New(einvoiceapi.Deps{Service: svc, Webhooks: hooks, Archive: exports, Signing: signer, Auth: &auth.Store{DB: db},
		Idempotency: idempotency.New(db, 0), Ready: db.Ping, Log: d.Log, PublicURL: cfg.PublicURL, RateLimit: httpx.RateLimit{}})
	return &app{Service: svc, signing: signer}, hooks, api
}

// app is the application layer a test's API was built with: the
// e-invoicing service, whose methods it has, and its signing room, whose
// jobs RegisterJobs registers with the service's.
type app struct {
	*einvoicing.Service
	signing *signing.Service
}

// RegisterJobs registers the jobs of the service and of its signing room
// on r, as cmd/denar does.
func (a *app) RegisterJobs(r *jobs.Runner) {
	a.Service.RegisterJobs(r)
	a.signing.RegisterJobs(r)
}
