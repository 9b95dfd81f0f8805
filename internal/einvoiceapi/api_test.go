package einvoiceapi_test

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store"
)

// newAPI builds the e-invoicing application layer on db with d and cfg
// (DB and a silent logger filled in) and its HTTP service, as cmd/denar
// wires them.
func newAPI(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config) (*einvoicing.Service, *httpx.Service) {
	svc, _, api := newAPIWith(db, d, cfg, webhooks.Deps{}, webhooks.Config{})
	return svc, api
}

// newAPIWith is newAPI with the events and webhooks room built from hd
// and hc (DB, Log, Secrets and Resources filled in from d), returned too;
// the archive room has no blob store (its exports fail); the
// reconciliation room has no daily job.
func newAPIWith(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config, hd webhooks.Deps, hc webhooks.Config) (*einvoicing.Service, *webhooks.Service, *httpx.Service) {
	svc, _, hooks, api := newRooms(db, d, cfg, reconcile.Config{}, hd, hc)
	return svc, hooks, api
}

// newRooms is newAPIWith with the reconciliation room configured by rc
// (its SignerInterval the pipeline's), returned too: its jobs are
// registered apart (reconcile.Service.RegisterJobs).
func newRooms(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config, rc reconcile.Config, hd webhooks.Deps, hc webhooks.Config) (*einvoicing.Service, *reconcile.Service, *webhooks.Service, *httpx.Service) {
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
	svc := einvoicing.New(d, cfg)
	exports := archive.New(archive.Deps{DB: db, Log: d.Log, Events: hooks}, archive.Config{})
	if rc.SignerInterval == 0 {
		rc.SignerInterval = cfg.Pipeline.SignerInterval
	}
	recon := reconcile.New(reconcile.Deps{DB: db, Log: d.Log, Core: svc, Gateways: d.Gateways, Operators: d.Operators, Registry: d.Registry}, rc)
	api := einvoiceapi.New(einvoiceapi.Deps{Service: svc, Webhooks: hooks, Archive: exports, Reconcile: recon, Auth: &auth.Store{DB: db}, Idempotency: idempotency.New(db, 0),
		Ready: db.Ping, Log: d.Log, PublicURL: cfg.PublicURL, RateLimit: httpx.RateLimit{}})
	return svc, recon, hooks, api
}
