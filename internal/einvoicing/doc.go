// Package einvoicing is the application layer of the e-invoicing service,
// between its HTTP API (internal/einvoiceapi) and the domain (einvoice,
// einvoice/ujpdoc): signing requests and what a signature sets off, status
// moves written with their history and event in one transaction, and the
// submission pipeline that runs on durable jobs (internal/jobs) and talks to
// UJP through its gateway (internal/ujp). It knows no HTTP; the job runner
// and the API both call into it. Events are published through Publisher
// (events.go), in the transaction of the change; the events and webhooks
// room (internal/einvoicing/webhooks) implements it and serves the event
// log and the webhook endpoints.
package einvoicing
