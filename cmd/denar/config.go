package main

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/blob"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/internal/ujpturns"
)

// Config is every setting denar reads from the environment. The README
// lists them with their defaults; keep the two in step.
type Config struct {
	PayrollAddr  string `env:"DENAR_PAYROLL_ADDR" envDefault:"127.0.0.1:8080"`
	EInvoiceAddr string `env:"DENAR_EINVOICE_ADDR" envDefault:"127.0.0.1:8081"`
	DataDir      string `env:"DENAR_DATA_DIR" envDefault:"./denar-data"`
	DatabaseURL  string `env:"DENAR_DATABASE_URL"`
	LogFormat    string `env:"DENAR_LOG_FORMAT" envDefault:"text"`
	LogLevel     string `env:"DENAR_LOG_LEVEL" envDefault:"info"`
	Bootstrap    string `env:"DENAR_BOOTSTRAP" envDefault:"on"`
	DocsURL      string `env:"DENAR_DOCS_URL" envDefault:"https://docs.denar.mk/errors"`

	IdempotencyRetention time.Duration `env:"DENAR_IDEMPOTENCY_RETENTION"`
	IdempotencyLease     time.Duration `env:"DENAR_IDEMPOTENCY_LEASE"`
	RateLimitRPS         float64       `env:"DENAR_RATE_LIMIT_RPS" envDefault:"50"`
	RateLimitBurst       int           `env:"DENAR_RATE_LIMIT_BURST" envDefault:"100"`
	RateLimitAddrRPS     float64       `env:"DENAR_RATE_LIMIT_ADDR_RPS" envDefault:"5"`
	RateLimitAddrBurst   int           `env:"DENAR_RATE_LIMIT_ADDR_BURST" envDefault:"20"`
	ShutdownTimeout      time.Duration `env:"DENAR_SHUTDOWN_TIMEOUT" envDefault:"30s"`

	// Slow and hostile clients (issue 12); httpx.Timeouts says what each
	// bounds.
	HTTPReadHeaderTimeout time.Duration `env:"DENAR_HTTP_READ_HEADER_TIMEOUT"`
	HTTPReadTimeout       time.Duration `env:"DENAR_HTTP_READ_TIMEOUT"`
	HTTPWriteTimeout      time.Duration `env:"DENAR_HTTP_WRITE_TIMEOUT"`
	HTTPIdleTimeout       time.Duration `env:"DENAR_HTTP_IDLE_TIMEOUT"`
	// HeavyConcurrency is how many file and batch requests the payroll
	// service runs at once; 0 removes the limit.
	HeavyConcurrency int `env:"DENAR_HEAVY_CONCURRENCY" envDefault:"2"`

	// E-invoicing onboarding (issue 5).
	PublicEInvoiceURL     string        `env:"DENAR_PUBLIC_EINVOICE_URL"` // default http://DENAR_EINVOICE_ADDR
	MandateTTL            time.Duration `env:"DENAR_MANDATE_TTL"`
	SigningRefusalBackoff time.Duration `env:"DENAR_SIGNING_REFUSAL_BACKOFF"`
	SMTPURL               string        `env:"DENAR_SMTP_URL"`
	MailFrom              string        `env:"DENAR_MAIL_FROM" envDefault:"denar <no-reply@denar.mk>"`
	UJPSandboxURL         string        `env:"DENAR_UJP_SANDBOX_URL"`
	UJPProductionURL      string        `env:"DENAR_UJP_PRODUCTION_URL"`
	// The operator's own UJP identity (X-EUJP-ID, X-EDB) for the calls
	// made as no signer: UJP's code lists and, with X-EDB the company the
	// look-up is for, registry look-ups. Required whenever a real UJP is
	// configured (checkUJPIdentity).
	UJPUser string `env:"DENAR_UJP_USER"`
	UJPEDB  string `env:"DENAR_UJP_EDB"`
	// UJPSerialFormat is how X-SERIAL-NUMBER is written: decimal or hex.
	UJPSerialFormat    string        `env:"DENAR_UJP_SERIAL_FORMAT" envDefault:"decimal"`
	UJPRegistryTimeout time.Duration `env:"DENAR_UJP_REGISTRY_TIMEOUT"`
	// How long POST /v1/einvoices waits for the buyer's registry check
	// before it answers 202 validating.
	EInvoiceValidationBudget time.Duration `env:"DENAR_EINVOICE_VALIDATION_BUDGET"`

	// UJPSandboxBackend is what sandbox companies talk to (docs/sandbox.md):
	// "embedded", the simulator inside denar serve with its state in this
	// database (every process on it shares one simulated UJP); "ujp-sim", a
	// `denar ujp-sim` at DENAR_UJP_SANDBOX_URL driven with UJPSimToken; or
	// "ujp", UJP's own test environment at DENAR_UJP_SANDBOX_URL. Production
	// never gets a simulator.
	UJPSandboxBackend string        `env:"DENAR_UJP_SANDBOX_BACKEND" envDefault:"embedded"`
	UJPSimToken       string        `env:"DENAR_UJP_SIM_TOKEN"`
	UJPSimRetention   time.Duration `env:"DENAR_UJP_SIM_RETENTION"`
	// UJPSimWindow is the embedded simulator's per-user rate window: one
	// call per window per X-EUJP-ID, as UJP's one a second (tests shorten
	// it together with DENAR_UJP_SIGNER_INTERVAL).
	UJPSimWindow time.Duration `env:"DENAR_UJP_SIM_WINDOW"`

	// The submission pipeline (docs/einvoices.md, "Pipeline").
	UJPSignerInterval time.Duration `env:"DENAR_UJP_SIGNER_INTERVAL"`
	// UJPTurnMargin is added to DENAR_UJP_SIGNER_INTERVAL between the
	// starts of two calls of one UJP user (0: none): what separates the
	// start this service records from UJP's stamp of the call's arrival.
	UJPTurnMargin time.Duration `env:"DENAR_UJP_TURN_MARGIN"`
	// EInvoiceSignAhead is how many documents of one UJP user may have
	// their signing request out, or be signed and not yet sent (0: what
	// the user's budget sends in 10 s, between 2 and 256; docs/signing.md,
	// "Pacing").
	EInvoiceSignAhead  int           `env:"DENAR_EINVOICE_SIGN_AHEAD"`
	UJPCallTimeout     time.Duration `env:"DENAR_UJP_CALL_TIMEOUT"`
	UJPPollInterval    time.Duration `env:"DENAR_UJP_POLL_INTERVAL"`
	EInvoiceHoldWindow time.Duration `env:"DENAR_EINVOICE_HOLD_WINDOW"`
	// EInvoiceRetryDelays is the ladder of waits between resubmissions of
	// a held document, the last one repeating.
	EInvoiceRetryDelays []time.Duration `env:"DENAR_EINVOICE_RETRY_DELAYS" envSeparator:","`
	JobPollInterval     time.Duration   `env:"DENAR_JOB_POLL_INTERVAL"`
	// InboxDeadlineInterval is how often the inbox's deadline job looks for
	// reminders and auto-acceptances due.
	InboxDeadlineInterval time.Duration `env:"DENAR_INBOX_DEADLINE_INTERVAL"`
	// UJPCodeListInterval is how often UJP's code lists are read (by one
	// process) and compared with the recorded ones; UJPCodeListReload how
	// long a process validates with its copy of the recorded lists before
	// it looks at the store again.
	UJPCodeListInterval time.Duration `env:"DENAR_UJP_CODELIST_INTERVAL"`
	UJPCodeListReload   time.Duration `env:"DENAR_UJP_CODELIST_RELOAD"`
	// ReconcileInterval is how often the reconciliation job looks for days
	// due and runs that stopped (docs/reconciliation.md); 0 turns the daily
	// reconciliation off (POST /v1/reconciliations still runs a day).
	ReconcileInterval time.Duration `env:"DENAR_RECONCILE_INTERVAL" envDefault:"10m"`
	// ReconcileHour is the hour (Europe/Skopje, 0-23) from which the
	// previous day is reconciled.
	ReconcileHour int `env:"DENAR_RECONCILE_HOUR" envDefault:"2"`
	// ClockOffset shifts the service's clock (every recorded time, every
	// deadline, every requestTimestamp) for rehearsals and tests of
	// date-dependent behaviour in the sandbox; refused with
	// DENAR_UJP_PRODUCTION_URL.
	ClockOffset time.Duration `env:"DENAR_CLOCK_OFFSET" envDefault:"0s"`
	JobLease    time.Duration `env:"DENAR_JOB_LEASE"`
	// JobWorkers is how many jobs the main runner of a process runs at
	// once (webhook deliveries have their own runner).
	JobWorkers int `env:"DENAR_JOB_WORKERS"`

	// Mail delivery (a job per message): attempts before a message is
	// dead, and the waits between them, the last one repeating.
	MailMaxAttempts int             `env:"DENAR_MAIL_MAX_ATTEMPTS"`
	MailRetryDelays []time.Duration `env:"DENAR_MAIL_RETRY_DELAYS" envSeparator:","`

	// Archive exports (issue 15): where their zips live, and how long.
	// BlobStore "db" keeps them in chunked rows of this database; "s3" in
	// an S3-compatible bucket.
	ArchiveRetention time.Duration `env:"DENAR_ARCHIVE_RETENTION"`
	BlobStore        string        `env:"DENAR_BLOB_STORE" envDefault:"db"`
	S3Endpoint       string        `env:"DENAR_S3_ENDPOINT"`
	S3Region         string        `env:"DENAR_S3_REGION" envDefault:"us-east-1"`
	S3Bucket         string        `env:"DENAR_S3_BUCKET"`
	S3AccessKey      string        `env:"DENAR_S3_ACCESS_KEY_ID"`
	S3SecretKey      string        `env:"DENAR_S3_SECRET_ACCESS_KEY"`
	S3Prefix         string        `env:"DENAR_S3_PREFIX" envDefault:"denar/"`
	S3PathStyle      bool          `env:"DENAR_S3_PATH_STYLE" envDefault:"true"`
	// Webhooks (docs/webhooks.md). WebhookSecretKey seals endpoint secrets
	// at rest; see webhookSecrets for what happens when it is unset.
	WebhookSecretKey           string        `env:"DENAR_WEBHOOK_SECRET_KEY"`
	WebhookTimeout             time.Duration `env:"DENAR_WEBHOOK_TIMEOUT"`
	WebhookAllowPrivateSandbox bool          `env:"DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX" envDefault:"false"`
	WebhookWorkers             int           `env:"DENAR_WEBHOOK_WORKERS"`
	OperatorEmail              string        `env:"DENAR_OPERATOR_EMAIL"`
	// The dashboard (/dashboard on the e-invoicing service).
	DashboardSecureCookies bool          `env:"DENAR_DASHBOARD_SECURE_COOKIES" envDefault:"false"`
	DashboardSessionTTL    time.Duration `env:"DENAR_DASHBOARD_SESSION_TTL"`
}

// packageDefaults are the defaults of the settings that configure a
// package: each is written once, in its package, and read here (an
// envDefault tag holds the defaults that belong to no package). The README
// lists them all; TestConfigDefaults keeps the three in step.
func packageDefaults() Config {
	return Config{
		IdempotencyRetention:     idempotency.DefaultRetention,
		IdempotencyLease:         idempotency.DefaultLease,
		HTTPReadHeaderTimeout:    httpx.DefaultReadHeaderTimeout,
		HTTPReadTimeout:          httpx.DefaultReadTimeout,
		HTTPWriteTimeout:         httpx.DefaultWriteTimeout,
		HTTPIdleTimeout:          httpx.DefaultIdleTimeout,
		MandateTTL:               companies.DefaultMandateTTL,
		SigningRefusalBackoff:    einvoicing.DefaultRefusalBackoff,
		UJPRegistryTimeout:       einvoicing.DefaultRegistryTimeout,
		EInvoiceValidationBudget: einvoicing.DefaultValidationBudget,
		UJPSimRetention:          ujpsim.DefaultRetention,
		UJPSimWindow:             ujpsim.DefaultWindow,
		UJPSignerInterval:        ujpturns.DefaultInterval,
		UJPTurnMargin:            ujpturns.DefaultMargin,
		UJPCallTimeout:           pipeline.DefaultCallTimeout,
		UJPPollInterval:          pipeline.DefaultPollEvery,
		EInvoiceHoldWindow:       pipeline.DefaultHoldWindow,
		EInvoiceRetryDelays:      pipeline.DefaultRetryDelays(),
		JobPollInterval:          jobs.DefaultPollInterval,
		InboxDeadlineInterval:    inbox.DefaultDeadlineEvery,
		UJPCodeListInterval:      codelists.DefaultEvery,
		UJPCodeListReload:        codelists.DefaultReload,
		JobLease:                 jobs.DefaultLease,
		JobWorkers:               jobs.DefaultWorkers,
		MailMaxAttempts:          mail.DefaultMaxAttempts,
		MailRetryDelays:          mail.DefaultRetryDelays(),
		ArchiveRetention:         archive.DefaultRetention,
		WebhookTimeout:           webhooks.DefaultTimeout,
		WebhookWorkers:           webhooks.DefaultConcurrency,
		DashboardSessionTTL:      auth.DefaultSessionTTL,
	}
}

// LoadConfig reads and checks the configuration. Its errors are one line
// each, meant to be printed as they are.
func LoadConfig() (Config, error) {
	c := packageDefaults()
	if err := env.Parse(&c); err != nil {
		var agg env.AggregateError
		if errors.As(err, &agg) && len(agg.Errors) > 0 {
			err = agg.Errors[0]
		}
		var pe env.ParseError
		if errors.As(err, &pe) {
			if f, ok := reflect.TypeFor[Config]().FieldByName(pe.Name); ok {
				return c, fmt.Errorf("configuration: %s: %v", f.Tag.Get("env"), pe.Err)
			}
		}
		return c, fmt.Errorf("configuration: %v", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = "sqlite://" + filepath.Join(c.DataDir, "denar.db")
	}
	if _, _, err := store.ParseURL(c.DatabaseURL); err != nil {
		return c, fmt.Errorf("configuration: DENAR_DATABASE_URL: %v", err)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return c, fmt.Errorf("configuration: DENAR_LOG_FORMAT must be text or json, not %q", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return c, fmt.Errorf("configuration: DENAR_LOG_LEVEL must be debug, info, warn or error, not %q", c.LogLevel)
	}
	switch c.Bootstrap {
	case "on", "off":
	default:
		return c, fmt.Errorf("configuration: DENAR_BOOTSTRAP must be on or off, not %q", c.Bootstrap)
	}
	for name, addr := range map[string]string{"DENAR_PAYROLL_ADDR": c.PayrollAddr, "DENAR_EINVOICE_ADDR": c.EInvoiceAddr} {
		if !strings.Contains(addr, ":") {
			return c, fmt.Errorf("configuration: %s must be host:port, not %q", name, addr)
		}
	}
	if c.IdempotencyRetention < time.Hour {
		return c, fmt.Errorf("configuration: DENAR_IDEMPOTENCY_RETENTION must be at least 1h, not %s", c.IdempotencyRetention)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"DENAR_HTTP_READ_HEADER_TIMEOUT", c.HTTPReadHeaderTimeout}, {"DENAR_HTTP_READ_TIMEOUT", c.HTTPReadTimeout},
		{"DENAR_HTTP_WRITE_TIMEOUT", c.HTTPWriteTimeout}, {"DENAR_HTTP_IDLE_TIMEOUT", c.HTTPIdleTimeout}} {
		if d.v <= 0 {
			return c, fmt.Errorf("configuration: %s must be positive, not %s", d.name, d.v)
		}
	}
	if c.HTTPReadHeaderTimeout > c.HTTPReadTimeout {
		return c, fmt.Errorf("configuration: DENAR_HTTP_READ_HEADER_TIMEOUT (%s) must not exceed DENAR_HTTP_READ_TIMEOUT (%s)", c.HTTPReadHeaderTimeout, c.HTTPReadTimeout)
	}
	if c.HTTPWriteTimeout < c.HTTPReadTimeout {
		// The write deadline runs from the end of the headers, so it also
		// covers reading the body.
		return c, fmt.Errorf("configuration: DENAR_HTTP_WRITE_TIMEOUT (%s) must be at least DENAR_HTTP_READ_TIMEOUT (%s)", c.HTTPWriteTimeout, c.HTTPReadTimeout)
	}
	if c.HeavyConcurrency < 0 {
		return c, fmt.Errorf("configuration: DENAR_HEAVY_CONCURRENCY must not be negative")
	}
	if c.RateLimitRPS < 0 {
		return c, fmt.Errorf("configuration: DENAR_RATE_LIMIT_RPS must not be negative")
	}
	if c.RateLimitAddrRPS < 0 {
		return c, fmt.Errorf("configuration: DENAR_RATE_LIMIT_ADDR_RPS must not be negative")
	}
	if c.PublicEInvoiceURL == "" {
		c.PublicEInvoiceURL = "http://" + c.EInvoiceAddr
	}
	if c.IdempotencyLease < time.Second {
		return c, fmt.Errorf("configuration: DENAR_IDEMPOTENCY_LEASE must be at least 1s, not %s", c.IdempotencyLease)
	}
	if c.SigningRefusalBackoff < 0 {
		return c, fmt.Errorf("configuration: DENAR_SIGNING_REFUSAL_BACKOFF must not be negative, not %s", c.SigningRefusalBackoff)
	}
	if c.MandateTTL < time.Hour {
		return c, fmt.Errorf("configuration: DENAR_MANDATE_TTL must be at least 1h, not %s", c.MandateTTL)
	}
	if c.SMTPURL != "" {
		if _, err := mail.ParseSMTPURL(c.SMTPURL, c.MailFrom); err != nil {
			return c, fmt.Errorf("configuration: DENAR_SMTP_URL: %v", err)
		}
	}
	if c.MailMaxAttempts < 1 || c.MailMaxAttempts > mail.MaxAttemptsLimit {
		return c, fmt.Errorf("configuration: DENAR_MAIL_MAX_ATTEMPTS must be between 1 and %d, not %d", mail.MaxAttemptsLimit, c.MailMaxAttempts)
	}
	for _, d := range c.MailRetryDelays {
		if d <= 0 {
			return c, fmt.Errorf("configuration: DENAR_MAIL_RETRY_DELAYS must list positive durations")
		}
	}
	if c.ArchiveRetention < time.Minute {
		return c, fmt.Errorf("configuration: DENAR_ARCHIVE_RETENTION must be at least 1m, not %s", c.ArchiveRetention)
	}
	switch c.BlobStore {
	case "db":
	case "s3":
		if c.S3Endpoint == "" || c.S3Bucket == "" || c.S3AccessKey == "" || c.S3SecretKey == "" {
			return c, errors.New("configuration: DENAR_BLOB_STORE=s3 needs DENAR_S3_ENDPOINT, DENAR_S3_BUCKET, DENAR_S3_ACCESS_KEY_ID and DENAR_S3_SECRET_ACCESS_KEY")
		}
		if _, err := blob.NewS3(c.s3Config()); err != nil {
			return c, fmt.Errorf("configuration: %v", err)
		}
	default:
		return c, fmt.Errorf("configuration: DENAR_BLOB_STORE must be db or s3, not %q", c.BlobStore)
	}
	if err := checkSandboxBackend(c); err != nil {
		return c, err
	}
	if c.UJPRegistryTimeout <= 0 {
		return c, fmt.Errorf("configuration: DENAR_UJP_REGISTRY_TIMEOUT must be positive")
	}
	if c.UJPEDB != "" {
		if err := ident.EDB(c.UJPEDB); err != nil {
			return c, fmt.Errorf("configuration: DENAR_UJP_EDB must be an ЕДБ, 13 digits with a valid check digit, not %q (%v)", c.UJPEDB, err)
		}
	}
	if c.EInvoiceValidationBudget <= 0 || c.EInvoiceValidationBudget > c.UJPRegistryTimeout {
		return c, fmt.Errorf("configuration: DENAR_EINVOICE_VALIDATION_BUDGET must be positive and at most DENAR_UJP_REGISTRY_TIMEOUT (%s), not %s", c.UJPRegistryTimeout, c.EInvoiceValidationBudget)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"DENAR_UJP_CALL_TIMEOUT", c.UJPCallTimeout}, {"DENAR_UJP_POLL_INTERVAL", c.UJPPollInterval}, {"DENAR_INBOX_DEADLINE_INTERVAL", c.InboxDeadlineInterval},
		{"DENAR_EINVOICE_HOLD_WINDOW", c.EInvoiceHoldWindow}, {"DENAR_JOB_POLL_INTERVAL", c.JobPollInterval}, {"DENAR_JOB_LEASE", c.JobLease}} {
		if d.v <= 0 {
			return c, fmt.Errorf("configuration: %s must be positive, not %s", d.name, d.v)
		}
	}
	for _, d := range c.EInvoiceRetryDelays {
		if d <= 0 {
			return c, fmt.Errorf("configuration: DENAR_EINVOICE_RETRY_DELAYS must list positive durations")
		}
	}
	if c.WebhookSecretKey != "" {
		if _, err := auth.ParseSecretKey(c.WebhookSecretKey); err != nil {
			return c, fmt.Errorf("configuration: DENAR_WEBHOOK_SECRET_KEY %v", err)
		}
	}
	if c.WebhookTimeout < time.Second || c.WebhookTimeout > 5*time.Minute {
		return c, fmt.Errorf("configuration: DENAR_WEBHOOK_TIMEOUT must be between 1s and 5m, not %s", c.WebhookTimeout)
	}
	if c.WebhookWorkers < 1 || c.WebhookWorkers > 256 {
		return c, fmt.Errorf("configuration: DENAR_WEBHOOK_WORKERS must be between 1 and 256, not %d", c.WebhookWorkers)
	}
	if c.OperatorEmail != "" {
		if a, err := netmail.ParseAddress(c.OperatorEmail); err != nil || a.Address != c.OperatorEmail {
			return c, fmt.Errorf("configuration: DENAR_OPERATOR_EMAIL must be a bare e-mail address, not %q", c.OperatorEmail)
		}
	}
	if c.ReconcileInterval < 0 {
		return c, fmt.Errorf("configuration: DENAR_RECONCILE_INTERVAL must not be negative (0 turns the daily reconciliation off), not %s", c.ReconcileInterval)
	}
	if c.ReconcileHour < 0 || c.ReconcileHour > 23 {
		return c, fmt.Errorf("configuration: DENAR_RECONCILE_HOUR must be an hour 0-23, not %d", c.ReconcileHour)
	}
	if c.UJPSignerInterval < 0 {
		return c, fmt.Errorf("configuration: DENAR_UJP_SIGNER_INTERVAL must not be negative")
	}
	if c.UJPTurnMargin < 0 || (c.UJPSignerInterval > 0 && c.UJPTurnMargin > c.UJPSignerInterval) {
		return c, fmt.Errorf("configuration: DENAR_UJP_TURN_MARGIN must be between 0 and DENAR_UJP_SIGNER_INTERVAL (%s), not %s", c.UJPSignerInterval, c.UJPTurnMargin)
	}
	if c.EInvoiceSignAhead < 0 {
		return c, fmt.Errorf("configuration: DENAR_EINVOICE_SIGN_AHEAD must not be negative (0: the default)")
	}
	if err := checkUJPIdentity(c); err != nil {
		return c, err
	}
	if c.ClockOffset != 0 && c.UJPProductionURL != "" {
		return c, errors.New("configuration: DENAR_CLOCK_OFFSET shifts the clock for sandbox rehearsals; it is refused together with DENAR_UJP_PRODUCTION_URL")
	}
	return c, nil
}

// Timeouts are the HTTP servers' timeouts.
func (c Config) Timeouts() httpx.Timeouts {
	return httpx.Timeouts{ReadHeader: c.HTTPReadHeaderTimeout, Read: c.HTTPReadTimeout, Write: c.HTTPWriteTimeout, Idle: c.HTTPIdleTimeout}
}

// heavyConcurrency is DENAR_HEAVY_CONCURRENCY for httpx.Options: 0 (no
// limit) becomes negative, as zero there means the default.
func (c Config) heavyConcurrency() int {
	if c.HeavyConcurrency == 0 {
		return -1
	}
	return c.HeavyConcurrency
}

func (c Config) s3Config() blob.S3Config {
	return blob.S3Config{Endpoint: c.S3Endpoint, Region: c.S3Region, Bucket: c.S3Bucket, AccessKey: c.S3AccessKey,
		SecretKey: c.S3SecretKey, Prefix: c.S3Prefix, PathStyle: c.S3PathStyle}
}

// blobStore builds the store of archive zips.
func blobStore(ctx context.Context, cfg Config, db *store.DB) (blob.Store, error) {
	if cfg.BlobStore != "s3" {
		return blob.NewDB(db, 0), nil
	}
	s, err := blob.NewS3(cfg.s3Config())
	if err != nil {
		return nil, err
	}
	if err := s.EnsureBucket(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// The sandbox backends (DENAR_UJP_SANDBOX_BACKEND).
const (
	backendEmbedded = "embedded" // the simulator inside denar serve, state in the main database
	backendUJPSim   = "ujp-sim"  // a denar ujp-sim at DENAR_UJP_SANDBOX_URL
	backendUJP      = "ujp"      // UJP's test environment (or anything speaking its API) at DENAR_UJP_SANDBOX_URL
)

// minSimToken is the shortest control token accepted for a simulator.
const minSimToken = 16

func checkSandboxBackend(c Config) error {
	if _, set := os.LookupEnv("DENAR_UJP_SANDBOX_SIMULATOR"); set {
		return errors.New("configuration: DENAR_UJP_SANDBOX_SIMULATOR was replaced by DENAR_UJP_SANDBOX_BACKEND (embedded, ujp-sim or ujp)")
	}
	switch c.UJPSandboxBackend {
	case backendEmbedded:
		if c.UJPSandboxURL != "" {
			return errors.New("configuration: DENAR_UJP_SANDBOX_URL is set but DENAR_UJP_SANDBOX_BACKEND is embedded; " +
				"set DENAR_UJP_SANDBOX_BACKEND=ujp-sim (a denar ujp-sim) or ujp (UJP's test environment)")
		}
	case backendUJPSim, backendUJP:
		if c.UJPSandboxURL == "" {
			return fmt.Errorf("configuration: DENAR_UJP_SANDBOX_BACKEND=%s needs DENAR_UJP_SANDBOX_URL", c.UJPSandboxBackend)
		}
		if c.UJPSandboxBackend == backendUJPSim && len(c.UJPSimToken) < minSimToken {
			return fmt.Errorf("configuration: DENAR_UJP_SANDBOX_BACKEND=ujp-sim needs DENAR_UJP_SIM_TOKEN, the simulator's control token (at least %d characters)", minSimToken)
		}
		if c.UJPProductionURL != "" && strings.TrimRight(c.UJPProductionURL, "/") == strings.TrimRight(c.UJPSandboxURL, "/") {
			return errors.New("configuration: DENAR_UJP_PRODUCTION_URL is the sandbox's URL; production never talks to the sandbox's UJP")
		}
	default:
		return fmt.Errorf("configuration: DENAR_UJP_SANDBOX_BACKEND must be embedded, ujp-sim or ujp, not %q", c.UJPSandboxBackend)
	}
	if c.UJPSimRetention < time.Hour {
		return fmt.Errorf("configuration: DENAR_UJP_SIM_RETENTION must be at least 1h, not %s", c.UJPSimRetention)
	}
	if c.UJPSimWindow <= 0 {
		return fmt.Errorf("configuration: DENAR_UJP_SIM_WINDOW must be positive, not %s", c.UJPSimWindow)
	}
	if c.UJPSandboxBackend == backendEmbedded && c.UJPSignerInterval < c.UJPSimWindow {
		return fmt.Errorf("configuration: DENAR_UJP_SIGNER_INTERVAL (%s) is shorter than the embedded simulator's rate window DENAR_UJP_SIM_WINDOW (%s): the simulator would refuse calls (E4007); shorten both together",
			c.UJPSignerInterval, c.UJPSimWindow)
	}
	return nil
}

// checkUJPIdentity checks the operator's UJP identity and the serial
// format. A real UJP (DENAR_UJP_SANDBOX_BACKEND=ujp, or
// DENAR_UJP_PRODUCTION_URL) needs DENAR_UJP_USER and DENAR_UJP_EDB: UJP
// wants X-EUJP-ID and X-EDB on every service (api-specification.txt:106-108),
// and there is no default that would be someone's.
func checkUJPIdentity(c Config) error {
	switch c.UJPSerialFormat {
	case ujp.SerialDecimal, ujp.SerialHex:
	default:
		return fmt.Errorf("configuration: DENAR_UJP_SERIAL_FORMAT must be decimal or hex, not %q", c.UJPSerialFormat)
	}
	var real []string
	if c.UJPSandboxBackend == backendUJP {
		real = append(real, "DENAR_UJP_SANDBOX_BACKEND=ujp")
	}
	if c.UJPProductionURL != "" {
		real = append(real, "DENAR_UJP_PRODUCTION_URL")
	}
	if len(real) > 0 && (c.UJPUser == "" || c.UJPEDB == "") {
		return fmt.Errorf("configuration: %s talks to UJP, which needs the operator's identity on every call: set DENAR_UJP_USER (your EUJP id) and DENAR_UJP_EDB (your firm's ЕДБ); see docs/going-live.md",
			strings.Join(real, " and "))
	}
	return nil
}
