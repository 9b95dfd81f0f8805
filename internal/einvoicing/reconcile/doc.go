// Package reconcile is the reconciliation room of the e-invoicing
// application: a company's day compared with UJP's records
// (POST /v1/reconciliations, GET one and the list), run as a chain of
// signed reads the company's agent signs, each answer applied in one
// transaction that asks for the next read; the daily job that starts the
// days due and resumes quiet runs; and the go-live check (`denar ujp
// check`) with its stored reports. It imports internal/einvoicing (the
// moves of e-invoices, events, the inbox's storing of incoming documents,
// the pipeline's signed reads and the signed-links registry, where New
// registers its link types), never the reverse, and knows no HTTP server:
// the API, the dashboard, the CLI and the job runner call it, and
// cmd/denar wires it.
package reconcile
