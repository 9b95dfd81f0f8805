// Package einvoiceapi is the HTTP API of the e-invoicing service: companies
// and their onboarding, e-invoices, signing agents and requests, events.
// Handlers decode, call the application layer (internal/einvoicing) and
// render; they never touch the store. The guard (credentials, scopes,
// X-Company-Id, idempotency) is declared per operation and applied by
// package httpx.
package einvoiceapi

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/auth"
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
)

// Deps are what the e-invoicing API needs from the rest of the program.
type Deps struct {
	// Service is the core of the application layer, which every operation
	// calls but those of its rooms (the fields below).
	Service *einvoicing.Service
	// Companies is the companies room of the application layer: client
	// companies, their onboarding and their mandates.
	Companies *companies.Service
	// Webhooks is the events and webhooks room of the application layer:
	// the event log and feed, webhook endpoints and their deliveries.
	Webhooks *webhooks.Service
	// Archive is the archive exports room of the application layer.
	Archive *archive.Service
	// Signing is the signing room of the application layer: agents and
	// their certificates, signing requests and batches, the agents'
	// WebSocket.
	Signing *signing.Service
	// Pipeline is the submission pipeline room of the application layer
	// (UJP's PDFs, the sandbox's simulated outcomes of an e-invoice).
	Pipeline *pipeline.Service
	// Inbox is the inbox room of the application layer: incoming
	// e-invoices, the company's decision, the sandbox's buyer side.
	Inbox *inbox.Service
	// Reconcile is the reconciliation room of the application layer.
	Reconcile *reconcile.Service
	// CodeLists is the code-list room of the application layer (GET
	// /v1/codebooks).
	CodeLists *codelists.Service
	// Usage is the usage room of the application layer (GET /v1/usage).
	Usage *usage.Service
	// Auth authenticates API keys and issues OAuth tokens.
	Auth *auth.Store
	// Idempotency keeps Idempotency-Key claims.
	Idempotency *idempotency.Keeper
	// Ready reports whether the store answers (/readyz).
	Ready func(context.Context) error
	// DocsURL is the base of problem type URIs.
	DocsURL   string
	Log       *slog.Logger
	RateLimit httpx.RateLimit
	// AddressLimit limits the unauthenticated routes (token, pairing,
	// mandate pages) per client address.
	AddressLimit httpx.RateLimit
	// PublicURL is the public base of the service (mandate pages check a
	// form's Origin against it).
	PublicURL string
	// ServiceURLs are where each service listens (httpx.Options.ServiceURLs).
	ServiceURLs map[string]string
	// SigningPoll is how often an agent's socket looks for new requests
	// when no commit woke it (DefaultSigningPoll when 0).
	SigningPoll time.Duration
}

// MaxStringLength bounds every string of a request body that no schema
// bounds otherwise (httpx.Options.MaxStringLength).
const MaxStringLength = 1000

// New builds the e-invoicing service with all its operations.
func New(d Deps) *httpx.Service {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.SigningPoll <= 0 {
		d.SigningPoll = DefaultSigningPoll
	}
	s := httpx.NewService(httpx.Options{
		Name:    auth.ServiceEInvoice,
		Title:   "denar e-invoicing API",
		Version: "1.0.0",
		Description: "Onboard client companies, issue e-invoices signed on the customer's own device and submitted " +
			"to the tax authority (UJP), and decide on incoming invoices. Every POST takes an Idempotency-Key.",
		Auth: d.Auth, Agents: d.Signing, Companies: d.Service, Idempotency: d.Idempotency, Ready: d.Ready, ServiceURLs: d.ServiceURLs,
		DocsURL: d.DocsURL, Log: d.Log,
		IdempotencyRequired: true,
		EffectsInTx:         true,
		RateLimit:           d.RateLimit,
		AddressLimit:        d.AddressLimit,
		Servers:             []*huma.Server{{URL: "http://127.0.0.1:8081", Description: "A local denar serve (DENAR_EINVOICE_ADDR's default)."}},
		Tags: []*huma.Tag{
			{Name: "Companies", Description: "Client companies: onboarding with the UJP mandate, settings, annual accounts."},
			{Name: "OAuth", Description: "Access tokens for OAuth clients (client credentials grant)."},
			{Name: "Signing", Description: "Signing agents and signing requests: e-invoices are signed on the company's own device (docs/signing.md)."},
			{Name: "E-invoices", Description: "Issue e-invoices, follow them to delivered, correct and storno them."},
			{Name: "Inbox", Description: "Incoming e-invoices and the company's decision on them (accept or reject)."},
			{Name: "Events", Description: "The account's event log, read by cursor or long-poll."},
			{Name: "Webhooks", Description: "Webhook endpoints, their deliveries, and the events POSTed to them (docs/webhooks.md)."},
			{Name: "Usage", Description: "Metered usage of the account."},
			{Name: "Archive exports", Description: "Bulk exports of a company's archived e-invoices."},
			{Name: "Reconciliations", Description: "A company's days compared with UJP's records: repairs, documents issued elsewhere, documents UJP does not know, the inbox's gaps (docs/reconciliation.md)."},
			{Name: "Codebooks", Description: "UJP's code lists: the values of tax indicators, payment types, void, correction and reject reasons and the rest (docs/codebooks.md)."},
			{Name: "Sandbox", Description: "Sandbox-only operations that play UJP's and the representative's part: mandate links, simulated outcomes and incoming invoices."},
		},
		MaxStringLength: MaxStringLength,
		CodebookURL: func(name string) string {
			if slices.Contains(einvoice.CodebookNames(), name) {
				return "GET /v1/codebooks/" + name
			}
			return ""
		},
	})
	h := &handlers{lists: d.CodeLists, svc: d.Service, companies: d.Companies, hooks: d.Webhooks, archive: d.Archive, signing: d.Signing, pipe: d.Pipeline, inbox: d.Inbox,
		recon: d.Reconcile, usage: d.Usage, deps: d}
	h.registerCompanies(s)
	h.registerSandboxMandate(s)
	h.registerOAuth(s.Mux, s.API)
	h.registerMandates(s.Mux)
	s.LimitByAddress("POST /v1/oauth/token", "GET /mandates/{token}", "POST /mandates/{token}")
	h.registerAgents(s)
	h.registerSigningRequests(s)
	h.registerSigningBatches(s)
	h.registerSigningWS(s)
	h.registerEInvoices(s)
	h.registerInbox(s)
	h.registerEvents(s)
	h.registerUsage(s)
	h.registerCodebooks(s)
	h.registerArchive(s)
	h.registerReconciliations(s)
	h.registerWebhooks(s)
	registerExamples(s)
	h.documentWebhooks(s)
	return s
}

// maxDocumentBody is the body limit of the operations that carry a whole
// document: an e-invoice or correction of up to einvoice.MaxLines lines, or
// the JWS of one (at most 1,000,000 characters). Every other operation has
// the service's default (httpx.DefaultMaxBodyBytes).
const maxDocumentBody = 1 << 20

type handlers struct {
	svc       *einvoicing.Service
	companies *companies.Service
	hooks     *webhooks.Service
	archive   *archive.Service
	signing   *signing.Service
	pipe      *pipeline.Service
	inbox     *inbox.Service
	recon     *reconcile.Service
	lists     *codelists.Service
	usage     *usage.Service
	deps      Deps
	// wsMessages counts the signing WebSockets' messages.
	wsMessages *prometheus.CounterVec
}

// caller is the application layer's view of who asks: the principal and
// the request's idempotency claim.
func caller(ctx context.Context) einvoicing.Caller {
	return einvoicing.Caller{Principal: httpx.PrincipalFrom(ctx), Claim: httpx.ClaimFrom(ctx)}
}
