package webhooks

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Event is one entry of GET /v1/events, and the body of a webhook.
type Event struct {
	ID          string          `json:"id" doc:"Prefix evt_."`
	Object      string          `json:"object" enum:"event" example:"event" doc:"Always event."`
	Type        string          `json:"type" doc:"See GET /v1/event-types."`
	CreatedAt   time.Time       `json:"createdAt" example:"2026-05-04T09:15:02Z" doc:"When the event happened."`
	Environment string          `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The environment of the company the event is about."`
	CompanyID   string          `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company the event is about (cmp_…)."`
	Data        json.RawMessage `json:"data" doc:"{object}: the resource the event is about, as GET returns it right after the change."`
}

// eventData is the data member of an event.
type eventData struct {
	Object any `json:"object"`
}

// Draft is an event to publish: what changed, about which company, and
// the resource as GET returns it right after the change.
type Draft struct {
	AccountID, CompanyID, Environment string
	// Type is a type of the catalogue (EventKinds).
	Type string
	// ObjectID is the id of the resource the event is about.
	ObjectID string
	// Object is data.object, encoded with encoding/json; Rendered, when
	// set, is that encoding already made (compact, as the API renders the
	// resource) and is used instead.
	Object   any
	Rendered []byte
	// At is when the change happened; zero: the transaction's time.
	At time.Time
}

// Prepared is an event row ready to be stored by a statement of the
// publisher's own that writes it with other rows (Prepare, Stored).
type Prepared struct {
	row dbq.CreateEventParams
}

// ID is the event's id.
func (p Prepared) ID() string { return p.row.ID }

// Type is the event's type.
func (p Prepared) Type() string { return p.row.Type }

// Payload is the event's stored data ({"object": …}).
func (p Prepared) Payload() string { return p.row.Payload }

// Publish stores each event in tx, the transaction of the change that
// causes it, with a delivery to every webhook endpoint that wants it:
// exactly once, as the change is. The endpoints of an account and
// environment are read once for all the drafts.
func (s *Service) Publish(ctx context.Context, tx *store.Tx, drafts ...Draft) error {
	type scope struct{ account, env string }
	var (
		last scope
		eps  []dbq.ListFanOutEndpointsRow
	)
	for i, d := range drafts {
		p, err := s.Prepare(tx, d)
		if err != nil {
			return err
		}
		if err := tx.CreateEvent(ctx, p.row); err != nil {
			return fmt.Errorf("event %s of %s: %w", d.Type, d.ObjectID, err)
		}
		if sc := (scope{d.AccountID, d.Environment}); i == 0 || sc != last {
			last = sc
			if eps, err = tx.ListFanOutEndpoints(ctx, dbq.ListFanOutEndpointsParams{AccountID: d.AccountID, Environment: d.Environment}); err != nil {
				return fmt.Errorf("webhook endpoints of %s: %w", d.AccountID, err)
			}
		}
		if err := fanOutTo(ctx, tx, p.row, eps); err != nil {
			return err
		}
	}
	return nil
}

// Prepare checks d and returns its event row, for a caller that stores it
// with a statement of its own and then calls Stored.
func (s *Service) Prepare(tx *store.Tx, d Draft) (Prepared, error) {
	if err := s.checkObject(d); err != nil {
		return Prepared{}, err
	}
	var payload string
	if d.Rendered != nil {
		payload = eventDataOf(d.Rendered)
	} else {
		b, err := json.Marshal(eventData{Object: d.Object})
		if err != nil {
			return Prepared{}, fmt.Errorf("event %s data: %w", d.Type, err)
		}
		payload = string(b)
	}
	at := d.At
	if at.IsZero() {
		at = tx.Now
	}
	return Prepared{row: dbq.CreateEventParams{ID: denar.NewID("evt"), AccountID: d.AccountID, CompanyID: d.CompanyID,
		Environment: d.Environment, Type: d.Type, ObjectID: d.ObjectID, Payload: payload, CreatedAt: at.UTC()}}, nil
}

// Stored writes the deliveries of an event the caller stored itself
// (Prepare), to endpoints, which its statement read as ListFanOutEndpoints
// reads them.
func (s *Service) Stored(ctx context.Context, tx *store.Tx, ev Prepared, endpoints []dbq.ListFanOutEndpointsRow) error {
	return fanOutTo(ctx, tx, ev.row, endpoints)
}

// checkObject refuses an event type outside the catalogue, or an object
// of another resource than the catalogue's (Deps.Resources).
func (s *Service) checkObject(d Draft) error {
	k, ok := eventKindOf(d.Type)
	if !ok || d.Type == EventWebhookTest {
		return fmt.Errorf("event %s of %s: not a type of the event catalogue", d.Type, d.ObjectID)
	}
	if r := s.resources[k.Resource]; r != nil && reflect.TypeOf(r) != reflect.TypeOf(d.Object) {
		return fmt.Errorf("event %s of %s: data.object is %T, the catalogue says %s", d.Type, d.ObjectID, d.Object, k.Resource)
	}
	return nil
}

// eventDataOf is json.Marshal(eventData{Object: o}) for o whose JSON, as
// the API renders it, is obj: json.Marshal escapes <, > and & in strings,
// which the API's rendering leaves as they are.
func eventDataOf(obj []byte) string {
	var b bytes.Buffer
	b.Grow(len(obj) + 16)
	b.WriteString(`{"object":`)
	json.HTMLEscape(&b, obj)
	b.WriteByte('}')
	return b.String()
}

func eventView(r dbq.Event) Event {
	return Event{ID: r.ID, Object: "event", Type: r.Type, CreatedAt: r.CreatedAt.UTC(), Environment: r.Environment,
		CompanyID: r.CompanyID, Data: json.RawMessage(r.Payload)}
}

// EventFilter selects events. Zero fields select everything.
type EventFilter struct {
	Type      string
	ObjectID  string
	CompanyID string
	// CreatedFrom (inclusive) and CreatedTo (exclusive) bound createdAt.
	CreatedFrom, CreatedTo time.Time
}

// bounds returns the createdAt bounds of the queries (null: none).
func (f EventFilter) bounds() (from, to sql.NullTime) {
	if !f.CreatedFrom.IsZero() {
		from = store.TimeOf(f.CreatedFrom.UTC().Truncate(time.Microsecond))
	}
	if !f.CreatedTo.IsZero() {
		to = store.TimeOf(f.CreatedTo.UTC().Truncate(time.Microsecond))
	}
	return from, to
}

// check refuses a filter the caller may not use: a type outside the
// catalogue (422 at query.type), a company outside its
// allow-list or account (403 company_not_allowed) or of the other
// environment (403 environment_mismatch), as X-Company-Id would be.
func (f EventFilter) check(ctx context.Context, q *dbq.Queries, p *auth.Principal) error {
	if _, ok := eventKindOf(f.Type); f.Type != "" && !ok {
		// As a webhook endpoint's events are: a misspelt type would
		// otherwise read as "no such events" for ever.
		return denar.Invalid(denar.FieldError{Path: "query.type", Message: fmt.Sprintf("%q is not an event type (see GET /v1/event-types)", f.Type)})
	}
	if f.CompanyID != "" {
		c, err := q.GetAccountCompany(ctx, dbq.GetAccountCompanyParams{ID: f.CompanyID, AccountID: p.AccountID})
		switch {
		case errors.Is(err, sql.ErrNoRows) || (err == nil && !p.AllowsCompany(f.CompanyID)):
			return denar.Errorf("company_not_allowed", "The credential may not read events of company %s.", f.CompanyID)
		case err != nil:
			return fmt.Errorf("company %s: %w", f.CompanyID, err)
		case c.Environment != p.Environment:
			return denar.Errorf("environment_mismatch", "Company %s belongs to %s; this is a %s credential.", f.CompanyID, c.Environment, p.Environment)
		}
	}
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && !f.CreatedFrom.Before(f.CreatedTo) {
		return denar.Invalid(denar.FieldError{Path: "query.createdTo", Message: "must be after createdFrom"})
	}
	return nil
}

// Events returns up to limit+1 events of the caller's account and
// environment within its allow-list, newest first, after the id after.
func (s *Service) Events(ctx context.Context, p *auth.Principal, f EventFilter, after string, limit int) ([]Event, error) {
	q := s.db.Reader()
	if err := f.check(ctx, q, p); err != nil {
		return nil, err
	}
	from, to := f.bounds()
	all, allowed := p.AllowList()
	rows, err := q.ListEvents(ctx, dbq.ListEventsParams{AccountID: p.AccountID, Environment: p.Environment, AllCompanies: all, Allowed: allowed,
		AfterID: after, Type: store.NullText(f.Type), ObjectID: store.NullText(f.ObjectID), CompanyID: store.NullText(f.CompanyID),
		CreatedFrom: from, CreatedTo: to, Lim: int64(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out := make([]Event, 0, len(rows))
	for _, r := range rows {
		out = append(out, eventView(r))
	}
	return out, nil
}

// Event returns one event of the caller's account and environment: 404
// outside the account, 403 for another environment or a company outside
// the allow-list.
func (s *Service) Event(ctx context.Context, p *auth.Principal, id string) (Event, error) {
	r, err := eventInReach(ctx, s.db.Reader(), p, id)
	if err != nil {
		return Event{}, err
	}
	return eventView(r), nil
}

// eventInReach reads an event a path names by the one loader rule
// (auth.InReach): 404 outside the account, else Reach's 403s.
func eventInReach(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.Event, error) {
	all, allowed := p.AllowList()
	r, err := q.GetEventInReach(ctx, dbq.GetEventInReachParams{ID: id, AccountID: p.AccountID, Environment: p.Environment,
		AllCompanies: all, Allowed: allowed})
	return auth.InReach(ctx, q, p, "Event", id, r, err)
}
