package einvoiceapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
)

type listEventsInput struct {
	Type     string `query:"type" maxLength:"100"`
	ObjectID string `query:"objectId" maxLength:"100"`
	Cursor   string `query:"cursor" maxLength:"200"`
	Limit    int    `query:"limit" default:"25" minimum:"1" maximum:"200"`
}

type listEventsOutput struct{ Body httpx.Page[einvoicing.Event] }

func (h *handlers) registerEvents(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "listEvents", Method: http.MethodGet, Path: "/v1/events",
		Summary: "List events", Tags: []string{"Events"},
		Description: "Newest first, of the account and the credential's environment, within its company allow-list. " +
			"Each event carries the resource it is about, as GET returns it right after the change, in data.object.",
	}, httpx.Spec{Scope: "events:read", CompanyFilter: true}, func(ctx context.Context, in *listEventsInput) (*listEventsOutput, error) {
		company := httpx.CompanyFrom(ctx)
		digest := filterDigest(in.Type, in.ObjectID, company)
		after, err := httpx.DecodeCursor(in.Cursor, digest)
		if err != nil {
			return nil, err
		}
		out, err := h.svc.Events(ctx, httpx.PrincipalFrom(ctx), einvoicing.EventFilter{Type: in.Type, ObjectID: in.ObjectID, CompanyID: company}, after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &listEventsOutput{Body: httpx.NewPage(out, in.Limit, func(e einvoicing.Event) string { return e.ID }, digest)}, nil
	})
}
