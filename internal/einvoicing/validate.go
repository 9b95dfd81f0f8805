package einvoicing

// Validation that needs UJP. Shape and code-list errors are found before
// POST /v1/einvoices answers (422). The buyer's registry check runs inline
// within Config.ValidationBudget; when UJP's registry does not answer in
// time, the document is stored in validating and the job below finishes
// the check: invalid with the registry's field errors in problems
// (einvoice.validated_failed), or on to awaiting_signature with its signing
// request (einvoice.signature_required).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// kindValidate finishes the validation of a document stored in
// validating.
const kindValidate = "einvoice.validate"

// validateAttempts bounds the registry look-ups of one document. After
// the last one fails, the check is left to UJP, which makes it again on
// submission (E1014, E10006): a registry outage does not stop issuing.
const validateAttempts = 6

// validateBackoff is the wait between two look-ups of one document.
func validateBackoff() jobs.Backoff {
	return jobs.Schedule(10*time.Second, 30*time.Second, time.Minute, 2*time.Minute, 5*time.Minute)
}

type validateArgs struct {
	EInvoiceID string `json:"einvoiceId"`
}

// validate is the worker of kindValidate.
func (s *Service) validate(ctx context.Context, j *jobs.Job, a validateArgs) error {
	inv, err := s.db.Reader().GetEInvoiceByID(ctx, a.EInvoiceID)
	if err != nil {
		return fmt.Errorf("validate %s: %w", a.EInvoiceID, err)
	}
	if inv.Status != string(einvoice.Validating) {
		return nil // finished already
	}
	var req ujpdoc.Request
	if err := json.Unmarshal([]byte(inv.Document), &req); err != nil {
		return jobs.Cancel(fmt.Errorf("validate %s: stored document: %w", inv.ID, err))
	}
	seller := func() (string, error) { return req.Document.Seller.SellerTin, nil }
	fe, lookupErr := s.checkBuyer(ctx, inv.Environment, seller, buyerOf(&req.Document), s.cfg.RegistryTimeout)
	if lookupErr != nil {
		if j.Attempt < j.MaxAttempts {
			return lookupErr
		}
		s.log.WarnContext(ctx, "buyer registry check left to UJP: the registry did not answer", "einvoice", inv.ID, "err", lookupErr)
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.GetEInvoiceByID(ctx, inv.ID)
		if err != nil {
			return err
		}
		if cur.Status != string(einvoice.Validating) {
			return nil
		}
		if len(fe) > 0 {
			items := make([]ProblemItem, 0, len(fe))
			for _, f := range fe {
				items = append(items, ProblemItem{Path: f.Path, Message: f.Message, Codebook: f.Codebook})
			}
			problems, err := json.Marshal(items)
			if err != nil {
				return err
			}
			_, err = s.MoveEInvoice(ctx, tx, cur, StatusMove{To: einvoice.Invalid, Cause: "validation_failed", Problems: problems})
			return err
		}
		cur, err = s.MoveEInvoice(ctx, tx, cur, StatusMove{To: einvoice.AwaitingSignature, Cause: "validated"})
		if err != nil {
			return err
		}
		if lookupErr == nil {
			// The registry answered: a VAT number or address part the
			// request left out is the registry's (stored with the fresh
			// timestamp below).
			var doc ujpdoc.Request
			if err := json.Unmarshal([]byte(cur.Document), &doc); err != nil {
				return err
			}
			s.fillBuyer(cur.Environment, &doc.Document)
			b, err := json.Marshal(doc)
			if err != nil {
				return err
			}
			cur.Document = string(b)
		}
		payload, err := RefreshedDocument(ctx, tx, cur)
		if err != nil {
			return err
		}
		_, err = s.AskDocumentSignature(ctx, tx, cur, payload)
		if errors.Is(err, ErrNoSigner) {
			// The certificate went away meanwhile: registering one asks.
			s.log.WarnContext(ctx, "e-invoice validated but the company has no valid certificate", "einvoice", cur.ID)
			return nil
		}
		return err
	})
}
