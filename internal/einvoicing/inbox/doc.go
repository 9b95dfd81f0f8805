// Package inbox is the inbox room of the e-invoicing application: the
// incoming e-invoices of a company, read from UJP's purchase side by
// signed reads (the sync the pipeline's poll starts through
// einvoicing.Inbox), the company's accept or reject decision, signed on
// its device and sent by the query job, the decision deadline's
// reminders and auto-acceptance (a periodic job), and the sandbox's
// buyer-side simulations. It registers the handlers of its link types
// (the purchase reads, the inbox PDF and status reads, the decision) on
// internal/einvoicing's signed-links registry when it is built. It
// imports internal/einvoicing (signing requests, events, code lists, the
// company rule, the pipeline's UJP calls), never the reverse, and knows no
// HTTP server: the API, the dashboard and the job runner call it, and
// cmd/denar wires it.
package inbox
