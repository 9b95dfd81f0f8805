package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/blob"
	"github.com/denar-mk/denar/internal/cli"
	"github.com/denar-mk/denar/internal/dashboard"
	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	usageroom "github.com/denar-mk/denar/internal/einvoicing/usage"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/payrollapi"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/prometheus/client_golang/prometheus"
)

// application is the e-invoicing application layer, room by room.
type application struct {
	einvoicing *einvoicing.Service
	codelists  *codelists.Service
	webhooks   *webhooks.Service
	archive    *archive.Service
	signing    *signing.Service
	pipeline   *pipeline.Service
	inbox      *inbox.Service
	reconcile  *reconcile.Service
	companies  *companies.Service
	usage      *usageroom.Service
}

// newWebhooks is the events and webhooks room on db: the publisher the
// e-invoicing use cases write their events through, and the service of
// the event log, the endpoints and their deliveries.
func newWebhooks(db *store.DB, cfg Config, log *slog.Logger, secrets *auth.SecretBox) *webhooks.Service {
	return webhooks.New(webhooks.Deps{DB: db, Log: log, Secrets: secrets, Resources: einvoiceapi.EventResources()},
		webhooks.Config{Timeout: cfg.WebhookTimeout, AllowPrivateSandbox: cfg.WebhookAllowPrivateSandbox,
			OperatorEmail: cfg.OperatorEmail, Concurrency: cfg.WebhookWorkers})
}

// services builds the e-invoicing application layer and both HTTP
// services on db (nil for documentation only); reg is the UJP side (nil for
// documentation only).
func services(db *store.DB, cfg Config, log *slog.Logger, reg *ujpRegistry, blobs blob.Store, secrets *auth.SecretBox) (payroll, einvoice *httpx.Service, app application) {
	authStore := &auth.Store{DB: db}
	rl := httpx.RateLimit{Rate: cfg.RateLimitRPS, Burst: cfg.RateLimitBurst, Log: log}
	if db != nil && db.Dialect() == store.Postgres {
		// Several processes may serve this database: the per-credential
		// limit is counted in it, so their combined rate stays within it.
		rl.Shared = auth.RateWindows{DB: db}
	}
	// Unauthenticated routes, per client address, in each process.
	addr := httpx.RateLimit{Rate: cfg.RateLimitAddrRPS, Burst: cfg.RateLimitAddrBurst, Log: log}
	var keeper *idempotency.Keeper
	var ready func(context.Context) error
	if db != nil {
		keeper = idempotency.New(db, cfg.IdempotencyLease)
		ready = db.Ping
	}
	// Where each service listens, for the 401 to a credential of the other.
	urls := map[string]string{auth.ServicePayroll: "http://" + cfg.PayrollAddr, auth.ServiceEInvoice: cfg.PublicEInvoiceURL}
	payroll = payrollapi.New(payrollapi.Deps{Auth: authStore, Companies: auth.Employers{DB: db}, Idempotency: keeper,
		Ready: ready, DocsURL: cfg.DocsURL, Log: log, RateLimit: rl, HeavyConcurrency: cfg.heavyConcurrency(), ServiceURLs: urls})
	hooks := newWebhooks(db, cfg, log, secrets)
	d := einvoicing.Deps{DB: db, Log: log, Secrets: secrets, Events: hooks}
	var side ujpSide
	if reg != nil {
		d.Registry = reg
		side = ujpSide{gateways: reg.gateways, operators: reg.operators, sandbox: reg.sandbox}
		if reg.setup != nil {
			side.sandboxSetup = reg.setup
		}
	}
	app = newApplication(d, side, cfg, hooks, blobs)
	einvoice = einvoiceapi.New(einvoiceapi.Deps{Service: app.einvoicing, Companies: app.companies, Webhooks: hooks, Archive: app.archive, Signing: app.signing,
		Pipeline: app.pipeline, Inbox: app.inbox, Reconcile: app.reconcile, CodeLists: app.codelists, Usage: app.usage, Auth: authStore, Idempotency: keeper, Ready: ready,
		DocsURL: cfg.DocsURL, Log: log, RateLimit: rl, AddressLimit: addr, PublicURL: cfg.PublicEInvoiceURL, ServiceURLs: urls})
	// The web console shares the e-invoicing service's listener and outer
	// middleware (request ids, access log, limits); it has no OpenAPI
	// operations.
	dashboard.New(dashboard.Deps{Service: app.einvoicing, Companies: app.companies, Pipeline: app.pipeline, Webhooks: hooks, Signing: app.signing, Inbox: app.inbox,
		Reconcile: app.reconcile, Usage: app.usage, Users: dashboardUsers(db, cfg, secrets), Log: log,
		SecureCookies: cfg.DashboardSecureCookies}).Register(einvoice.Mux)
	return payroll, einvoice, app
}

// ujpSide is UJP as the rooms that call it see it: the gateway of each
// environment (a missing one makes that environment's documents wait in
// held and its code lists stay as recorded) and the operator's own
// identity in each (DENAR_UJP_USER, DENAR_UJP_EDB), as which the code lists
// are read and the go-live check calls; and, when the sandbox is a
// simulator, what drives it (the simulate endpoints) and what registers
// its signers there.
type ujpSide struct {
	gateways     map[string]ujp.Gateway
	operators    map[string]ujp.Identity
	sandbox      einvoicing.SandboxUJP
	sandboxSetup signing.SandboxSetup
}

// newApplication builds the e-invoicing application layer on d (its
// store, logger, registry, sandbox and publisher filled in) and the UJP
// side, room by room, as denar serve runs it: the code lists the core
// validates with, the core, then the rooms built on it, each registering
// the signing-link types it handles, and the inbox wired as the core's
// port. A link type left without a handler is a wiring mistake, found here
// (it panics) rather than when a signature arrives with nothing to run.
func newApplication(d einvoicing.Deps, side ujpSide, cfg Config, hooks *webhooks.Service, blobs blob.Store) application {
	lists := codelists.New(codelists.Deps{DB: d.DB, Log: d.Log, Gateways: side.gateways, Operators: side.operators, Events: hooks},
		codelists.Config{Every: cfg.UJPCodeListInterval, Reload: cfg.UJPCodeListReload})
	d.CodeLists = lists
	svc := einvoicing.New(d, einvoicing.Config{RegistryTimeout: cfg.UJPRegistryTimeout, RefusalBackoff: cfg.SigningRefusalBackoff,
		ValidationBudget: cfg.EInvoiceValidationBudget})
	pipe := pipeline.New(pipeline.Deps{DB: d.DB, Log: d.Log, EInvoicing: svc, Gateways: side.gateways, Sandbox: side.sandbox},
		pipeline.Config{SignerInterval: cfg.UJPSignerInterval, HoldWindow: cfg.EInvoiceHoldWindow,
			PollEvery: cfg.UJPPollInterval, CallTimeout: cfg.UJPCallTimeout, RetryDelays: cfg.EInvoiceRetryDelays,
			SignAhead: cfg.EInvoiceSignAhead})
	signer := signing.New(signing.Deps{DB: d.DB, Log: d.Log, Core: svc, SandboxSetup: side.sandboxSetup}, signing.Config{})
	in := inbox.New(inbox.Deps{Core: svc, Pipeline: pipe, DB: d.DB, Log: d.Log, Sandbox: side.sandbox},
		inbox.Config{DeadlineEvery: cfg.InboxDeadlineInterval})
	svc.UseInbox(in)
	recon := reconcile.New(reconcile.Deps{DB: d.DB, Log: d.Log, Core: svc, Pipeline: pipe, Inbox: in, Gateways: side.gateways,
		Operators: side.operators, Registry: d.Registry},
		reconcile.Config{Every: cfg.ReconcileInterval, Hour: cfg.ReconcileHour, SignerInterval: cfg.UJPSignerInterval})
	exports := archive.New(archive.Deps{DB: d.DB, Log: d.Log, Blobs: blobs, Events: hooks}, archive.Config{Retention: cfg.ArchiveRetention})
	cos := companies.New(companies.Deps{DB: d.DB, Log: d.Log, Registry: d.Registry, Secrets: d.Secrets},
		companies.Config{PublicURL: cfg.PublicEInvoiceURL, MandateTTL: cfg.MandateTTL, RegistryTimeout: cfg.UJPRegistryTimeout})
	use := usageroom.New(usageroom.Deps{DB: d.DB})
	if err := svc.CheckLinks(); err != nil {
		panic(err)
	}
	return application{einvoicing: svc, codelists: lists, webhooks: hooks, archive: exports, signing: signer, pipeline: pipe, inbox: in,
		reconcile: recon, companies: cos, usage: use}
}

// dashboardUsers are the dashboard's people; secrets seals their TOTP
// seeds (nil where none is enrolled: the housekeeping jobs).
func dashboardUsers(db *store.DB, cfg Config, secrets *auth.SecretBox) *auth.Users {
	return &auth.Users{DB: db, SessionTTL: cfg.DashboardSessionTTL, Secrets: secrets}
}

func openStore(ctx context.Context, cfg Config) (*store.DB, error) {
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if off := cfg.ClockOffset; off != 0 {
		db.Now = func() time.Time { return time.Now().UTC().Add(off) }
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

const migrateUsage = `Usage: denar migrate

Applies the database migrations to DENAR_DATABASE_URL (default: the SQLite
database under DENAR_DATA_DIR) and exits. denar serve does the same at start.
`

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("denar migrate", flag.ContinueOnError)
	if err := cli.Parse(fs, args, 0, 0, migrateUsage, stdout, stderr); err != nil {
		return err
	}
	cfg, err := LoadConfig()
	if err != nil {
		return err
	}
	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintf(stdout, "denar: %s store is up to date\n", db.Dialect())
	return nil
}

const serveUsage = `Usage: denar serve

Starts both services, each on its own listener: payroll on DENAR_PAYROLL_ADDR
(default 127.0.0.1:8080) and e-invoicing on DENAR_EINVOICE_ADDR (default
127.0.0.1:8081), after applying the migrations. The first start on an empty
store prints a sandbox account's two API keys on standard output. Logs go to
standard error. SIGINT or SIGTERM stops it after in-flight requests finish.
Every setting is a DENAR_* environment variable (see the README).
`

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("denar serve", flag.ContinueOnError)
	if err := cli.Parse(fs, args, 0, 0, serveUsage, stdout, stderr); err != nil {
		return err
	}
	cfg, err := LoadConfig()
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	slog.SetDefault(log)
	dialect, _, err := store.ParseURL(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	// Before anything is created: a refused key leaves no trace behind.
	secrets, err := webhookSecrets(cfg, dialect, log)
	if err != nil {
		return err
	}

	// Bind both listeners before anything else, so a busy port fails the
	// start with one clear line.
	pl, err := net.Listen("tcp", cfg.PayrollAddr)
	if err != nil {
		return fmt.Errorf("payroll service: listen on %s: %w", cfg.PayrollAddr, err)
	}
	defer pl.Close()
	el, err := net.Listen("tcp", cfg.EInvoiceAddr)
	if err != nil {
		return fmt.Errorf("e-invoicing service: listen on %s: %w", cfg.EInvoiceAddr, err)
	}
	defer el.Close()

	db, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	warnOpenFiles(log, cfg, dialect)
	// TOTP seeds stored in clear by an earlier version are sealed now;
	// sign-in reads both forms, so nobody is locked out meanwhile.
	if n, err := dashboardUsers(db, cfg, secrets).SealTOTPSeeds(ctx); err != nil {
		return fmt.Errorf("seal TOTP seeds: %w", err)
	} else if n > 0 {
		log.Info("sealed TOTP seeds stored in clear", "users", n)
	}

	if cfg.Bootstrap == "on" {
		b, err := auth.Bootstrap(ctx, db)
		if err != nil {
			return fmt.Errorf("first-run bootstrap: %w", err)
		}
		if b != nil {
			log.Info("first-run bootstrap: created the sandbox account and its API keys", "account", b.Account.ID)
			printBootstrap(stdout, b, pl.Addr().String(), el.Addr().String())
		}
	}

	reg, err := newRegistry(cfg, log, db)
	if err != nil {
		return err
	}
	if reg.setup != nil {
		reg.setup.registerOperator(ctx, log)
	}
	blobs, err := blobStore(ctx, cfg, db)
	if err != nil {
		return fmt.Errorf("archive blob store: %w", err)
	}
	payroll, einvoice, app := services(db, cfg, log, &reg, blobs, secrets)
	// Both runners' outcomes are counted on the e-invoicing listener's
	// /metrics (mail and housekeeping included).
	jobsFinished := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "denar_jobs_finished_total",
		Help: "Job attempts run by this process, by kind and outcome (completed, retryable, snoozed, cancelled, discarded), counted once recorded."},
		[]string{"kind", "outcome"})
	einvoice.Metrics.Registry.MustRegister(jobsFinished)
	observe := func(kind, outcome string) { jobsFinished.WithLabelValues(kind, outcome).Inc() }
	runner := jobs.NewRunner(db, jobs.Config{Logger: log, Workers: cfg.JobWorkers, PollInterval: cfg.JobPollInterval, Lease: cfg.JobLease, Observe: observe})
	// Webhook deliveries wait on other people's servers (up to
	// DENAR_WEBHOOK_TIMEOUT each): they get a runner and workers of their
	// own, so a slow receiver never holds up submissions or mail.
	// Its workers are claimed deliveries: four batches, so that batches
	// are read and recorded while others' requests are in flight; the
	// requests in flight are DENAR_WEBHOOK_WORKERS (webhooks.Config.Concurrency).
	hookRunner := jobs.NewRunner(db, jobs.Config{Logger: log, PollInterval: cfg.JobPollInterval, Lease: cfg.JobLease,
		Workers: 4 * webhooks.WebhookBatch, Observe: observe})
	if err := registerJobs(ctx, runner, hookRunner, db, cfg, log, &reg, app, secrets); err != nil {
		return err
	}
	if err := runner.Start(ctx); err != nil {
		return fmt.Errorf("job runner: %w", err)
	}
	if err := hookRunner.Start(ctx); err != nil {
		return fmt.Errorf("webhook runner: %w", err)
	}

	servers := []*httpx.Server{
		httpx.NewServer(payroll.Handler(), cfg.Timeouts(), log),
		httpx.NewServer(einvoice.Handler(), cfg.Timeouts(), log),
	}
	listeners := []net.Listener{pl, el}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() {
			if err := srv.Serve(listeners[i]); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	log.Info("denar serving", "payroll", "http://"+pl.Addr().String(), "einvoice", "http://"+el.Addr().String(),
		"store", string(db.Dialect()), "sandboxUJP", sandboxDescription(cfg))
	if cfg.ClockOffset != 0 {
		log.Warn("the clock is shifted (DENAR_CLOCK_OFFSET): every time recorded and every deadline counts from it", "offset", cfg.ClockOffset, "now", db.Now())
	}

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down: finishing in-flight requests", "timeout", cfg.ShutdownTimeout)
	case serveErr = <-errc:
		log.Error("server failed; shutting down", "err", serveErr)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			log.Error("shutdown", "err", err)
		}
	}
	if err := runner.Stop(shutdownCtx); err != nil {
		log.Error("job runner shutdown", "err", err)
	}
	if err := hookRunner.Stop(shutdownCtx); err != nil {
		log.Error("webhook runner shutdown", "err", err)
	}
	log.Info("stopped")
	return serveErr
}

// webhookSecrets returns the box that seals webhook endpoint secrets, with
// the key of DENAR_WEBHOOK_SECRET_KEY. Unset, on SQLite (one process, the
// embedded default) a key is generated once and kept in
// $DENAR_DATA_DIR/webhook-secret.key (mode 0600); on PostgreSQL, where
// several processes must all open the same secrets, the start is refused.
func webhookSecrets(cfg Config, dialect store.Dialect, log *slog.Logger) (*auth.SecretBox, error) {
	if cfg.WebhookSecretKey != "" {
		key, err := auth.ParseSecretKey(cfg.WebhookSecretKey)
		if err != nil {
			return nil, fmt.Errorf("configuration: DENAR_WEBHOOK_SECRET_KEY %v", err)
		}
		return auth.NewSecretBox(key)
	}
	if dialect == store.Postgres {
		return nil, errors.New("configuration: DENAR_WEBHOOK_SECRET_KEY is required with PostgreSQL: every process must seal " +
			"and open webhook secrets with the same key (generate one with: openssl rand -base64 32)")
	}
	path := filepath.Join(cfg.DataDir, "webhook-secret.key")
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("webhook secret key: %w", err)
		}
		f, cerr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case cerr == nil:
			_, werr := f.WriteString(auth.NewSecretKey() + "\n")
			if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
				return nil, fmt.Errorf("webhook secret key: write %s: %w", path, err)
			}
			log.Info("generated the webhook secret key; set DENAR_WEBHOOK_SECRET_KEY to manage it yourself", "file", path)
		case !errors.Is(cerr, fs.ErrExist):
			return nil, fmt.Errorf("webhook secret key: create %s: %w", path, cerr)
		}
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("webhook secret key: read %s: %w", path, err)
	}
	key, err := auth.ParseSecretKey(string(raw))
	if err != nil {
		return nil, fmt.Errorf("webhook secret key in %s %v", path, err)
	}
	return auth.NewSecretBox(key)
}

// warnOpenFiles warns, at start, about every directory and file of the
// data directory (and of an SQLite database kept elsewhere) that anyone but
// its owner may read, write or enter: the store holds hashed and sealed
// credentials, the secret key may sit beside it, and the documents are
// the clients'. denar creates them 0700 and 0600; a wider mode was set by
// someone else (or an earlier version) and is left as it is.
func warnOpenFiles(log *slog.Logger, cfg Config, dialect store.Dialect) {
	seen := map[string]bool{}
	check := func(path string, info fs.FileInfo) {
		path = filepath.Clean(path)
		if seen[path] || info.Mode()&fs.ModeSymlink != 0 {
			return
		}
		seen[path] = true
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			want := "0600"
			if info.IsDir() {
				want = "0700"
			}
			log.Warn("a data file is open to other users than its owner; restrict it (chmod "+want+")",
				"path", path, "mode", fmt.Sprintf("%#o", perm))
		}
	}
	_ = filepath.WalkDir(cfg.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // absent (PostgreSQL needs none) or unreadable: nothing to judge
		}
		if info, err := d.Info(); err == nil {
			check(path, info)
		}
		return nil
	})
	if dialect != store.SQLite {
		return
	}
	if _, target, err := store.ParseURL(cfg.DatabaseURL); err == nil {
		for _, p := range []string{filepath.Dir(target), target, target + "-wal", target + "-shm", target + "-access"} {
			if info, err := os.Lstat(p); err == nil {
				check(p, info)
			}
		}
	}
}

// registerJobs is the one place where every kind of job denar serve runs
// is registered: the main runner's (housekeeping, the simulator's
// retention, the sandbox set-up, mail, e-invoicing) and the webhook
// runner's. testdata/job-kinds.txt lists them (TestJobKinds).
func registerJobs(ctx context.Context, runner, hookRunner *jobs.Runner, db *store.DB, cfg Config, log *slog.Logger, reg *ujpRegistry, app application, secrets *auth.SecretBox) error {
	registerHousekeeping(runner, db, cfg)
	if reg.sim != nil {
		reg.sim.RegisterPurge(runner, cfg.UJPSimRetention)
	}
	if reg.setup != nil {
		if err := reg.setup.register(ctx, runner, db); err != nil {
			return fmt.Errorf("sandbox set-up: %w", err)
		}
	}
	mailCfg := mail.WorkerConfig{MaxAttempts: cfg.MailMaxAttempts, RetryDelays: cfg.MailRetryDelays, Log: log, Secrets: secrets}
	if cfg.SMTPURL != "" {
		var err error
		if mailCfg.SMTP, err = mail.ParseSMTPURL(cfg.SMTPURL, cfg.MailFrom); err != nil {
			return fmt.Errorf("configuration: DENAR_SMTP_URL: %w", err)
		}
	}
	mail.Register(runner, db, mailCfg)
	app.codelists.RegisterJobs(runner)
	app.einvoicing.RegisterJobs(runner)
	app.pipeline.RegisterJobs(runner)
	app.archive.RegisterJobs(runner)
	app.signing.RegisterJobs(runner)
	app.inbox.RegisterJobs(runner)
	app.reconcile.RegisterJobs(runner)
	app.webhooks.RegisterJobs(hookRunner)
	return nil
}

// registerHousekeeping schedules the periodic clean-ups every process
// offers to run; the jobs table makes sure one instance runs at a time.
func registerHousekeeping(r *jobs.Runner, db *store.DB, cfg Config) {
	keeper := idempotency.New(db, cfg.IdempotencyLease)
	jobs.Register(r, func(ctx context.Context, _ *jobs.Job, _ idempotencyPurge) error {
		_, err := keeper.Purge(ctx, db.Now().Add(-cfg.IdempotencyRetention))
		return err
	}, jobs.Options{Every: time.Hour})
	jobs.Register(r, func(ctx context.Context, _ *jobs.Job, _ rateLimitPurge) error {
		_, err := auth.RateWindows{DB: db}.Purge(ctx, db.Now().Add(-time.Minute).Unix())
		return err
	}, jobs.Options{Every: time.Minute})
	users := dashboardUsers(db, cfg, nil)
	jobs.Register(r, func(ctx context.Context, _ *jobs.Job, _ dashboardPurge) error {
		return users.PurgeSessions(ctx)
	}, jobs.Options{Every: time.Hour})
	jobs.Register(r, func(ctx context.Context, _ *jobs.Job, _ jobsPurge) error {
		_, err := jobs.PurgeFinished(ctx, db, db.Now().Add(-7*24*time.Hour))
		return err
	}, jobs.Options{Every: 6 * time.Hour})
}

// The housekeeping jobs: periodic, without arguments.
type (
	idempotencyPurge struct{}
	rateLimitPurge   struct{}
	dashboardPurge   struct{}
	jobsPurge        struct{}
)

func (idempotencyPurge) Kind() string { return "idempotency.purge" }
func (rateLimitPurge) Kind() string   { return "ratelimit.purge" }
func (dashboardPurge) Kind() string   { return "dashboard.purge" }
func (jobsPurge) Kind() string        { return "jobs.purge" }

func printBootstrap(w io.Writer, b *auth.Bootstrapped, payrollAddr, einvoiceAddr string) {
	fmt.Fprintf(w, `
denar: first run. Created the local sandbox account %s with two API keys.
They are shown only now; store them somewhere safe.

  payroll API key (sandbox):       %s
  e-invoicing API key (sandbox):   %s

Try it:
  curl -s http://%s/v1/calculations -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{"grossSalary":"30000"}'
  curl -s http://%s/v1/companies -H 'Authorization: Bearer %s'

`, b.Account.ID, b.PayrollKey, b.EInvoiceKey, payrollAddr, b.PayrollKey, einvoiceAddr, b.EInvoiceKey)
}

// sandboxDescription says in the start-up log what sandbox companies talk
// to, so that an embedded simulator is never a surprise.
func sandboxDescription(cfg Config) string {
	switch cfg.UJPSandboxBackend {
	case backendEmbedded:
		return "embedded simulator (DENAR_UJP_SANDBOX_BACKEND=embedded), state in this store"
	case backendUJPSim:
		return "denar ujp-sim at " + cfg.UJPSandboxURL
	}
	return "UJP at " + cfg.UJPSandboxURL
}
