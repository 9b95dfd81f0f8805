package inbox

// The inbox: incoming e-invoices of a company, read from UJP's purchase side
// (sync.go), and the company's accept/reject decision, which is signed
// on the company's device and reaches UJP only with that signature
// (decide.go). The decision deadline, its reminders and the
// auto-acceptance are in deadline.go; the rules themselves (DecideBy,
// DaysLeft, reject reasons) are the domain's, in package einvoice.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

const (
	decisionAccept      = "accept"
	decisionReject      = "reject"
	inboxDocumentPrefix = "inbd"
	inboxPageSize       = 25
)

func inboxView(r dbq.InboxDocument, now time.Time) einvoicing.InboxDocument {
	var seller einvoicing.InboxSeller
	_ = json.Unmarshal([]byte(r.Seller), &seller)
	problems := r.Problems
	if problems == "" {
		problems = "[]"
	}
	by, _ := time.Parse(time.DateOnly, r.DecideBy)
	out := einvoicing.InboxDocument{ID: r.ID, Object: "inbox_document", CompanyID: r.CompanyID, EUID: r.Euid, Kind: r.Kind,
		OriginalEUID: store.TextOrNil(r.OriginalEuid), DocumentType: r.DocumentType, Number: r.Number, IssueDate: r.IssueDate,
		TransactionDate: r.TransactionDate, Seller: seller,
		Totals:    einvoice.Totals{Net: r.TotalNet, Vat: r.TotalVat, Gross: r.TotalGross, Currency: r.Currency},
		UJPStatus: einvoicing.UJPStatus{Code: r.UjpStatus, Name: r.UjpStatusName, At: r.UjpStatusAt.UTC()},
		Decision: einvoicing.InboxDecision{State: r.DecisionState, ReasonCode: store.TextOrNil(r.DecisionReason), Comment: store.TextOrNil(r.DecisionComment),
			DecidedAt: store.TimeOrNil(r.DecidedAt), SigningRequestID: store.TextOrNil(r.SigningRequestID)},
		DecideBy: r.DecideBy, DaysLeft: einvoice.DaysLeft(now, by), Problems: json.RawMessage(problems),
		ReceivedAt: r.ReceivedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		Links: einvoicing.InboxLinks{Payload: "/v1/inbox/" + r.ID + "/payload", PDF: "/v1/inbox/" + r.ID + "/pdf"}}
	if r.DecisionRequested != "" {
		req := r.DecisionRequested
		out.Decision.Requested = &req
	}
	return out
}

// inboxEvent writes an event about d as GET returns it now.
func (s *Service) inboxEvent(ctx context.Context, tx *store.Tx, d dbq.InboxDocument, typ string) error {
	return s.core.WriteEvent(ctx, tx, d.AccountID, d.CompanyID, d.Environment, typ, d.ID, inboxView(d, tx.Now))
}

// errInboxChanged is a write over a version another transaction changed
// first; the use case reads again and retries.
var errInboxChanged = errors.New("inbox document changed concurrently")

// saveInbox writes d's changing columns over the version it was read in
// and returns the document as stored.
func saveInbox(ctx context.Context, tx *store.Tx, d dbq.InboxDocument) (dbq.InboxDocument, error) {
	n, err := tx.UpdateInboxDocument(ctx, dbq.UpdateInboxDocumentParams{UjpStatus: d.UjpStatus, UjpStatusName: d.UjpStatusName,
		UjpStatusAt: d.UjpStatusAt, DecisionState: d.DecisionState, DecisionRequested: d.DecisionRequested,
		DecisionReason: d.DecisionReason, DecisionComment: d.DecisionComment, DecidedAt: d.DecidedAt,
		SigningRequestID: d.SigningRequestID, Problems: d.Problems, UpdatedAt: tx.Now, ID: d.ID, Version: d.Version})
	if err != nil {
		return d, fmt.Errorf("save inbox document %s: %w", d.ID, err)
	}
	if n == 0 {
		return d, errInboxChanged
	}
	return tx.GetInboxDocument(ctx, d.ID)
}

// retryInbox runs fn again (a fresh transaction) while it lost a race for a
// document, a few times.
func retryInbox[T any](fn func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := fn()
		if errors.Is(err, errInboxChanged) && attempt < 5 {
			continue
		}
		return v, err
	}
}

// inboxInTx is db.InTx retried while it lost a race for a document.
func (s *Service) inboxInTx(ctx context.Context, fn func(tx *store.Tx) error) error {
	_, err := retryInbox(func() (struct{}, error) {
		return struct{}{}, s.db.InTx(ctx, fn)
	})
	return err
}

// inboxRow loads an inbox document of companyID within the caller's reach
// (the company itself was judged by reach's rule); any other is 404.
func inboxRow(ctx context.Context, q *dbq.Queries, p *auth.Principal, companyID, id string) (dbq.InboxDocument, error) {
	sc := einvoicing.ScopeOf(p)
	r, err := q.GetInboxDocumentInReach(ctx, dbq.GetInboxDocumentInReachParams{ID: id, AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, CompanyID: companyID})
	if errors.Is(err, sql.ErrNoRows) {
		return dbq.InboxDocument{}, denar.Errorf(denar.ECodeNotFound, "No inbox document %s for this company.", id)
	}
	if err != nil {
		return dbq.InboxDocument{}, fmt.Errorf("load inbox document %s: %w", id, err)
	}
	return r, nil
}

// InboxFilter selects inbox documents; empty fields do not filter.
type InboxFilter struct {
	// Status is a decision state (pending, accepted, auto_accepted,
	// rejected).
	Status string
	// DeadlineBefore (YYYY-MM-DD) keeps documents whose decideBy is before
	// it.
	DeadlineBefore string
}

// InboxPageSize is the fixed page size of GET /v1/inbox.
const InboxPageSize = inboxPageSize

// Inbox returns up to InboxPageSize+1 documents of companyID, newest first,
// after the id after.
func (s *Service) Inbox(ctx context.Context, p *auth.Principal, companyID string, f InboxFilter, after string) ([]einvoicing.InboxDocument, error) {
	var fe denar.FieldErrors
	if f.Status != "" && !slices.Contains(einvoice.DecisionStates, f.Status) {
		fe.Add("status", "must be one of pending, accepted, auto_accepted, rejected")
	}
	if _, err := time.Parse(time.DateOnly, f.DeadlineBefore); f.DeadlineBefore != "" && err != nil {
		fe.Add("deadlineBefore", "must be a date YYYY-MM-DD")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	sc := einvoicing.ScopeOf(p)
	rows, err := s.db.Reader().ListInboxDocuments(ctx, dbq.ListInboxDocumentsParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, CompanyID: companyID,
		AfterID: after, DecisionState: store.NullText(f.Status), DeadlineBefore: store.NullText(f.DeadlineBefore), Lim: inboxPageSize + 1})
	if err != nil {
		return nil, fmt.Errorf("list inbox: %w", err)
	}
	now := s.db.Now()
	out := make([]einvoicing.InboxDocument, 0, len(rows))
	for _, r := range rows {
		out = append(out, inboxView(r, now))
	}
	return out, nil
}

// InboxDocument returns one inbox document of companyID.
func (s *Service) InboxDocument(ctx context.Context, p *auth.Principal, companyID, id string) (einvoicing.InboxDocument, error) {
	r, err := inboxRow(ctx, s.db.Reader(), p, companyID, id)
	if err != nil {
		return einvoicing.InboxDocument{}, err
	}
	return inboxView(r, s.db.Now()), nil
}

// InboxPayload returns the seller's document JSON exactly as UJP gave it.
func (s *Service) InboxPayload(ctx context.Context, p *auth.Principal, companyID, id string) ([]byte, error) {
	r, err := inboxRow(ctx, s.db.Reader(), p, companyID, id)
	if err != nil {
		return nil, err
	}
	return r.Payload, nil
}

// InboxPDF returns UJP's rendering of an inbox document. It is fetched by a
// signed read the first time it is asked for; until it is here, 409
// pdf_not_ready (and the read is asked for, once at a time).
func (s *Service) InboxPDF(ctx context.Context, p *auth.Principal, companyID, id string) ([]byte, error) {
	q := s.db.Reader()
	d, err := inboxRow(ctx, q, p, companyID, id)
	if err != nil {
		return nil, err
	}
	row, err := q.GetInboxPDF(ctx, d.ID)
	if errors.Is(err, sql.ErrNoRows) {
		err := s.db.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			link := einvoicing.SigningLink{Type: einvoicing.LinkInboxPDF, ID: d.ID}
			if waiting, err := pipeline.ReadWaiting(ctx, tx, link); err != nil || waiting {
				return err
			}
			payload, err := json.Marshal(ujp.EUIDRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), EUID: d.Euid})
			if err != nil {
				return err
			}
			// Without a signer, asked again on the next request.
			return pipeline.AskRead(ctx, tx, d.CompanyID, payload, link)
		})
		if err != nil {
			return nil, err
		}
		return nil, denar.Errorf("pdf_not_ready", "UJP's PDF of %s is not here yet: it is fetched with a read the company's signer signs; ask again shortly.", d.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("pdf of %s: %w", d.ID, err)
	}
	pdf, err := base64.StdEncoding.DecodeString(row.Pdf)
	if err != nil {
		return nil, fmt.Errorf("stored pdf of %s: %w", d.ID, err)
	}
	return pdf, nil
}

// newInboxDocument makes the row of a document UJP gave for company co:
// what the API shows is read from the payload, which is stored unmodified.
// A payload that is not a readable UJP document is still recorded (its
// fields empty) with a problem saying so.
func newInboxDocument(co dbq.Company, euid string, payload []byte, now time.Time, statusName string) dbq.InsertInboxDocumentParams {
	row := dbq.InsertInboxDocumentParams{ID: denar.NewID(inboxDocumentPrefix), AccountID: co.AccountID, CompanyID: co.ID,
		Environment: co.Environment, Euid: euid, Kind: "invoice", Payload: payload, UjpStatus: ujp.StatusSent,
		UjpStatusName: statusName, UjpStatusAt: now, DecisionState: einvoice.DecisionPending, Problems: "[]", ReceivedAt: now,
		Seller: "{}", TotalNet: "0.00", TotalVat: "0.00", TotalGross: "0.00"}
	var req ujpdoc.Request
	if err := json.Unmarshal(payload, &req); err != nil {
		b, _ := json.Marshal([]inboxProblem{{Code: "payload_unreadable", Message: "UJP's payload of this document is not a UJP document: " + err.Error()}})
		row.Problems = string(b)
		row.IssueDate, row.TransactionDate = now.In(ujpdoc.Skopje).Format(time.DateOnly), now.In(ujpdoc.Skopje).Format(time.DateOnly)
		row.DecideBy = einvoice.DecideBy(einvoice.Today(now)).Format(time.DateOnly)
		return row
	}
	d := req.Document
	h := d.Header
	switch h.DocStorno {
	case ujpdoc.StornoVoid:
		row.Kind = "storno"
	case ujpdoc.StornoCorrection:
		row.Kind = "correction"
	}
	if ref := ujpdoc.SystemReference(&d); ref != "" && h.DocStorno != ujpdoc.StornoNone {
		row.OriginalEuid = sql.NullString{String: ref, Valid: true}
	}
	row.DocumentType, row.Number, row.IssueDate = h.DocType, h.DocNumber, h.DocDate
	row.TransactionDate = h.DocTurnoverDate
	if row.TransactionDate == "" {
		row.TransactionDate = h.DocDate
	}
	if by, err := einvoice.DecideByDate(row.TransactionDate); err == nil {
		row.DecideBy = by
	} else {
		// No readable date: count from when it arrived rather than never.
		row.DecideBy = einvoice.DecideBy(einvoice.Today(now)).Format(time.DateOnly)
	}
	sl := d.Seller
	seller := einvoicing.InboxSeller{Country: sl.SellerCCode, TaxNumber: sl.SellerTin, VatNumber: sl.SellerVatNumber, Name: sl.SellerName,
		Address: einvoicing.InboxAddress{Street: sl.SellerAddress.StreetAddress, Number: sl.SellerAddress.StreetNumber,
			PostalCode: sl.SellerAddress.PostalCode, City: sl.SellerAddress.City},
		SubsidiaryCode: sl.SellerSubsidiaryCode, SubsidiaryName: sl.SellerSubsidiaryName, Contact: sl.SellerContact, Email: sl.SellerEmail}
	if b, err := json.Marshal(seller); err == nil {
		row.Seller = string(b)
	}
	t := einvoice.DocTotals(&d)
	row.TotalNet, row.TotalVat, row.TotalGross, row.Currency = t.Net, t.Vat, t.Gross, t.Currency
	return row
}

// StatusName is UJP's name of a document status in env's code lists.
func (s *Service) StatusName(env, code string) string {
	if c, ok := s.core.CodeLists(env).Lookup(ujpdoc.CBDocumentStatuses, code); ok {
		return c.Name
	}
	return ""
}
