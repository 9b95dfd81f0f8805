package einvoiceapi

import (
	"maps"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
)

// documentWebhooks describes, under the OpenAPI document's webhooks, the
// request the service sends for each type of the event catalogue: its
// signature header and its body, whose data.object is the type's resource
// as GET returns it. A kind added to the catalogue appears here by itself.
func (h *handlers) documentWebhooks(s *httpx.Service) {
	oapi := s.API.OpenAPI()
	reg := oapi.Components.Schemas
	if oapi.Webhooks == nil {
		oapi.Webhooks = map[string]*huma.PathItem{}
	}
	resources := EventResources()
	str := func(desc string) *huma.Schema { return &huma.Schema{Type: "string", Description: desc} }
	for _, k := range webhooks.EventKinds() {
		var obj *huma.Schema
		if r := resources[k.Resource]; r != nil {
			obj = reg.Schema(reflect.TypeOf(r), true, "")
			obj.Description = "The " + strings.ReplaceAll(k.Resource, "_", " ") + " the event is about, as its GET operation returns it right after the change."
		} else {
			obj = &huma.Schema{Type: "object", Description: "The " + strings.ReplaceAll(k.Resource, "_", " ") +
				" as its GET operation returns it (" + k.Resource + " in the e-invoicing specification)."}
		}
		name := eventSchemaName(k.Type)
		reg.Map()[name] = &huma.Schema{
			Type: "object", Description: "The body of the " + k.Type + " webhook, and the event as GET /v1/events returns it. " + k.Description,
			Examples:             []any{eventExample(k)},
			Required:             []string{"id", "object", "type", "createdAt", "environment", "companyId", "data"},
			AdditionalProperties: false,
			Properties: map[string]*huma.Schema{
				"id":          str("Prefix evt_. The same event delivered twice (a retry, a replay) has the same id: use it to ignore repeats."),
				"object":      {Type: "string", Enum: []any{"event"}, Description: "Always event."},
				"type":        {Type: "string", Enum: []any{k.Type}, Description: "The event's type, " + k.Type + " (also in the Service-Event-Type header)."},
				"createdAt":   {Type: "string", Format: "date-time", Description: "When the change happened. Deliveries are not in order: order by createdAt, and by data.object.updatedAt for the same object."},
				"environment": {Type: "string", Enum: []any{"sandbox", "production"}, Description: "The environment of the company (and of the endpoint)."},
				"companyId":   str("The company the event is about (empty for webhook_endpoint.test)."),
				"data": {Type: "object", Required: []string{"object"}, AdditionalProperties: false, Description: "What the event is about.",
					Properties: map[string]*huma.Schema{"object": obj}},
			},
		}
		oapi.Webhooks[k.Type] = &huma.PathItem{Post: &huma.Operation{
			OperationID: "webhook." + k.Type,
			Summary:     k.Type,
			Description: k.Description + "\n\nPOSTed to every enabled endpoint subscribed to " + k.Type + " (or *) that covers the company. " +
				"Verify Service-Signature over the raw body before parsing it (docs/webhooks.md).",
			Tags: []string{"Webhooks"},
			Parameters: []*huma.Param{
				{Name: "Service-Signature", In: "header", Required: true, Schema: &huma.Schema{Type: "string"},
					Description: "t=<Unix time of sending>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed with the whole secret string (whsec_…)>; " +
						"a second v1= during the 24 hours after a rotation. Refuse a t more than 300 seconds from your clock, compare in constant time."},
				{Name: "Service-Delivery-Id", In: "header", Schema: &huma.Schema{Type: "string"},
					Description: "The delivery (whd_…) in the delivery log; the same on each retry."},
				{Name: "Service-Event-Type", In: "header", Schema: &huma.Schema{Type: "string"}, Description: "The event's type."},
			},
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
				"application/json": {Schema: &huma.Schema{Ref: "#/components/schemas/" + name}}}},
			Responses: map[string]*huma.Response{
				"2XX": {Description: "Received. Any other status (redirects included), or no answer within 15 seconds, is a failed " +
					"attempt: retried after 1 min, 5 min, 30 min, 2 h, 6 h and 12 h, then abandoned."},
			},
		}}
	}
}

// eventSchemaName is the schema of an event type's body:
// einvoice.auto_accepted → EinvoiceAutoAcceptedEvent.
func eventSchemaName(typ string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(typ, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	b.WriteString("Event")
	return b.String()
}

// EventResources is the whole event catalogue's resources with the Go type
// each is rendered as, every room's (archive.EventResources, with the
// core's, and reconcile.EventResources): the webhooks room's
// Deps.Resources, and the payloads of the OpenAPI document's webhooks.
func EventResources() map[string]any {
	m := archive.EventResources()
	maps.Copy(m, reconcile.EventResources())
	return m
}
