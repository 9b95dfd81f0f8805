// Package companies is the companies room of the e-invoicing application:
// the client companies' own use cases. A company is onboarded (UJP's
// registry asked first, in a pre-flight bounded by Config.RegistryTimeout),
// listed, read and patched, its annual account recorded; its
// representative's mandate is mailed, shown and accepted on the mandate
// page, and in the sandbox handed to the program as a link. Who may act for
// a company (CompanyRow, ActingCompany, Mandated, CompanyRef), its
// problems with UJP and the registry port stay in internal/einvoicing,
// which every room reads companies through. It imports internal/einvoicing,
// never the reverse, and knows no HTTP server: the API and the dashboard
// call it, and cmd/denar wires it.
package companies

import (
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
)

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// Registry answers the company pre-flight; nil makes every onboarding
	// 503 ujp_unavailable.
	Registry einvoicing.Registry
	// Secrets seals the mandate link a queued mail carries; cmd/denar
	// always provides one.
	Secrets *auth.SecretBox
}

// Config tunes the room; zero values take the defaults.
type Config struct {
	// PublicURL is the base of the mandate pages' links.
	PublicURL string
	// MandateTTL is how long a mandate link works; default
	// DefaultMandateTTL.
	MandateTTL time.Duration
	// RegistryTimeout bounds the company pre-flight; default
	// einvoicing.DefaultRegistryTimeout (the core's wait for the registry).
	RegistryTimeout time.Duration
}

// DefaultMandateTTL is how long a mandate link works, also the default of
// the setting that sets it (cmd/denar reads it from here).
const DefaultMandateTTL = 14 * 24 * time.Hour

func (c Config) withDefaults() Config {
	if c.MandateTTL <= 0 {
		c.MandateTTL = DefaultMandateTTL
	}
	if c.RegistryTimeout <= 0 {
		c.RegistryTimeout = einvoicing.DefaultRegistryTimeout
	}
	return c
}

// Service is the companies room: one method per use case of a company or
// of its mandate.
type Service struct {
	db       *store.DB
	log      *slog.Logger
	cfg      Config
	registry einvoicing.Registry
	secrets  *auth.SecretBox
}

// New builds the room.
func New(d Deps, cfg Config) *Service {
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), registry: d.Registry, secrets: d.Secrets}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}
