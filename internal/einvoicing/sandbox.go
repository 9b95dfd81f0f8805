package einvoicing

import "context"

// SandboxUJP drives the sandbox simulator of UJP on an integrator's behalf
// (internal/ujpsim.Control implements it). A refusal by the simulator (a
// document no longer in status 01) is an error with a UJPCode() string
// method.
type SandboxUJP interface {
	Decide(ctx context.Context, euid string, accept bool, reasonCode, comment string) error
	AutoAccept(ctx context.Context, euid string) error
	SetSellerOutage(ctx context.Context, edb string, on bool) error
	RejectNextSend(ctx context.Context, edb, code, message string) error
}
