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

	"github.com/danielgtaylor/huma/v2"
	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// LinkEInvoice is the signing-request link type of e-invoice documents.
const LinkEInvoice = "einvoice"

type issueEInvoiceInput struct {
	Body einvoice.Request
}

type issueEInvoiceOutput struct {
	Location string `header:"Location"`
	Body     EInvoice
}

func (h *handlers) registerIssue(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "issueEInvoice", Method: http.MethodPost, Path: "/v1/einvoices",
		Summary: "Issue an e-invoice", Tags: []string{"E-invoices"}, DefaultStatus: http.StatusAccepted,
		Description: "Builds UJP's document from the body (seller = the company), computes totals by UJP's formulas " +
			"(unit amounts 4 decimals, totals 2, half-up), validates against the code lists (each field error names its codebook) " +
			"and answers 202 in awaiting_signature with a signing request for the company's agent. expectedTotals that differ: " +
			"422 totals_mismatch. clientReference reused with another body: 409 client_reference_conflict; with the same body, " +
			"the existing e-invoice. No valid signing certificate: 409 signer_not_ready.",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, h.issueEInvoice)
	// A signature moves the e-invoice to queued in the transaction that
	// records it; the submission pipeline takes it from there.
	OnSigned(LinkEInvoice, func(ctx context.Context, tx *store.Tx, r SigningRequest) error {
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
	})
}

func (h *handlers) issueEInvoice(ctx context.Context, in *issueEInvoiceInput) (*issueEInvoiceOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	companyID := httpx.CompanyFrom(ctx)
	req := &in.Body
	sum := sha256.Sum256(req.Fingerprint())
	fingerprint := hex.EncodeToString(sum[:])
	co, err := h.company(ctx, h.deps.DB.Reader(), companyID)
	if err != nil {
		return nil, err
	}
	buyerErr := h.checkBuyer(ctx, co.Environment, req.Buyer)
	var out dbq.Einvoice
	err = h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		co, err := h.company(ctx, tx.Queries, companyID)
		if err != nil {
			return err
		}
		if prev, found, err := byClientReference(ctx, tx, companyID, req.ClientReference, fingerprint); err != nil || found {
			out = prev
			return err
		}
		if req.Correction != nil {
			return problem(denar.ECodeValidation, "correction belongs in POST /v1/einvoices/{id}/correction.",
				denar.FieldError{Path: "correction", Message: "is not allowed here"})
		}
		id := denar.NewID("einv")
		// The e-invoice id is UJP's docId: fixed now, so every submission
		// attempt of this document carries it and UJP refuses a copy.
		doc, err := req.Build(sellerOf(co), id, h.codebooks(co.Environment))
		if err := withBuyerError(err, buyerErr); err != nil {
			return err
		}
		out, err = createEInvoice(ctx, tx, newEInvoice{ID: id, Account: p.AccountID, Company: co, Kind: "invoice", Doc: doc,
			ClientReference: req.ClientReference, Fingerprint: fingerprint})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &issueEInvoiceOutput{Location: "/v1/einvoices/" + out.ID, Body: einvoiceFrom(out)}, nil
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

// newEInvoice is what createEInvoice stores.
type newEInvoice struct {
	ID, Account     string
	Company         dbq.Company
	Kind            string // invoice, storno, correction
	Doc             *ujpdoc.Document
	OriginalID      string
	ClientReference *string
	Fingerprint     string
}

// createEInvoice stores a built document in awaiting_signature with its
// first history row and asks the company's signer for its signature, all in
// tx: the e-invoice exists exactly when its signing request does.
func createEInvoice(ctx context.Context, tx *store.Tx, n newEInvoice) (dbq.Einvoice, error) {
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
		Environment: n.Company.Environment, Kind: n.Kind, Status: string(einvoice.AwaitingSignature), DocumentType: n.Doc.Header.DocType,
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
	if _, err := RequestSignature(ctx, tx, n.Company.ID, PurposeDocument, docJSON, SigningLink{Type: LinkEInvoice, ID: n.ID}); err != nil {
		return out, err
	}
	return out, nil
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
		return dbq.Einvoice{}, false, problem("client_reference_conflict", "clientReference "+*ref+" is used by "+prev.ID+" with another body.")
	case !errors.Is(err, sql.ErrNoRows):
		return dbq.Einvoice{}, false, fmt.Errorf("client reference: %w", err)
	}
	return dbq.Einvoice{}, false, nil
}
