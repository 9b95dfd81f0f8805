package einvoiceapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
)

// CreateWebhookEndpointBody is the body of POST /v1/webhook-endpoints.
type CreateWebhookEndpointBody struct {
	URL         string   `json:"url" minLength:"1" maxLength:"2048" example:"https://erp.example.mk/hooks/denar" doc:"Where events are POSTed. Production: https, and the host must resolve to public addresses. Sandbox: http or https; loopback and private addresses only when the operator allows them."`
	Events      []string `json:"events" minItems:"1" maxItems:"50" example:"[\"einvoice.submitted\",\"einvoice.rejected\",\"inbox.received\"]" doc:"Event types to deliver (GET /v1/event-types), or [\"*\"] for all."`
	Description string   `json:"description,omitempty" maxLength:"500" example:"ERP — продажба" doc:"Your note about the endpoint, up to 500 characters."`
	CompanyIDs  []string `json:"companyIds,omitempty" maxItems:"100" doc:"Only events of these companies; absent or empty for every company. A credential limited to companies must name some of its own."`
}

type createWebhookEndpointInput struct {
	Body CreateWebhookEndpointBody
}

type webhookEndpointOutput struct {
	Location string `header:"Location"`
	Body     webhooks.WebhookEndpoint
}

type webhookEndpointIDInput struct {
	ID string `path:"id" maxLength:"100" example:"whe_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The webhook endpoint's id (whe_…)."`
}

type listWebhookEndpointsInput struct {
	Cursor string `query:"cursor" maxLength:"200" doc:"nextCursor of the previous page."`
	Limit  int    `query:"limit" default:"25" minimum:"1" maximum:"100" example:"25" doc:"Page size: 1 to 100 endpoints."`
}

type listWebhookEndpointsOutput struct {
	Body httpx.Page[webhooks.WebhookEndpoint]
}

// optionalIDs is a PATCH list that tells absent from null.
type optionalIDs struct {
	set   bool
	value *[]string
}

// UnmarshalJSON records that the field was present, and its value or null.
func (o *optionalIDs) UnmarshalJSON(b []byte) error {
	o.set = true
	if string(b) == "null" {
		return nil
	}
	var v []string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.value = &v
	return nil
}

// Schema documents the field as a nullable array of company ids.
func (optionalIDs) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "array", Nullable: true, MaxItems: ptr(100), Items: &huma.Schema{Type: "string", MaxLength: ptr(100)},
		Description: "Absent leaves it; null or [] makes the endpoint receive events of every company."}
}

// PatchWebhookEndpointBody is the body of PATCH /v1/webhook-endpoints/{id}.
type PatchWebhookEndpointBody struct {
	URL         *string     `json:"url,omitempty" minLength:"1" maxLength:"2048" doc:"Checked like a new endpoint's URL."`
	Events      []string    `json:"events,omitempty" minItems:"1" maxItems:"50" example:"[\"*\"]" doc:"Event types to deliver (GET /v1/event-types), or [\"*\"] for all; absent leaves them."`
	Description *string     `json:"description,omitempty" maxLength:"500" example:"ERP — продажба и набавка" doc:"Your note about the endpoint; absent leaves it."`
	CompanyIDs  optionalIDs `json:"companyIds,omitempty" required:"false" doc:"Only events of these companies. Absent leaves it; null or [] makes the endpoint receive events of every company."`
	Enabled     *bool       `json:"enabled,omitempty" doc:"true re-enables a disabled endpoint (its failure clock starts afresh; POST …/recover re-sends what it missed); false disables it and abandons what waits for it."`
}

type patchWebhookEndpointInput struct {
	ID   string `path:"id" maxLength:"100" example:"whe_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The webhook endpoint's id (whe_…)."`
	Body PatchWebhookEndpointBody
}

type deleteOutput struct{}

type testOutput struct{ Body webhooks.WebhookDelivery }

// RecoverBody is the body of POST /v1/webhook-endpoints/{id}/recover.
type RecoverBody struct {
	Since time.Time `json:"since" doc:"Re-queue the failed and abandoned deliveries created at or after this time (RFC 3339)."`
}

type recoverInput struct {
	ID   string `path:"id" maxLength:"100" example:"whe_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The webhook endpoint's id (whe_…)."`
	Body RecoverBody
}

type recoverOutput struct{ Body webhooks.Recovery }

func (h *handlers) registerWebhooks(s *httpx.Service) {
	tags := []string{"Webhooks"}
	spec := httpx.Spec{Scope: "webhooks:write"}
	httpx.Register(s, huma.Operation{
		OperationID: "createWebhookEndpoint", Method: http.MethodPost, Path: "/v1/webhook-endpoints",
		Summary: "Register a webhook endpoint", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Events of the credential's environment (sandbox keys: sandbox events only) of the types named are " +
			"POSTed to url, signed with the returned secret (Service-Signature; see docs/webhooks.md). The secret is shown " +
			"in this answer only: an Idempotency-Key replay answers with secret null (rotate it if the first answer was " +
			"lost). A refused URL is 422 webhook_url_refused (errors[].path url); more than 20 endpoints in one environment " +
			"is 409 webhook_endpoint_limit.",
	}, spec, func(ctx context.Context, in *createWebhookEndpointInput) (*webhookEndpointOutput, error) {
		b := in.Body
		ep, err := h.hooks.CreateWebhookEndpoint(ctx, caller(ctx), webhooks.CreateWebhookEndpoint{URL: b.URL, Events: b.Events,
			Description: b.Description, CompanyIDs: b.CompanyIDs})
		if err != nil {
			return nil, err
		}
		return &webhookEndpointOutput{Location: ep.Path(), Body: ep}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "listWebhookEndpoints", Method: http.MethodGet, Path: "/v1/webhook-endpoints",
		Summary: "List webhook endpoints", Tags: tags,
		Description: "Newest first, of the credential's environment, with their health (lastSuccessAt, failingSince, disabledReason).",
	}, spec, func(ctx context.Context, in *listWebhookEndpointsInput) (*listWebhookEndpointsOutput, error) {
		after, err := httpx.DecodeCursor(in.Cursor, "")
		if err != nil {
			return nil, err
		}
		out, err := h.hooks.WebhookEndpoints(ctx, httpx.PrincipalFrom(ctx), after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &listWebhookEndpointsOutput{Body: httpx.NewPage(out, in.Limit, func(e webhooks.WebhookEndpoint) string { return e.ID }, "")}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getWebhookEndpoint", Method: http.MethodGet, Path: "/v1/webhook-endpoints/{id}",
		Summary: "Get a webhook endpoint", Tags: tags,
		Description: "One webhook endpoint of the account: its URL, subscribed events, companies and state (never its secret).",
	}, spec, func(ctx context.Context, in *webhookEndpointIDInput) (*webhookEndpointOutput, error) {
		ep, err := h.hooks.WebhookEndpoint(ctx, httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &webhookEndpointOutput{Body: ep}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "updateWebhookEndpoint", Method: http.MethodPatch, Path: "/v1/webhook-endpoints/{id}",
		Summary: "Change a webhook endpoint", Tags: tags,
		Description: "Change url, events, description, companyIds, or enabled. Re-enable a disabled endpoint with enabled: true.",
	}, spec, func(ctx context.Context, in *patchWebhookEndpointInput) (*webhookEndpointOutput, error) {
		b := in.Body
		cmd := webhooks.UpdateWebhookEndpoint{URL: b.URL, Events: b.Events, Description: b.Description, Enabled: b.Enabled,
			CompanyIDs: einvoicing.Optional[[]string]{Set: b.CompanyIDs.set, Value: b.CompanyIDs.value}}
		ep, err := h.hooks.UpdateWebhookEndpoint(ctx, caller(ctx), in.ID, cmd)
		if err != nil {
			return nil, err
		}
		return &webhookEndpointOutput{Body: ep}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "deleteWebhookEndpoint", Method: http.MethodDelete, Path: "/v1/webhook-endpoints/{id}",
		Summary: "Delete a webhook endpoint", Tags: tags, DefaultStatus: http.StatusNoContent,
		Description: "Removes the endpoint and its delivery log; deliveries still waiting for it are dropped.",
	}, spec, func(ctx context.Context, in *webhookEndpointIDInput) (*deleteOutput, error) {
		if err := h.hooks.DeleteWebhookEndpoint(ctx, caller(ctx), in.ID); err != nil {
			return nil, err
		}
		return &deleteOutput{}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "rotateWebhookSecret", Method: http.MethodPost, Path: "/v1/webhook-endpoints/{id}/rotate-secret",
		Summary: "Rotate a webhook endpoint's secret", Tags: tags,
		Description: "Returns the endpoint with its new secret, shown this once (an Idempotency-Key replay answers with secret " +
			"null). For 24 hours deliveries carry two signatures, v1= with the new secret and v1= with the old one, so " +
			"receivers can switch at their pace; a secret replaced earlier stops signing at once.",
	}, spec, func(ctx context.Context, in *webhookEndpointIDInput) (*webhookEndpointOutput, error) {
		ep, err := h.hooks.RotateWebhookSecret(ctx, caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &webhookEndpointOutput{Body: ep}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "testWebhookEndpoint", Method: http.MethodPost, Path: "/v1/webhook-endpoints/{id}/test",
		Summary: "Send a test event", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Sends a sample event of type webhook_endpoint.test (data.object is the endpoint) now, once, also to a " +
			"disabled endpoint. It is signed like any delivery, appears in the delivery log with test: true, is not " +
			"in GET /v1/events, and does not count toward the endpoint's health.",
	}, spec, func(ctx context.Context, in *webhookEndpointIDInput) (*testOutput, error) {
		d, err := h.hooks.TestWebhookEndpoint(ctx, caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &testOutput{Body: d}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "recoverWebhookEndpoint", Method: http.MethodPost, Path: "/v1/webhook-endpoints/{id}/recover",
		Summary: "Re-send what an endpoint missed", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Re-queues, due now, every failed or abandoned delivery to the endpoint created at or after since (at " +
			"most 1000 a call; more: true asks for another call). Each starts a new chain of attempts with the retry " +
			"schedule, its first attempt marked manual. A disabled endpoint is 409 webhook_endpoint_disabled: enable it first.",
	}, spec, func(ctx context.Context, in *recoverInput) (*recoverOutput, error) {
		out, err := h.hooks.RecoverWebhookEndpoint(ctx, caller(ctx), in.ID, in.Body.Since)
		if err != nil {
			return nil, err
		}
		return &recoverOutput{Body: out}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "listWebhookEndpointDeliveries", Method: http.MethodGet, Path: "/v1/webhook-endpoints/{id}/deliveries",
		Summary: "List an endpoint's deliveries", Tags: tags,
		Description: "The delivery log, newest first: each delivery with its state and every attempt — time, duration, " +
			"status code, the first 2 KB of the answer, scheduled or manual. Filter by state and by the status class of " +
			"the last attempt.",
	}, spec, func(ctx context.Context, in *deliveriesInput) (*deliveriesOutput, error) {
		digest := filterDigest(in.State, in.StatusClass)
		after, err := httpx.DecodeCursor(in.Cursor, digest)
		if err != nil {
			return nil, err
		}
		out, err := h.hooks.EndpointDeliveries(ctx, httpx.PrincipalFrom(ctx), in.ID,
			webhooks.DeliveryFilter{State: in.State, StatusClass: in.StatusClass}, after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &deliveriesOutput{Body: httpx.NewPage(out, in.Limit, func(d webhooks.WebhookDelivery) string { return d.ID }, digest)}, nil
	})
}
