// Package usage is the usage room of the e-invoicing application: the
// account's monthly report of documents against its plan (GET /v1/usage,
// the dashboard's usage page), read from the counters the ledger keeps.
// The ledger itself (einvoicing.CountSent, einvoicing.CountReceived) stays
// in internal/einvoicing: a document is counted in the transaction of the
// move that makes it count, by the core, the inbox or reconciliation. It
// imports internal/einvoicing (the company rule and the credential's
// reach), never the reverse, and knows no HTTP server: the API and the
// dashboard call it, and cmd/denar wires it.
package usage

import (
	"github.com/denar-mk/denar/internal/store"
)

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	DB *store.DB
}

// Service is the usage room: the usage report of a month.
type Service struct {
	db *store.DB
}

// New builds the room.
func New(d Deps) *Service {
	return &Service{db: d.DB}
}
