package einvoiceapi

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// EInvoice is the public e-invoice object.
type EInvoice struct {
	ID              string          `json:"id" doc:"Prefix einv_."`
	Object          string          `json:"object" enum:"einvoice"`
	CompanyID       string          `json:"companyId"`
	Environment     string          `json:"environment" enum:"sandbox,production"`
	Kind            string          `json:"kind" enum:"invoice,storno,correction" doc:"storno and correction documents link their original in originalId."`
	Status          string          `json:"status" enum:"validating,invalid,awaiting_signature,queued,submitting,held,delivered,accepted,auto_accepted,rejected,cancelled_by_storno,corrected,registered,draft_at_ujp,failed"`
	DocumentType    string          `json:"documentType" doc:"UJP document-types code (100 invoice, …)."`
	Number          string          `json:"number"`
	IssueDate       string          `json:"issueDate" format:"date"`
	ClientReference *string         `json:"clientReference"`
	UJPDocID        string          `json:"ujpDocId" doc:"header.docId sent to UJP; the same on every submission attempt."`
	EUID            *string         `json:"euid" doc:"Assigned by UJP on delivery; null before."`
	QRLink          *string         `json:"qrLink" doc:"UJP's public link of the document (the QR code target); null before delivery."`
	Totals          einvoice.Totals `json:"totals" doc:"net (after discounts), vat, gross, in the document currency."`
	Problems        json.RawMessage `json:"problems" doc:"Why the document is invalid or failed: [{path, message, codebook, code}], UJP codes unrenamed."`
	OriginalID      *string         `json:"originalId"`
	Document        json.RawMessage `json:"document" doc:"The UJP document as built (and signed), UJP's own JSON field names."`
	SubmitAttempts  int             `json:"submitAttempts" doc:"Calls made to UJP's receiver for this document."`
	DeliveredAt     *time.Time      `json:"deliveredAt" doc:"When UJP assigned the EUID; null before."`
	SettledAt       *time.Time      `json:"settledAt" doc:"When the buyer's outcome (accepted, auto_accepted, rejected) was learnt; null before."`
	CreatedAt       time.Time       `json:"createdAt"`
	UpdatedAt       time.Time       `json:"updatedAt"`
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

func einvoiceFrom(r dbq.Einvoice) EInvoice {
	return EInvoice{ID: r.ID, Object: "einvoice", CompanyID: r.CompanyID, Environment: r.Environment, Kind: r.Kind,
		Status: r.Status, DocumentType: r.DocumentType, Number: r.Number, IssueDate: r.IssueDate,
		ClientReference: nullable(r.ClientReference), UJPDocID: r.UjpDocID, EUID: nullable(r.Euid), QRLink: nullable(r.QrLink),
		Totals:   einvoice.Totals{Net: r.TotalNet, Vat: r.TotalVat, Gross: r.TotalGross, Currency: r.Currency},
		Problems: json.RawMessage(r.Problems), OriginalID: nullable(r.OriginalID), Document: json.RawMessage(r.Document),
		SubmitAttempts: int(r.SubmitAttempts), DeliveredAt: nullTime(r.DeliveredAt), SettledAt: nullTime(r.SettledAt),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// StatusChange is one row of an e-invoice's status history.
type StatusChange struct {
	From    *string   `json:"from" doc:"null for the first row."`
	To      string    `json:"to"`
	Cause   string    `json:"cause" doc:"issued, signed, submission, submitted, ujp_outage, retry, ujp_rejected, ujp_status, …"`
	UJPCode *string   `json:"ujpCode" doc:"UJP's status (01, 03, …) or error code when UJP caused the move."`
	At      time.Time `json:"at"`
}

type listEInvoicesInput struct {
	Status          string `query:"status" enum:"validating,invalid,awaiting_signature,queued,submitting,held,delivered,accepted,auto_accepted,rejected,cancelled_by_storno,corrected,registered,draft_at_ujp,failed"`
	DocumentType    string `query:"documentType" maxLength:"10"`
	IssuedFrom      string `query:"issuedFrom" format:"date" doc:"Issue date on or after, YYYY-MM-DD."`
	IssuedTo        string `query:"issuedTo" format:"date" doc:"Issue date on or before, YYYY-MM-DD."`
	ClientReference string `query:"clientReference" maxLength:"200"`
	EUID            string `query:"euid" maxLength:"100"`
	Cursor          string `query:"cursor" doc:"nextCursor of the previous page (with the same filters)."`
	Limit           int    `query:"limit" default:"25" minimum:"1" maximum:"200" doc:"Page size."`
}

type listEInvoicesOutput struct{ Body httpx.Page[EInvoice] }

type einvoiceIDInput struct {
	ID string `path:"id"`
}

type einvoiceOutput struct{ Body EInvoice }

type statusHistoryOutput struct {
	Body struct {
		Data []StatusChange `json:"data" doc:"Oldest first."`
	}
}

func (h *handlers) registerEInvoices(s *httpx.Service) {
	tags := []string{"E-invoices"}
	httpx.Register(s, huma.Operation{
		OperationID: "listEInvoices", Method: http.MethodGet, Path: "/v1/einvoices",
		Summary: "List e-invoices", Tags: tags, Description: "Newest first, of the company in X-Company-Id.",
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, h.listEInvoices)
	httpx.Register(s, huma.Operation{
		OperationID: "getEInvoice", Method: http.MethodGet, Path: "/v1/einvoices/{id}",
		Summary: "Get an e-invoice", Tags: tags,
		Description: "The full UJP document, status, problems, EUID, QR link, totals and timestamps. 404 outside the company.",
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, h.getEInvoice)
	httpx.Register(s, huma.Operation{
		OperationID: "getEInvoiceStatusHistory", Method: http.MethodGet, Path: "/v1/einvoices/{id}/status-history",
		Summary: "Status history of an e-invoice", Tags: tags,
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, h.statusHistory)
	h.registerEvents(s)
	h.registerIssue(s)
	h.registerSandboxAndPDF(s)
	h.registerSupersede(s)
}

// filterDigest binds a cursor to the filters it was made with.
func filterDigest(parts ...string) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func optional(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func (h *handlers) listEInvoices(ctx context.Context, in *listEInvoicesInput) (*listEInvoicesOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	digest := filterDigest(in.Status, in.DocumentType, in.IssuedFrom, in.IssuedTo, in.ClientReference, in.EUID)
	after, err := httpx.DecodeCursor(in.Cursor, digest)
	if err != nil {
		return nil, err
	}
	var fe denar.FieldErrors
	for _, d := range [][2]string{{"issuedFrom", in.IssuedFrom}, {"issuedTo", in.IssuedTo}} {
		if _, err := time.Parse(time.DateOnly, d[1]); d[1] != "" && err != nil {
			fe.Add(d[0], "must be a date YYYY-MM-DD")
		}
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	rows, err := h.deps.DB.Reader().ListEInvoices(ctx, dbq.ListEInvoicesParams{AccountID: p.AccountID, CompanyID: httpx.CompanyFrom(ctx),
		AfterID: after, Status: optional(in.Status), DocumentType: optional(in.DocumentType), IssuedFrom: optional(in.IssuedFrom),
		IssuedTo: optional(in.IssuedTo), ClientReference: optional(in.ClientReference), Euid: optional(in.EUID), Lim: int64(in.Limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list einvoices: %w", err)
	}
	out := make([]EInvoice, 0, len(rows))
	for _, r := range rows {
		if r.Environment == p.Environment {
			out = append(out, einvoiceFrom(r))
		}
	}
	return &listEInvoicesOutput{Body: httpx.NewPage(out, in.Limit, func(e EInvoice) string { return e.ID }, digest)}, nil
}

// einvoiceRow loads an e-invoice of the request's company and account; any
// other is 404, so ids of other tenants are not confirmed.
func (h *handlers) einvoiceRow(ctx context.Context, q *dbq.Queries, id string) (dbq.Einvoice, error) {
	p := httpx.PrincipalFrom(ctx)
	r, err := q.GetEInvoice(ctx, dbq.GetEInvoiceParams{ID: id, AccountID: p.AccountID, CompanyID: httpx.CompanyFrom(ctx)})
	if errors.Is(err, sql.ErrNoRows) || (err == nil && r.Environment != p.Environment) {
		return dbq.Einvoice{}, problem(denar.ECodeNotFound, "No e-invoice "+id+" for this company.")
	}
	if err != nil {
		return dbq.Einvoice{}, fmt.Errorf("load einvoice %s: %w", id, err)
	}
	return r, nil
}

func (h *handlers) getEInvoice(ctx context.Context, in *einvoiceIDInput) (*einvoiceOutput, error) {
	r, err := h.einvoiceRow(ctx, h.deps.DB.Reader(), in.ID)
	if err != nil {
		return nil, err
	}
	return &einvoiceOutput{Body: einvoiceFrom(r)}, nil
}

func (h *handlers) statusHistory(ctx context.Context, in *einvoiceIDInput) (*statusHistoryOutput, error) {
	q := h.deps.DB.Reader()
	if _, err := h.einvoiceRow(ctx, q, in.ID); err != nil {
		return nil, err
	}
	rows, err := q.ListEInvoiceStatus(ctx, in.ID)
	if err != nil {
		return nil, fmt.Errorf("status history of %s: %w", in.ID, err)
	}
	out := &statusHistoryOutput{}
	out.Body.Data = make([]StatusChange, 0, len(rows))
	for _, r := range rows {
		out.Body.Data = append(out.Body.Data, StatusChange{From: nullable(r.FromStatus), To: r.ToStatus, Cause: r.Cause,
			UJPCode: nullable(r.UjpCode), At: r.At.UTC()})
	}
	return out, nil
}
