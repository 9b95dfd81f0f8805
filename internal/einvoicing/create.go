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
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// LinkEInvoice is the signing-request link type of e-invoice documents.
const LinkEInvoice = "einvoice"

// einvoiceSigned moves a signed e-invoice to queued and asks for its
// submission, in the transaction that records the signature.
func (s *Service) einvoiceSigned(ctx context.Context, tx *store.Tx, r SigningRequest) error {
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
		moved, err := s.MoveEInvoice(ctx, tx, inv, StatusMove{To: einvoice.Queued, Cause: "signed", Problems: []byte("[]")})
		if err != nil {
			return err
		}
		inv = moved
	case einvoice.Queued, einvoice.Held:
		// A fresh signature of a document that waited too long for UJP
		// to take its old timestamp (see pipeline/pipeline.go); refusals of it are
		// over too.
		if inv.Problems != "[]" && inv.Problems != "" {
			if err := tx.SetEInvoiceProblems(ctx, dbq.SetEInvoiceProblemsParams{ID: inv.ID, Problems: "[]", UpdatedAt: tx.Now}); err != nil {
				return err
			}
		}
	default:
		return nil // a late duplicate signature; the first one moved it
	}
	if inv.PaceKey != "" {
		first, err := FirstOfCompany(ctx, tx, inv.PaceKey, inv.CompanyID, inv.ID)
		if err != nil {
			return err
		}
		if first {
			// Its company's only one: sent before the user's others
			// (pipeline/pacing.go).
			_, err := jobs.Insert(ctx, tx, SubmitArgs{EInvoiceID: inv.ID, First: true}, jobs.InsertOpts{MaxAttempts: submitAttempts, RunAt: tx.Now.Add(-sendFirst)})
			return err
		}
	}
	due, err := s.sendDue(ctx, tx, inv)
	if err != nil {
		return err
	}
	_, err = jobs.Insert(ctx, tx, SubmitArgs{EInvoiceID: inv.ID}, jobs.InsertOpts{MaxAttempts: submitAttempts, RunAt: due})
	return err
}

// newEInvoice is what createEInvoice stores.
type newEInvoice struct {
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

	// Set by encode.
	docJSON []byte // the request UJP receives: the document and its requestTimestamp
	payload string // docJSON in base64url: what the signer signs
	totals  einvoice.Totals
	// Set by issuer (IssueEInvoice) or signer: the company's certificate
	// (nil: createEInvoice reads it).
	cert    *dbq.SigningCertificate
	certErr error
}

// encode does the CPU work of storing n — the request UJP will receive,
// stamped at now, its base64url form and the totals — so that it can run
// before the transaction instead of holding it.
func (n *newEInvoice) encode(now time.Time) error {
	docJSON, err := json.Marshal(ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(now), Document: *n.Doc})
	if err != nil {
		return fmt.Errorf("encode document: %w", err)
	}
	n.docJSON, n.payload, n.totals = docJSON, jwsverify.B64(docJSON), einvoice.DocTotals(n.Doc)
	return nil
}

// issuer reads, in one query, the company id the caller issues for (with
// company's rules: err) and its current certificate at now for a
// newEInvoice; no certificate is certErr ErrNoSigner, which createEInvoice
// reports unless the request is answered otherwise (a clientReference
// seen before, an invalid document).
func issuer(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string, now time.Time) (co dbq.Company, cert *dbq.SigningCertificate, certErr, err error) {
	sc := ScopeOf(p)
	r, err := q.GetAccountCompanySigner(ctx, dbq.GetAccountCompanySignerParams{ID: id, AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, Now: now})
	co, err = Mandated(auth.InReach(ctx, q, p, "Company", id, r.Company, err))
	if err != nil {
		return co, nil, nil, err
	}
	if !r.CertID.Valid {
		return co, &dbq.SigningCertificate{}, ErrNoSigner, nil
	}
	// What createEInvoice uses of a certificate: its id, company and DER.
	return co, &dbq.SigningCertificate{ID: r.CertID.String, CompanyID: co.ID, Der: r.CertDer.String, EujpID: r.CertEujpID.String}, nil, nil
}

// signer reads the company's current certificate for n at now; no
// certificate is ErrNoSigner, reported by createEInvoice.
func (n *newEInvoice) signer(ctx context.Context, q *dbq.Queries, now time.Time) {
	cert, err := CurrentCertificate(ctx, q, n.Company.ID, now)
	n.cert, n.certErr = &cert, err
}

func CurrentCertificate(ctx context.Context, q *dbq.Queries, companyID string, now time.Time) (dbq.SigningCertificate, error) {
	cert, err := q.CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: companyID, Now: now})
	if errors.Is(err, sql.ErrNoRows) {
		return cert, ErrNoSigner
	}
	if err != nil {
		return cert, fmt.Errorf("signing: certificate of %s: %w", companyID, err)
	}
	return cert, nil
}

// createEInvoice stores a built document in awaiting_signature with its
// first history row, a signing request for the company's signer (protected
// header with its current certificate) and the einvoice.signature_required
// event, all in tx: the e-invoice exists exactly when its signing request
// does. With n.Validating it is stored in validating instead, with the
// validation job that finishes its checks and no signing request yet (the
// company must have a signer all the same). A company without a valid
// certificate is ErrNoSigner. n is encoded and its certificate read here,
// at the transaction's time, unless the caller did it before.
func (s *Service) createEInvoice(ctx context.Context, tx *store.Tx, n newEInvoice) (EInvoice, error) {
	var err error
	if n.docJSON == nil {
		if err := n.encode(tx.Now); err != nil {
			return EInvoice{}, err
		}
	}
	if n.cert == nil {
		n.signer(ctx, tx.Queries, tx.Now)
	}
	if n.certErr != nil {
		return EInvoice{}, n.certErr
	}
	status, sgr, header := einvoice.AwaitingSignature, sql.NullString{}, ""
	key := paceKey(n.Company.Environment, n.cert.EujpID)
	wait, wake := false, false
	if n.Validating {
		status = einvoice.Validating
	} else if wait, wake, err = s.mustWait(ctx, tx, key, n.Company.ID); err != nil {
		return EInvoice{}, err
	} else if !wait {
		if header, err = s.headers.get(*n.cert); err != nil {
			return EInvoice{}, err
		}
		sgr = sql.NullString{String: denar.NewID("sgr"), Valid: true}
	}
	ref := sql.NullString{}
	if n.ClientReference != nil {
		ref = sql.NullString{String: *n.ClientReference, Valid: true}
	}
	t := n.totals
	p := dbq.InsertEInvoiceParams{ID: n.ID, AccountID: n.Account, CompanyID: n.Company.ID,
		Environment: n.Company.Environment, Kind: n.Kind, Status: string(status), DocumentType: n.Doc.Header.DocType,
		Number: n.Doc.Header.DocNumber, IssueDate: n.Doc.Header.DocDate, Document: string(n.docJSON), UjpDocID: n.ID,
		TotalNet: t.Net, TotalVat: t.Vat, TotalGross: t.Gross, Currency: t.Currency, Problems: "[]",
		ClientReference: ref, Fingerprint: n.Fingerprint, OriginalID: sql.NullString{String: n.OriginalID, Valid: n.OriginalID != ""},
		SigningRequestID: sgr, CreatedAt: tx.Now, UpdatedAt: tx.Now, PaceKey: key}
	if wait {
		p.SignTurnSince = sql.NullTime{Time: tx.Now, Valid: true}
	}
	// The row as stored: the values written, the other columns at their
	// defaults (no euid, QR link, hold or delivery yet). Reading it back
	// would return the document just written.
	out := dbq.Einvoice{ID: p.ID, AccountID: p.AccountID, CompanyID: p.CompanyID, Environment: p.Environment,
		Kind: p.Kind, Status: p.Status, DocumentType: p.DocumentType, Number: p.Number, IssueDate: p.IssueDate,
		Document: p.Document, UjpDocID: p.UjpDocID, TotalNet: p.TotalNet, TotalVat: p.TotalVat, TotalGross: p.TotalGross,
		Currency: p.Currency, Problems: p.Problems, ClientReference: p.ClientReference, Fingerprint: p.Fingerprint,
		OriginalID: p.OriginalID, CreatedAt: tx.Stored(p.CreatedAt), UpdatedAt: tx.Stored(p.UpdatedAt),
		SigningRequestID: p.SigningRequestID, PaceKey: p.PaceKey, SignTurnSince: p.SignTurnSince}
	// Rendered once: the event's object, the answer and its stored
	// idempotent response are these bytes.
	view, err := renderedView(out)
	if err != nil {
		return EInvoice{}, err
	}
	historyID := denar.NewID("esh")
	if n.Validating || wait {
		if err := tx.InsertEInvoice(ctx, p); err != nil {
			return EInvoice{}, fmt.Errorf("store einvoice: %w", err)
		}
		if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: historyID, EinvoiceID: n.ID,
			ToStatus: out.Status, Cause: "issued", At: tx.Now}); err != nil {
			return EInvoice{}, fmt.Errorf("history: %w", err)
		}
		if wait {
			// Its signing request is issued when its turn to be sent
			// is near (pipeline/pacing.go); einvoice.signature_required says so
			// then.
			if wake {
				return view, EnqueuePace(ctx, tx, key)
			}
			return view, nil
		}
		_, err := jobs.Insert(ctx, tx, validateArgs{EInvoiceID: out.ID}, jobs.InsertOpts{MaxAttempts: validateAttempts})
		return view, err
	}
	link := SigningLink{Type: LinkEInvoice, ID: n.ID}
	summary := documentSummary(n.Company.Name, n.Kind, p.Number, n.Doc.Buyer.BuyerName, t.Gross, t.Currency)
	if tx.Dialect == store.Postgres {
		// The four rows, and the read of the endpoints the event may go
		// to, in one statement: a round trip each is most of what they
		// cost on PostgreSQL.
		d, err := einvoiceDraft(out.AccountID, webhooks.EventSignatureRequired, view)
		if err != nil {
			return EInvoice{}, err
		}
		ev, err := s.events.Prepare(tx, d)
		if err != nil {
			return EInvoice{}, err
		}
		rows, err := tx.IssueEInvoiceRows(ctx, dbq.IssueEInvoiceRowsParams{ID: p.ID, AccountID: p.AccountID,
			CompanyID: p.CompanyID, Environment: p.Environment, CreatedAt: tx.Now,
			SrID: sgr.String, SrCertificateID: n.cert.ID, SrPurpose: PurposeDocument, SrProtectedHeader: header,
			SrPayload: n.payload, SrLinkType: link.Type, SrExpiresAt: tx.Now.Add(SigningTTL), SrSummary: encodeSummary(summary),
			Kind: p.Kind, Status: p.Status, DocumentType: p.DocumentType, Number: p.Number, IssueDate: p.IssueDate,
			Document: p.Document, UjpDocID: p.UjpDocID, TotalNet: p.TotalNet, TotalVat: p.TotalVat,
			TotalGross: p.TotalGross, Currency: p.Currency, Problems: p.Problems, ClientReference: p.ClientReference,
			Fingerprint: p.Fingerprint, OriginalID: p.OriginalID, HistoryID: historyID, HistoryCause: "issued", PaceKey: key,
			EventID: ev.ID(), EventType: ev.Type(), EventPayload: ev.Payload()})
		if err != nil {
			return EInvoice{}, fmt.Errorf("store einvoice: %w", err)
		}
		eps := make([]dbq.ListFanOutEndpointsRow, len(rows))
		for i, r := range rows {
			eps[i] = dbq.ListFanOutEndpointsRow(r)
		}
		return view, s.events.Stored(ctx, tx, ev, eps)
	}
	if _, err := insertRequest(ctx, tx, sgr.String, n.Account, *n.cert, header, PurposeDocument, n.payload, link, summary); err != nil {
		return EInvoice{}, err
	}
	if err := tx.InsertEInvoice(ctx, p); err != nil {
		return EInvoice{}, fmt.Errorf("store einvoice: %w", err)
	}
	if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: historyID, EinvoiceID: n.ID,
		ToStatus: out.Status, Cause: "issued", At: tx.Now}); err != nil {
		return EInvoice{}, fmt.Errorf("history: %w", err)
	}
	return view, s.writeEInvoiceEvent(ctx, tx, view, out.AccountID, webhooks.EventSignatureRequired)
}

// paceKey names the UJP user whose budget sends a company's documents:
// its environment and its signer's EUJP id ("" when the certificate has
// none: such documents are not paced).
func paceKey(env, eujpID string) string {
	if eujpID == "" {
		return ""
	}
	return env + "/" + eujpID
}

// FirstOfCompany reports whether the company has no document of key in
// flight or waiting, other than id. Such a document is not queued behind
// the user's others: it takes a place at once (beyond SignAhead, by at
// most one per company), and its send is claimed and takes its turn before
// theirs (its submit job is due sendFirst ago). One company's month-end then
// delays another's single invoice by a few turns, not by the SignAhead
// documents in flight ahead of it.
func FirstOfCompany(ctx context.Context, tx *store.Tx, key, companyID, id string) (bool, error) {
	n, err := tx.CompanyPaced(ctx, dbq.CompanyPacedParams{Key: key, CompanyID: companyID, ID: id})
	if err != nil {
		return false, fmt.Errorf("pace state of %s, company %s: %w", key, companyID, err)
	}
	return n == 0, nil
}
