package einvoicing

// What an e-invoice's document needs of signing: asking for the document's
// signature (a fresh requestTimestamp, the request recorded on the
// e-invoice, einvoice.signature_required), and what a signer's refusal
// does to it. The pipeline, validation and the signing room
// (internal/einvoicing/signing: the signers' answers, expiry, the
// ask-again job) call these.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Refusal reasons an agent may give. token_missing and pin_locked are
// passing troubles of the device, and unattended says nobody was there to
// ask (an agent asked to ask a person who is not there): the document
// keeps waiting and a new request follows after the refusal backoff. The
// others are a decision: the document fails with problem
// signature_refused.
const (
	refuseUserDeclined   = "user_declined"
	refusePolicy         = "policy"
	refuseTokenMissing   = "token_missing"
	refusePINLocked      = "pin_locked"
	refusePayloadInvalid = "payload_invalid"
	refuseUnattended     = "unattended"
)

// RefusalReasons lists them.
var RefusalReasons = []string{refuseUserDeclined, refusePolicy, refuseTokenMissing, refusePINLocked, refusePayloadInvalid, refuseUnattended}

func transientRefusal(reason string) bool {
	return reason == refuseTokenMissing || reason == refusePINLocked || reason == refuseUnattended
}

// signatureProblem is the problems item of a refused signature.
func signatureProblem(r dbq.SigningRequest, reason, message string) ProblemItem {
	msg := "the signer refused (" + reason + ")"
	if message != "" {
		msg += ": " + message
	}
	return ProblemItem{Code: "signature_refused", Message: msg, Reason: reason, SigningRequestID: r.ID}
}

// documentRefused applies a refusal to the e-invoice the request was for.
func (s *Service) documentRefused(ctx context.Context, tx *store.Tx, r dbq.SigningRequest, reason, message string) error {
	inv, err := tx.GetEInvoiceByID(ctx, r.LinkID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("refused einvoice %s: %w", r.LinkID, err)
	}
	if !inv.SigningRequestID.Valid || inv.SigningRequestID.String != r.ID {
		return nil // an older request of the document; the current one decides
	}
	var items []ProblemItem
	_ = json.Unmarshal([]byte(inv.Problems), &items)
	items = append(items, signatureProblem(r, reason, message))
	problems, err := json.Marshal(items)
	if err != nil {
		return err
	}
	if !transientRefusal(reason) {
		_, err := s.MoveEInvoice(ctx, tx, inv, StatusMove{To: einvoice.Failed, Cause: "signature_refused", Problems: problems})
		return err
	}
	if err := tx.SetEInvoiceProblems(ctx, dbq.SetEInvoiceProblemsParams{ID: inv.ID, Problems: string(problems), UpdatedAt: tx.Now}); err != nil {
		return err
	}
	if err := tx.SetEInvoiceSigningRequest(ctx, dbq.SetEInvoiceSigningRequestParams{ID: inv.ID}); err != nil {
		return err
	}
	_, err = jobs.Insert(ctx, tx, AskArgs{EInvoiceID: inv.ID}, jobs.InsertOpts{RunAt: tx.Now.Add(s.cfg.RefusalBackoff), MaxAttempts: 10})
	return err
}

// KindAskSignature asks again for the signature of a document whose signer
// refused for a passing reason.
const KindAskSignature = "einvoice.ask_signature"

// AskArgs are the arguments of KindAskSignature, whose worker is the
// signing room's.
type AskArgs struct {
	EInvoiceID string `json:"einvoiceId"`
}

// RefreshedDocument gives the stored document a fresh requestTimestamp
// (UJP refuses one more than 5 minutes off) and stores it.
func RefreshedDocument(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) ([]byte, error) {
	var req ujpdoc.Request
	if err := json.Unmarshal([]byte(inv.Document), &req); err != nil {
		return nil, fmt.Errorf("stored document of %s: %w", inv.ID, err)
	}
	req.RequestTimestamp = ujpdoc.FormatTimestamp(tx.Now)
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if err := tx.SetEInvoiceDocument(ctx, dbq.SetEInvoiceDocumentParams{ID: inv.ID, Document: string(b), UpdatedAt: tx.Now}); err != nil {
		return nil, err
	}
	return b, nil
}

// AskDocumentSignature issues a document signing request for inv over
// payload, records it on the e-invoice and emits
// einvoice.signature_required, all in tx.
func (s *Service) AskDocumentSignature(ctx context.Context, tx *store.Tx, inv dbq.Einvoice, payload []byte) (SigningRequest, error) {
	sr, err := RequestSignature(ctx, tx, inv.CompanyID, PurposeDocument, payload, SigningLink{Type: LinkEInvoice, ID: inv.ID})
	if err != nil {
		return sr, err
	}
	return sr, s.DocumentAsked(ctx, tx, inv.ID, sr.ID)
}

// DocumentAsked records that e-invoice id waits on request sr and says so.
func (s *Service) DocumentAsked(ctx context.Context, tx *store.Tx, id, sr string) error {
	if err := tx.SetEInvoiceSigningRequest(ctx, dbq.SetEInvoiceSigningRequestParams{ID: id, SigningRequestID: sql.NullString{String: sr, Valid: true}}); err != nil {
		return fmt.Errorf("signing request of %s: %w", id, err)
	}
	inv, err := tx.GetEInvoiceByID(ctx, id)
	if err != nil {
		return err
	}
	return s.EInvoiceEvent(ctx, tx, inv, webhooks.EventSignatureRequired)
}
