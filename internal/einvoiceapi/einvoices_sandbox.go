package einvoiceapi

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// SandboxUJP drives the sandbox simulator of UJP on an integrator's behalf
// (internal/ujpsim.Control implements it). A refusal by the simulator (a
// document no longer in status 01) is an error with a UJPCode() string
// method.
type SandboxUJP interface {
	Decide(ctx context.Context, euid string, accept bool, reasonCode, comment string) error
	AutoAccept(ctx context.Context, euid string) error
	SetSellerOutage(ctx context.Context, edb string, on bool) error
	RejectNextSend(ctx context.Context, edb, code, message string) error
}

// Simulate actions.
const (
	SimBuyerAccepts   = "buyer_accepts"
	SimBuyerRejects   = "buyer_rejects"
	SimDeadlinePasses = "deadline_passes"
	SimOutageStarts   = "outage_starts"
	SimOutageEnds     = "outage_ends"
	SimTerminalError  = "terminal_error"
)

type simulateInput struct {
	ID   string `path:"id"`
	Body struct {
		Action           string `json:"action" enum:"buyer_accepts,buyer_rejects,deadline_passes,outage_starts,outage_ends,terminal_error" doc:"The transition to drive."`
		RejectReasonCode string `json:"rejectReasonCode,omitempty" maxLength:"10" doc:"buyer_rejects: a reject-reasons code (required)."`
		Comment          string `json:"comment,omitempty" maxLength:"500" doc:"buyer_rejects: the buyer's comment."`
		UJPCode          string `json:"ujpCode,omitempty" pattern:"^E[0-9]{4,6}$" doc:"terminal_error: the UJP error code the next submission gets (default E4013)."`
	}
}

type simulateOutput struct {
	Body struct {
		Object   string   `json:"object" enum:"sandbox_simulation"`
		Action   string   `json:"action"`
		EInvoice EInvoice `json:"einvoice" doc:"The e-invoice as it is now; the move arrives through the pipeline."`
	}
}

type pdfOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

func (h *handlers) registerSandboxAndPDF(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "getEInvoicePDF", Method: http.MethodGet, Path: "/v1/einvoices/{id}/pdf",
		Summary: "UJP's PDF of an e-invoice", Tags: []string{"E-invoices"},
		Description: "application/pdf: UJP's rendering (in the sandbox, the simulator's: Cyrillic text, the EUID and a QR code " +
			"of UJP's link). It is fetched with a signed read once the document is delivered; until then, and while the " +
			"signer has not signed that read, 409 pdf_not_ready.",
		Responses: map[string]*huma.Response{"200": {Description: "The PDF.", Content: map[string]*huma.MediaType{
			"application/pdf": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}},
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, h.getPDF)

	httpx.Register(s, huma.Operation{
		OperationID: "simulateEInvoice", Method: http.MethodPost, Path: "/v1/sandbox/einvoices/{id}/simulate",
		Summary: "Drive a sandbox e-invoice through a UJP transition", Tags: []string{"Sandbox"}, DefaultStatus: http.StatusAccepted,
		Description: "Sandbox companies on the simulator only (403 sandbox_only otherwise). buyer_accepts, buyer_rejects " +
			"and deadline_passes act at the simulator on a delivered document (409 einvoice_state_conflict otherwise) and " +
			"schedule a read of the change feed at once, so the e-invoice moves to accepted, rejected or auto_accepted as soon " +
			"as the signer signs that read. outage_starts and outage_ends make UJP unreachable for this company only " +
			"(submissions go to held and are resubmitted after the outage). terminal_error makes the company's next " +
			"submission fail with ujpCode (failed, with UJP's code in problems).",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, h.simulate)
}

func (h *handlers) getPDF(ctx context.Context, in *einvoiceIDInput) (*pdfOutput, error) {
	q := h.deps.DB.Reader()
	inv, err := h.einvoiceRow(ctx, q, in.ID)
	if err != nil {
		return nil, err
	}
	row, err := q.GetEInvoicePDF(ctx, inv.ID)
	if errors.Is(err, sql.ErrNoRows) {
		if inv.Euid.Valid {
			// Delivered, but the read was never signed (no signer then) or
			// failed: ask again, unless a request is already waiting.
			err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.OpenSigningRequestForLink(ctx, openLink(einvoicing.LinkPDF, inv.ID, tx.Now)); err == nil {
					return nil
				} else if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
				return einvoicing.RequestPDF(ctx, tx, inv)
			})
			if err != nil {
				return nil, err
			}
		}
		return nil, problem("pdf_not_ready", "UJP's PDF of "+inv.ID+" is not here yet: it is fetched once the document is delivered and the signer has signed the read.")
	}
	if err != nil {
		return nil, fmt.Errorf("pdf of %s: %w", inv.ID, err)
	}
	pdf, err := base64.StdEncoding.DecodeString(row.Pdf)
	if err != nil {
		return nil, fmt.Errorf("stored pdf of %s: %w", inv.ID, err)
	}
	return &pdfOutput{ContentType: "application/pdf", ContentDisposition: `inline; filename="` + inv.ID + `.pdf"`, Body: pdf}, nil
}

func (h *handlers) simulate(ctx context.Context, in *simulateInput) (*simulateOutput, error) {
	q := h.deps.DB.Reader()
	inv, err := h.einvoiceRow(ctx, q, in.ID)
	if err != nil {
		return nil, err
	}
	co, err := h.company(ctx, q, inv.CompanyID)
	if err != nil {
		return nil, err
	}
	if co.Environment != auth.EnvSandbox || h.deps.Sandbox == nil {
		return nil, problem("sandbox_only", "Only e-invoices of sandbox companies on the UJP simulator can be driven.")
	}
	b := in.Body
	sim := h.deps.Sandbox
	decision := b.Action == SimBuyerAccepts || b.Action == SimBuyerRejects || b.Action == SimDeadlinePasses
	if decision && (inv.Status != string(einvoice.Delivered) || !inv.Euid.Valid) {
		return nil, problem("einvoice_state_conflict", fmt.Sprintf("%s needs a delivered e-invoice; %s is %s.", b.Action, inv.ID, inv.Status))
	}
	switch b.Action {
	case SimBuyerAccepts:
		err = sim.Decide(ctx, inv.Euid.String, true, "", b.Comment)
	case SimBuyerRejects:
		if _, ok := h.codebooks(co.Environment).Lookup(ujpdoc.CBRejectReasons, b.RejectReasonCode); !ok {
			return nil, denar.Invalid(denar.FieldError{Path: "rejectReasonCode", Codebook: ujpdoc.CBRejectReasons,
				Message: fmt.Sprintf("%q is not a reject reason", b.RejectReasonCode)})
		}
		err = sim.Decide(ctx, inv.Euid.String, false, b.RejectReasonCode, b.Comment)
	case SimDeadlinePasses:
		err = sim.AutoAccept(ctx, inv.Euid.String)
	case SimOutageStarts, SimOutageEnds:
		err = sim.SetSellerOutage(ctx, co.TaxNumber, b.Action == SimOutageStarts)
	case SimTerminalError:
		code := b.UJPCode
		if code == "" {
			code = "E4013"
		}
		err = sim.RejectNextSend(ctx, co.TaxNumber, code, "Document refused (sandbox simulate: terminal_error)")
	}
	var refused interface{ UJPCode() string }
	if errors.As(err, &refused) {
		return nil, problem("einvoice_state_conflict", fmt.Sprintf("The simulator refused %s on %s: UJP code %s.", b.Action, inv.ID, refused.UJPCode()))
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox simulate %s on %s: %w", b.Action, inv.ID, err)
	}
	if decision {
		if err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error { return einvoicing.EnqueuePoll(ctx, tx, inv.CompanyID) }); err != nil {
			return nil, err
		}
	}
	out := &simulateOutput{}
	out.Body.Object, out.Body.Action, out.Body.EInvoice = "sandbox_simulation", b.Action, einvoiceFrom(inv)
	return out, nil
}

func openLink(linkType, id string, now time.Time) dbq.OpenSigningRequestForLinkParams {
	return dbq.OpenSigningRequestForLinkParams{LinkType: linkType, LinkID: id, Now: now}
}
