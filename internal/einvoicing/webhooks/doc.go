// Package webhooks is the events and webhooks room of the e-invoicing
// application: the event catalogue (GET /v1/event-types), writing an event
// and its webhook deliveries in the transaction of the change that causes
// it (Publish: internal/einvoicing publishes through a port of its own,
// which this Service satisfies), the event log and feed (GET /v1/events),
// webhook endpoints (create, change, delete, rotate their secret, test,
// recover, replay an event) and the delivery job. It knows no HTTP server
// and does not import internal/einvoicing: the API, the dashboard and the
// job runner call it, and cmd/denar wires it.
package webhooks
