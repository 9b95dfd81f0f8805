package webhooks

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
)

// Deps are the service's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// Secrets seals webhook endpoint secrets; nil makes creating an
	// endpoint 503 webhooks_unavailable (cmd/denar always provides one).
	Secrets *auth.SecretBox
	// Resolver looks up webhook hosts, at registration and when a delivery
	// connects; nil is net.DefaultResolver.
	Resolver Resolver
	// Resources maps each Resource of the catalogue to the Go type the
	// publisher renders it as (a zero value): Publish refuses an event
	// whose data.object is of another type. A resource not in it is not
	// checked.
	Resources map[string]any
}

// Config tunes webhooks; zero values take the defaults.
type Config struct {
	// Timeout bounds one delivery attempt, connection to last response
	// byte read; default 15 s.
	Timeout time.Duration
	// AllowPrivateSandbox lets sandbox endpoints use loopback and private
	// addresses (and plain http, which the sandbox always accepts).
	AllowPrivateSandbox bool
	// DisableAfter is how long an endpoint may fail continuously before it
	// is disabled; default 72 h.
	DisableAfter time.Duration
	// OperatorEmail is mailed when an endpoint of an account without owner
	// addresses is disabled; empty: nobody (the log says so).
	OperatorEmail string
	// MaxEndpoints bounds the endpoints of an account in one environment;
	// default 20.
	MaxEndpoints int
	// Concurrency bounds the delivery requests in flight at once in this
	// process, across batches; default 16.
	Concurrency int
}

// The defaults of Config's settings (cmd/denar reads them from here).
const (
	DefaultTimeout     = 15 * time.Second
	DefaultConcurrency = 16
)

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.DisableAfter <= 0 {
		c.DisableAfter = 72 * time.Hour
	}
	if c.MaxEndpoints <= 0 {
		c.MaxEndpoints = 20
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	return c
}

// Service is the events and webhooks room of the e-invoicing application:
// it publishes events (in the transaction of the change that causes them),
// serves the event log and feed, manages webhook endpoints and delivers
// events to them on jobs.
type Service struct {
	db        *store.DB
	log       *slog.Logger
	cfg       Config
	secrets   *auth.SecretBox
	resolver  Resolver
	resources map[string]any
	// hooks are the webhook HTTP clients by environment.
	hooks map[string]*http.Client
	// sending holds a token per delivery request in flight
	// (Config.Concurrency).
	sending chan struct{}
}

// New builds the service.
func New(d Deps, cfg Config) *Service {
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), secrets: d.Secrets, resolver: d.Resolver, resources: d.Resources}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.resolver == nil {
		s.resolver = net.DefaultResolver
	}
	s.sending = make(chan struct{}, s.cfg.Concurrency)
	s.hooks = map[string]*http.Client{
		auth.EnvSandbox:    newWebhookClient(s.policy(auth.EnvSandbox), s.resolver, s.cfg.Timeout),
		auth.EnvProduction: newWebhookClient(s.policy(auth.EnvProduction), s.resolver, s.cfg.Timeout),
	}
	return s
}
