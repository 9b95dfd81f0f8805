package einvoiceapi_test

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store"
)

// newAPI builds the e-invoicing application layer on db with d and cfg
// (DB and a silent logger filled in) and its HTTP service, as cmd/denar
// wires them.
func newAPI(db *store.DB, d einvoicing.Deps, cfg einvoicing.Config) (*einvoicing.Service, *httpx.Service) {
	d.DB = db
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RegistryTimeout == 0 {
		cfg.RegistryTimeout = 200 * time.Millisecond
	}
	svc := einvoicing.New(d, cfg)
	api := einvoiceapi.New(einvoiceapi.Deps{Service: svc, Auth: &auth.Store{DB: db}, Idempotency: idempotency.New(db, 0),
		Ready: db.Ping, Log: d.Log, PublicURL: cfg.PublicURL, RateLimit: httpx.RateLimit{}})
	return svc, api
}
