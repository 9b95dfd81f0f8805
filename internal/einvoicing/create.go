package einvoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
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
		if _, err := moveEInvoice(ctx, tx, inv, statusMove{To: einvoice.Queued, Cause: "signed"}); err != nil {
			return err
		}
	case einvoice.Queued, einvoice.Held:
		// A fresh signature of a document that waited too long for UJP
		// to take its old timestamp (see pipeline.go).
	default:
		return nil // a late duplicate signature; the first one moved it
	}
	return enqueueSubmit(ctx, tx, inv.ID)
}

// NewEInvoice is what createEInvoice stores.
type NewEInvoice struct {
	ID, Account     string
	Company         dbq.Company
	Kind            string // invoice, storno, correction
	Doc             *ujpdoc.Document
	OriginalID      string
	ClientReference *string
	Fingerprint     string

	// Set by encode.
	docJSON []byte // the request UJP receives: the document and its requestTimestamp
	payload string // docJSON in base64url: what the signer signs
	totals  einvoice.Totals
	// Set by signer: the company's certificate as read before the
	// transaction (nil: read it in the transaction).
	cert    *dbq.SigningCertificate
	certErr error
}

// signer reads the company's current certificate for n ahead of the
// transaction, at now, so that the transaction does not have to; no
// certificate is ErrNoSigner, reported by createEInvoice.
func (n *NewEInvoice) signer(ctx context.Context, q *dbq.Queries, now time.Time) {
	cert, err := currentCertificate(ctx, q, n.Company.ID, now)
	n.cert, n.certErr = &cert, err
}

func currentCertificate(ctx context.Context, q *dbq.Queries, companyID string, now time.Time) (dbq.SigningCertificate, error) {
	cert, err := q.CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: companyID, Now: now})
	if errors.Is(err, sql.ErrNoRows) {
		return cert, ErrNoSigner
	}
	if err != nil {
		return cert, fmt.Errorf("signing: certificate of %s: %w", companyID, err)
	}
	return cert, nil
}

// encode does the CPU work of storing n — the request UJP will receive,
// stamped at now, its base64url form and the totals — so that it can run
// before the transaction instead of holding it.
func (n *NewEInvoice) encode(now time.Time) error {
	docJSON, err := json.Marshal(ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(now), Document: *n.Doc})
	if err != nil {
		return fmt.Errorf("encode document: %w", err)
	}
	n.docJSON, n.payload, n.totals = docJSON, jwsverify.B64(docJSON), einvoice.DocTotals(n.Doc)
	return nil
}

// createEInvoice stores a built document in awaiting_signature with its
// first history row, a signing request for the company's signer (protected
// header with its current certificate) and the einvoice.signature_required
// event, all in tx: the e-invoice exists exactly when its signing request
// does. A company without a valid certificate is ErrNoSigner. n is encoded
// and its certificate read here, at the transaction's time, unless the
// caller did it before.
func (s *Service) createEInvoice(ctx context.Context, tx *store.Tx, n NewEInvoice) (dbq.Einvoice, error) {
	if n.docJSON == nil {
		if err := n.encode(tx.Now); err != nil {
			return dbq.Einvoice{}, err
		}
	}
	if n.cert == nil {
		n.signer(ctx, tx.Queries, tx.Now)
	}
	if n.certErr != nil {
		return dbq.Einvoice{}, n.certErr
	}
	cert := *n.cert
	header, err := s.headers.get(cert)
	if err != nil {
		return dbq.Einvoice{}, err
	}
	sgr := denar.NewID("sgr")
	if _, err := createRequest(ctx, tx, sgr, n.Account, cert, header, PurposeDocument, n.payload, SigningLink{Type: LinkEInvoice, ID: n.ID}); err != nil {
		return dbq.Einvoice{}, err
	}
	ref := sql.NullString{}
	if n.ClientReference != nil {
		ref = sql.NullString{String: *n.ClientReference, Valid: true}
	}
	t := n.totals
	out, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: n.ID, AccountID: n.Account, CompanyID: n.Company.ID,
		Environment: n.Company.Environment, Kind: n.Kind, Status: string(einvoice.AwaitingSignature), DocumentType: n.Doc.Header.DocType,
		Number: n.Doc.Header.DocNumber, IssueDate: n.Doc.Header.DocDate, Document: string(n.docJSON), UjpDocID: n.ID,
		TotalNet: t.Net, TotalVat: t.Vat, TotalGross: t.Gross, Currency: t.Currency, Problems: "[]",
		ClientReference: ref, Fingerprint: n.Fingerprint, OriginalID: sql.NullString{String: n.OriginalID, Valid: n.OriginalID != ""},
		SigningRequestID: sql.NullString{String: sgr, Valid: true}, CreatedAt: tx.Now, UpdatedAt: tx.Now})
	if err != nil {
		return out, fmt.Errorf("store einvoice: %w", err)
	}
	if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: n.ID,
		ToStatus: out.Status, Cause: "issued", At: tx.Now}); err != nil {
		return out, fmt.Errorf("history: %w", err)
	}
	return out, einvoiceEvent(ctx, tx, out, EventSignatureRequired)
}
