package einvoicing

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// StatusChange is one row of an e-invoice's status history.
type StatusChange struct {
	From    *string   `json:"from" doc:"null for the first row."`
	To      string    `json:"to" example:"delivered" doc:"The status moved to."`
	Cause   string    `json:"cause" doc:"issued, signed, submission, submitted, ujp_outage, retry, ujp_rejected, ujp_status, signature_refused, …"`
	UJPCode *string   `json:"ujpCode" doc:"UJP's status (01, 03, …) or error code when UJP caused the move."`
	At      time.Time `json:"at" example:"2026-05-04T09:15:02Z" doc:"When the move happened."`
}

// EInvoiceRow loads an e-invoice of companyID within the caller's reach
// (the company itself was judged by reach's rule); any other is 404, so
// ids of other tenants are not confirmed.
func EInvoiceRow(ctx context.Context, q *dbq.Queries, p *auth.Principal, companyID, id string) (dbq.Einvoice, error) {
	sc := ScopeOf(p)
	r, err := q.GetEInvoice(ctx, dbq.GetEInvoiceParams{ID: id, AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, CompanyID: companyID})
	if errors.Is(err, sql.ErrNoRows) {
		return dbq.Einvoice{}, denar.Errorf(denar.ECodeNotFound, "No e-invoice %s for this company.", id)
	}
	if err != nil {
		return dbq.Einvoice{}, fmt.Errorf("load einvoice %s: %w", id, err)
	}
	return r, nil
}

// EInvoice returns one e-invoice of companyID.
func (s *Service) EInvoice(ctx context.Context, p *auth.Principal, companyID, id string) (EInvoice, error) {
	q := s.db.Reader()
	r, err := EInvoiceRow(ctx, q, p, companyID, id)
	if err != nil {
		return EInvoice{}, err
	}
	v := EInvoiceView(r)
	if v.Queue, err = s.queueOf(ctx, q, r); err != nil {
		return EInvoice{}, fmt.Errorf("queue of %s: %w", id, err)
	}
	return v, nil
}

// EInvoiceFilter selects e-invoices; empty fields do not filter.
type EInvoiceFilter struct {
	Status, DocumentType, IssuedFrom, IssuedTo, ClientReference, EUID string
	// Number is the document number, exactly; BuyerTaxNumber the buyer's
	// ЕДБ (digits).
	Number, BuyerTaxNumber string
}

// EInvoices returns up to limit+1 e-invoices of companyID, newest first,
// after the id after.
func (s *Service) EInvoices(ctx context.Context, p *auth.Principal, companyID string, f EInvoiceFilter, after string, limit int) ([]EInvoice, error) {
	var fe denar.FieldErrors
	for _, d := range [][2]string{{"issuedFrom", f.IssuedFrom}, {"issuedTo", f.IssuedTo}} {
		if _, err := time.Parse(time.DateOnly, d[1]); d[1] != "" && err != nil {
			fe.Add(d[0], "must be a date YYYY-MM-DD")
		}
	}
	if b := f.BuyerTaxNumber; b != "" && (len(b) > 20 || strings.Trim(b, "0123456789") != "") {
		fe.Add("buyerTaxNumber", "must be digits")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	sc := ScopeOf(p)
	rows, err := s.db.Reader().ListEInvoices(ctx, dbq.ListEInvoicesParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, CompanyID: companyID,
		AfterID: after, Status: store.NullText(f.Status), DocumentType: store.NullText(f.DocumentType), IssuedFrom: store.NullText(f.IssuedFrom),
		IssuedTo: store.NullText(f.IssuedTo), ClientReference: store.NullText(f.ClientReference), Euid: store.NullText(f.EUID),
		Number: store.NullText(f.Number), BuyerTin: store.NullText(f.BuyerTaxNumber), Lim: int64(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list einvoices: %w", err)
	}
	out := make([]EInvoice, 0, len(rows))
	for _, r := range rows {
		out = append(out, EInvoiceView(r))
	}
	return out, nil
}

// StatusHistory returns the ordered trail of an e-invoice's moves.
func (s *Service) StatusHistory(ctx context.Context, p *auth.Principal, companyID, id string) ([]StatusChange, error) {
	q := s.db.Reader()
	if _, err := EInvoiceRow(ctx, q, p, companyID, id); err != nil {
		return nil, err
	}
	rows, err := q.ListEInvoiceStatus(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("status history of %s: %w", id, err)
	}
	out := make([]StatusChange, 0, len(rows))
	for _, r := range rows {
		out = append(out, StatusChange{From: store.TextOrNil(r.FromStatus), To: r.ToStatus, Cause: r.Cause, UJPCode: store.TextOrNil(r.UjpCode), At: r.At.UTC()})
	}
	return out, nil
}

// IssueEInvoice is the command of POST /v1/einvoices.
type IssueEInvoice struct {
	CompanyID string
	Request   *einvoice.Request
}

// IssueEInvoice builds UJP's document from the request (seller = the
// company), computes totals by UJP's formulas, validates it against the
// code lists and the buyer registry, and stores it in awaiting_signature
// with a signing request for the company's signer, in one transaction. A
// clientReference reused with the same body answers with the existing
// e-invoice; with another body, 409 client_reference_conflict.
func (s *Service) IssueEInvoice(ctx context.Context, c Caller, cmd IssueEInvoice) (EInvoice, error) {
	req := cmd.Request
	sum := sha256.Sum256(req.Fingerprint())
	fingerprint := hex.EncodeToString(sum[:])
	// The buyer's registry check may wait for UJP, so it runs before the
	// transaction, in the credential's environment: the guard has matched
	// the company's to it (X-Company-Id), and the company is checked again
	// below.
	buyerFE, buyerErr := s.checkBuyer(ctx, c.Environment, s.sellerTax(ctx, c.AccountID, cmd.CompanyID), req.Buyer, s.cfg.ValidationBudget)
	// The e-invoice id is UJP's docId: fixed now, so every submission
	// attempt of this document carries it and UJP refuses a copy.
	id := denar.NewID("einv")
	// The rest is one transaction: the company and its signer's
	// certificate are read in it (one query; on SQLite the writer's pages
	// are warm, where a reader's are dropped at every commit), and the
	// document is built from them and stamped at its time.
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (EInvoice, error) {
		co, cert, certErr, err := issuer(ctx, tx.Queries, c.Principal, cmd.CompanyID, tx.Now)
		if err != nil {
			return EInvoice{}, err
		}
		if prev, found, err := byClientReference(ctx, tx, co.ID, req.ClientReference, fingerprint); err != nil || found {
			return EInvoiceView(prev), err
		}
		doc, buildErr := req.Build(sellerOf(co), id, s.codebooks(co.Environment))
		buildErr = withVATPayerErrors(buildErr, co, req)
		validating := false
		if buyerErr != nil && buildErr == nil {
			// UJP did not answer in time: the validation job finishes
			// the check.
			s.log.InfoContext(ctx, "buyer registry check continues after the answer", "taxNumber", req.Buyer.TaxNumber, "err", buyerErr)
			validating = true
		} else if buyerErr == nil {
			buildErr = withBuyerError(buildErr, buyerFE...)
		}
		if buildErr != nil {
			return EInvoice{}, buildErr
		}
		if !validating {
			s.fillBuyer(co.Environment, doc)
		}
		return s.createEInvoice(ctx, tx, newEInvoice{ID: id, Account: c.AccountID, Company: co, Kind: "invoice", Doc: doc,
			ClientReference: req.ClientReference, Fingerprint: fingerprint, Validating: validating, cert: cert, certErr: certErr})
	})
}

// inlineBuyerCheck runs the buyer's registry check within the inline
// validation budget and returns what to answer now: buildErr (shape and
// code-list errors) with the registry's field error added. When the
// registry does not answer in time and nothing else is wrong, validating
// is true: the document is stored in validating and the validation job
// finishes the check.
func (s *Service) inlineBuyerCheck(ctx context.Context, co dbq.Company, buildErr error, buyer einvoice.Party) (error, bool) {
	seller := func() (string, error) { return co.TaxNumber, nil }
	fe, err := s.checkBuyer(ctx, co.Environment, seller, buyer, s.cfg.ValidationBudget)
	if err != nil {
		if buildErr != nil {
			return buildErr, false
		}
		s.log.InfoContext(ctx, "buyer registry check continues after the answer", "taxNumber", buyer.TaxNumber, "err", err)
		return nil, true
	}
	return withBuyerError(buildErr, fe...), false
}

// sellerOf fills UJP's seller from the company's registry data.
func sellerOf(co dbq.Company) ujpdoc.Seller {
	var a Address
	_ = json.Unmarshal([]byte(co.Address), &a)
	s := ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: co.TaxNumber, SellerName: co.Name,
		SellerAddress: ujpdoc.Address{StreetAddress: a.Street, StreetNumber: a.Number, PostalCode: a.Zip, City: a.City}}
	if co.VatNumber != "" {
		v := co.VatNumber
		s.SellerVatNumber = &v
	}
	return s
}

// byClientReference finds the e-invoice a clientReference names: found with
// the same body fingerprint, it is the answer again; with another body, 409
// client_reference_conflict.
func byClientReference(ctx context.Context, tx *store.Tx, companyID string, ref *string, fingerprint string) (dbq.Einvoice, bool, error) {
	if ref == nil {
		return dbq.Einvoice{}, false, nil
	}
	prev, err := tx.GetEInvoiceByClientReference(ctx, dbq.GetEInvoiceByClientReferenceParams{CompanyID: companyID,
		ClientReference: sql.NullString{String: *ref, Valid: true}})
	switch {
	case err == nil && prev.Fingerprint == fingerprint:
		return prev, true, nil
	case err == nil:
		return dbq.Einvoice{}, false, &denar.Error{Code: "client_reference_conflict", Message: "clientReference " + *ref + " is used by " + prev.ID + " with another body.",
			Fields: []denar.FieldError{{Path: "clientReference", Message: "used by " + prev.ID + " with another body"}}}
	case !errors.Is(err, sql.ErrNoRows):
		return dbq.Einvoice{}, false, fmt.Errorf("client reference: %w", err)
	}
	return dbq.Einvoice{}, false, nil
}

// Storno is the command of POST /v1/einvoices/{id}/storno.
type Storno struct {
	CompanyID string
	ID        string
	Reason    string  // a void-reasons code (S-x)
	Comment   *string // free text
	Number    *string // default the original's number followed by /S
	IssueDate *string // YYYY-MM-DD; default today in Europe/Skopje
}

// KindExternal is the kind of an e-invoice the service never issued that
// reconciliation found at UJP (the reconcile room imports it).
const KindExternal = "external"

// supersedable loads the original and checks it may be voided or
// corrected now.
func supersedable(ctx context.Context, tx *store.Tx, p *auth.Principal, companyID, id, action string) (dbq.Einvoice, dbq.Company, error) {
	orig, err := EInvoiceRow(ctx, tx.Queries, p, companyID, id)
	if err != nil {
		return orig, dbq.Company{}, err
	}
	co, err := ActingCompany(ctx, tx.Queries, p, orig.CompanyID)
	if err != nil {
		return orig, co, err
	}
	if !einvoice.StornoAllowed(einvoice.Status(orig.Status)) || !orig.Euid.Valid {
		return orig, co, denar.Errorf("einvoice_state_conflict", "A %s needs an e-invoice UJP holds (delivered, accepted or auto_accepted); %s is %s.", action, orig.ID, orig.Status)
	}
	if orig.Kind == KindExternal {
		return orig, co, denar.Errorf("einvoice_external", "%s was issued outside the service (found at UJP by reconciliation); void or correct it where it was issued.", orig.ID)
	}
	if orig.Kind == "storno" {
		return orig, co, denar.Errorf("einvoice_state_conflict", "%s is itself a storno; it cannot be voided or corrected.", orig.ID)
	}
	var filed *int
	if co.AnnualAccountFiledFor.Valid {
		y := int(co.AnnualAccountFiledFor.Int32)
		filed = &y
	}
	if err := einvoice.PeriodClosed(orig.IssueDate, filed); err != nil {
		return orig, co, err
	}
	pending, err := tx.PendingSupersede(ctx, sql.NullString{String: orig.ID, Valid: true})
	if err == nil {
		return orig, co, denar.Errorf("supersede_pending", "%s of %s is still on its way to UJP; wait for it to be delivered or to fail.", pending, orig.ID)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return orig, co, err
	}
	return orig, co, nil
}

func StoredDocument(inv dbq.Einvoice) (*ujpdoc.Document, error) {
	var req ujpdoc.Request
	if err := json.Unmarshal([]byte(inv.Document), &req); err != nil {
		return nil, fmt.Errorf("stored document of %s: %w", inv.ID, err)
	}
	return &req.Document, nil
}

// StornoEInvoice creates the storno of an e-invoice: a new document
// (docStorno 1) with the original's parties and lines, quantities negated,
// totals recomputed, the void reason and a reference to the original's
// EUID. It is signed and submitted like any e-invoice; when UJP accepts
// it, the original moves to cancelled_by_storno. The original is never
// modified here.
func (s *Service) StornoEInvoice(ctx context.Context, c Caller, cmd Storno) (EInvoice, error) {
	body, err := json.Marshal(cmd)
	if err != nil {
		return EInvoice{}, err
	}
	sum := sha256.Sum256(append([]byte("storno:"), body...))
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (EInvoice, error) {
		orig, co, err := supersedable(ctx, tx, c.Principal, cmd.CompanyID, cmd.ID, "storno")
		if err != nil {
			return EInvoice{}, err
		}
		cb := s.codebooks(co.Environment)
		if err := (einvoice.Storno{Reason: cmd.Reason, Comment: cmd.Comment}).Validate(cb); err != nil {
			return EInvoice{}, err
		}
		number := orig.Number + "/S"
		if cmd.Number != nil {
			number = strings.TrimSpace(*cmd.Number)
		}
		date := tx.Now.In(ujpdoc.Skopje).Format(time.DateOnly)
		var fe denar.FieldErrors
		if number == "" {
			fe.Add("number", "must not be empty")
		}
		if cmd.IssueDate != nil {
			if _, err := time.Parse(time.DateOnly, *cmd.IssueDate); err != nil {
				fe.Add("issueDate", "must be a date YYYY-MM-DD")
			} else if *cmd.IssueDate < orig.IssueDate {
				fe.Add("issueDate", "must not be before the original's issue date %s", orig.IssueDate)
			}
			date = *cmd.IssueDate
		}
		if err := fe.Err(); err != nil {
			return EInvoice{}, err
		}
		od, err := StoredDocument(orig)
		if err != nil {
			return EInvoice{}, err
		}
		id := denar.NewID("einv")
		doc, err := ujpdoc.Storno(od, orig.Euid.String, id, number, cmd.Reason, cmd.Comment, date, cb)
		if err != nil {
			return EInvoice{}, err
		}
		return s.createEInvoice(ctx, tx, newEInvoice{ID: id, Account: c.AccountID, Company: co, Kind: "storno", Doc: doc,
			OriginalID: orig.ID, Fingerprint: hex.EncodeToString(sum[:])})
	})
}

// Correction is the command of POST /v1/einvoices/{id}/correction: a
// complete replacement document with docStorno 2 and the correction
// reason.
type Correction struct {
	CompanyID string
	ID        string
	Request   *einvoice.CorrectionRequest
}

// CorrectEInvoice creates the correction (docStorno 2) of an e-invoice: the
// complete replacement document, referencing the original's EUID. When UJP
// accepts it, the original moves to corrected.
func (s *Service) CorrectEInvoice(ctx context.Context, c Caller, cmd Correction) (EInvoice, error) {
	req := cmd.Request
	sum := sha256.Sum256(append([]byte("correction:"+cmd.ID+":"), req.Fingerprint()...))
	fingerprint := hex.EncodeToString(sum[:])
	co, err := ActingCompany(ctx, s.db.Reader(), c.Principal, cmd.CompanyID)
	if err != nil {
		return EInvoice{}, err
	}
	id := denar.NewID("einv")
	cb := s.codebooks(co.Environment)
	doc, buildErr := req.Build(sellerOf(co), id, cb)
	buildErr = withVATPayerErrors(buildErr, co, &req.Request)
	buildErr, validating := s.inlineBuyerCheck(ctx, co, buildErr, req.Buyer)
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (EInvoice, error) {
		if prev, found, err := byClientReference(ctx, tx, co.ID, req.ClientReference, fingerprint); err != nil || found {
			return EInvoiceView(prev), err
		}
		orig, co, err := supersedable(ctx, tx, c.Principal, cmd.CompanyID, cmd.ID, "correction")
		if err != nil {
			return EInvoice{}, err
		}
		if buildErr != nil {
			return EInvoice{}, buildErr
		}
		ujpdoc.MarkCorrection(doc, orig.Euid.String, orig.IssueDate, req.Reason, req.Comment, cb)
		if !validating {
			s.fillBuyer(co.Environment, doc)
		}
		return s.createEInvoice(ctx, tx, newEInvoice{ID: id, Account: c.AccountID, Company: co, Kind: "correction", Doc: doc,
			OriginalID: orig.ID, ClientReference: req.ClientReference, Fingerprint: fingerprint, Validating: validating})
	})
}

// Queue is where a document waiting to be sent stands among its UJP
// user's documents.
type Queue struct {
	Position   int       `json:"position" example:"12" doc:"Documents of the same UJP user (signer) to be sent before this one, all companies sharing the signer counted; 0: it is next."`
	ExpectedAt time.Time `json:"expectedAt" example:"2026-05-04T09:15:12Z" doc:"When it is expected to be sent to UJP, from the position and UJP's pace (one request per second per user): an estimate, not a promise."`
	Signing    string    `json:"signing" enum:"waiting_for_turn,requested,signed" doc:"waiting_for_turn: its signing request is issued when its turn to be sent is near (so the signature is fresh when sent); requested: the signing request is out (signingRequestId); signed: it waits for its send."`
}
