package einvoicing

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// EInvoice is the public e-invoice object.
type EInvoice struct {
	ID               string          `json:"id" doc:"Prefix einv_."`
	Object           string          `json:"object" enum:"einvoice" example:"einvoice" doc:"Always einvoice."`
	CompanyID        string          `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The issuing company (cmp_…), the seller."`
	Environment      string          `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"sandbox (UJP's simulator) or production (UJP)."`
	Kind             string          `json:"kind" enum:"invoice,storno,correction,external" doc:"storno and correction documents link their original in originalId; external: a document UJP holds that the service never issued (issued in UJP's portal or by other software), found by reconciliation and read-only (docs/reconciliation.md)."`
	Status           string          `json:"status" enum:"validating,invalid,awaiting_signature,queued,submitting,held,delivered,accepted,auto_accepted,rejected,cancelled_by_storno,corrected,registered,draft_at_ujp,failed" example:"delivered" doc:"Where the document is: validating, awaiting_signature, queued, submitting on the way; delivered when UJP holds it with an EUID; accepted, auto_accepted or rejected once the buyer decided; invalid and failed are final (see problems); held waits for UJP to come back. docs/einvoices.md lists them all."`
	DocumentType     string          `json:"documentType" doc:"UJP document-types code (100 invoice, …)."`
	Number           string          `json:"number" example:"F-2026-0042" doc:"Your document number."`
	IssueDate        string          `json:"issueDate" format:"date" example:"2026-05-04" doc:"The issue date."`
	ClientReference  *string         `json:"clientReference" example:"order-1001" doc:"Your reference, as sent; null when none."`
	UJPDocID         string          `json:"ujpDocId" doc:"header.docId sent to UJP; the same on every submission attempt. For an external document: ujp:<EUID> (the docId its issuer used is in document, when UJP gave its payload)."`
	EUID             *string         `json:"euid" doc:"Assigned by UJP on delivery; null before."`
	QRLink           *string         `json:"qrLink" doc:"UJP's public link of the document (the QR code target); null before delivery."`
	Totals           einvoice.Totals `json:"totals" doc:"net (after discounts), vat, gross, in the document currency."`
	Problems         json.RawMessage `json:"problems" doc:"Why the document is invalid or failed, and refusals of its signature: [{path, message, codebook, code}], UJP codes unrenamed."`
	OriginalID       *string         `json:"originalId" example:"einv_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"For a storno or correction: the e-invoice (einv_…) it cancels or replaces; null for an invoice."`
	SigningRequestID *string         `json:"signingRequestId" doc:"The signing request the document waits on (awaiting_signature); null when none."`
	Document         json.RawMessage `json:"document" doc:"The UJP document as built (and signed), UJP's own JSON field names. For an external document: as UJP gave it (payload/list, with the RD privilege), or null when its payload could not be read."`
	SubmitAttempts   int             `json:"submitAttempts" doc:"Calls made to UJP's receiver for this document."`
	DeliveredAt      *time.Time      `json:"deliveredAt" doc:"When UJP assigned the EUID; null before."`
	SettledAt        *time.Time      `json:"settledAt" doc:"When the buyer's outcome (accepted, auto_accepted, rejected) was learnt; null before."`
	CreatedAt        time.Time       `json:"createdAt" example:"2026-05-04T09:15:00Z" doc:"When the e-invoice was issued."`
	UpdatedAt        time.Time       `json:"updatedAt" example:"2026-05-04T09:15:02Z" doc:"When its status or anything else last changed."`
	// Queue is set by GET /v1/einvoices/{id} only.
	Queue *Queue `json:"queue,omitempty" doc:"Present on GET /v1/einvoices/{id} while the document waits to be sent (awaiting_signature or queued): its place among the documents of its UJP user (signer) and when it is expected to go. UJP takes one request a second per user; see docs/signing.md, Pacing."`

	// rendered, when set, is the JSON of the fields above (see
	// MarshalJSON); only renderedView sets it, on a value it made.
	rendered []byte
}

// MarshalJSON renders e's fields as the API writes JSON (encoding/json,
// HTML characters unescaped). An e-invoice just issued carries the bytes
// its event was made from, so its answer, the stored idempotent response
// and the body on the wire are not rendered from the fields once each.
func (e EInvoice) MarshalJSON() ([]byte, error) {
	if e.rendered != nil {
		return e.rendered, nil
	}
	type fields EInvoice // the same fields without this method
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields(e)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// RenderedJSON is what MarshalJSON answers for an e-invoice that carries
// its JSON (renderedView), nil for any other (httpx.Rendered).
func (e EInvoice) RenderedJSON() []byte { return e.rendered }

// renderedView is EInvoiceView carrying its JSON.
func renderedView(r dbq.Einvoice) (EInvoice, error) {
	v := EInvoiceView(r)
	raw, err := v.MarshalJSON()
	if err != nil {
		return EInvoice{}, fmt.Errorf("render einvoice %s: %w", r.ID, err)
	}
	v.rendered = raw
	return v, nil
}

// Path is the e-invoice's path in the API.
func (e EInvoice) Path() string { return "/v1/einvoices/" + e.ID }

// EInvoiceView is the API's view of a stored e-invoice (what GET
// /v1/einvoices/{id} answers and its events carry).
func EInvoiceView(r dbq.Einvoice) EInvoice {
	problems := r.Problems
	if problems == "" {
		problems = "[]"
	}
	return EInvoice{ID: r.ID, Object: "einvoice", CompanyID: r.CompanyID, Environment: r.Environment, Kind: r.Kind,
		Status: r.Status, DocumentType: r.DocumentType, Number: r.Number, IssueDate: r.IssueDate,
		ClientReference: store.TextOrNil(r.ClientReference), UJPDocID: r.UjpDocID, EUID: store.TextOrNil(r.Euid), QRLink: store.TextOrNil(r.QrLink),
		Totals:   einvoice.Totals{Net: r.TotalNet, Vat: r.TotalVat, Gross: r.TotalGross, Currency: r.Currency},
		Problems: json.RawMessage(problems), OriginalID: store.TextOrNil(r.OriginalID), SigningRequestID: store.TextOrNil(r.SigningRequestID),
		Document: json.RawMessage(r.Document), SubmitAttempts: int(r.SubmitAttempts), DeliveredAt: store.TimeOrNil(r.DeliveredAt),
		SettledAt: store.TimeOrNil(r.SettledAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// StatusMove is one e-invoice status change with its cause. moveEInvoice
// writes the row, the status history and the event in the caller's
// transaction, so none of the three can exist without the others.
type StatusMove struct {
	To       einvoice.Status
	Cause    string // signed, submitted, ujp_outage, ujp_rejected, ujp_status, …
	UJPCode  string // UJP's status or error code when UJP caused the move
	EUID     string // set on the move to delivered
	QRLink   string
	Problems []byte // JSON array; nil keeps the current problems
	// Reconciled: the move takes the document to the status UJP holds it
	// in (cause reconciled), judged by einvoice.CanReconcile rather than
	// the table of moves.
	Reconciled bool
	// TopsUp: the caller tops up the document's UJP user in the same
	// transaction (a delivery), so the move does not enqueue the pace job.
	TopsUp bool
}

// eventTypes names the event each destination status emits (spec, Moves);
// moves to other statuses (queued, submitting) are in the history only.
var eventTypes = map[einvoice.Status]string{
	einvoice.Invalid:           webhooks.EventValidatedFailed,
	einvoice.Delivered:         webhooks.EventSubmitted,
	einvoice.Accepted:          webhooks.EventAccepted,
	einvoice.AutoAccepted:      webhooks.EventAutoAccepted,
	einvoice.Rejected:          webhooks.EventRejected,
	einvoice.CancelledByStorno: webhooks.EventCancelledByStorno,
	einvoice.Corrected:         webhooks.EventCorrected,
	einvoice.Failed:            webhooks.EventFailed,
	einvoice.Held:              webhooks.EventHeld,
}

// MoveEInvoice moves inv to m.To if the domain allows it and the row is
// still in inv.Status (a concurrent move makes it a conflict, not a lost
// update). It stamps when the document was held, delivered or settled, and
// writes the history row and the event with the e-invoice as it is after
// the move.
func (s *Service) MoveEInvoice(ctx context.Context, tx *store.Tx, inv dbq.Einvoice, m StatusMove) (dbq.Einvoice, error) {
	from := einvoice.Status(inv.Status)
	check := einvoice.Move
	if m.Reconciled {
		check = einvoice.Reconcile
	}
	if err := check(from, m.To); err != nil {
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
		return inv, &denar.Error{Code: "einvoice_state_conflict", Message: fmt.Sprintf("e-invoice %s is no longer %s", inv.ID, from)}
	}
	now := sql.NullTime{Time: tx.Now, Valid: true}
	switch m.To {
	case einvoice.Held:
		if from != einvoice.Held {
			err = tx.SetEInvoiceHeldSince(ctx, dbq.SetEInvoiceHeldSinceParams{ID: inv.ID, HeldSince: now})
		}
	case einvoice.Delivered:
		err = tx.SetEInvoiceDeliveredAt(ctx, dbq.SetEInvoiceDeliveredAtParams{ID: inv.ID, At: now})
		if err == nil {
			// UJP assigned the EUID: the document counts in this month's
			// usage, in this transaction, once.
			inv.DeliveredAt = now
			err = CountSent(ctx, tx, inv)
		}
	case einvoice.Accepted, einvoice.AutoAccepted, einvoice.Rejected:
		err = tx.SetEInvoiceSettledAt(ctx, dbq.SetEInvoiceSettledAtParams{ID: inv.ID, At: now})
	}
	if err == nil && m.Reconciled && m.To != einvoice.Delivered && m.To.AtUJP() && !inv.DeliveredAt.Valid {
		// UJP holds a document we never saw delivered, already past 01:
		// it is delivered (and counted) now all the same.
		err = tx.SetEInvoiceDeliveredAt(ctx, dbq.SetEInvoiceDeliveredAtParams{ID: inv.ID, At: now})
		if err == nil {
			inv.DeliveredAt = now
			err = CountSent(ctx, tx, inv)
		}
	}
	if err == nil && m.To != einvoice.AwaitingSignature && inv.SigningRequestID.Valid {
		err = tx.SetEInvoiceSigningRequest(ctx, dbq.SetEInvoiceSigningRequestParams{ID: inv.ID})
	}
	if err != nil {
		return inv, fmt.Errorf("stamp %s %s: %w", inv.ID, m.To, err)
	}
	if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: inv.ID,
		FromStatus: sql.NullString{String: inv.Status, Valid: inv.Status != ""}, ToStatus: string(m.To), Cause: m.Cause,
		UjpCode: sql.NullString{String: m.UJPCode, Valid: m.UJPCode != ""}, At: tx.Now}); err != nil {
		return inv, fmt.Errorf("history of %s: %w", inv.ID, err)
	}
	if inv.PaceKey != "" && leftFlight(from, m.To) && !m.TopsUp {
		// A place of its UJP user is free: the next document's turn to
		// be signed (pipeline/pacing.go).
		if err := EnqueuePace(ctx, tx, inv.PaceKey); err != nil {
			return inv, err
		}
	}
	moved, err := tx.GetEInvoiceByID(ctx, inv.ID)
	if err != nil {
		return inv, fmt.Errorf("reload %s: %w", inv.ID, err)
	}
	if typ, ok := eventTypes[m.To]; ok {
		if err := s.EInvoiceEvent(ctx, tx, moved, typ); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

// EInvoiceEvent writes an event about inv as it is now.
func (s *Service) EInvoiceEvent(ctx context.Context, tx *store.Tx, inv dbq.Einvoice, typ string) error {
	return s.WriteEvent(ctx, tx, inv.AccountID, inv.CompanyID, inv.Environment, typ, inv.ID, EInvoiceView(inv))
}

// ProblemItem is one entry of an e-invoice's problems.
type ProblemItem struct {
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
	Codebook string `json:"codebook,omitempty"`
	Code     string `json:"code,omitempty"`
	// A refused signature: the agent's reason and the request refused.
	Reason           string `json:"reason,omitempty"`
	SigningRequestID string `json:"signingRequestId,omitempty"`
}

// Problem codes of ours in an e-invoice's problems.
const (
	// ProblemUnexpectedAnswer: UJP (or something in front of it) answered
	// a 4xx in a shape that is not UJP's; the body is kept in message.
	ProblemUnexpectedAnswer = "ujp_unexpected_answer"
)

// leftFlight reports whether a move of a paced document from from to to
// frees a place of its user: it was sent, or left the way for another
// reason (held, failed, refused).
func leftFlight(from, to einvoice.Status) bool {
	in := func(s einvoice.Status) bool {
		return s == einvoice.AwaitingSignature || s == einvoice.Queued || s == einvoice.Submitting
	}
	return in(from) && !in(to)
}
