package einvoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// statusMove is one e-invoice status change with its cause. moveEInvoice
// writes the row, the status history and the event in the caller's
// transaction, so none of the three can exist without the others.
type statusMove struct {
	To       einvoice.Status
	Cause    string // signed, submitted, ujp_outage, ujp_rejected, ujp_status, …
	UJPCode  string // UJP's status or error code when UJP caused the move
	EUID     string // set on the move to delivered
	QRLink   string
	Problems []byte // JSON array; nil keeps "[]"
}

// eventTypes names the event each destination status emits (spec, Moves);
// moves to other statuses (queued, submitting, held) are in the history
// only.
var eventTypes = map[einvoice.Status]string{
	einvoice.Invalid:           "einvoice.validated_failed",
	einvoice.Delivered:         "einvoice.submitted",
	einvoice.Accepted:          "einvoice.accepted",
	einvoice.AutoAccepted:      "einvoice.auto_accepted",
	einvoice.Rejected:          "einvoice.rejected",
	einvoice.CancelledByStorno: "einvoice.cancelled_by_storno",
	einvoice.Corrected:         "einvoice.corrected",
	einvoice.Failed:            "einvoice.failed",
	einvoice.Held:              "einvoice.held",
}

// eventPayload is the payload of every einvoice.* event: enough to act
// without a second request, and the id to fetch the rest.
type eventPayload struct {
	ID        string          `json:"id"`
	CompanyID string          `json:"companyId"`
	From      string          `json:"from"`
	Status    string          `json:"status"`
	Cause     string          `json:"cause"`
	UJPCode   string          `json:"ujpCode,omitempty"`
	EUID      string          `json:"euid,omitempty"`
	Problems  json.RawMessage `json:"problems,omitempty"`
}

// moveEInvoice moves inv to m.To if the domain allows it and the row is
// still in inv.Status (a concurrent move makes it a conflict, not a lost
// update).
func moveEInvoice(ctx context.Context, tx *store.Tx, inv dbq.Einvoice, m statusMove) (dbq.Einvoice, error) {
	from := einvoice.Status(inv.Status)
	if err := einvoice.Move(from, m.To); err != nil {
		return inv, err
	}
	problems := m.Problems
	if problems == nil {
		problems = []byte(inv.Problems)
	}
	var n int64
	var err error
	if m.EUID != "" {
		n, err = tx.SetEInvoiceDelivered(ctx, dbq.SetEInvoiceDeliveredParams{ToStatus: string(m.To), Euid: sql.NullString{String: m.EUID, Valid: true},
			QrLink: sql.NullString{String: m.QRLink, Valid: m.QRLink != ""}, UpdatedAt: tx.Now, ID: inv.ID, FromStatus: inv.Status})
	} else {
		n, err = tx.SetEInvoiceStatus(ctx, dbq.SetEInvoiceStatusParams{ToStatus: string(m.To), Problems: string(problems), UpdatedAt: tx.Now, ID: inv.ID, FromStatus: inv.Status})
	}
	if err != nil {
		return inv, fmt.Errorf("move %s %s→%s: %w", inv.ID, from, m.To, err)
	}
	if n == 0 {
		return inv, &denar.Error{Code: denar.ECodeConflict, Message: fmt.Sprintf("e-invoice %s is no longer %s", inv.ID, from)}
	}
	if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: inv.ID,
		FromStatus: sql.NullString{String: inv.Status, Valid: inv.Status != ""}, ToStatus: string(m.To), Cause: m.Cause,
		UjpCode: sql.NullString{String: m.UJPCode, Valid: m.UJPCode != ""}, At: tx.Now}); err != nil {
		return inv, fmt.Errorf("history of %s: %w", inv.ID, err)
	}
	inv.Status, inv.UpdatedAt, inv.Problems = string(m.To), tx.Now, string(problems)
	if m.EUID != "" {
		inv.Euid = sql.NullString{String: m.EUID, Valid: true}
		inv.QrLink = sql.NullString{String: m.QRLink, Valid: m.QRLink != ""}
	}
	if typ, ok := eventTypes[m.To]; ok {
		p := eventPayload{ID: inv.ID, CompanyID: inv.CompanyID, From: string(from), Status: inv.Status, Cause: m.Cause,
			UJPCode: m.UJPCode, EUID: inv.Euid.String}
		if m.Problems != nil {
			p.Problems = m.Problems
		}
		if err := writeEvent(ctx, tx, inv, typ, p); err != nil {
			return inv, err
		}
	}
	return inv, nil
}

// writeEvent stores one event in tx.
func writeEvent(ctx context.Context, tx *store.Tx, inv dbq.Einvoice, typ string, payload any) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("event %s payload: %w", typ, err)
	}
	if err := tx.CreateEvent(ctx, dbq.CreateEventParams{ID: denar.NewID("evt"), AccountID: inv.AccountID, CompanyID: inv.CompanyID,
		Environment: inv.Environment, Type: typ, ObjectID: inv.ID, Payload: string(b), CreatedAt: tx.Now}); err != nil {
		return fmt.Errorf("event %s of %s: %w", typ, inv.ID, err)
	}
	return nil
}
