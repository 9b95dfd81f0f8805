package einvoiceapi

// Storno and correction: each creates a new document linked to the
// original, which goes through signing and submission like any other. The
// original is never modified here; the pipeline moves it to
// cancelled_by_storno or corrected in the transaction that records the new
// document's delivery (UJP voids or corrects it the moment it accepts the
// new one).

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// StornoBody is the body of POST /v1/einvoices/{id}/storno.
type StornoBody struct {
	Reason    string  `json:"reason" maxLength:"10" doc:"A void-reasons code (S-x)."`
	Comment   *string `json:"comment,omitempty" maxLength:"500"`
	Number    *string `json:"number,omitempty" maxLength:"100" doc:"The storno's own document number; default the original's number followed by /S."`
	IssueDate *string `json:"issueDate,omitempty" format:"date" doc:"YYYY-MM-DD; default today in Europe/Skopje."`
}

type stornoInput struct {
	ID   string `path:"id"`
	Body StornoBody
}

type correctionInput struct {
	ID   string `path:"id"`
	Body einvoice.Request
}

func (h *handlers) registerSupersede(s *httpx.Service) {
	tags := []string{"E-invoices"}
	httpx.Register(s, huma.Operation{
		OperationID: "stornoEInvoice", Method: http.MethodPost, Path: "/v1/einvoices/{id}/storno",
		Summary: "Void an e-invoice (storno)", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Creates the storno: a new document (docStorno 1) with the original's parties and lines, quantities " +
			"negated, totals recomputed, the void reason, and a reference to the original's EUID. It is signed and " +
			"submitted like any e-invoice; when UJP accepts it, the original moves to cancelled_by_storno. Allowed only " +
			"while the original is delivered, accepted or auto_accepted (409 einvoice_state_conflict), not while another " +
			"storno or correction of it is on its way (409 supersede_pending), and not for a year whose annual account is " +
			"filed (409 period_closed). The original is never modified by this call. 202 with the storno.",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, h.storno)
	httpx.Register(s, huma.Operation{
		OperationID: "correctEInvoice", Method: http.MethodPost, Path: "/v1/einvoices/{id}/correction",
		Summary: "Correct an e-invoice", Tags: tags, DefaultStatus: http.StatusAccepted,
		MaxBodyBytes: maxDocumentBody,
		Description: "The body is a complete replacement document, as for POST /v1/einvoices, with correction " +
			"{reason (C0x), comment}. The correction (docStorno 2) references the original's EUID; when UJP accepts it, " +
			"the original moves to corrected. Same 409s as storno; clientReference works as on issue. 202 with the correction.",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, h.correction)
}

// supersedable loads the original and checks it may be voided or
// corrected now.
func (h *handlers) supersedable(ctx context.Context, tx *store.Tx, id, action string) (dbq.Einvoice, dbq.Company, error) {
	orig, err := h.einvoiceRow(ctx, tx.Queries, id)
	if err != nil {
		return orig, dbq.Company{}, err
	}
	co, err := h.company(ctx, tx.Queries, orig.CompanyID)
	if err != nil {
		return orig, co, err
	}
	if !einvoice.StornoAllowed(einvoice.Status(orig.Status)) || !orig.Euid.Valid {
		return orig, co, problem("einvoice_state_conflict", fmt.Sprintf("A %s needs an e-invoice UJP holds (delivered, accepted or auto_accepted); %s is %s.", action, orig.ID, orig.Status))
	}
	if orig.Kind == "storno" {
		return orig, co, problem("einvoice_state_conflict", fmt.Sprintf("%s is itself a storno; it cannot be voided or corrected.", orig.ID))
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
		return orig, co, problem("supersede_pending", fmt.Sprintf("%s of %s is still on its way to UJP; wait for it to be delivered or to fail.", pending, orig.ID))
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return orig, co, err
	}
	return orig, co, nil
}

func storedDocument(inv dbq.Einvoice) (*ujpdoc.Document, error) {
	var req ujpdoc.Request
	if err := json.Unmarshal([]byte(inv.Document), &req); err != nil {
		return nil, fmt.Errorf("stored document of %s: %w", inv.ID, err)
	}
	return &req.Document, nil
}

func (h *handlers) storno(ctx context.Context, in *stornoInput) (*issueEInvoiceOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	b := in.Body
	body, _ := json.Marshal(b)
	sum := sha256.Sum256(append([]byte("storno:"+in.ID+":"), body...))
	var out dbq.Einvoice
	err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		orig, co, err := h.supersedable(ctx, tx, in.ID, "storno")
		if err != nil {
			return err
		}
		cb := h.codebooks(co.Environment)
		if err := (einvoice.Storno{Reason: b.Reason, Comment: b.Comment}).Validate(cb); err != nil {
			return err
		}
		number := orig.Number + "/S"
		if b.Number != nil {
			number = strings.TrimSpace(*b.Number)
		}
		date := tx.Now.In(ujpdoc.Skopje).Format(time.DateOnly)
		var fe denar.FieldErrors
		if number == "" {
			fe.Add("number", "must not be empty")
		}
		if b.IssueDate != nil {
			if _, err := time.Parse(time.DateOnly, *b.IssueDate); err != nil {
				fe.Add("issueDate", "must be a date YYYY-MM-DD")
			} else if *b.IssueDate < orig.IssueDate {
				fe.Add("issueDate", "must not be before the original's issue date %s", orig.IssueDate)
			}
			date = *b.IssueDate
		}
		if err := fe.Err(); err != nil {
			return err
		}
		od, err := storedDocument(orig)
		if err != nil {
			return err
		}
		id := denar.NewID("einv")
		doc, err := ujpdoc.Storno(od, orig.Euid.String, id, number, b.Reason, b.Comment, date, cb)
		if err != nil {
			return err
		}
		out, err = einvoicing.CreateEInvoice(ctx, tx, einvoicing.NewEInvoice{ID: id, Account: p.AccountID, Company: co, Kind: "storno", Doc: doc,
			OriginalID: orig.ID, Fingerprint: hex.EncodeToString(sum[:])})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &issueEInvoiceOutput{Location: "/v1/einvoices/" + out.ID, Body: einvoiceFrom(out)}, nil
}

func (h *handlers) correction(ctx context.Context, in *correctionInput) (*issueEInvoiceOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	req := &in.Body
	sum := sha256.Sum256(append([]byte("correction:"+in.ID+":"), req.Fingerprint()...))
	fingerprint := hex.EncodeToString(sum[:])
	co, err := h.company(ctx, h.deps.DB.Reader(), httpx.CompanyFrom(ctx))
	if err != nil {
		return nil, err
	}
	buyerErr := h.checkBuyer(ctx, co.Environment, req.Buyer)
	var out dbq.Einvoice
	err = h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		if prev, found, err := byClientReference(ctx, tx, co.ID, req.ClientReference, fingerprint); err != nil || found {
			out = prev
			return err
		}
		orig, co, err := h.supersedable(ctx, tx, in.ID, "correction")
		if err != nil {
			return err
		}
		if req.Correction == nil {
			return denar.Invalid(denar.FieldError{Path: "correction", Codebook: ujpdoc.CBCorrectionReasons,
				Message: "is required: {reason (C0x), comment}"})
		}
		id := denar.NewID("einv")
		cb := h.codebooks(co.Environment)
		doc, err := req.Build(sellerOf(co), id, cb)
		if err := withBuyerError(err, buyerErr); err != nil {
			return err
		}
		ujpdoc.MarkCorrection(doc, orig.Euid.String, orig.IssueDate, req.Correction.Reason, req.Correction.Comment, cb)
		out, err = einvoicing.CreateEInvoice(ctx, tx, einvoicing.NewEInvoice{ID: id, Account: p.AccountID, Company: co, Kind: "correction", Doc: doc,
			OriginalID: orig.ID, ClientReference: req.ClientReference, Fingerprint: fingerprint})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &issueEInvoiceOutput{Location: "/v1/einvoices/" + out.ID, Body: einvoiceFrom(out)}, nil
}
