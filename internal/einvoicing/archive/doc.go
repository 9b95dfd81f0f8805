// Package archive is the archive exports room of the e-invoicing
// application: a zip of every document a company sent or received in a
// date range, with a manifest an auditor can check without trusting us
// (POST /v1/archive-exports, GET one, download it), built by a typed job
// into the blob store, and the periodic purge of expired exports. Its
// events go through einvoicing's Publisher port, its idempotent write
// through internal/usecase, and its reads of a tenant's rows take the
// credential's reach in SQL (auth.InReach). It imports internal/einvoicing
// (the vocabulary of sent documents, their status history and the company
// rule), never the reverse, and knows no HTTP server: the API and the job
// runner call it, and cmd/denar wires it.
package archive
