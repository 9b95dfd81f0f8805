package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// ujpRegistry adapts the UJP gateways (one per environment) to the company
// pre-flight of the e-invoicing API.
type ujpRegistry struct {
	gateways map[string]ujp.Gateway // by environment; a missing one is unavailable
	caller   string                 // our X-EUJP-ID for registry look-ups
	// sandbox drives the simulator behind the sandbox environment (the
	// simulate endpoint); nil when the sandbox backend is UJP itself.
	sandbox einvoicing.SandboxUJP
	// sim is the embedded simulator (backend "embedded"), whose retention
	// job serve registers; nil for the other backends.
	sim *ujpsim.Sim
	// codebooks are UJP's code lists per environment, refreshed by run.
	codebooks map[string]*ujp.CodebookCache
}

// run keeps the code lists fresh until ctx ends.
func (r ujpRegistry) run(ctx context.Context) {
	for _, c := range r.codebooks {
		go c.Run(ctx)
	}
}

// Codebooks is the current code lists of env (nil: the embedded snapshot).
func (r ujpRegistry) Codebooks(env string) *ujpdoc.Codebooks {
	if c, ok := r.codebooks[env]; ok {
		return c.Get()
	}
	return nil
}

func (r ujpRegistry) LookupCompany(ctx context.Context, env, taxNumber string) (einvoicing.RegistryCompany, error) {
	gw, ok := r.gateways[env]
	if !ok {
		return einvoicing.RegistryCompany{}, fmt.Errorf("no UJP endpoint configured for %s (DENAR_UJP_PRODUCTION_URL)", env)
	}
	c, err := gw.Company(ctx, ujp.Identity{EUJPID: r.caller, EDB: taxNumber}, taxNumber)
	if ujp.IsNotFound(err) {
		return einvoicing.RegistryCompany{}, einvoicing.ErrRegistryNotFound
	}
	if err != nil {
		return einvoicing.RegistryCompany{}, err
	}
	out := einvoicing.RegistryCompany{Name: c.Name, Address: einvoicing.Address{
		Street: c.Address.Street, Number: c.Address.Number, City: c.Address.City, Zip: c.Address.Zip,
	}}
	if c.VatNumber != nil {
		out.VATNumber = *c.VatNumber
	}
	return out, nil
}

// newRegistry builds the gateways. Sandbox talks to what
// DENAR_UJP_SANDBOX_BACKEND names: the simulator embedded in this process,
// with its state in db (the documented default, for the sandbox only), a
// `denar ujp-sim` at DENAR_UJP_SANDBOX_URL, or UJP's test environment there.
// Production talks to DENAR_UJP_PRODUCTION_URL only, never to a simulator,
// and is unavailable when that is unset.
func newRegistry(cfg Config, log *slog.Logger, db *store.DB) (ujpRegistry, error) {
	r := ujpRegistry{gateways: map[string]ujp.Gateway{}, caller: cfg.UJPUser}
	timeout := max(cfg.UJPRegistryTimeout, cfg.UJPCallTimeout)
	switch cfg.UJPSandboxBackend {
	case backendEmbedded:
		// The control API of the embedded simulator is reached in-process
		// only, by our own gateway registering sandbox certificates; its
		// token is made here and never leaves the process. The simulate
		// endpoint calls the simulator's methods directly.
		token := rand.Text()
		sim, err := ujpsim.New(db, ujpsim.Options{Logger: log, ControlToken: token, Now: db.Now})
		if err != nil {
			return r, fmt.Errorf("embedded UJP simulator: %w", err)
		}
		c, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL, Timeout: timeout, SandboxToken: token, Now: db.Now,
			HTTPClient: &http.Client{Transport: sim.Transport(), Timeout: timeout}})
		if err != nil {
			return r, err
		}
		r.gateways[auth.EnvSandbox] = c
		r.sandbox, r.sim = sim, sim
	case backendUJPSim:
		c, err := ujp.NewClient(ujp.Config{BaseURL: cfg.UJPSandboxURL, Timeout: timeout, SandboxToken: cfg.UJPSimToken, Now: db.Now})
		if err != nil {
			return r, fmt.Errorf("DENAR_UJP_SANDBOX_URL: %w", err)
		}
		r.gateways[auth.EnvSandbox] = c
		r.sandbox = ujpsim.Control{BaseURL: cfg.UJPSandboxURL, HTTP: &http.Client{Timeout: timeout}, Token: cfg.UJPSimToken}
	case backendUJP:
		c, err := ujp.NewClient(ujp.Config{BaseURL: cfg.UJPSandboxURL, Timeout: timeout, Now: db.Now})
		if err != nil {
			return r, fmt.Errorf("DENAR_UJP_SANDBOX_URL: %w", err)
		}
		r.gateways[auth.EnvSandbox] = c
	default:
		return r, fmt.Errorf("DENAR_UJP_SANDBOX_BACKEND %q", cfg.UJPSandboxBackend)
	}
	if cfg.UJPProductionURL != "" {
		c, err := ujp.NewClient(ujp.Config{BaseURL: cfg.UJPProductionURL, Timeout: timeout})
		if err != nil {
			return r, fmt.Errorf("DENAR_UJP_PRODUCTION_URL: %w", err)
		}
		r.gateways[auth.EnvProduction] = c
	}
	if len(r.gateways) == 0 {
		return r, errors.New("no UJP gateway")
	}
	r.codebooks = map[string]*ujp.CodebookCache{}
	if cfg.UJPEDB != "" {
		// UJP serves its code lists only to an identified caller; without
		// our own tax number validation uses the embedded snapshot.
		for env, gw := range r.gateways {
			r.codebooks[env] = ujp.NewCodebookCache(gw, ujp.Identity{EUJPID: cfg.UJPUser, EDB: cfg.UJPEDB}, 6*time.Hour, log)
		}
	}
	return r, nil
}
