package pipeline

// The sandbox's seller side: the simulator driven as UJP or the buyer
// would drive it for an e-invoice sent, its outcome read back through the
// change feed this room polls.

import (
	"context"
	"errors"
	"fmt"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/usecase"
)

// Simulate actions of the sandbox.
const (
	simBuyerAccepts   = "buyer_accepts"
	simBuyerRejects   = "buyer_rejects"
	simDeadlinePasses = "deadline_passes"
	simOutageStarts   = "outage_starts"
	simOutageEnds     = "outage_ends"
	simTerminalError  = "terminal_error"
)

// Simulate is the command of POST /v1/sandbox/einvoices/{id}/simulate.
type Simulate struct {
	CompanyID        string
	ID               string
	Action           string
	RejectReasonCode string
	Comment          string
	UJPCode          string
}

// Simulation is the answer of a simulate call.
type Simulation struct {
	Object   string              `json:"object" enum:"sandbox_simulation" example:"sandbox_simulation" doc:"Always sandbox_simulation."`
	Action   string              `json:"action" example:"buyer_accepts" doc:"The transition asked for."`
	EInvoice einvoicing.EInvoice `json:"einvoice" doc:"The e-invoice as it is now; the move arrives through the pipeline."`
}

// Simulate drives the sandbox simulator as UJP or the buyer would, for an
// e-invoice of a sandbox company on the simulator (403 sandbox_only
// otherwise). Decisions act on a delivered document (409
// einvoice_state_conflict otherwise) and schedule a read of the change
// feed at once.
func (p *Service) Simulate(ctx context.Context, c einvoicing.Caller, cmd Simulate) (Simulation, error) {
	q := p.db.Reader()
	inv, err := einvoicing.EInvoiceRow(ctx, q, c.Principal, cmd.CompanyID, cmd.ID)
	if err != nil {
		return Simulation{}, err
	}
	co, err := einvoicing.CompanyRow(ctx, q, c.Principal, inv.CompanyID)
	if err != nil {
		return Simulation{}, err
	}
	if co.Environment != auth.EnvSandbox || p.sandbox == nil {
		return Simulation{}, denar.Errorf("sandbox_only", "Only e-invoices of sandbox companies on the UJP simulator can be driven.")
	}
	sim := p.sandbox
	decision := cmd.Action == simBuyerAccepts || cmd.Action == simBuyerRejects || cmd.Action == simDeadlinePasses
	if decision && (inv.Status != string(einvoice.Delivered) || !inv.Euid.Valid) {
		return Simulation{}, denar.Errorf("einvoice_state_conflict", "%s needs a delivered e-invoice; %s is %s.", cmd.Action, inv.ID, inv.Status)
	}
	switch cmd.Action {
	case simBuyerAccepts:
		err = sim.Decide(ctx, inv.Euid.String, true, "", cmd.Comment)
	case simBuyerRejects:
		if _, ok := p.svc.CodeLists(co.Environment).Lookup(ujpdoc.CBRejectReasons, cmd.RejectReasonCode); !ok {
			return Simulation{}, denar.Invalid(denar.FieldError{Path: "rejectReasonCode", Codebook: ujpdoc.CBRejectReasons,
				Message: fmt.Sprintf("%q is not a reject reason", cmd.RejectReasonCode)})
		}
		err = sim.Decide(ctx, inv.Euid.String, false, cmd.RejectReasonCode, cmd.Comment)
	case simDeadlinePasses:
		err = sim.AutoAccept(ctx, inv.Euid.String)
	case simOutageStarts, simOutageEnds:
		err = sim.SetSellerOutage(ctx, co.TaxNumber, cmd.Action == simOutageStarts)
	case simTerminalError:
		code := cmd.UJPCode
		if code == "" {
			code = "E4013"
		}
		err = sim.RejectNextSend(ctx, co.TaxNumber, code, "Document refused (sandbox simulate: terminal_error)")
	default:
		return Simulation{}, denar.Invalid(denar.FieldError{Path: "action", Message: "unknown action " + cmd.Action})
	}
	if err := SimulatorAnswer(err, "einvoice_state_conflict", cmd.Action, inv.ID); err != nil {
		return Simulation{}, err
	}
	return usecase.Write(ctx, p.db, c, func(tx *store.Tx) (Simulation, error) {
		if decision {
			if err := einvoicing.EnqueuePoll(ctx, tx, inv.CompanyID); err != nil {
				return Simulation{}, err
			}
		}
		cur, err := tx.GetEInvoiceByID(ctx, inv.ID)
		if err != nil {
			return Simulation{}, err
		}
		return Simulation{Object: "sandbox_simulation", Action: cmd.Action, EInvoice: einvoicing.EInvoiceView(cur)}, nil
	})
}

// SimulatorAnswer is what a sandbox simulate call of action on id makes
// of the simulator's answer err: a refusal (it carries UJP's code) is the
// caller's conflict code, any other failure is wrapped, nil is nil.
func SimulatorAnswer(err error, conflict, action, id string) error {
	var refused interface{ UJPCode() string }
	if errors.As(err, &refused) {
		return denar.Errorf(conflict, "The simulator refused %s on %s: UJP code %s.", action, id, refused.UJPCode())
	}
	if err != nil {
		return fmt.Errorf("sandbox simulate %s on %s: %w", action, id, err)
	}
	return nil
}
