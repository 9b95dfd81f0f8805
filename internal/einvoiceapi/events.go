package einvoiceapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Event is one entry of GET /v1/events. Every einvoice.* payload has the
// shape of eventPayload: {id, companyId, from, status, cause, ujpCode?,
// euid?, problems?}.
type Event struct {
	ID        string          `json:"id" doc:"Prefix evt_."`
	Object    string          `json:"object" enum:"event"`
	Type      string          `json:"type" doc:"einvoice.submitted, einvoice.accepted, einvoice.auto_accepted, einvoice.rejected, einvoice.held, einvoice.failed, einvoice.validated_failed, einvoice.cancelled_by_storno, einvoice.corrected."`
	ObjectID  string          `json:"objectId"`
	CompanyID string          `json:"companyId"`
	Payload   json.RawMessage `json:"payload" doc:"For einvoice.*: {id, companyId, from, status, cause, ujpCode, euid, problems}; ujpCode, euid and problems only when set."`
	CreatedAt time.Time       `json:"createdAt"`
}

type listEventsInput struct {
	Type     string `query:"type" maxLength:"100"`
	ObjectID string `query:"objectId" maxLength:"100"`
	Cursor   string `query:"cursor"`
	Limit    int    `query:"limit" default:"25" minimum:"1" maximum:"200"`
}

type listEventsOutput struct{ Body httpx.Page[Event] }

func (h *handlers) registerEvents(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "listEvents", Method: http.MethodGet, Path: "/v1/events",
		Summary: "List events", Tags: []string{"Events"},
		Description: "Newest first, of the account and the credential's environment, within its company allow-list.",
	}, httpx.Spec{Scope: "events:read"}, h.listEvents)
}

func (h *handlers) listEvents(ctx context.Context, in *listEventsInput) (*listEventsOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	digest := filterDigest(in.Type, in.ObjectID)
	after, err := httpx.DecodeCursor(in.Cursor, digest)
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, in.Limit+1)
	// Events of companies outside the allow-list are skipped, so read on
	// until the page (plus one) is full.
	for len(out) <= in.Limit {
		rows, err := h.deps.DB.Reader().ListEvents(ctx, dbq.ListEventsParams{AccountID: p.AccountID, Environment: p.Environment,
			AfterID: after, Type: optional(in.Type), ObjectID: optional(in.ObjectID), Lim: int64(in.Limit + 1)})
		if err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		for _, r := range rows {
			after = r.ID
			if p.AllowsCompany(r.CompanyID) && len(out) <= in.Limit {
				out = append(out, Event{ID: r.ID, Object: "event", Type: r.Type, ObjectID: r.ObjectID, CompanyID: r.CompanyID,
					Payload: json.RawMessage(r.Payload), CreatedAt: r.CreatedAt.UTC()})
			}
		}
		if len(rows) < in.Limit+1 {
			break
		}
	}
	return &listEventsOutput{Body: httpx.NewPage(out, in.Limit, func(e Event) string { return e.ID }, digest)}, nil
}
