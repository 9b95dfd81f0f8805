// Package einvoice is the pure domain of issued e-invoices: the public
// status enum and its allowed moves, the mapping from UJP's document status
// codes, and the rules around storno, correction, closed periods and the
// buyer's decision deadline. It knows no HTTP and no database; the document
// format, totals and codebooks live in einvoice/ujpdoc.
package einvoice

import (
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// Status is the public status of an e-invoice (spec, "States and
// transitions").
type Status string

// The public statuses. The last seven mirror UJP document statuses; the
// others are ours, before or around a submission.
const (
	Validating        Status = "validating"
	Invalid           Status = "invalid"
	AwaitingSignature Status = "awaiting_signature"
	Queued            Status = "queued"
	Submitting        Status = "submitting"
	Held              Status = "held"
	Delivered         Status = "delivered"
	Accepted          Status = "accepted"
	AutoAccepted      Status = "auto_accepted"
	Rejected          Status = "rejected"
	CancelledByStorno Status = "cancelled_by_storno"
	Corrected         Status = "corrected"
	Registered        Status = "registered"
	DraftAtUJP        Status = "draft_at_ujp"
	Failed            Status = "failed"
)

// Statuses lists every public status in the spec's order; used to validate
// the status filter and to document the enum.
var Statuses = []Status{Validating, Invalid, AwaitingSignature, Queued, Submitting, Held,
	Delivered, Accepted, AutoAccepted, Rejected, CancelledByStorno, Corrected, Registered, DraftAtUJP, Failed}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// Terminal reports whether no further move can leave s. Delivered and the
// buyer's decisions are not terminal: a storno or correction can still
// supersede them.
func (s Status) Terminal() bool {
	switch s {
	case Invalid, Failed, Rejected, CancelledByStorno, Corrected:
		return true
	}
	return false
}

// moves is the table of allowed transitions. It is wider than the spec's
// table where the spec says "from-states other than those stated: not
// shown": a held document goes back through queued; a queued or held
// document whose earlier send UJP turns out to hold is delivered from
// there; and UJP may report 00 or 10 for a document we sent, which we show
// as it is.
var moves = map[Status][]Status{
	Validating:        {Invalid, AwaitingSignature, Queued, Failed},
	AwaitingSignature: {Queued, Invalid, Failed},
	Queued:            {Submitting, Held, Failed, Delivered},
	Submitting:        {Delivered, Held, Failed, Queued, Registered, DraftAtUJP},
	Held:              {Queued, Submitting, Failed, Delivered},
	DraftAtUJP:        {Delivered, Registered, Failed},
	Registered:        {Delivered, Accepted, AutoAccepted, Rejected, CancelledByStorno, Corrected},
	Delivered:         {Accepted, AutoAccepted, Rejected, CancelledByStorno, Corrected, Registered},
	Accepted:          {CancelledByStorno, Corrected},
	AutoAccepted:      {CancelledByStorno, Corrected},
}

// CanMove reports whether from → to is an allowed move.
func CanMove(from, to Status) bool {
	for _, s := range moves[from] {
		if s == to {
			return true
		}
	}
	return false
}

// CodeStateConflict is the code of an operation the e-invoice's status does
// not allow (409).
const CodeStateConflict = "einvoice_state_conflict"

// Move checks from → to and returns an einvoice_state_conflict error naming
// both when the move is not allowed; callers write history and event only
// after it passes.
func Move(from, to Status) error {
	if !CanMove(from, to) {
		return &denar.Error{Code: CodeStateConflict, Message: fmt.Sprintf("an e-invoice in status %s cannot move to %s", from, to)}
	}
	return nil
}

// AtUJP reports whether s mirrors a status UJP holds a document in (00,
// 01, 03, 04, 05, 07, 09, 10).
func (s Status) AtUJP() bool {
	switch s {
	case DraftAtUJP, Delivered, Accepted, AutoAccepted, Rejected, CancelledByStorno, Corrected, Registered:
		return true
	}
	return false
}

// reconcilable are the statuses of a document UJP may hold without our
// knowing: its send is queued again, in flight, held, or failed — a send
// whose answer was lost, or a refusal by something in front of UJP after
// UJP had taken the document in.
var reconcilable = map[Status]bool{Queued: true, Submitting: true, Held: true, Failed: true}

// CanReconcile reports whether reconciliation with UJP's records may move
// a document from from to to, the status UJP holds it in. It is the one
// place the table of moves is overruled: a document we show queued,
// submitting, held or failed that UJP holds takes UJP's status, whatever
// it is, even from failed, which no other move leaves (UJP's record is the
// fact: the document was issued). A document we already show at UJP moves
// only as the change feed would move it.
func CanReconcile(from, to Status) bool {
	if !to.AtUJP() {
		return false
	}
	if reconcilable[from] {
		return true
	}
	return CanMove(from, to)
}

// Reconcile is Move for reconciliation (CanReconcile).
func Reconcile(from, to Status) error {
	if !CanReconcile(from, to) {
		return &denar.Error{Code: CodeStateConflict, Message: fmt.Sprintf("reconciliation cannot move an e-invoice in status %s to %s", from, to)}
	}
	return nil
}

// FromUJP maps a UJP document status code (the document-statuses codebook)
// to the public status. Codes UJP may add later map to ok=false so the
// caller keeps the current status and logs the code instead of guessing.
func FromUJP(code string) (Status, bool) {
	switch code {
	case "00":
		return DraftAtUJP, true
	case "01":
		return Delivered, true
	case "03":
		return Accepted, true
	case "04":
		return AutoAccepted, true
	case "05":
		return Rejected, true
	case "07":
		return CancelledByStorno, true
	case "09":
		return Corrected, true
	case "10":
		return Registered, true
	}
	return "", false
}

// StornoAllowed reports whether an e-invoice in status s can be voided:
// only once UJP holds it and the buyer has not rejected it.
func StornoAllowed(s Status) bool {
	return s == Delivered || s == Accepted || s == AutoAccepted
}

// CorrectionAllowed reports whether an e-invoice in status s can be
// corrected: the same states as storno, since a correction replaces a
// document UJP holds.
func CorrectionAllowed(s Status) bool { return StornoAllowed(s) }

// Storno is the request body of POST /v1/einvoices/{id}/storno.
type Storno struct {
	Reason  string  `json:"reason"`  // void-reasons codebook, S-x
	Comment *string `json:"comment"` // free text, up to 500 characters
}

// Validate checks the reason against the void-reasons codebook.
func (s Storno) Validate(cb *ujpdoc.Codebooks) error {
	var fe denar.FieldErrors
	switch {
	case s.Reason == "":
		fe.AddCodebook("reason", ujpdoc.CBVoidReasons, "is required")
	default:
		if _, ok := cb.Lookup(ujpdoc.CBVoidReasons, s.Reason); !ok {
			fe.AddCodebook("reason", ujpdoc.CBVoidReasons, "%q is not a void reason", s.Reason)
		}
	}
	if s.Comment != nil && len([]rune(*s.Comment)) > 500 {
		fe.Add("comment", "is longer than 500 characters")
	}
	return fe.Err()
}

// CheckCorrectionReason checks a correction reason (C0x) against the
// correction-reasons codebook; path is where it sits in the request.
func CheckCorrectionReason(path, reason string, cb *ujpdoc.Codebooks) *denar.FieldError {
	var fe denar.FieldErrors
	if reason == "" {
		fe.AddCodebook(path, ujpdoc.CBCorrectionReasons, "is required")
	} else if _, ok := cb.Lookup(ujpdoc.CBCorrectionReasons, reason); !ok {
		fe.AddCodebook(path, ujpdoc.CBCorrectionReasons, "%q is not a correction reason", reason)
	}
	if len(fe) == 0 {
		return nil
	}
	return &fe[0]
}

// PeriodClosed returns a period_closed error when the company's annual
// account is filed for the year of issueDate (YYYY-MM-DD) or a later year
// (companies.annual_account_filed_for holds the latest filed year; accounts
// are filed in order): a storno or correction of a closed year would change
// filed figures. filedFor nil means no account is filed.
func PeriodClosed(issueDate string, filedFor *int) error {
	d, err := time.Parse(time.DateOnly, issueDate)
	if err != nil {
		return fmt.Errorf("period check: issue date %q: %w", issueDate, err)
	}
	if filedFor != nil && d.Year() <= *filedFor {
		return &denar.Error{Code: "period_closed", Message: fmt.Sprintf("the annual account for %d is filed; documents of that year can no longer be voided or corrected", d.Year())}
	}
	return nil
}
