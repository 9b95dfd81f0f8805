package webhooks

// Webhook delivery. An event is written with one delivery row per endpoint
// that wants it, in the transaction of the change (Publish), and each
// delivery has one webhook.deliver job at a time (unique key whd:<id>).
// The job's attempts are the delivery's attempts: the runner's backoff is
// the spec's ladder (1 min, 5 min, 30 min, 2 h, 6 h, 12 h), and after the
// seventh attempt the delivery is abandoned. A job is claimed by one
// runner across every process (package jobs), so an attempt is never made
// twice; a runner that dies mid-attempt loses its lease and the next
// runner's try counts as the next attempt.
//
// Each attempt signs the event afresh (Service-Signature, t = the time of
// sending) with every secret still valid, POSTs it without following
// redirects, and records in one transaction the attempt (time, duration,
// status, the first 2 KB of the answer), the delivery's new state and the
// endpoint's health. An endpoint that has been failing continuously for
// DisableAfter (72 h) is disabled by the failure that finds it so, its
// waiting deliveries are abandoned and its account's owners are mailed,
// all in that same transaction.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// kindWebhookDeliver is the job that carries one delivery.
const kindWebhookDeliver = "webhook.deliver"

// WebhookRetryDelays is the ladder of waits after failed attempts (spec,
// Limits): about 21 hours in all.
func WebhookRetryDelays() []time.Duration {
	return []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour}
}

// webhookAttempts is the first attempt and one per rung of the ladder.
const webhookAttempts = 7

// deliveryJobCeiling is the job's own attempt ceiling: above any chain, so
// that the worker, not the runner, ends a delivery (as abandoned) even
// when runners died in the middle of attempts.
const deliveryJobCeiling = webhookAttempts + 5

// responseBodyLimit is how much of an answer the delivery log keeps.
const responseBodyLimit = 2048

// States of a delivery.
const (
	deliveryPending   = "pending"
	deliveryFailed    = "failed"
	deliverySucceeded = "succeeded"
	deliveryAbandoned = "abandoned"
)

// Why a delivery was abandoned.
const (
	abandonedRetriesExhausted = "retries_exhausted"
	abandonedEndpointDisabled = "endpoint_disabled"
)

// RegisterJobs registers webhook delivery on r. Every process may
// register it; each delivery's job is claimed by one runner at a time.
// Deliveries are claimed in batches of up to WebhookBatch (never more than
// the runner's free workers: give the runner a few batches' worth, so
// that one batch is claimed and recorded while another's requests are in
// flight), read in one query, sent with at most Config.Concurrency
// requests in flight in the process, and their attempts are recorded
// together (see deliverWebhooks). Each request is bounded by
// Config.Timeout; a batch as a whole by the time its requests could
// take if every one of four batches' requests waited for the one before it
// to time out, and half a minute for the store, as a safety net against a
// batch that hangs.
func (s *Service) RegisterJobs(r *jobs.Runner) {
	rounds := 4*WebhookBatch/s.cfg.Concurrency + 1
	jobs.RegisterBatch(r, s.deliverWebhooks, jobs.Options{
		Backoff:   jobs.Schedule(WebhookRetryDelays()...),
		BatchSize: WebhookBatch,
		Timeout:   time.Duration(rounds)*s.cfg.Timeout + 30*time.Second,
	})
}

// WebhookBatch is the most deliveries claimed together.
const WebhookBatch = 64

// recordWithin bounds how long a finished attempt waits for the others of
// its batch before it is recorded: a slow receiver in a batch does not
// hold back the outcomes of the fast ones.
const recordWithin = 100 * time.Millisecond

// deliveryArgs are the arguments of a kindWebhookDeliver job.
type deliveryArgs struct {
	ID string `json:"deliveryId"`
}

func (deliveryArgs) Kind() string { return kindWebhookDeliver }

func deliveryKey(id string) string { return "whd:" + id }

// deliverySpec describes a new delivery.
type deliverySpec struct {
	AccountID, Environment, EndpointID string
	EventID, EventType, CompanyID      string
	// TestBody is the sample event of a test delivery (no events row).
	TestBody    string
	MaxAttempts int
	Manual      bool
	// Disabled records the delivery as abandoned (endpoint_disabled),
	// without a job: the endpoint is disabled, and recover re-opens it.
	Disabled bool
}

// newDelivery writes a delivery and its job in tx.
func newDelivery(ctx context.Context, tx *store.Tx, d deliverySpec) (dbq.WebhookDelivery, error) {
	id := denar.NewID("whd")
	p := dbq.CreateWebhookDeliveryParams{ID: id, AccountID: d.AccountID,
		Environment: d.Environment, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		CompanyID: d.CompanyID, TestBody: sql.NullString{String: d.TestBody, Valid: d.TestBody != ""},
		State: deliveryPending, MaxAttempts: int32(d.MaxAttempts), NextManual: d.Manual, NextAttemptAt: store.TimeOf(tx.Now), CreatedAt: tx.Now}
	if d.Disabled {
		p.State, p.AbandonedReason, p.NextAttemptAt = deliveryAbandoned, abandonedEndpointDisabled, sql.NullTime{}
	}
	if err := tx.CreateWebhookDelivery(ctx, p); err != nil {
		return dbq.WebhookDelivery{}, fmt.Errorf("delivery of %s to %s: %w", d.EventID, d.EndpointID, err)
	}
	if !d.Disabled {
		if _, err := enqueueDelivery(ctx, tx, id); err != nil {
			return dbq.WebhookDelivery{}, err
		}
	}
	return tx.GetWebhookDelivery(ctx, id)
}

func enqueueDelivery(ctx context.Context, tx *store.Tx, id string) (jobs.Enqueued, error) {
	e, err := jobs.Insert(ctx, tx, deliveryArgs{ID: id}, jobs.InsertOpts{MaxAttempts: deliveryJobCeiling, UniqueKey: deliveryKey(id)})
	if err != nil {
		return e, fmt.Errorf("delivery %s: %w", id, err)
	}
	return e, nil
}

// fanOutTo writes a delivery of ev to each of eps (the endpoints of its
// account and environment, as ListFanOutEndpoints reads them, or the
// statement that wrote ev) that subscribes to its type and covers its
// company: due now for an enabled endpoint, abandoned (for recover) for a
// disabled one.
func fanOutTo(ctx context.Context, tx *store.Tx, ev dbq.CreateEventParams, eps []dbq.ListFanOutEndpointsRow) error {
	for _, ep := range eps {
		if !subscribes(ep.EventTypes, ev.Type) || !covers(ep.CompanyIds, ev.CompanyID) {
			continue
		}
		if _, err := newDelivery(ctx, tx, deliverySpec{AccountID: ev.AccountID, Environment: ev.Environment, EndpointID: ep.ID,
			EventID: ev.ID, EventType: ev.Type, CompanyID: ev.CompanyID, MaxAttempts: webhookAttempts, Disabled: !ep.Enabled}); err != nil {
			return err
		}
	}
	return nil
}

// SignWebhook returns the Service-Signature header of body sent at t: the
// Unix time and one v1= per secret, each the hex HMAC-SHA256, keyed with
// the whole secret string (whsec_ included), of "<t>.<body>".
func SignWebhook(t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, sec := range secrets {
		m := hmac.New(sha256.New, []byte(sec))
		m.Write([]byte(ts))
		m.Write([]byte{'.'})
		m.Write(body)
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(m.Sum(nil)))
	}
	return b.String()
}

// WebhookAttempt is one HTTP attempt of a delivery.
type WebhookAttempt struct {
	Number       int       `json:"number" doc:"1 for the first attempt of the delivery; replays and recoveries go on counting."`
	Trigger      string    `json:"trigger" enum:"scheduled,manual" doc:"manual: asked for by replay, recover or test; scheduled: the first delivery or a retry of the ladder."`
	At           time.Time `json:"at" doc:"When the request was sent."`
	DurationMs   int       `json:"durationMs" doc:"From sending to the answer (or the error)."`
	StatusCode   *int      `json:"statusCode" doc:"The HTTP status; null when no answer came (connection refused, timeout, refused address)."`
	StatusClass  string    `json:"statusClass" enum:"1xx,2xx,3xx,4xx,5xx,none" example:"2xx" doc:"The class of the HTTP status, none when no answer came."`
	Error        *string   `json:"error" doc:"Why there was no answer, or why it does not count as one."`
	ResponseBody string    `json:"responseBody" doc:"The first 2 KB of the answer's body, as text (invalid UTF-8 replaced)."`
	Succeeded    bool      `json:"succeeded" doc:"A 2xx answer within the timeout. Anything else, redirects included, failed."`
}

// WebhookDelivery is the delivery of one event to one endpoint with its
// attempts.
type WebhookDelivery struct {
	ID              string           `json:"id" doc:"Prefix whd_."`
	Object          string           `json:"object" enum:"webhook_delivery" example:"webhook_delivery" doc:"Always webhook_delivery."`
	EndpointID      string           `json:"endpointId" example:"whe_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The endpoint delivered to (whe_…)."`
	EventID         string           `json:"eventId" example:"evt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The event delivered (evt_…)."`
	EventType       string           `json:"eventType" example:"einvoice.submitted" doc:"The event's type."`
	CompanyID       *string          `json:"companyId" doc:"Null for a test delivery."`
	Test            bool             `json:"test" doc:"A sample event sent by POST /v1/webhook-endpoints/{id}/test (not in GET /v1/events)."`
	State           string           `json:"state" enum:"pending,failed,succeeded,abandoned" doc:"pending: due (first attempt, or re-opened by replay or recover); failed: the last attempt failed and a retry is due at nextAttemptAt; succeeded; abandoned: see abandonedReason."`
	AbandonedReason *string          `json:"abandonedReason" enum:"retries_exhausted,endpoint_disabled" example:"retries_exhausted" doc:"Why the delivery was given up: retries_exhausted (the retry ladder ended), endpoint_disabled; null otherwise."`
	NextAttemptAt   *time.Time       `json:"nextAttemptAt" example:"2026-05-04T09:20:00Z" doc:"When the next attempt is due; null when none is (succeeded or abandoned)."`
	Attempts        []WebhookAttempt `json:"attempts" doc:"Oldest first."`
	CreatedAt       time.Time        `json:"createdAt" example:"2026-05-04T09:15:02Z" doc:"When the delivery was made (with its event)."`
	UpdatedAt       time.Time        `json:"updatedAt" example:"2026-05-04T09:15:03Z" doc:"When its state last changed."`
}

func statusClass(code sql.NullInt32) string {
	if !code.Valid || code.Int32 < 100 || code.Int32 > 599 {
		return "none"
	}
	return strconv.Itoa(int(code.Int32)/100) + "xx"
}

func deliveryView(d dbq.WebhookDelivery, attempts []dbq.WebhookAttempt) WebhookDelivery {
	v := WebhookDelivery{ID: d.ID, Object: "webhook_delivery", EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Test: d.TestBody.Valid, State: d.State, NextAttemptAt: store.TimeOrNil(d.NextAttemptAt), Attempts: []WebhookAttempt{},
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
	if d.CompanyID != "" {
		v.CompanyID = &d.CompanyID
	}
	if d.AbandonedReason != "" {
		v.AbandonedReason = &d.AbandonedReason
	}
	if d.State == deliverySucceeded || d.State == deliveryAbandoned {
		v.NextAttemptAt = nil
	}
	for _, a := range attempts {
		w := WebhookAttempt{Number: int(a.Number), Trigger: a.Trigger, At: a.StartedAt.UTC(), DurationMs: int(a.DurationMs),
			StatusClass: statusClass(a.StatusCode), ResponseBody: a.ResponseBody, Succeeded: a.Succeeded}
		if a.StatusCode.Valid {
			c := int(a.StatusCode.Int32)
			w.StatusCode = &c
		}
		if a.Error != "" {
			w.Error = &a.Error
		}
		v.Attempts = append(v.Attempts, w)
	}
	return v
}

// DeliveryFilter selects deliveries of the log.
type DeliveryFilter struct {
	State       string // pending, failed, succeeded, abandoned; "" for all
	StatusClass string // of the last attempt: 2xx … 5xx, none; "" for all
}

func (f DeliveryFilter) params() (sql.NullString, sql.NullString) {
	return store.NullText(f.State), store.NullText(f.StatusClass)
}

// withAttempts renders deliveries with their attempts.
func withAttempts(ctx context.Context, q *dbq.Queries, rows []dbq.WebhookDelivery) ([]WebhookDelivery, error) {
	out := make([]WebhookDelivery, 0, len(rows))
	for _, d := range rows {
		att, err := q.ListWebhookAttempts(ctx, d.ID)
		if err != nil {
			return nil, fmt.Errorf("attempts of %s: %w", d.ID, err)
		}
		out = append(out, deliveryView(d, att))
	}
	return out, nil
}

// EventDeliveries returns up to limit+1 deliveries of an event, newest
// first, after the id after.
func (s *Service) EventDeliveries(ctx context.Context, p *auth.Principal, eventID string, f DeliveryFilter, after string, limit int) ([]WebhookDelivery, error) {
	q := s.db.Reader()
	if _, err := eventInReach(ctx, q, p, eventID); err != nil {
		return nil, err
	}
	st, class := f.params()
	all, allowed := p.AllowList()
	rows, err := q.ListEventDeliveries(ctx, dbq.ListEventDeliveriesParams{EventID: eventID, AccountID: p.AccountID,
		Environment: p.Environment, AllCompanies: all, Allowed: allowed, After: after, State: st, StatusClass: class, Lim: int64(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("deliveries of %s: %w", eventID, err)
	}
	return withAttempts(ctx, q, rows)
}

// EndpointDeliveries returns up to limit+1 deliveries to an endpoint,
// newest first, after the id after.
func (s *Service) EndpointDeliveries(ctx context.Context, p *auth.Principal, endpointID string, f DeliveryFilter, after string, limit int) ([]WebhookDelivery, error) {
	q := s.db.Reader()
	if _, err := endpoint(ctx, q, p, endpointID); err != nil {
		return nil, err
	}
	st, class := f.params()
	all, allowed := p.AllowList()
	rows, err := q.ListEndpointDeliveries(ctx, dbq.ListEndpointDeliveriesParams{EndpointID: endpointID,
		AccountID: p.AccountID, Environment: p.Environment, AllCompanies: all, Allowed: allowed, After: after, State: st, StatusClass: class, Lim: int64(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("deliveries to %s: %w", endpointID, err)
	}
	return withAttempts(ctx, q, rows)
}

// deliverWebhooks is the batch worker of kindWebhookDeliver: one attempt
// of each delivery, sent concurrently (at most Config.Concurrency
// requests in flight in the process). Attempts are recorded as they finish,
// in groups (one transaction for every attempt that finished within
// recordWithin of the first one waiting), each with its job's outcome.
func (s *Service) deliverWebhooks(ctx context.Context, batch []*jobs.Job, args []deliveryArgs) []error {
	results := make([]error, len(batch))
	work, err := s.loadDeliveries(ctx, args)
	if err != nil {
		for i := range results {
			results[i] = err
		}
		return results
	}
	finished := make(chan *sentAttempt, len(batch))
	secrets := map[string][]string{}
	var (
		wg sync.WaitGroup
		mu sync.Mutex // secrets
	)
	for i, job := range batch {
		w := work[i]
		if w.skip {
			continue // nothing to send: the job completes
		}
		wg.Go(func() {
			a, err := s.sendAttempt(ctx, job, w, func(ep dbq.WebhookEndpoint) ([]string, error) {
				mu.Lock()
				defer mu.Unlock()
				key := ep.ID + "\x00" + ep.Secret + "\x00" + ep.PreviousSecret
				if v, ok := secrets[key]; ok {
					return v, nil
				}
				v, err := s.signingSecrets(ep, s.db.Now())
				if err == nil {
					secrets[key] = v
				}
				return v, err
			})
			if a == nil {
				results[i] = err
				return
			}
			a.i = i
			finished <- a
		})
	}
	go func() { wg.Wait(); close(finished) }()
	rec := context.WithoutCancel(ctx)
	var (
		waiting []*sentAttempt
		timer   <-chan time.Time
	)
	flush := func() {
		for k, err := range s.recordAttempts(rec, waiting) {
			results[waiting[k].i] = err
		}
		waiting, timer = waiting[:0], nil
	}
	for {
		select {
		case a, ok := <-finished:
			if !ok {
				if len(waiting) > 0 {
					flush()
				}
				return results
			}
			waiting = append(waiting, a)
			if timer == nil {
				timer = time.After(recordWithin)
			}
		case <-timer:
			flush()
		}
	}
}

// deliveryWork is what an attempt needs: the delivery, the event's payload
// and the endpoint.
type deliveryWork struct {
	d              dbq.WebhookDelivery
	ep             dbq.WebhookEndpoint
	payload        sql.NullString
	eventCreatedAt sql.NullTime
	// skip: nothing to send (the delivery or its endpoint is gone).
	skip bool
}

// loadDeliveries reads the deliveries of a batch's jobs with one
// query, and each endpoint once.
func (s *Service) loadDeliveries(ctx context.Context, batch []deliveryArgs) ([]*deliveryWork, error) {
	out := make([]*deliveryWork, len(batch))
	ids := make([]any, 0, len(batch))
	for i, a := range batch {
		out[i] = &deliveryWork{d: dbq.WebhookDelivery{ID: a.ID}, skip: true} // until found
		ids = append(ids, a.ID)
	}
	if len(ids) == 0 {
		return out, nil
	}
	args := store.NewArgs(s.db.Dialect())
	var q strings.Builder
	q.WriteString(`SELECT d.id, d.account_id, d.environment, d.endpoint_id, d.event_id, d.event_type,
    d.company_id, d.test_body, d.state, d.max_attempts, d.attempts, d.next_manual, ev.payload, ev.created_at
FROM webhook_deliveries d
LEFT JOIN events ev ON ev.id = d.event_id
WHERE d.id IN `)
	args.Row(&q, ids...)
	rows, err := s.db.QueryRead(ctx, q.String(), args.List()...)
	if err != nil {
		return nil, fmt.Errorf("deliveries of a batch: %w", err)
	}
	found := map[string]*deliveryWork{}
	for rows.Next() {
		w := &deliveryWork{}
		d := &w.d
		if err := rows.Scan(&d.ID, &d.AccountID, &d.Environment, &d.EndpointID, &d.EventID, &d.EventType, &d.CompanyID,
			&d.TestBody, &d.State, &d.MaxAttempts, &d.Attempts, &d.NextManual, &w.payload, &w.eventCreatedAt); err != nil {
			rows.Close()
			return nil, fmt.Errorf("deliveries of a batch: %w", err)
		}
		found[d.ID] = w
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("deliveries of a batch: %w", err)
	}
	endpoints := map[string]*dbq.WebhookEndpoint{}
	for i, w := range out {
		f := found[w.d.ID]
		if f == nil {
			continue // its endpoint was deleted, and the delivery with it
		}
		ep, ok := endpoints[f.d.EndpointID]
		if !ok {
			e, err := s.db.Reader().GetWebhookEndpointByID(ctx, f.d.EndpointID)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return nil, fmt.Errorf("endpoint %s: %w", f.d.EndpointID, err)
			default:
				ep = &e
			}
			endpoints[f.d.EndpointID] = ep
		}
		if ep == nil {
			continue // deleted meanwhile
		}
		f.ep = *ep
		out[i] = f
	}
	return out, nil
}

// sentAttempt is an attempt made, waiting to be recorded.
type sentAttempt struct {
	i   int // in the batch
	job *jobs.Job
	d   dbq.WebhookDelivery
	ep  dbq.WebhookEndpoint
	r   attemptResult
}

// sendAttempt makes one attempt of the job's delivery. It returns the
// attempt to record, or nil and the job's result when there was nothing to
// send (the delivery is finished, or abandoned here) or the attempt was
// cut short by shutdown.
func (s *Service) sendAttempt(ctx context.Context, job *jobs.Job, w *deliveryWork, secretsOf func(dbq.WebhookEndpoint) ([]string, error)) (*sentAttempt, error) {
	d, ep := w.d, w.ep
	if d.State != deliveryPending && d.State != deliveryFailed {
		return nil, nil // finished by an attempt whose runner died before finishing the job
	}
	rec := context.WithoutCancel(ctx)
	test := d.TestBody.Valid
	if !ep.Enabled && !test {
		_, err := s.db.Writer().AbandonWebhookDelivery(rec, dbq.AbandonWebhookDeliveryParams{ID: d.ID,
			Reason: abandonedEndpointDisabled, Now: s.db.Now()})
		return nil, err
	}
	if job.Attempt > int(d.MaxAttempts) {
		// The last allowed attempt ended with its runner's death.
		_, err := s.db.Writer().AbandonWebhookDelivery(rec, dbq.AbandonWebhookDeliveryParams{ID: d.ID,
			Reason: abandonedRetriesExhausted, Now: s.db.Now()})
		if err != nil {
			return nil, err
		}
		return nil, jobs.Cancel(fmt.Errorf("delivery %s: %d attempts used (the last one was interrupted)", d.ID, d.MaxAttempts))
	}
	body, err := deliveryBody(d, w.payload, w.eventCreatedAt)
	if err != nil {
		return nil, err
	}
	keys, err := secretsOf(ep)
	if err != nil {
		// Nothing an attempt can fix: the operator's key is wrong.
		s.log.ErrorContext(ctx, "webhook: cannot open the endpoint's secret", "endpoint", ep.ID, "err", err)
		return nil, err
	}
	select {
	case s.sending <- struct{}{}:
		defer func() { <-s.sending }()
	case <-ctx.Done():
		return nil, ctx.Err() // stopped before sending: nothing happened
	}

	sentAt := s.db.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.Url, bytes.NewReader(body))
	if err != nil {
		return nil, jobs.Cancel(fmt.Errorf("delivery %s: %w", d.ID, err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "denar-webhooks/1")
	req.Header.Set("Service-Signature", SignWebhook(sentAt, body, keys...))
	req.Header.Set("Service-Delivery-Id", d.ID)
	req.Header.Set("Service-Event-Type", d.EventType)
	start := time.Now()
	resp, herr := s.hooks[ep.Environment].Do(req)
	var (
		code     sql.NullInt32
		snippet  string
		failure  string
		duration time.Duration
	)
	if herr == nil {
		code = sql.NullInt32{Int32: int32(resp.StatusCode), Valid: true}
		snippet = readSnippet(resp.Body)
		duration = time.Since(start)
		// Drain a little more so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			failure = fmt.Sprintf("HTTP %d", resp.StatusCode)
			if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
				failure += " (redirects are not followed; Location: " + truncateText(loc, 200) + ")"
			}
		}
	} else {
		duration = time.Since(start)
		failure = truncateText(herr.Error(), 500)
		if ctx.Err() != nil && errors.Is(herr, ctx.Err()) && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Stopped mid-attempt (shutdown, lost lease): the runner
			// decides what it counts for; nothing is recorded.
			return nil, herr
		}
	}
	return &sentAttempt{job: job, d: d, ep: ep, r: attemptResult{number: int(d.Attempts) + 1, jobAttempt: job.Attempt,
		manual: d.NextManual, sentAt: sentAt, duration: duration, code: code, failure: failure, body: snippet, ok: failure == ""}}, nil
}

// deliveryBody is the request body: the event as GET /v1/events/{id}
// returns it, or a test delivery's sample event.
func deliveryBody(d dbq.WebhookDelivery, payload sql.NullString, created sql.NullTime) ([]byte, error) {
	if d.TestBody.Valid {
		return []byte(d.TestBody.String), nil
	}
	if !payload.Valid {
		return nil, jobs.Cancel(fmt.Errorf("delivery %s: event %s is gone", d.ID, d.EventID))
	}
	return eventJSON(eventView(dbq.Event{ID: d.EventID, CompanyID: d.CompanyID, Environment: d.Environment,
		Type: d.EventType, Payload: payload.String, CreatedAt: created.Time}))
}

// eventJSON is json.Marshal(e), written by hand: e.Data, the stored
// payload, is copied as it is (it was written by json.Marshal, so it is
// valid, compact and escaped as Marshal would make it, and checking it
// again for every delivery costs in proportion to the document it
// carries), and the head's few strings are quoted directly when they need
// no escaping, as ids and types do (reflection cost a delivery 5 µs).
func eventJSON(e Event) ([]byte, error) {
	out := make([]byte, 0, 160+len(e.Data))
	out = appendJSONField(out, `{"id":`, e.ID)
	out = appendJSONField(out, `,"object":`, e.Object)
	out = appendJSONField(out, `,"type":`, e.Type)
	// What time.Time.MarshalJSON writes (the same RFC 3339 text between
	// quotes, and the same refusals), without its allocation.
	out, err := e.CreatedAt.AppendText(append(out, `,"createdAt":"`...))
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	out = append(out, '"')
	out = appendJSONField(out, `,"environment":`, e.Environment)
	out = appendJSONField(out, `,"companyId":`, e.CompanyID)
	out = append(out, `,"data":`...)
	out = append(out, e.Data...)
	return append(out, '}'), nil
}

// appendJSONField appends key and s as encoding/json writes a string: as
// it is between quotes when no byte needs escaping (printable ASCII other
// than the quote, the backslash and the HTML characters json escapes),
// through json.Marshal otherwise.
func appendJSONField(dst []byte, key, s string) []byte {
	dst = append(dst, key...)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// signingSecrets returns the endpoint's current secret and, within
// secretOverlap of a rotation, the previous one.
func (s *Service) signingSecrets(ep dbq.WebhookEndpoint, now time.Time) ([]string, error) {
	if s.secrets == nil {
		return nil, errors.New("webhook: DENAR_WEBHOOK_SECRET_KEY is not configured")
	}
	cur, err := s.secrets.Open(ep.Secret, ep.ID)
	if err != nil {
		return nil, err
	}
	out := []string{cur}
	if ep.PreviousSecret != "" && ep.PreviousSecretExpiresAt.Valid && now.Before(ep.PreviousSecretExpiresAt.Time) {
		prev, err := s.secrets.Open(ep.PreviousSecret, ep.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
}

type attemptResult struct {
	number, jobAttempt int
	manual             bool
	sentAt             time.Time
	duration           time.Duration
	code               sql.NullInt32
	failure, body      string
	ok                 bool
}

// trigger is the attempt's trigger as the delivery log shows it.
func (r attemptResult) trigger() string {
	if r.manual {
		return "manual"
	}
	return "scheduled"
}

// recordAttempts writes the attempts in one transaction: for each, the
// job's outcome (jobs.Job.Settle, fenced by the claim: an attempt whose job
// was taken over by another runner is not recorded), the delivery's new
// state, the attempt, and the endpoint's health (disabling it, with its
// mail, when a failure finds it failing for DisableAfter). It returns each
// attempt's result as the worker returns it. When the transaction fails,
// each attempt is tried again in a transaction of its own, so one that
// cannot be written does not take the others with it.
func (s *Service) recordAttempts(ctx context.Context, sent []*sentAttempt) []error {
	results := make([]error, len(sent))
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		// Successes first, so that a failure to the same endpoint in this
		// group leaves its failure clock running.
		if err := s.recordSuccesses(ctx, tx, sent); err != nil {
			return err
		}
		for k, a := range sent {
			if a.r.ok {
				continue
			}
			var err error
			results[k], err = s.recordFailure(ctx, tx, a)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return results
	}
	if len(sent) == 1 {
		return []error{err}
	}
	s.log.WarnContext(ctx, "webhook: recording a group of attempts failed; recording them one by one", "attempts", len(sent), "err", err)
	for k, a := range sent {
		results[k] = s.recordAttempts(ctx, []*sentAttempt{a})[0]
	}
	return results
}

// recordSuccesses writes the successful attempts of sent, the common case,
// with a statement per table rather than per attempt: the jobs completed
// (those whose lease was lost are left out), the deliveries succeeded
// (fenced like SetWebhookDeliveryOutcome), their attempts, and each
// endpoint's health once.
func (s *Service) recordSuccesses(ctx context.Context, tx *store.Tx, sent []*sentAttempt) error {
	var ok []*sentAttempt
	for _, a := range sent {
		if a.r.ok {
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	batch := make([]*jobs.Job, len(ok))
	for k, a := range ok {
		batch[k] = a.job
	}
	held, err := jobs.SettleAll(ctx, tx, batch, make([]error, len(ok)))
	if err != nil {
		return err
	}
	args := store.NewArgs(tx.Dialect)
	var q strings.Builder
	now := store.TimeOf(tx.Now)
	// A success is a 2xx answer with no failure: what every row shares is
	// written into the text, so that only what differs is a parameter (the
	// SQLite driver's cost of binding grows with the square of their number).
	q.WriteString("UPDATE webhook_deliveries\nSET state = 'succeeded', attempts = attempts + 1, next_manual = FALSE, next_attempt_at = NULL, last_attempt_at = " +
		args.Add(now) + ",\n    last_status_code = v.column3, last_status_class = '2xx', abandoned_reason = '', updated_at = " + args.Add(now) +
		"\nFROM (VALUES ")
	n := 0
	for k, a := range ok {
		if !held[k] {
			continue
		}
		if n > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(" + args.Cast(a.d.ID, "TEXT") + ", " + args.Cast(a.d.Attempts, "INTEGER") + ", " +
			args.Cast(a.r.code, "INTEGER") + ")")
		n++
	}
	if n == 0 {
		return nil
	}
	q.WriteString(`) AS v
WHERE webhook_deliveries.id = v.column1 AND webhook_deliveries.attempts = v.column2
  AND webhook_deliveries.state IN ('pending', 'failed')
RETURNING id`)
	rows, err := tx.Query(ctx, q.String(), args.List()...)
	if err != nil {
		return fmt.Errorf("outcomes of %d deliveries: %w", n, err)
	}
	updated := make(map[string]bool, n)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("outcomes: %w", err)
		}
		updated[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("outcomes: %w", err)
	}
	// A delivery that moved on while its attempt ran (its endpoint was
	// disabled or deleted) gets nothing more; its job has completed.
	args = store.NewArgs(tx.Dialect)
	q.Reset()
	q.WriteString(`INSERT INTO webhook_attempts (id, delivery_id, number, trigger, started_at,
    duration_ms, status_code, error, response_body, succeeded)
VALUES `)
	n = 0
	for _, a := range ok {
		if !updated[a.d.ID] {
			continue
		}
		if n > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(" + args.Add(denar.NewID("wha")) + ", " + args.Add(a.d.ID) + ", " + args.Add(int32(a.r.number)) + ", " +
			args.Add(a.r.trigger()) + ", " + args.Add(a.r.sentAt) + ", " + args.Add(int32(a.r.duration.Milliseconds())) + ", " +
			args.Add(a.r.code) + ", '', " + args.Add(a.r.body) + ", TRUE)")
		n++
	}
	if n == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, q.String(), args.List()...); err != nil {
		return fmt.Errorf("attempts of %d deliveries: %w", n, err)
	}
	// Each endpoint's health once, and only when it would change (the
	// endpoint row is not rewritten, and locked, by every delivery).
	stale := tx.Now.Add(-time.Second)
	seen := map[string]bool{}
	for _, a := range ok {
		ep := a.ep
		if !updated[a.d.ID] || a.d.TestBody.Valid || seen[ep.ID] {
			continue // a test says nothing about the endpoint's health
		}
		seen[ep.ID] = true
		if ep.FailingSince.Valid || !ep.LastSuccessAt.Valid || ep.LastSuccessAt.Time.Before(stale) {
			if err := tx.RecordWebhookSuccess(ctx, dbq.RecordWebhookSuccessParams{ID: ep.ID, Now: now, StaleBefore: store.TimeOf(stale)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordFailure writes one failed attempt in tx — the job's outcome, the
// delivery's, the attempt, the endpoint's failure clock and, when it finds
// the endpoint failing for DisableAfter, its disabling — and returns the
// job's result; an error ends the transaction.
func (s *Service) recordFailure(ctx context.Context, tx *store.Tx, a *sentAttempt) (result, err error) {
	d, ep, r := a.d, a.ep, a.r
	now := tx.Now
	p := dbq.SetWebhookDeliveryOutcomeParams{ID: d.ID, SeenAttempts: d.Attempts, Now: store.TimeOf(now),
		LastStatusCode: r.code, LastStatusClass: statusClass(r.code)}
	delays := WebhookRetryDelays()
	switch {
	case r.jobAttempt >= int(d.MaxAttempts) || r.jobAttempt > len(delays):
		p.State, p.AbandonedReason = deliveryAbandoned, abandonedRetriesExhausted
		result = jobs.Cancel(fmt.Errorf("delivery %s: %s (%s)", d.ID, r.failure, abandonedRetriesExhausted))
	default:
		p.State = deliveryFailed
		p.NextAttemptAt = store.TimeOf(now.Add(delays[r.jobAttempt-1]))
		result = fmt.Errorf("delivery %s: %s", d.ID, r.failure)
	}
	// The job first: without its lease, nothing of the attempt is written.
	switch err = a.job.Settle(ctx, tx, result); {
	case errors.Is(err, jobs.ErrLeaseLost):
		return nil, nil
	case err != nil:
		return nil, err
	}
	n, err := tx.SetWebhookDeliveryOutcome(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("outcome of %s: %w", d.ID, err)
	}
	if n == 0 {
		// The delivery moved on while the attempt ran (the endpoint was
		// disabled or deleted meanwhile): nothing is recorded; if the job
		// was settled for a retry, that run will find it finished.
		return nil, nil
	}
	if err := tx.CreateWebhookAttempt(ctx, dbq.CreateWebhookAttemptParams{ID: denar.NewID("wha"), DeliveryID: d.ID,
		Number: int32(r.number), Trigger: r.trigger(), StartedAt: r.sentAt, DurationMs: int32(r.duration.Milliseconds()),
		StatusCode: r.code, Error: r.failure, ResponseBody: r.body, Succeeded: false}); err != nil {
		return nil, fmt.Errorf("attempt of %s: %w", d.ID, err)
	}
	if d.TestBody.Valid { // a test says nothing about the endpoint's health
		return result, nil
	}
	stale := now.Add(-time.Second)
	if err := tx.RecordWebhookFailure(ctx, dbq.RecordWebhookFailureParams{ID: ep.ID, Now: store.TimeOf(now), StaleBefore: store.TimeOf(stale)}); err != nil {
		return nil, err
	}
	disabled, err := s.disableIfFailing(ctx, tx, ep, r.failure)
	if err != nil {
		return nil, err
	}
	if disabled && p.State == deliveryFailed {
		// The job was settled for a retry; that run finds the delivery
		// abandoned and ends.
		result = jobs.Cancel(fmt.Errorf("delivery %s: %s (%s)", d.ID, r.failure, abandonedEndpointDisabled))
	}
	return result, nil
}

// disableIfFailing disables ep when it has been failing since before
// DisableAfter ago, abandons what waits for it and mails its account's
// owners, in tx. Only the transaction that flips it does so.
func (s *Service) disableIfFailing(ctx context.Context, tx *store.Tx, ep dbq.WebhookEndpoint, lastErr string) (bool, error) {
	n, err := tx.AutoDisableWebhookEndpoint(ctx, dbq.AutoDisableWebhookEndpointParams{ID: ep.ID, Now: store.TimeOf(tx.Now),
		Reason: DisabledFailing, Cutoff: sql.NullTime{Time: tx.Now.Add(-s.cfg.DisableAfter), Valid: true}})
	if err != nil || n == 0 {
		return false, err
	}
	if _, err := tx.AbandonEndpointDeliveries(ctx, dbq.AbandonEndpointDeliveriesParams{EndpointID: ep.ID,
		Reason: abandonedEndpointDisabled, Now: tx.Now}); err != nil {
		return true, fmt.Errorf("abandon deliveries of %s: %w", ep.ID, err)
	}
	cur, err := tx.GetWebhookEndpointByID(ctx, ep.ID)
	if err != nil {
		return true, err
	}
	acct, err := tx.GetAccount(ctx, ep.AccountID)
	if err != nil {
		return true, fmt.Errorf("account of %s: %w", ep.ID, err)
	}
	to := strings.Fields(acct.OwnerEmails)
	if len(to) == 0 && s.cfg.OperatorEmail != "" {
		to = []string{s.cfg.OperatorEmail}
	}
	s.log.WarnContext(ctx, "webhook endpoint disabled after failing continuously", "endpoint", ep.ID, "account", ep.AccountID,
		"failing_since", cur.FailingSince.Time, "mailed", to)
	if len(to) == 0 {
		s.log.WarnContext(ctx, "webhook endpoint disabled but nobody to mail: the account has no owner e-mail and DENAR_OPERATOR_EMAIL is unset",
			"endpoint", ep.ID, "account", ep.AccountID)
	}
	msg := disabledMail(acct, cur, lastErr, s.cfg.DisableAfter)
	for _, addr := range to {
		msg.To = addr
		if _, err := mail.Queue(ctx, tx, msg); err != nil {
			return true, err
		}
	}
	return true, nil
}

func disabledMail(acct dbq.Account, ep dbq.WebhookEndpoint, lastErr string, after time.Duration) mail.Message {
	since := ep.FailingSince.Time.UTC().Format(time.RFC3339)
	body := fmt.Sprintf(`Hello,

the webhook endpoint %s of your denar account %q (%s) has been disabled:
every delivery to it has failed for %s, since %s.

  URL:          %s
  Environment:  %s
  Last error:   %s

Events keep being recorded; they are not sent to this endpoint while it is
disabled. Once the receiver works again:

  1. enable the endpoint:  PATCH /v1/webhook-endpoints/%s  {"enabled": true}
  2. send what it missed:  POST /v1/webhook-endpoints/%s/recover  {"since": "%s"}

The delivery log (GET /v1/webhook-endpoints/%s/deliveries) shows each attempt
with the answer it got. Clients that cannot receive webhooks can read the
same events from GET /v1/events?after=<cursor>.

denar
`, ep.ID, acct.Name, acct.ID, after, since, ep.Url, ep.Environment, lastErr, ep.ID, ep.ID, since, ep.ID)
	return mail.Message{Subject: "Webhook endpoint disabled: " + truncateText(ep.Url, 100), Body: body}
}

// readSnippet reads the first responseBodyLimit bytes of an answer as
// storable text.
func readSnippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, responseBodyLimit))
	return strings.ToValidUTF8(strings.ReplaceAll(string(b), "\x00", ""), "\uFFFD")
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// jsonMarshal is json.Marshal with an error that says what failed.
func jsonMarshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return b, nil
}
