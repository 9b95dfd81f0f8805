package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/internal/ujpturns"
)

// ujpRegistry adapts the UJP gateways (one per environment) to the company
// pre-flight of the e-invoicing API, and holds the sandbox's set-up.
type ujpRegistry struct {
	gateways map[string]ujp.Gateway // by environment; a missing one is unavailable
	// operators are the operator's own UJP identity per environment, for
	// the calls made as no signer (code lists; registry look-ups, with
	// X-EDB the company the look-up is for).
	operators map[string]ujp.Identity
	// sandbox drives the simulator behind the sandbox environment (the
	// simulate endpoint); nil when the sandbox backend is UJP itself.
	sandbox einvoicing.SandboxUJP
	// setup registers signers (and the operator) at the sandbox's
	// simulator, as UJP's portal does for real ones; nil for UJP itself.
	setup *sandboxSetup
	// sim is the embedded simulator (backend "embedded"), whose retention
	// job serve registers; nil for the other backends.
	sim *ujpsim.Sim
}

func (r ujpRegistry) LookupCompany(ctx context.Context, env, as, taxNumber string) (einvoicing.RegistryCompany, error) {
	gw, ok := r.gateways[env]
	if !ok {
		return einvoicing.RegistryCompany{}, fmt.Errorf("no UJP endpoint configured for %s (DENAR_UJP_PRODUCTION_URL)", env)
	}
	c, err := gw.Company(ctx, ujp.Identity{EUJPID: r.operators[env].EUJPID, EDB: as}, taxNumber)
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

// sandboxOperator is the operator's identity at a sandbox simulator when
// DENAR_UJP_USER is not set: the sandbox's set-up registers it there.
var sandboxOperator = ujp.Identity{EUJPID: "denar-sandbox-operator", EDB: ujpsim.TaxSeller}

// newRegistry builds the gateways. Sandbox talks to what
// DENAR_UJP_SANDBOX_BACKEND names: the simulator embedded in this process,
// with its state in db (the documented default, for the sandbox only), a
// `denar ujp-sim` at DENAR_UJP_SANDBOX_URL, or UJP's test environment there.
// Production talks to DENAR_UJP_PRODUCTION_URL only, never to a simulator,
// and is unavailable when that is unset. Every client takes its turns from
// the store (ujpturns), so the calls of one UJP user, from every process,
// stay within UJP's one request a second.
func newRegistry(cfg Config, log *slog.Logger, db *store.DB) (ujpRegistry, error) {
	r := ujpRegistry{gateways: map[string]ujp.Gateway{}, operators: map[string]ujp.Identity{}}
	timeout := max(cfg.UJPRegistryTimeout, cfg.UJPCallTimeout)
	turns := ujpturns.New(db, ujpturns.Config{Interval: cfg.UJPSignerInterval, Margin: turnMargin(cfg)})
	client := func(env, base string, hc *http.Client) (*ujp.Client, error) {
		return ujp.NewClient(ujp.Config{BaseURL: base, Timeout: timeout, Now: db.Now, HTTPClient: hc,
			SerialFormat: cfg.UJPSerialFormat, Turns: turns, Scope: env})
	}
	operator := ujp.Identity{EUJPID: cfg.UJPUser, EDB: cfg.UJPEDB}
	switch cfg.UJPSandboxBackend {
	case backendEmbedded:
		// The simulate endpoint and the sandbox's set-up call the
		// simulator's methods directly; its control API has a token made
		// here that never leaves the process.
		sim, err := ujpsim.New(db, ujpsim.Options{Logger: log, ControlToken: rand.Text(), Now: db.Now, Window: cfg.UJPSimWindow})
		if err != nil {
			return r, fmt.Errorf("embedded UJP simulator: %w", err)
		}
		c, err := client(auth.EnvSandbox, ujpsim.InProcessBaseURL, &http.Client{Transport: sim.Transport(), Timeout: timeout})
		if err != nil {
			return r, err
		}
		r.gateways[auth.EnvSandbox] = c
		r.sandbox, r.sim = sim, sim
		r.setup = &sandboxSetup{sim: sim}
	case backendUJPSim:
		c, err := client(auth.EnvSandbox, cfg.UJPSandboxURL, nil)
		if err != nil {
			return r, fmt.Errorf("DENAR_UJP_SANDBOX_URL: %w", err)
		}
		r.gateways[auth.EnvSandbox] = c
		ctl := ujpsim.Control{BaseURL: cfg.UJPSandboxURL, HTTP: &http.Client{Timeout: timeout}, Token: cfg.UJPSimToken}
		r.sandbox = ctl
		r.setup = &sandboxSetup{sim: ctl}
	case backendUJP:
		c, err := client(auth.EnvSandbox, cfg.UJPSandboxURL, nil)
		if err != nil {
			return r, fmt.Errorf("DENAR_UJP_SANDBOX_URL: %w", err)
		}
		r.gateways[auth.EnvSandbox] = c
	default:
		return r, fmt.Errorf("DENAR_UJP_SANDBOX_BACKEND %q", cfg.UJPSandboxBackend)
	}
	r.operators[auth.EnvSandbox] = operator
	if r.setup != nil {
		if operator.EUJPID == "" {
			operator.EUJPID = sandboxOperator.EUJPID
		}
		if operator.EDB == "" {
			operator.EDB = sandboxOperator.EDB
		}
		r.operators[auth.EnvSandbox] = operator
		r.setup.operator = operator.EUJPID
	}
	if cfg.UJPProductionURL != "" {
		c, err := client(auth.EnvProduction, cfg.UJPProductionURL, nil)
		if err != nil {
			return r, fmt.Errorf("DENAR_UJP_PRODUCTION_URL: %w", err)
		}
		r.gateways[auth.EnvProduction] = c
		r.operators[auth.EnvProduction] = ujp.Identity{EUJPID: cfg.UJPUser, EDB: cfg.UJPEDB}
	}
	if len(r.gateways) == 0 {
		return r, errors.New("no UJP gateway")
	}
	return r, nil
}

// simulatorSetup is what the sandbox's set-up asks of a simulator: the
// embedded one's Go methods (*ujpsim.Sim) or a denar ujp-sim's control API
// (ujpsim.Control).
type simulatorSetup interface {
	AddUser(ctx context.Context, eujpID string) error
	RegisterCertificate(ctx context.Context, eujpID, edb string, der []byte) (string, error)
	Grant(ctx context.Context, eujpID, edb string, privileges ...string) error
}

// sandboxSetup does at the sandbox's simulator what UJP's portal does for
// a real firm: the operator's user is registered, and every signer's
// certificate, with every portal privilege for its company. It runs in
// jobs (KindSandboxOperator, signing.KindSandboxSigner), never on the
// gateway's path; the ujp backend has none.
type sandboxSetup struct {
	sim      simulatorSetup
	operator string // the operator's EUJP id
}

// RegisterSigner implements signing.SandboxSetup.
func (s *sandboxSetup) RegisterSigner(ctx context.Context, eujpID, edb string, der []byte) error {
	if _, err := s.sim.RegisterCertificate(ctx, eujpID, edb, der); err != nil {
		return fmt.Errorf("sandbox: register certificate of %s for %s: %w", eujpID, edb, err)
	}
	if err := s.sim.Grant(ctx, eujpID, edb, ujp.PrivilegePDF, ujp.PrivilegePayloads, ujp.PrivilegeArchive); err != nil {
		return fmt.Errorf("sandbox: grant %s for %s: %w", eujpID, edb, err)
	}
	return nil
}

// registerOperator registers the operator's user at the sandbox's
// simulator now, before the first code-list fetch or registry look-up goes
// as it (a strict simulator answers an unknown user E1010). A simulator
// that cannot be reached yet is left to the job (KindSandboxOperator).
func (s *sandboxSetup) registerOperator(ctx context.Context, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.sim.AddUser(ctx, s.operator); err != nil {
		log.Warn("sandbox: the operator's user is not registered at the simulator yet; a job retries", "eujpId", s.operator, "err", err)
	}
}

// KindSandboxOperator registers the operator's user at the sandbox's
// simulator; denar serve enqueues it at start, in case the registration
// made at start (registerOperator) did not reach the simulator.
const KindSandboxOperator = "sandbox.register_operator"

// sandboxOperatorArgs are the (empty) arguments of KindSandboxOperator.
type sandboxOperatorArgs struct{}

func (sandboxOperatorArgs) Kind() string { return KindSandboxOperator }

// register registers the set-up's job on r and asks for the operator's
// registration (once, whatever the number of processes starting).
func (s *sandboxSetup) register(ctx context.Context, r *jobs.Runner, db *store.DB) error {
	jobs.Register(r, func(ctx context.Context, _ *jobs.Job, _ sandboxOperatorArgs) error {
		return s.sim.AddUser(ctx, s.operator)
	}, jobs.Options{Backoff: jobs.Schedule(time.Second, 5*time.Second, 30*time.Second, 2*time.Minute)})
	return db.InTx(ctx, func(tx *store.Tx) error {
		_, err := jobs.Insert(ctx, tx, sandboxOperatorArgs{}, jobs.InsertOpts{UniqueKey: KindSandboxOperator, MaxAttempts: 20})
		return err
	})
}

// turnMargin is DENAR_UJP_TURN_MARGIN as ujpturns.Config.Margin takes it
// (negative: none).
func turnMargin(cfg Config) time.Duration {
	if cfg.UJPTurnMargin == 0 {
		return -1
	}
	return cfg.UJPTurnMargin
}
