package einvoiceapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
)

type listEventsInput struct {
	Type        string `query:"type" maxLength:"100" doc:"Only events of this type (see GET /v1/event-types); a type outside the catalogue is 422 at query.type."`
	ObjectID    string `query:"objectId" maxLength:"100" doc:"Only events about this object (an e-invoice, an agent, …)."`
	CompanyID   string `query:"companyId" maxLength:"100" doc:"Only events of this company (as X-Company-Id; a company the credential cannot reach is 403 company_not_allowed, one of the other environment 403 environment_mismatch)."`
	CreatedFrom string `query:"createdFrom" maxLength:"40" format:"date-time" doc:"Only events created at or after this time (RFC 3339)."`
	CreatedTo   string `query:"createdTo" maxLength:"40" format:"date-time" doc:"Only events created before this time (RFC 3339)."`
	Cursor      string `query:"cursor" maxLength:"200" doc:"List mode: nextCursor of the previous page (with the same filters)."`
	After       string `query:"after" maxLength:"200" doc:"Feed mode: start for the oldest event, now for only what comes next, or the nextCursor of the previous feed read (with the same filters)."`
	Limit       int    `query:"limit" default:"25" minimum:"1" maximum:"200" example:"25" doc:"Page size: 1 to 200 events."`
}

// EventPage is a page of GET /v1/events.
type EventPage struct {
	Data       []webhooks.Event `json:"data" doc:"List mode: newest first. Feed mode (after): oldest first, in feed order."`
	NextCursor *string          `json:"nextCursor" doc:"List mode: pass as cursor for the next page; null on the last page. Feed mode: never null; pass it as after to continue, now or later."`
	HasMore    bool             `json:"hasMore" doc:"More events follow right away (read again without waiting)."`
}

type listEventsOutput struct{ Body EventPage }

type eventIDInput struct {
	ID string `path:"id" maxLength:"100" example:"evt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The event's id (evt_…)."`
}

type eventOutput struct{ Body webhooks.Event }

type eventTypesOutput struct {
	Body httpx.Page[webhooks.EventKind]
}

type deliveriesInput struct {
	ID          string `path:"id" maxLength:"100" example:"evt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The event's id (evt_…)."`
	State       string `query:"state" enum:"pending,failed,succeeded,abandoned" doc:"Only deliveries in this state."`
	StatusClass string `query:"statusClass" enum:"1xx,2xx,3xx,4xx,5xx,none" doc:"Only deliveries whose last attempt got an answer of this class (none: no answer)."`
	Cursor      string `query:"cursor" maxLength:"200" doc:"nextCursor of the previous page (with the same filters)."`
	Limit       int    `query:"limit" default:"25" minimum:"1" maximum:"100" example:"25" doc:"Page size: 1 to 100 deliveries."`
}

type deliveriesOutput struct {
	Body httpx.Page[webhooks.WebhookDelivery]
}

type replayInput struct {
	ID   string `path:"id" maxLength:"100" example:"evt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The event's id (evt_…)."`
	Body *struct {
		EndpointID string `json:"endpointId,omitempty" maxLength:"100" doc:"Deliver only to this endpoint (also one not subscribed to the event's type). Default: every enabled endpoint subscribed to it."`
	} `required:"false"`
}

type replayOutput struct{ Body webhooks.ReplayResult }

// feedCursor is an opaque feed position bound to the filters.
func feedCursor(seq int64, digest string) string {
	return httpx.EncodeCursor("seq:"+strconv.FormatInt(seq, 10), digest)
}

func parseFeedPosition(after, digest string) (int64, error) {
	switch after {
	case "start":
		return 0, nil
	case "now":
		return webhooks.FeedNow, nil
	}
	raw, err := httpx.DecodeCursor(after, digest)
	if err != nil {
		return 0, afterField(err)
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(raw, "seq:"), 10, 64)
	if !strings.HasPrefix(raw, "seq:") || err != nil || n < 0 {
		return 0, denar.Invalid(denar.FieldError{Path: "query.after", Message: "not a feed cursor: pass start, now, or the nextCursor of a feed read"})
	}
	return n, nil
}

// afterField renames the cursor problem's path to the parameter it came in.
func afterField(err error) error {
	var de *denar.Error
	if errors.As(err, &de) {
		cp := *de
		cp.Fields = nil
		for _, f := range de.Fields {
			f.Path = "query.after"
			cp.Fields = append(cp.Fields, f)
		}
		return &cp
	}
	return err
}

func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, denar.Invalid(denar.FieldError{Path: "query." + field, Message: "must be an RFC 3339 time, such as 2026-05-01T00:00:00Z"})
	}
	return t, nil
}

func (h *handlers) registerEvents(s *httpx.Service) {
	tags := []string{"Events"}
	httpx.Register(s, huma.Operation{
		OperationID: "listEvents", Method: http.MethodGet, Path: "/v1/events",
		Summary: "List events, or read the event feed", Tags: tags,
		Description: "Events of the account in the credential's environment, within its company allow-list. Each carries the " +
			"resource it is about, as GET returns it right after the change, in data.object.\n\n" +
			"List mode (no after): newest first, paged with cursor.\n\n" +
			"Feed mode (after=start, after=now, or after=<nextCursor of the last read>): oldest first in feed order, a cursor " +
			"that only moves forward and never skips an event: positions are given to events after they commit, so an event " +
			"whose transaction commits late is placed after everything already read, not before it. A client that cannot " +
			"receive webhooks keeps the last nextCursor and polls with it. A cursor of another feed or with other filters " +
			"is 422 validation_failed at query.after.",
	}, httpx.Spec{Scope: "events:read", CompanyFilter: true}, func(ctx context.Context, in *listEventsInput) (*listEventsOutput, error) {
		// The company comes from X-Company-Id (checked by the guard) or
		// from companyId (checked by the service); both must agree.
		company := in.CompanyID
		if hdr := httpx.CompanyFrom(ctx); hdr != "" {
			if company != "" && company != hdr {
				return nil, denar.Invalid(denar.FieldError{Path: "query.companyId", Message: "differs from X-Company-Id; send one of them"})
			}
			company = hdr
		}
		from, err := parseTime("createdFrom", in.CreatedFrom)
		if err != nil {
			return nil, err
		}
		to, err := parseTime("createdTo", in.CreatedTo)
		if err != nil {
			return nil, err
		}
		f := webhooks.EventFilter{Type: in.Type, ObjectID: in.ObjectID, CompanyID: company, CreatedFrom: from, CreatedTo: to}
		digest := filterDigest(in.Type, in.ObjectID, company, in.CreatedFrom, in.CreatedTo)
		p := httpx.PrincipalFrom(ctx)
		if in.After != "" {
			if in.Cursor != "" {
				return nil, denar.Invalid(denar.FieldError{Path: "query.cursor", Message: "cursor pages the list; after reads the feed: send one of them"})
			}
			pos, err := parseFeedPosition(in.After, digest)
			if err != nil {
				return nil, err
			}
			page, err := h.hooks.EventFeed(ctx, p, f, pos, in.Limit)
			if err != nil {
				return nil, err
			}
			next := feedCursor(page.Next, digest)
			return &listEventsOutput{Body: EventPage{Data: page.Events, NextCursor: &next, HasMore: page.More}}, nil
		}
		after, err := httpx.DecodeCursor(in.Cursor, digest)
		if err != nil {
			return nil, err
		}
		out, err := h.hooks.Events(ctx, p, f, after, in.Limit)
		if err != nil {
			return nil, err
		}
		pg := httpx.NewPage(out, in.Limit, func(e webhooks.Event) string { return e.ID }, digest)
		return &listEventsOutput{Body: EventPage{Data: pg.Data, NextCursor: pg.NextCursor, HasMore: pg.NextCursor != nil}}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getEvent", Method: http.MethodGet, Path: "/v1/events/{id}",
		Summary: "Get an event", Tags: tags,
		Description: "The event exactly as webhooks deliver it.",
	}, httpx.Spec{Scope: "events:read"}, func(ctx context.Context, in *eventIDInput) (*eventOutput, error) {
		e, err := h.hooks.Event(ctx, httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &eventOutput{Body: e}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "listEventTypes", Method: http.MethodGet, Path: "/v1/event-types",
		Summary: "List the event types", Tags: tags,
		Description: "The catalogue of event types, with the resource each carries in data.object. The payload of each " +
			"type is described under webhooks in this document.",
	}, httpx.Spec{Scope: "events:read"}, func(ctx context.Context, _ *struct{}) (*eventTypesOutput, error) {
		return &eventTypesOutput{Body: httpx.Page[webhooks.EventKind]{Data: webhooks.EventKinds()}}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "listEventDeliveries", Method: http.MethodGet, Path: "/v1/events/{id}/deliveries",
		Summary: "List the webhook deliveries of an event", Tags: tags,
		Description: "Newest first: one delivery per endpoint (and per test), each with every attempt — time, duration, " +
			"status code, the first 2 KB of the answer, scheduled or manual.",
	}, httpx.Spec{Scope: "events:read"}, func(ctx context.Context, in *deliveriesInput) (*deliveriesOutput, error) {
		digest := filterDigest(in.State, in.StatusClass)
		after, err := httpx.DecodeCursor(in.Cursor, digest)
		if err != nil {
			return nil, err
		}
		out, err := h.hooks.EventDeliveries(ctx, httpx.PrincipalFrom(ctx), in.ID,
			webhooks.DeliveryFilter{State: in.State, StatusClass: in.StatusClass}, after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &deliveriesOutput{Body: httpx.NewPage(out, in.Limit, func(d webhooks.WebhookDelivery) string { return d.ID }, digest)}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "replayEvent", Method: http.MethodPost, Path: "/v1/events/{id}/replay",
		Summary: "Deliver an event again", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Delivers the event again now, to endpointId or to every enabled endpoint subscribed to its type and " +
			"company. A delivery that exists for the (event, endpoint) is re-opened — a retry waiting for its time is " +
			"brought forward, a finished one starts a new chain of attempts (with the retry schedule) — and its next " +
			"attempt is marked manual. A disabled endpointId is 409 webhook_endpoint_disabled.",
	}, httpx.Spec{Scope: "webhooks:write"}, func(ctx context.Context, in *replayInput) (*replayOutput, error) {
		endpointID := ""
		if in.Body != nil {
			endpointID = in.Body.EndpointID
		}
		out, err := h.hooks.ReplayEvent(ctx, caller(ctx), in.ID, endpointID)
		if err != nil {
			return nil, err
		}
		return &replayOutput{Body: out}, nil
	})
}
