package webhooks

// Webhook endpoints: the use cases of /v1/webhook-endpoints and of event
// replay. Delivery itself is in delivery.go, the URL rules in url.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// secretOverlap is how long the previous secret keeps signing after a
// rotation.
const secretOverlap = 24 * time.Hour

// WebhookEndpoint is the public endpoint object.
type WebhookEndpoint struct {
	ID          string   `json:"id" doc:"Prefix whe_."`
	Object      string   `json:"object" enum:"webhook_endpoint" example:"webhook_endpoint" doc:"Always webhook_endpoint."`
	URL         string   `json:"url" example:"https://erp.example.mk/hooks/denar" doc:"Where events are POSTed: https (plain http only to loopback in the sandbox, or where the operator allows it)."`
	Description string   `json:"description" example:"ERP — продажба" doc:"Your note about the endpoint."`
	Events      []string `json:"events" doc:"Event types delivered here (see GET /v1/event-types); [\"*\"] for all."`
	CompanyIDs  []string `json:"companyIds" doc:"Only events of these companies; empty for every company of the account in this environment."`
	Environment string   `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The environment whose events are delivered: the creating credential's."`
	Enabled     bool     `json:"enabled" doc:"Disabled endpoints receive nothing; an endpoint failing continuously for 72 hours is disabled automatically. PATCH enabled: true re-enables it."`
	Secret      *string  `json:"secret" doc:"The signing secret (whsec_…): only in the answer to create and rotate-secret, null everywhere else. Shown once: an Idempotency-Key replay of those answers is 409 secret_already_shown (rotate the secret for a new one)."`
	// PreviousSecretExpiresAt is when the secret replaced by the last
	// rotation stops signing.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt" doc:"Until then deliveries carry a second v1= signature made with the previous secret; null when there is none."`
	LastSuccessAt           *time.Time `json:"lastSuccessAt" doc:"The last 2xx answer (to within a second)."`
	LastFailureAt           *time.Time `json:"lastFailureAt" doc:"The last failed attempt (to within a second)."`
	FailingSince            *time.Time `json:"failingSince" doc:"The first failure since the last success; null while healthy."`
	DisabledAt              *time.Time `json:"disabledAt" example:"2026-05-07T09:15:00Z" doc:"When the endpoint was disabled; null while enabled."`
	DisabledReason          *string    `json:"disabledReason" doc:"Why the endpoint is disabled: failing_72h (automatic), or disabled_by_api."`
	CreatedAt               time.Time  `json:"createdAt" example:"2026-05-04T09:00:00Z" doc:"When the endpoint was created."`
	UpdatedAt               time.Time  `json:"updatedAt" example:"2026-05-04T09:00:00Z" doc:"When the endpoint was last changed."`
}

// Path is the endpoint's path in the API.
func (e WebhookEndpoint) Path() string { return "/v1/webhook-endpoints/" + e.ID }

// Reasons an endpoint is disabled.
const (
	DisabledFailing = "failing_72h"
	DisabledByAPI   = "disabled_by_api"
)

func endpointView(r dbq.WebhookEndpoint) WebhookEndpoint {
	v := WebhookEndpoint{ID: r.ID, Object: "webhook_endpoint", URL: r.Url, Description: r.Description,
		Events: strings.Fields(r.EventTypes), CompanyIDs: strings.Fields(r.CompanyIds), Environment: r.Environment,
		Enabled: r.Enabled, PreviousSecretExpiresAt: store.TimeOrNil(r.PreviousSecretExpiresAt), LastSuccessAt: store.TimeOrNil(r.LastSuccessAt),
		LastFailureAt: store.TimeOrNil(r.LastFailureAt), FailingSince: store.TimeOrNil(r.FailingSince), DisabledAt: store.TimeOrNil(r.DisabledAt),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if r.DisabledReason != "" {
		v.DisabledReason = &r.DisabledReason
	}
	if r.PreviousSecret == "" {
		v.PreviousSecretExpiresAt = nil
	}
	return v
}

// canManage reports whether p may see and manage an endpoint limited to
// companies (space-separated; empty for all): a credential with a company
// allow-list reaches only endpoints limited to companies of its list (the
// rule ListWebhookEndpoints applies in its WHERE clause).
func canManage(p *auth.Principal, companies string) bool {
	if len(p.CompanyIDs) == 0 {
		return true
	}
	ids := strings.Fields(companies)
	if len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		if !p.AllowsCompany(id) {
			return false
		}
	}
	return true
}

// endpoint loads an endpoint the caller may manage.
func endpoint(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.WebhookEndpoint, error) {
	r, err := q.GetWebhookEndpoint(ctx, dbq.GetWebhookEndpointParams{ID: id, AccountID: p.AccountID})
	if errors.Is(err, sql.ErrNoRows) {
		return r, denar.Errorf(denar.ECodeNotFound, "No webhook endpoint %s in this account.", id)
	}
	if err != nil {
		return r, fmt.Errorf("load webhook endpoint %s: %w", id, err)
	}
	// reach, with the allow-list applied to every company the endpoint
	// receives events of (all of them when it names none).
	if !canManage(p, r.CompanyIds) {
		return r, denar.Errorf("company_not_allowed", "Webhook endpoint %s receives events of companies this credential may not act for.", id)
	}
	return r, p.Reach("Webhook endpoint "+id, r.Environment)
}

// subscribes reports whether an endpoint's types (space-separated) take typ.
func subscribes(types, typ string) bool {
	for _, t := range strings.Fields(types) {
		if t == "*" || t == typ {
			return true
		}
	}
	return false
}

// covers reports whether an endpoint's companies (space-separated, empty
// for all) include company.
func covers(companies, company string) bool {
	ids := strings.Fields(companies)
	return len(ids) == 0 || slices.Contains(ids, company)
}

// checkEventTypes validates a subscription list.
func checkEventTypes(types []string, fe *denar.FieldErrors) []string {
	if len(types) == 0 {
		fe.Add("events", "name at least one event type, or \"*\" for all")
		return nil
	}
	if len(types) > 50 {
		fe.Add("events", "at most 50 event types")
		return nil
	}
	var out []string
	for i, t := range types {
		if _, ok := eventKindOf(t); !ok && t != "*" {
			fe.Add(fmt.Sprintf("events[%d]", i), "%q is not an event type (see GET /v1/event-types)", t)
			continue
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if slices.Contains(out, "*") {
		out = []string{"*"}
	}
	return out
}

// checkEndpointCompanies validates the companies an endpoint is limited
// to: companies of the account in the caller's environment, within its
// allow-list; a credential with an allow-list must name some. A company
// the credential cannot reach is refused as X-Company-Id is, with the
// field's path: 403 company_not_allowed outside the allow-list or the
// account (or not an e-invoicing company), 403 environment_mismatch in the
// other environment.
func checkEndpointCompanies(ctx context.Context, q *dbq.Queries, p *auth.Principal, ids []string, fe *denar.FieldErrors) ([]string, error) {
	if len(ids) == 0 && len(p.CompanyIDs) > 0 {
		return nil, denar.Errorf("company_not_allowed", "A credential limited to companies must limit the endpoint to companies of its allow-list (companyIds).")
	}
	if len(ids) > 100 {
		fe.Add("companyIds", "at most 100 companies")
		return nil, nil
	}
	var out []string
	for i, id := range ids {
		path := fmt.Sprintf("companyIds[%d]", i)
		notAllowed := &denar.Error{Code: "company_not_allowed", Message: "The credential may not act for company " + id + ".",
			Fields: []denar.FieldError{{Path: path, Message: "not a company this credential may act for"}}}
		if !p.AllowsCompany(id) {
			return nil, notAllowed
		}
		c, err := q.GetAccountCompany(ctx, dbq.GetAccountCompanyParams{ID: id, AccountID: p.AccountID})
		if errors.Is(err, sql.ErrNoRows) || (err == nil && c.PayrollEmployer) {
			return nil, notAllowed
		}
		if err != nil {
			return nil, fmt.Errorf("company %s: %w", id, err)
		}
		if c.Environment != p.Environment {
			return nil, &denar.Error{Code: "environment_mismatch",
				Message: fmt.Sprintf("Company %s belongs to %s; this is a %s credential.", id, c.Environment, p.Environment),
				Fields:  []denar.FieldError{{Path: path, Message: "belongs to the other environment"}}}
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// shownOnceEndpoint is the problem a replay of an answer that carried an
// endpoint's secret gets: the secret was shown once; rotating it gives a
// new one.
func shownOnceEndpoint(v WebhookEndpoint) *denar.Error {
	return usecase.ShownOnce("webhook_endpoint", v.ID, "The secret of webhook endpoint "+v.ID+" was in the first answer to this request and is not kept; "+
		"rotate it (POST /v1/webhook-endpoints/"+v.ID+"/rotate-secret) for a new one.")
}

// newWebhookSecret returns a fresh endpoint secret: whsec_ and 40 base62
// characters (238 bits).
func newWebhookSecret() string { return "whsec_" + auth.RandomToken(40) }

func (s *Service) needSecrets() error {
	if s.secrets == nil {
		return denar.Errorf("webhooks_unavailable", "Webhooks are not available: the operator has not configured DENAR_WEBHOOK_SECRET_KEY.")
	}
	return nil
}

// CreateWebhookEndpoint is the command of POST /v1/webhook-endpoints.
type CreateWebhookEndpoint struct {
	URL         string
	Events      []string
	Description string
	CompanyIDs  []string
}

// CreateWebhookEndpoint registers an endpoint of the caller's account and
// environment and returns it with its secret, which is shown this once.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, c usecase.Caller, cmd CreateWebhookEndpoint) (WebhookEndpoint, error) {
	if err := s.needSecrets(); err != nil {
		return WebhookEndpoint{}, err
	}
	p := c.Principal
	var fe denar.FieldErrors
	types := checkEventTypes(cmd.Events, &fe)
	companies, err := checkEndpointCompanies(ctx, s.db.Reader(), p, cmd.CompanyIDs, &fe)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	if len(cmd.Description) > 500 {
		fe.Add("description", "at most 500 characters")
	}
	if err := fe.Err(); err != nil {
		return WebhookEndpoint{}, err
	}
	u, err := s.checkWebhookURL(ctx, p.Environment, cmd.URL)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	return usecase.WriteShownOnce(ctx, s.db, c, func(tx *store.Tx) (WebhookEndpoint, error) {
		n, err := tx.CountWebhookEndpoints(ctx, dbq.CountWebhookEndpointsParams{AccountID: p.AccountID, Environment: p.Environment})
		if err != nil {
			return WebhookEndpoint{}, fmt.Errorf("count webhook endpoints: %w", err)
		}
		if n >= int64(s.cfg.MaxEndpoints) {
			return WebhookEndpoint{}, denar.Errorf("webhook_endpoint_limit", "The account has %d webhook endpoints in %s, the most it may have; delete one first.", n, p.Environment)
		}
		id := denar.NewID("whe")
		secret := newWebhookSecret()
		row, err := tx.CreateWebhookEndpoint(ctx, dbq.CreateWebhookEndpointParams{ID: id, AccountID: p.AccountID, Environment: p.Environment,
			Url: u, Description: cmd.Description, EventTypes: strings.Join(types, " "), CompanyIds: strings.Join(companies, " "),
			Secret: s.secrets.Seal(secret, id), CreatedAt: tx.Now})
		if err != nil {
			return WebhookEndpoint{}, fmt.Errorf("create webhook endpoint: %w", err)
		}
		v := endpointView(row)
		v.Secret = &secret
		return v, nil
	}, shownOnceEndpoint)
}

// WebhookEndpoint returns one endpoint.
func (s *Service) WebhookEndpoint(ctx context.Context, p *auth.Principal, id string) (WebhookEndpoint, error) {
	r, err := endpoint(ctx, s.db.Reader(), p, id)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	return endpointView(r), nil
}

// WebhookEndpoints returns up to limit+1 endpoints of the caller's account
// and environment that it may manage, newest first, after the id after.
func (s *Service) WebhookEndpoints(ctx context.Context, p *auth.Principal, after string, limit int) ([]WebhookEndpoint, error) {
	all, allowed := p.AllowList()
	rows, err := s.db.Reader().ListWebhookEndpoints(ctx, dbq.ListWebhookEndpointsParams{AccountID: p.AccountID, Environment: p.Environment,
		AllCompanies: all, Allowed: allowed, After: after, Lim: int64(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	out := make([]WebhookEndpoint, 0, len(rows))
	for _, r := range rows {
		out = append(out, endpointView(r))
	}
	return out, nil
}

// UpdateWebhookEndpoint is the command of PATCH /v1/webhook-endpoints/{id};
// unset fields stay as they are.
type UpdateWebhookEndpoint struct {
	URL         *string
	Events      []string // nil: unchanged
	Description *string
	CompanyIDs  usecase.Optional[[]string]
	Enabled     *bool
}

// UpdateWebhookEndpoint changes an endpoint. Enabling a disabled endpoint
// restarts its failure clock; disabling one abandons the deliveries still
// waiting for it (POST …/recover re-opens them once it is enabled again).
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, c usecase.Caller, id string, cmd UpdateWebhookEndpoint) (WebhookEndpoint, error) {
	p := c.Principal
	cur, err := endpoint(ctx, s.db.Reader(), p, id)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	var fe denar.FieldErrors
	types := strings.Fields(cur.EventTypes)
	if cmd.Events != nil {
		types = checkEventTypes(cmd.Events, &fe)
	}
	companies := strings.Fields(cur.CompanyIds)
	if cmd.CompanyIDs.Set {
		var ids []string
		if cmd.CompanyIDs.Value != nil {
			ids = *cmd.CompanyIDs.Value
		}
		if companies, err = checkEndpointCompanies(ctx, s.db.Reader(), p, ids, &fe); err != nil {
			return WebhookEndpoint{}, err
		}
	}
	desc := cur.Description
	if cmd.Description != nil {
		desc = *cmd.Description
		if len(desc) > 500 {
			fe.Add("description", "at most 500 characters")
		}
	}
	if err := fe.Err(); err != nil {
		return WebhookEndpoint{}, err
	}
	u := cur.Url
	if cmd.URL != nil {
		if u, err = s.checkWebhookURL(ctx, p.Environment, *cmd.URL); err != nil {
			return WebhookEndpoint{}, err
		}
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (WebhookEndpoint, error) {
		if _, err := endpoint(ctx, tx.Queries, p, id); err != nil {
			return WebhookEndpoint{}, err
		}
		if _, err := tx.UpdateWebhookEndpoint(ctx, dbq.UpdateWebhookEndpointParams{ID: id, Url: u, Description: desc,
			EventTypes: strings.Join(types, " "), CompanyIds: strings.Join(companies, " "), UpdatedAt: tx.Now}); err != nil {
			return WebhookEndpoint{}, fmt.Errorf("update webhook endpoint %s: %w", id, err)
		}
		if cmd.Enabled != nil && *cmd.Enabled {
			if _, err := tx.EnableWebhookEndpoint(ctx, dbq.EnableWebhookEndpointParams{ID: id, UpdatedAt: tx.Now}); err != nil {
				return WebhookEndpoint{}, fmt.Errorf("enable webhook endpoint %s: %w", id, err)
			}
		}
		if cmd.Enabled != nil && !*cmd.Enabled {
			n, err := tx.DisableWebhookEndpoint(ctx, dbq.DisableWebhookEndpointParams{ID: id, Now: store.TimeOf(tx.Now), Reason: DisabledByAPI})
			if err != nil {
				return WebhookEndpoint{}, fmt.Errorf("disable webhook endpoint %s: %w", id, err)
			}
			if n > 0 {
				if _, err := tx.AbandonEndpointDeliveries(ctx, dbq.AbandonEndpointDeliveriesParams{EndpointID: id,
					Reason: abandonedEndpointDisabled, Now: tx.Now}); err != nil {
					return WebhookEndpoint{}, fmt.Errorf("abandon deliveries of %s: %w", id, err)
				}
			}
		}
		r, err := tx.GetWebhookEndpointByID(ctx, id)
		if err != nil {
			return WebhookEndpoint{}, fmt.Errorf("reload webhook endpoint %s: %w", id, err)
		}
		return endpointView(r), nil
	})
}

// DeleteWebhookEndpoint removes an endpoint with its delivery log; the
// deliveries still waiting for it are dropped.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, c usecase.Caller, id string) error {
	_, err := usecase.Write(ctx, s.db, c, func(tx *store.Tx) (struct{}, error) {
		if _, err := endpoint(ctx, tx.Queries, c.Principal, id); err != nil {
			return struct{}{}, err
		}
		if _, err := tx.DeleteWebhookEndpoint(ctx, id); err != nil {
			return struct{}{}, fmt.Errorf("delete webhook endpoint %s: %w", id, err)
		}
		return struct{}{}, nil
	})
	return err
}

// RotateWebhookSecret gives the endpoint a new secret, returned this once.
// The secret it replaces keeps signing for secretOverlap (deliveries carry
// one v1= per valid secret); a secret replaced earlier stops at once.
func (s *Service) RotateWebhookSecret(ctx context.Context, c usecase.Caller, id string) (WebhookEndpoint, error) {
	if err := s.needSecrets(); err != nil {
		return WebhookEndpoint{}, err
	}
	return usecase.WriteShownOnce(ctx, s.db, c, func(tx *store.Tx) (WebhookEndpoint, error) {
		cur, err := endpoint(ctx, tx.Queries, c.Principal, id)
		if err != nil {
			return WebhookEndpoint{}, err
		}
		secret := newWebhookSecret()
		row, err := tx.RotateWebhookSecret(ctx, dbq.RotateWebhookSecretParams{ID: id, Secret: s.secrets.Seal(secret, id),
			PreviousSecret: cur.Secret, PreviousSecretExpiresAt: sql.NullTime{Time: tx.Now.Add(secretOverlap), Valid: true}, UpdatedAt: tx.Now})
		if err != nil {
			return WebhookEndpoint{}, fmt.Errorf("rotate secret of %s: %w", id, err)
		}
		v := endpointView(row)
		v.Secret = &secret
		return v, nil
	}, shownOnceEndpoint)
}

// TestWebhookEndpoint sends the endpoint a sample event of type
// webhook_endpoint.test (its data.object is the endpoint), once, also when
// the endpoint is disabled; the attempt is in the delivery log and does
// not count toward the endpoint's health.
func (s *Service) TestWebhookEndpoint(ctx context.Context, c usecase.Caller, id string) (WebhookDelivery, error) {
	if err := s.needSecrets(); err != nil {
		return WebhookDelivery{}, err
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (WebhookDelivery, error) {
		ep, err := endpoint(ctx, tx.Queries, c.Principal, id)
		if err != nil {
			return WebhookDelivery{}, err
		}
		ev := Event{ID: denar.NewID("evt"), Object: "event", Type: EventWebhookTest, CreatedAt: tx.Now.UTC(),
			Environment: ep.Environment, CompanyID: ""}
		data, err := jsonMarshal(eventData{Object: endpointView(ep)})
		if err != nil {
			return WebhookDelivery{}, err
		}
		ev.Data = data
		body, err := jsonMarshal(ev)
		if err != nil {
			return WebhookDelivery{}, err
		}
		d, err := newDelivery(ctx, tx, deliverySpec{AccountID: ep.AccountID, Environment: ep.Environment, EndpointID: ep.ID,
			EventID: ev.ID, EventType: ev.Type, TestBody: string(body), MaxAttempts: 1, Manual: true})
		if err != nil {
			return WebhookDelivery{}, err
		}
		return deliveryView(d, nil), nil
	})
}

// ReplayResult is the answer to POST /v1/events/{id}/replay.
type ReplayResult struct {
	Data []WebhookDelivery `json:"data" doc:"The deliveries queued: one per endpoint, each due now."`
}

// ReplayEvent delivers an event again now: to endpointID when given
// (whatever its subscriptions), else to every enabled endpoint subscribed
// to the event's type and company. A delivery that already exists for an
// (event, endpoint) is re-opened: a retry waiting for its time is brought
// forward; a finished one gets a new chain of attempts.
func (s *Service) ReplayEvent(ctx context.Context, c usecase.Caller, eventID, endpointID string) (ReplayResult, error) {
	p := c.Principal
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (ReplayResult, error) {
		ev, err := eventInReach(ctx, tx.Queries, p, eventID)
		if err != nil {
			return ReplayResult{}, err
		}
		var targets []dbq.WebhookEndpoint
		if endpointID != "" {
			ep, err := endpoint(ctx, tx.Queries, p, endpointID)
			if err != nil {
				return ReplayResult{}, err
			}
			if !ep.Enabled {
				return ReplayResult{}, errEndpointDisabled(ep.ID)
			}
			targets = append(targets, ep)
		} else {
			rows, err := tx.ListFanOutEndpoints(ctx, dbq.ListFanOutEndpointsParams{AccountID: p.AccountID, Environment: p.Environment})
			if err != nil {
				return ReplayResult{}, fmt.Errorf("endpoints: %w", err)
			}
			for _, r := range rows {
				if r.Enabled && subscribes(r.EventTypes, ev.Type) && covers(r.CompanyIds, ev.CompanyID) && canManage(p, r.CompanyIds) {
					ep, err := tx.GetWebhookEndpointByID(ctx, r.ID)
					if err != nil {
						return ReplayResult{}, fmt.Errorf("endpoint %s: %w", r.ID, err)
					}
					targets = append(targets, ep)
				}
			}
		}
		out := ReplayResult{Data: []WebhookDelivery{}}
		for _, ep := range targets {
			d, err := redeliver(ctx, tx, ep, ev)
			if err != nil {
				return ReplayResult{}, err
			}
			out.Data = append(out.Data, deliveryView(d, nil))
		}
		return out, nil
	})
}

func errEndpointDisabled(id string) error {
	return denar.Errorf("webhook_endpoint_disabled", "Webhook endpoint %s is disabled; enable it first (PATCH with enabled: true).", id)
}

// redeliver re-opens the delivery of ev to ep (or creates it), due now.
func redeliver(ctx context.Context, tx *store.Tx, ep dbq.WebhookEndpoint, ev dbq.Event) (dbq.WebhookDelivery, error) {
	d, err := tx.GetWebhookDeliveryOf(ctx, dbq.GetWebhookDeliveryOfParams{EventID: ev.ID, EndpointID: ep.ID})
	if errors.Is(err, sql.ErrNoRows) {
		return newDelivery(ctx, tx, deliverySpec{AccountID: ev.AccountID, Environment: ev.Environment, EndpointID: ep.ID,
			EventID: ev.ID, EventType: ev.Type, CompanyID: ev.CompanyID, MaxAttempts: webhookAttempts, Manual: true})
	}
	if err != nil {
		return d, fmt.Errorf("delivery of %s to %s: %w", ev.ID, ep.ID, err)
	}
	if err := reopen(ctx, tx, d.ID); err != nil {
		return d, err
	}
	return tx.GetWebhookDelivery(ctx, d.ID)
}

// reopen makes a delivery due now, its next attempt manual: its waiting
// job is brought forward, or a new job starts a new chain of attempts.
func reopen(ctx context.Context, tx *store.Tx, id string) error {
	if _, err := tx.ReopenWebhookDelivery(ctx, dbq.ReopenWebhookDeliveryParams{ID: id, Now: store.TimeOf(tx.Now)}); err != nil {
		return fmt.Errorf("re-open delivery %s: %w", id, err)
	}
	e, err := enqueueDelivery(ctx, tx, id)
	if err != nil {
		return err
	}
	if e.Duplicate {
		if _, err := jobs.Reschedule(ctx, tx, deliveryKey(id), tx.Now); err != nil {
			return err
		}
	}
	return nil
}

// Recovery is the answer to POST /v1/webhook-endpoints/{id}/recover.
type Recovery struct {
	Object     string    `json:"object" enum:"webhook_recovery" example:"webhook_recovery" doc:"Always webhook_recovery."`
	EndpointID string    `json:"endpointId" example:"whe_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The endpoint (whe_…)."`
	Since      time.Time `json:"since" example:"2026-05-03T00:00:00Z" doc:"The since of the request."`
	Requeued   int       `json:"requeued" doc:"Failed or abandoned deliveries made due now."`
	More       bool      `json:"more" doc:"True when more remain than one call re-queues (1000): call again."`
}

// recoverBatch bounds the deliveries one recover call re-queues.
const recoverBatch = 1000

// RecoverWebhookEndpoint re-queues, due now, every failed or abandoned
// delivery to an enabled endpoint created since a time (up to 1000 a call).
func (s *Service) RecoverWebhookEndpoint(ctx context.Context, c usecase.Caller, id string, since time.Time) (Recovery, error) {
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (Recovery, error) {
		ep, err := endpoint(ctx, tx.Queries, c.Principal, id)
		if err != nil {
			return Recovery{}, err
		}
		if !ep.Enabled {
			return Recovery{}, errEndpointDisabled(ep.ID)
		}
		ids, err := tx.ListRecoverableDeliveries(ctx, dbq.ListRecoverableDeliveriesParams{EndpointID: id,
			Since: since.UTC().Truncate(time.Microsecond), Lim: recoverBatch + 1})
		if err != nil {
			return Recovery{}, fmt.Errorf("recoverable deliveries of %s: %w", id, err)
		}
		out := Recovery{Object: "webhook_recovery", EndpointID: id, Since: since.UTC()}
		if len(ids) > recoverBatch {
			ids, out.More = ids[:recoverBatch], true
		}
		for _, d := range ids {
			if err := reopen(ctx, tx, d); err != nil {
				return Recovery{}, err
			}
		}
		out.Requeued = len(ids)
		return out, nil
	})
}
