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
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

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
		MaxBodyBytes: maxDocumentBody,
		Description: "Builds UJP's document from the body (seller = the company), computes totals by UJP's formulas " +
			"(unit amounts 4 decimals, totals 2, half-up), validates against the code lists (each field error names its codebook) " +
			"and answers 202 in awaiting_signature with a signing request for the company's agent. expectedTotals that differ: " +
			"422 totals_mismatch. clientReference reused with another body: 409 client_reference_conflict; with the same body, " +
			"the existing e-invoice. No valid signing certificate: 409 signer_not_ready.",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, h.issueEInvoice)
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
		out, err = einvoicing.CreateEInvoice(ctx, tx, einvoicing.NewEInvoice{ID: id, Account: p.AccountID, Company: co, Kind: "invoice", Doc: doc,
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
