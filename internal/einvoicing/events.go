package einvoicing

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

// Event types. Each is written in the transaction of the change that
// causes it, with the resource as GET returns it after the change, and is
// listed in the catalogue (EventKinds).
const (
	EventValidatedFailed    = "einvoice.validated_failed"
	EventSignatureRequired  = "einvoice.signature_required"
	EventSubmitted          = "einvoice.submitted"
	EventAccepted           = "einvoice.accepted"
	EventAutoAccepted       = "einvoice.auto_accepted"
	EventRejected           = "einvoice.rejected"
	EventCancelledByStorno  = "einvoice.cancelled_by_storno"
	EventCorrected          = "einvoice.corrected"
	EventFailed             = "einvoice.failed"
	EventHeld               = "einvoice.held"
	EventSigningAgentOnline = "signing_agent.online"
	EventSigningAgentOff    = "signing_agent.offline"
	// EventSigningAgentOffline is EventSigningAgentOff by its full name.
	EventSigningAgentOffline = EventSigningAgentOff
	// Emitted by the archive when an export is ready (the inbox's are in
	// inbox.go, the failed export's in archive.go).
	EventArchiveExportReady = "archive.export_ready"
	// EventWebhookTest is the sample event of POST
	// /v1/webhook-endpoints/{id}/test; it is never stored as an event.
	EventWebhookTest = "webhook_endpoint.test"
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

// writeEvent stores one event about object (rendered now, in tx) of a
// company, and a webhook delivery for each endpoint that wants it.
func writeEvent(ctx context.Context, tx *store.Tx, account, companyID, env, typ, objectID string, object any) error {
	return writeEventAt(ctx, tx, account, companyID, env, typ, objectID, object, tx.Now)
}

// writeEventAt is writeEvent for a change that happened at at (an agent
// found to have gone quiet earlier).
func writeEventAt(ctx context.Context, tx *store.Tx, account, companyID, env, typ, objectID string, object any, at time.Time) error {
	if err := checkEventObject(typ, objectID, object); err != nil {
		return err
	}
	b, err := json.Marshal(eventData{Object: object})
	if err != nil {
		return fmt.Errorf("event %s data: %w", typ, err)
	}
	return storeEvent(ctx, tx, account, companyID, env, typ, objectID, string(b), at)
}

// writeEInvoiceEvent is writeEvent for an e-invoice rendered already
// (renderedView): its data is made from those bytes, as json.Marshal
// would make it, instead of rendering the e-invoice again.
func writeEInvoiceEvent(ctx context.Context, tx *store.Tx, inv EInvoice, account, typ string) error {
	ev, err := eventParams(tx, account, typ, inv)
	if err != nil {
		return err
	}
	if err := tx.CreateEvent(ctx, ev); err != nil {
		return fmt.Errorf("event %s of %s: %w", typ, inv.ID, err)
	}
	return fanOut(ctx, tx, ev)
}

// eventParams is the event row of writeEInvoiceEvent, at tx.Now, for a
// caller that stores it itself (and then fans it out).
func eventParams(tx *store.Tx, account, typ string, inv EInvoice) (dbq.CreateEventParams, error) {
	if err := checkEventObject(typ, inv.ID, inv); err != nil {
		return dbq.CreateEventParams{}, err
	}
	obj, err := inv.MarshalJSON()
	if err != nil {
		return dbq.CreateEventParams{}, fmt.Errorf("event %s data: %w", typ, err)
	}
	return dbq.CreateEventParams{ID: denar.NewID("evt"), AccountID: account, CompanyID: inv.CompanyID,
		Environment: inv.Environment, Type: typ, ObjectID: inv.ID, Payload: eventDataOf(obj), CreatedAt: tx.Now.UTC()}, nil
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

// checkEventObject refuses an event type outside the catalogue, or an
// object of another resource than the catalogue's.
func checkEventObject(typ, objectID string, object any) error {
	if k, ok := EventKindOf(typ); !ok || typ == EventWebhookTest {
		return fmt.Errorf("event %s of %s: not a type of the event catalogue", typ, objectID)
	} else if r, _ := EventResources()[k.Resource]; r != nil && reflect.TypeOf(r) != reflect.TypeOf(object) {
		return fmt.Errorf("event %s of %s: data.object is %T, the catalogue says %s", typ, objectID, object, k.Resource)
	}
	return nil
}

// storeEvent stores an event with its data and fans it out to the
// webhook endpoints that want it.
func storeEvent(ctx context.Context, tx *store.Tx, account, companyID, env, typ, objectID, payload string, at time.Time) error {
	ev := dbq.CreateEventParams{ID: denar.NewID("evt"), AccountID: account, CompanyID: companyID,
		Environment: env, Type: typ, ObjectID: objectID, Payload: payload, CreatedAt: at.UTC()}
	if err := tx.CreateEvent(ctx, ev); err != nil {
		return fmt.Errorf("event %s of %s: %w", typ, objectID, err)
	}
	return fanOut(ctx, tx, ev)
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
		from = validTime(f.CreatedFrom.UTC().Truncate(time.Microsecond))
	}
	if !f.CreatedTo.IsZero() {
		to = validTime(f.CreatedTo.UTC().Truncate(time.Microsecond))
	}
	return from, to
}

// check refuses a filter the caller may not use: a type outside the
// catalogue (422 at query.type), a company outside its
// allow-list or account (403 company_not_allowed) or of the other
// environment (403 environment_mismatch), as X-Company-Id would be.
func (f EventFilter) check(ctx context.Context, q *dbq.Queries, p *auth.Principal) error {
	if _, ok := EventKindOf(f.Type); f.Type != "" && !ok {
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
	return page(limit, after, func(after string, lim int) ([]dbq.Event, error) {
		rows, err := q.ListEvents(ctx, dbq.ListEventsParams{AccountID: p.AccountID, Environment: p.Environment,
			AfterID: after, Type: optional(f.Type), ObjectID: optional(f.ObjectID), CompanyID: optional(f.CompanyID),
			CreatedFrom: from, CreatedTo: to, Lim: int64(lim)})
		if err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		return rows, nil
	}, func(r dbq.Event) string { return r.ID }, func(r dbq.Event) bool { return p.AllowsCompany(r.CompanyID) }, plain(eventView))
}

// Event returns one event of the caller's account and environment: 404
// outside the account, 403 for another environment or a company outside
// the allow-list.
func (s *Service) Event(ctx context.Context, p *auth.Principal, id string) (Event, error) {
	r, err := accountEvent(ctx, s.db.Reader(), p, id)
	if err != nil {
		return Event{}, err
	}
	return eventView(r), nil
}

func accountEvent(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.Event, error) {
	r, err := q.GetAccountEvent(ctx, dbq.GetAccountEventParams{ID: id, AccountID: p.AccountID})
	if errors.Is(err, sql.ErrNoRows) {
		return r, denar.Errorf(denar.ECodeNotFound, "No event %s in this account.", id)
	}
	if err != nil {
		return r, fmt.Errorf("load event %s: %w", id, err)
	}
	return r, reach(p, "Event "+id, r.Environment, r.CompanyID)
}

func optional(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}
