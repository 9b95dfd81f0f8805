// Package einvoiceapi is the HTTP API of the e-invoicing service: companies
// and their onboarding, e-invoices, the inbox, signing agents and requests,
// events and webhooks. Handlers translate between HTTP and the einvoice
// domain; the guard (credentials, scopes, X-Company-Id, idempotency) is
// declared per operation and applied by package httpx.
package einvoiceapi

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
)

// Deps are what the e-invoicing API needs from the rest of the program.
type Deps struct {
	DB        *store.DB
	Auth      *auth.Store
	Log       *slog.Logger
	RateLimit httpx.RateLimit

	// Registry answers the company pre-flight; nil makes every creation
	// 503 ujp_unavailable. RegistryTimeout bounds it (default 10 s).
	Registry        Registry
	RegistryTimeout time.Duration
	// PublicURL is the base of links in mails (mandate pages).
	PublicURL string
	// MandateTTL is how long a mandate link works (default 14 days).
	MandateTTL time.Duration
	// Codebooks returns UJP's current code lists for an environment
	// (ujp.CodebookCache.Get); nil, or a nil result, means the embedded
	// snapshot.
	Codebooks func(env string) *ujpdoc.Codebooks
	// Sandbox drives the UJP simulator behind the sandbox environment;
	// nil when the sandbox talks to something else (simulate answers 403).
	Sandbox SandboxUJP
}

// New builds the e-invoicing service with all its operations.
func New(d Deps) *httpx.Service {
	s := httpx.NewService(httpx.Options{
		Name:    auth.ServiceEInvoice,
		Title:   "denar e-invoicing API",
		Version: "1.0.0",
		Description: "Onboard client companies, issue e-invoices signed on the customer's own device and submitted " +
			"to the tax authority (UJP), and decide on incoming invoices. Every POST takes an Idempotency-Key.",
		DB: d.DB, Auth: d.Auth, Log: d.Log,
		IdempotencyRequired: true,
		RateLimit:           d.RateLimit,
	})
	h := &handlers{deps: d}
	h.registerCompanies(s)
	h.registerOAuth(s.Mux, s.API)
	h.registerMandates(s.Mux)
	h.registerSigning(s)
	h.registerSigningWS(s)
	h.registerEInvoices(s)
	return s
}

type handlers struct {
	deps   Deps
	buyers buyerCache
}
