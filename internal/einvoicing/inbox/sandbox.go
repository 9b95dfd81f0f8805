package inbox

// The buyer's side of the sandbox: an incoming invoice dropped into a
// company's inbox by a fictitious supplier, and the transitions a buyer
// cannot cause itself (the deadline passing at UJP, the seller's storno).
// Each acts at the simulator first (never inside a store transaction: the
// embedded simulator writes to the same store), then asks for a read of
// the company's purchase side at once, so the inbox shows the result as
// soon as the signer has signed the reads.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// SandboxIncomingCommand is the command of POST /v1/sandbox/inbox.
type SandboxIncomingCommand struct {
	CompanyID string
	// TransactionDate (YYYY-MM-DD) decides the deadline; default today
	// (Europe/Skopje).
	TransactionDate string
	// IssueDate (YYYY-MM-DD); default TransactionDate.
	IssueDate string
}

// SandboxIncoming is the answer of POST /v1/sandbox/inbox.
type SandboxIncoming struct {
	Object          string `json:"object" enum:"sandbox_incoming" example:"sandbox_incoming" doc:"Always sandbox_incoming."`
	CompanyID       string `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The buying company (cmp_…) whose inbox gets the invoice."`
	EUID            string `json:"euid" doc:"The invoice's EUID at the simulator; it appears in GET /v1/inbox with this euid once the company's signer has signed the reads."`
	SellerTaxNumber string `json:"sellerTaxNumber" doc:"The fictitious supplier (4030000000044, Тест Добавувач ДООЕЛ Тетово)."`
	TransactionDate string `json:"transactionDate" format:"date" example:"2026-05-04" doc:"The invoice's transaction (supply) date."`
	IssueDate       string `json:"issueDate" format:"date" example:"2026-05-04" doc:"The invoice's issue date."`
	DecideBy        string `json:"decideBy" format:"date" doc:"The deadline the inbox document will carry."`
}

// sandboxCompany loads a company of the caller that is a sandbox company
// on the simulator, else 403 sandbox_only.
func (s *Service) sandboxCompany(ctx context.Context, p *auth.Principal, companyID string) (dbq.Company, error) {
	co, err := einvoicing.CompanyRow(ctx, s.db.Reader(), p, companyID)
	if err != nil {
		return co, err
	}
	if co.Environment != auth.EnvSandbox || s.sandbox == nil {
		return co, denar.Errorf("sandbox_only", "Only sandbox companies on the UJP simulator can be driven.")
	}
	return co, nil
}

// SandboxDropIncoming has the simulator's fictitious supplier send the
// company an invoice with the chosen transaction date, so deadline
// behaviour can be tried today: a transaction date in an earlier month
// gives a deadline that is near or past. A retry with the same
// Idempotency-Key drops it once (its docId is derived from the key).
func (s *Service) SandboxDropIncoming(ctx context.Context, c einvoicing.Caller, cmd SandboxIncomingCommand) (SandboxIncoming, error) {
	co, err := s.sandboxCompany(ctx, c.Principal, cmd.CompanyID)
	if err != nil {
		return SandboxIncoming{}, err
	}
	var fe denar.FieldErrors
	if cmd.TransactionDate == "" {
		cmd.TransactionDate = einvoice.Today(s.db.Now()).Format(time.DateOnly)
	}
	if _, err := time.Parse(time.DateOnly, cmd.TransactionDate); err != nil {
		fe.Add("transactionDate", "must be a date YYYY-MM-DD")
	}
	if cmd.IssueDate == "" {
		cmd.IssueDate = cmd.TransactionDate
	} else if _, err := time.Parse(time.DateOnly, cmd.IssueDate); err != nil {
		fe.Add("issueDate", "must be a date YYYY-MM-DD")
	}
	if err := fe.Err(); err != nil {
		return SandboxIncoming{}, err
	}
	by, _ := einvoice.DecideByDate(cmd.TransactionDate)
	docID := ""
	if id := c.Claim.StableID(); id != "" {
		docID = "drop-" + id
	}
	euid, err := s.sandbox.SendToBuyer(ctx, co.TaxNumber, docID, cmd.TransactionDate, cmd.IssueDate)
	if err := simRefusal(err, "drop an incoming invoice", co.ID); err != nil {
		return SandboxIncoming{}, err
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (SandboxIncoming, error) {
		if err := einvoicing.EnqueuePoll(ctx, tx, co.ID); err != nil {
			return SandboxIncoming{}, err
		}
		return SandboxIncoming{Object: "sandbox_incoming", CompanyID: co.ID, EUID: euid, SellerTaxNumber: sandboxSupplier,
			TransactionDate: cmd.TransactionDate, IssueDate: cmd.IssueDate, DecideBy: by}, nil
	})
}

// sandboxSupplier is the simulator's fictitious supplier (ujpsim.TaxSupplier).
const sandboxSupplier = "4030000000044"

// Simulate actions of the sandbox for an inbox document.
const (
	simInboxDeadlinePasses = "deadline_passes"
	simInboxSellerStornos  = "seller_stornos"
)

// SimulateInboxCommand is the command of POST
// /v1/sandbox/inbox/{id}/simulate.
type SimulateInboxCommand struct {
	CompanyID string
	ID        string
	Action    string
	// VoidReason (S-x) of seller_stornos; default the first of UJP's list.
	VoidReason string
}

// InboxSimulation is the answer of an inbox simulate call.
type InboxSimulation struct {
	Object   string                   `json:"object" enum:"sandbox_simulation" example:"sandbox_simulation" doc:"Always sandbox_simulation."`
	Action   string                   `json:"action" example:"seller_stornos" doc:"The transition asked for."`
	Document einvoicing.InboxDocument `json:"document" doc:"The document as it is now; the move arrives with the next read of UJP's purchase side."`
	// StornoEUID is the seller's storno document (seller_stornos).
	StornoEUID *string `json:"stornoEuid" doc:"seller_stornos: the storno's EUID; it arrives in the inbox as a document of kind storno, and UJP voids the original (07) once the company accepts it."`
}

// SimulateInbox drives the simulator as UJP or the seller would, for an
// inbox document of a sandbox company on the simulator (403 sandbox_only
// otherwise): deadline_passes auto-accepts it at UJP now (04), whatever
// its decideBy; seller_stornos sends a storno of it as its seller (the
// simulator voids the original, 07, once the company accepts the storno).
// A document the simulator no longer allows it for is 409
// inbox_state_conflict with UJP's code.
func (s *Service) SimulateInbox(ctx context.Context, c einvoicing.Caller, cmd SimulateInboxCommand) (InboxSimulation, error) {
	co, err := s.sandboxCompany(ctx, c.Principal, cmd.CompanyID)
	if err != nil {
		return InboxSimulation{}, err
	}
	d, err := inboxRow(ctx, s.db.Reader(), c.Principal, co.ID, cmd.ID)
	if err != nil {
		return InboxSimulation{}, err
	}
	var storno *string
	switch cmd.Action {
	case simInboxDeadlinePasses:
		err = s.sandbox.AutoAccept(ctx, d.Euid)
	case simInboxSellerStornos:
		if cmd.VoidReason != "" {
			if _, ok := s.core.CodeLists(co.Environment).Lookup(ujpdoc.CBVoidReasons, cmd.VoidReason); !ok {
				return InboxSimulation{}, denar.Invalid(denar.FieldError{Path: "voidReason", Codebook: ujpdoc.CBVoidReasons,
					Message: fmt.Sprintf("%q is not a void reason", cmd.VoidReason)})
			}
		}
		var euid string
		euid, err = s.sandbox.VoidBySeller(ctx, d.Euid, cmd.VoidReason)
		storno = &euid
	default:
		return InboxSimulation{}, denar.Invalid(denar.FieldError{Path: "action", Message: "unknown action " + cmd.Action})
	}
	if err := pipeline.SimulatorAnswer(err, "inbox_state_conflict", cmd.Action, d.ID); err != nil {
		return InboxSimulation{}, err
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (InboxSimulation, error) {
		if err := einvoicing.EnqueuePoll(ctx, tx, co.ID); err != nil {
			return InboxSimulation{}, err
		}
		cur, err := tx.GetInboxDocument(ctx, d.ID)
		if err != nil {
			return InboxSimulation{}, err
		}
		return InboxSimulation{Object: "sandbox_simulation", Action: cmd.Action, Document: inboxView(cur, tx.Now), StornoEUID: storno}, nil
	})
}

// simRefusal turns the simulator's refusal of a drop into a problem.
func simRefusal(err error, what, companyID string) error {
	if err == nil {
		return nil
	}
	var refused interface{ UJPCode() string }
	if errors.As(err, &refused) {
		code := refused.UJPCode()
		if strings.HasPrefix(code, "E1014") {
			return denar.Errorf("sandbox_only", "The simulator's registry does not know company %s's tax number; it cannot receive documents there.", companyID)
		}
		return fmt.Errorf("sandbox: %s for %s: the simulator refused with %s: %w", what, companyID, code, err)
	}
	return fmt.Errorf("sandbox: %s for %s: %w", what, companyID, err)
}
