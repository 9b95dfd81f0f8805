package einvoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Event types. Each is written in the transaction of the change that
// causes it, with the resource as GET returns it after the change.
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
)

// Event is one entry of GET /v1/events.
type Event struct {
	ID          string          `json:"id" doc:"Prefix evt_."`
	Object      string          `json:"object" enum:"event"`
	Type        string          `json:"type" doc:"See the event catalogue."`
	CreatedAt   time.Time       `json:"createdAt"`
	Environment string          `json:"environment" enum:"sandbox,production"`
	CompanyID   string          `json:"companyId"`
	Data        json.RawMessage `json:"data" doc:"{object}: the resource the event is about, as GET returns it right after the change."`
}

// eventData is the data member of an event.
type eventData struct {
	Object any `json:"object"`
}

// writeEvent stores one event about object (rendered now, in tx) of a
// company.
func writeEvent(ctx context.Context, tx *store.Tx, account, companyID, env, typ, objectID string, object any) error {
	return writeEventAt(ctx, tx, account, companyID, env, typ, objectID, object, tx.Now)
}

// writeEventAt is writeEvent for a change that happened at at (an agent
// found to have gone quiet earlier).
func writeEventAt(ctx context.Context, tx *store.Tx, account, companyID, env, typ, objectID string, object any, at time.Time) error {
	b, err := json.Marshal(eventData{Object: object})
	if err != nil {
		return fmt.Errorf("event %s data: %w", typ, err)
	}
	if err := tx.CreateEvent(ctx, dbq.CreateEventParams{ID: denar.NewID("evt"), AccountID: account, CompanyID: companyID,
		Environment: env, Type: typ, ObjectID: objectID, Payload: string(b), CreatedAt: at}); err != nil {
		return fmt.Errorf("event %s of %s: %w", typ, objectID, err)
	}
	return nil
}

func eventView(r dbq.Event) Event {
	return Event{ID: r.ID, Object: "event", Type: r.Type, CreatedAt: r.CreatedAt.UTC(), Environment: r.Environment,
		CompanyID: r.CompanyID, Data: json.RawMessage(r.Payload)}
}

// EventFilter selects events.
type EventFilter struct {
	Type     string
	ObjectID string
	// CompanyID, when set, is a company the caller may act for (the guard
	// checked X-Company-Id).
	CompanyID string
}

// Events returns up to limit+1 events of the caller's account and
// environment within its allow-list, newest first, after the id after.
func (s *Service) Events(ctx context.Context, p *auth.Principal, f EventFilter, after string, limit int) ([]Event, error) {
	q := s.db.Reader()
	out := make([]Event, 0, limit+1)
	// Events of companies outside the allow-list are skipped, so read on
	// until the page (plus one) is full.
	for len(out) <= limit {
		rows, err := q.ListEvents(ctx, dbq.ListEventsParams{AccountID: p.AccountID, Environment: p.Environment,
			AfterID: after, Type: optional(f.Type), ObjectID: optional(f.ObjectID), CompanyID: optional(f.CompanyID), Lim: int64(limit + 1)})
		if err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		for _, r := range rows {
			after = r.ID
			if p.AllowsCompany(r.CompanyID) && len(out) <= limit {
				out = append(out, eventView(r))
			}
		}
		if len(rows) < limit+1 {
			break
		}
	}
	return out, nil
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
