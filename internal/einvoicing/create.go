package einvoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// LinkEInvoice is the signing-request link type of e-invoice documents.
const LinkEInvoice = "einvoice"

// einvoiceSigned moves a signed e-invoice to queued and asks for its
// submission, in the transaction that records the signature.
func einvoiceSigned(ctx context.Context, tx *store.Tx, r SigningRequest) error {
	inv, err := tx.GetEInvoiceByID(ctx, r.Links[LinkEInvoice])
	if errors.Is(err, sql.ErrNoRows) {
		return nil // not an issued e-invoice (the signing tests sign bare links)
	}
	if err != nil {
		return fmt.Errorf("signed einvoice %s: %w", r.Links[LinkEInvoice], err)
	}
	switch einvoice.Status(inv.Status) {
	case einvoice.AwaitingSignature:
		// Refusals that kept it waiting (token_missing, pin_locked) are
		// over: problems describe what is wrong now, and the refused
		// requests keep the record.
		if _, err := moveEInvoice(ctx, tx, inv, statusMove{To: einvoice.Queued, Cause: "signed", Problems: []byte("[]")}); err != nil {
			return err
		}
	case einvoice.Queued, einvoice.Held:
		// A fresh signature of a document that waited too long for UJP
		// to take its old timestamp (see pipeline.go); refusals of it are
		// over too.
		if inv.Problems != "[]" && inv.Problems != "" {
			if err := tx.SetEInvoiceProblems(ctx, dbq.SetEInvoiceProblemsParams{ID: inv.ID, Problems: "[]", UpdatedAt: tx.Now}); err != nil {
				return err
			}
		}
	default:
		return nil // a late duplicate signature; the first one moved it
	}
	return enqueueSubmit(ctx, tx, inv.ID)
}

// NewEInvoice is what CreateEInvoice stores.
type NewEInvoice struct {
	ID, Account     string
	Company         dbq.Company
	Kind            string // invoice, storno, correction
	Doc             *ujpdoc.Document
	OriginalID      string
	ClientReference *string
	Fingerprint     string
	// Validating stores it in validating, its buyer's registry check left
	// to the validation job, with no signing request yet.
	Validating bool
}

// CreateEInvoice stores a built document in awaiting_signature with its
// first history row and asks the company's signer for its signature, all in
// tx: the e-invoice exists exactly when its signing request does. With
// n.Validating it is stored in validating instead, with the validation job
// that finishes its checks (the company must have a signer all the same).
func CreateEInvoice(ctx context.Context, tx *store.Tx, n NewEInvoice) (dbq.Einvoice, error) {
	status := einvoice.AwaitingSignature
	if n.Validating {
		status = einvoice.Validating
		if _, err := tx.CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: n.Company.ID, Now: tx.Now}); errors.Is(err, sql.ErrNoRows) {
			return dbq.Einvoice{}, ErrNoSigner
		} else if err != nil {
			return dbq.Einvoice{}, fmt.Errorf("certificate of %s: %w", n.Company.ID, err)
		}
	}
	docJSON, err := json.Marshal(ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), Document: *n.Doc})
	if err != nil {
		return dbq.Einvoice{}, fmt.Errorf("encode document: %w", err)
	}
	t := einvoice.DocTotals(n.Doc)
	ref := sql.NullString{}
	if n.ClientReference != nil {
		ref = sql.NullString{String: *n.ClientReference, Valid: true}
	}
	out, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: n.ID, AccountID: n.Account, CompanyID: n.Company.ID,
		Environment: n.Company.Environment, Kind: n.Kind, Status: string(status), DocumentType: n.Doc.Header.DocType,
		Number: n.Doc.Header.DocNumber, IssueDate: n.Doc.Header.DocDate, Document: string(docJSON), UjpDocID: n.ID,
		TotalNet: t.Net, TotalVat: t.Vat, TotalGross: t.Gross, Currency: t.Currency, Problems: "[]",
		ClientReference: ref, Fingerprint: n.Fingerprint, OriginalID: sql.NullString{String: n.OriginalID, Valid: n.OriginalID != ""},
		CreatedAt: tx.Now, UpdatedAt: tx.Now})
	if err != nil {
		return out, fmt.Errorf("store einvoice: %w", err)
	}
	if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: n.ID,
		ToStatus: out.Status, Cause: "issued", At: tx.Now}); err != nil {
		return out, fmt.Errorf("history: %w", err)
	}
	if n.Validating {
		if _, err := jobs.Enqueue(ctx, tx, jobs.Spec{Kind: KindValidate, Args: validateArgs{EInvoiceID: out.ID}, MaxAttempts: validateAttempts}); err != nil {
			return out, err
		}
		return out, nil
	}
	if _, err := askDocumentSignature(ctx, tx, out, docJSON); err != nil {
		return out, err
	}
	return tx.GetEInvoiceByID(ctx, out.ID)
}
