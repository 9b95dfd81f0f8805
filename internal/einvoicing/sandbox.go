package einvoicing

import (
	"context"
)

// SandboxUJP drives the sandbox simulator of UJP on an integrator's behalf
// (*ujpsim.Sim in process, ujpsim.Control over HTTP, implement it). A
// refusal by the simulator (a document no longer in status 01, say) is an
// error with a UJPCode() string method.
type SandboxUJP interface {
	// The seller's side: the buyer's decision, the deadline, outages and
	// forced errors of one seller.
	Decide(ctx context.Context, euid string, accept bool, reasonCode, comment string) error
	AutoAccept(ctx context.Context, euid string) error
	SetSellerOutage(ctx context.Context, edb string, on bool) error
	RejectNextSend(ctx context.Context, edb, code, message string) error
	// The buyer's side: an invoice from a fictitious supplier dropped into
	// buyerTin's inbox (docID names it, so a retry drops it once;
	// transactionDate decides its deadline; "" for defaults), and the
	// seller's storno of a received document. Each returns the new EUID.
	SendToBuyer(ctx context.Context, buyerTin, docID, transactionDate, issueDate string) (string, error)
	VoidBySeller(ctx context.Context, euid, reason string) (string, error)
}
