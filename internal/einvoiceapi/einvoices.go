package einvoiceapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/httpx"
)

type listEInvoicesInput struct {
	Status          string `query:"status" enum:"validating,invalid,awaiting_signature,queued,submitting,held,delivered,accepted,auto_accepted,rejected,cancelled_by_storno,corrected,registered,draft_at_ujp,failed" example:"delivered" doc:"Only e-invoices in this status (docs/einvoices.md describes each)."`
	DocumentType    string `query:"documentType" maxLength:"10" example:"100" doc:"Only e-invoices of this document type, a document-types code (GET /v1/codebooks/document-types)."`
	IssuedFrom      string `query:"issuedFrom" format:"date" doc:"Issue date on or after, YYYY-MM-DD."`
	IssuedTo        string `query:"issuedTo" format:"date" doc:"Issue date on or before, YYYY-MM-DD."`
	ClientReference string `query:"clientReference" maxLength:"200" example:"order-1001" doc:"Only the e-invoice issued with this clientReference (at most one)."`
	EUID            string `query:"euid" maxLength:"100" example:"019b8d43-7840-7433-b358-08891b53605c" doc:"Only the e-invoice with this EUID, UJP's unique id of the delivered document."`
	Cursor          string `query:"cursor" maxLength:"200" doc:"nextCursor of the previous page (with the same filters)."`
	Limit           int    `query:"limit" default:"25" minimum:"1" maximum:"200" doc:"Page size."`
}

type listEInvoicesOutput struct {
	Body httpx.Page[einvoicing.EInvoice]
}

type einvoiceIDInput struct {
	ID string `path:"id" maxLength:"100" example:"einv_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The e-invoice's id (einv_…), as POST /v1/einvoices answered it."`
}

type einvoiceOutput struct {
	Location string `header:"Location"`
	Body     einvoicing.EInvoice
}

type statusHistoryOutput struct {
	Body struct {
		Data []einvoicing.StatusChange `json:"data" doc:"Oldest first."`
	}
}

type issueEInvoiceInput struct {
	Body einvoice.Request
}

// StornoBody is the body of POST /v1/einvoices/{id}/storno.
type StornoBody struct {
	Reason    string  `json:"reason" minLength:"1" maxLength:"10" doc:"A void-reasons code (S-x) of UJP's codebook."`
	Comment   *string `json:"comment,omitempty" maxLength:"500" nullable:"true" doc:"Free text sent with the void reason."`
	Number    *string `json:"number,omitempty" maxLength:"100" nullable:"true" doc:"The storno's own document number; default the original's number followed by /S."`
	IssueDate *string `json:"issueDate,omitempty" format:"date" nullable:"true" doc:"YYYY-MM-DD, not before the original's; default today in Europe/Skopje."`
}

type stornoInput struct {
	ID   string `path:"id" maxLength:"100" example:"einv_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The id (einv_…) of the delivered e-invoice to cancel."`
	Body StornoBody
}

type correctionInput struct {
	ID   string `path:"id" maxLength:"100" example:"einv_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The id (einv_…) of the delivered e-invoice to replace."`
	Body einvoice.CorrectionRequest
}

type pdfOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

type simulateInput struct {
	ID   string `path:"id" maxLength:"100" example:"einv_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The id (einv_…) of a sandbox e-invoice."`
	Body struct {
		Action           string `json:"action" enum:"buyer_accepts,buyer_rejects,deadline_passes,outage_starts,outage_ends,terminal_error" doc:"The transition to drive."`
		RejectReasonCode string `json:"rejectReasonCode,omitempty" maxLength:"10" doc:"buyer_rejects: a reject-reasons code (required)."`
		Comment          string `json:"comment,omitempty" maxLength:"500" doc:"buyer_rejects: the buyer's comment."`
		UJPCode          string `json:"ujpCode,omitempty" pattern:"^E[0-9]{4,6}$" doc:"terminal_error: the UJP error code the next submission gets (default E4013)."`
	}
}

type simulateOutput struct{ Body pipeline.Simulation }

// filterDigest binds a cursor to the filters it was made with.
func filterDigest(parts ...string) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func (h *handlers) registerEInvoices(s *httpx.Service) {
	tags := []string{"E-invoices"}
	httpx.Register(s, huma.Operation{
		OperationID: "listEInvoices", Method: http.MethodGet, Path: "/v1/einvoices",
		Summary: "List e-invoices", Tags: tags, Description: "Newest first, of the company in X-Company-Id.",
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, func(ctx context.Context, in *listEInvoicesInput) (*listEInvoicesOutput, error) {
		digest := filterDigest(in.Status, in.DocumentType, in.IssuedFrom, in.IssuedTo, in.ClientReference, in.EUID)
		after, err := httpx.DecodeCursor(in.Cursor, digest)
		if err != nil {
			return nil, err
		}
		out, err := h.svc.EInvoices(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx), einvoicing.EInvoiceFilter{Status: in.Status,
			DocumentType: in.DocumentType, IssuedFrom: in.IssuedFrom, IssuedTo: in.IssuedTo, ClientReference: in.ClientReference, EUID: in.EUID},
			after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &listEInvoicesOutput{Body: httpx.NewPage(out, in.Limit, func(e einvoicing.EInvoice) string { return e.ID }, digest)}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getEInvoice", Method: http.MethodGet, Path: "/v1/einvoices/{id}",
		Summary: "Get an e-invoice", Tags: tags,
		Description: "The full UJP document, status, problems, EUID, QR link, totals and timestamps. 404 outside the company.",
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, func(ctx context.Context, in *einvoiceIDInput) (*einvoiceOutput, error) {
		e, err := h.svc.EInvoice(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &einvoiceOutput{Body: e}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getEInvoiceStatusHistory", Method: http.MethodGet, Path: "/v1/einvoices/{id}/status-history",
		Summary: "Status history of an e-invoice", Tags: tags,
		Description: "The ordered trail of every status the e-invoice went through, oldest first.",
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, func(ctx context.Context, in *einvoiceIDInput) (*statusHistoryOutput, error) {
		rows, err := h.svc.StatusHistory(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		out := &statusHistoryOutput{}
		out.Body.Data = rows
		return out, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "issueEInvoice", Method: http.MethodPost, Path: "/v1/einvoices",
		Summary: "Issue an e-invoice", Tags: tags, DefaultStatus: http.StatusAccepted, MaxBodyBytes: maxDocumentBody,
		Description: "Builds UJP's document from the body (seller = the company), computes totals by UJP's formulas " +
			"(unit amounts 4 decimals, totals 2, half-up), validates against the code lists (each field error names its codebook) " +
			"and checks a Macedonian buyer against UJP's registry, then answers 202 in awaiting_signature with a signing request " +
			"for the company's agent (einvoice.signature_required). When the registry does not answer within the validation " +
			"budget (DENAR_EINVOICE_VALIDATION_BUDGET, 1 s), it answers 202 in validating instead and a job finishes the check: " +
			"invalid with problems (einvoice.validated_failed), or on to awaiting_signature. Shape, code-list and registry field " +
			"errors known in time are 422. expectedTotals that differ: 422 totals_mismatch. clientReference reused with another " +
			"body: 409 client_reference_conflict; with the same body, the existing e-invoice. A company whose representative " +
			"has not accepted the mandate (pending_mandate): 409 mandate_pending. No valid signing certificate: 409 " +
			"signer_not_ready.",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, func(ctx context.Context, in *issueEInvoiceInput) (*einvoiceOutput, error) {
		e, err := h.svc.IssueEInvoice(ctx, caller(ctx), einvoicing.IssueEInvoice{CompanyID: httpx.CompanyFrom(ctx), Request: &in.Body})
		if err != nil {
			return nil, err
		}
		return &einvoiceOutput{Location: e.Path(), Body: e}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "stornoEInvoice", Method: http.MethodPost, Path: "/v1/einvoices/{id}/storno",
		Summary: "Void an e-invoice (storno)", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "Creates the storno: a new document (docStorno 1) with the original's parties and lines, quantities " +
			"negated, totals recomputed, the void reason, and a reference to the original's EUID. It is signed and " +
			"submitted like any e-invoice; the original moves to cancelled_by_storno when UJP reports it voided (07), which " +
			"UJP may do only once the buyer confirms the storno; a storno UJP refuses (E1016 for an original the buyer " +
			"already decided on) fails with UJP's code and leaves the original as it was. Allowed only " +
			"while the original is delivered, accepted or auto_accepted (409 einvoice_state_conflict), not while another " +
			"storno or correction of it is on its way (409 supersede_pending), and not for a year whose annual account is " +
			"filed (409 period_closed), nor for a company whose mandate is not accepted (409 mandate_pending). The original is " +
			"never modified by this call. 202 with the storno.",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, func(ctx context.Context, in *stornoInput) (*einvoiceOutput, error) {
		b := in.Body
		e, err := h.svc.StornoEInvoice(ctx, caller(ctx), einvoicing.Storno{CompanyID: httpx.CompanyFrom(ctx), ID: in.ID,
			Reason: b.Reason, Comment: b.Comment, Number: b.Number, IssueDate: b.IssueDate})
		if err != nil {
			return nil, err
		}
		return &einvoiceOutput{Location: e.Path(), Body: e}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "correctEInvoice", Method: http.MethodPost, Path: "/v1/einvoices/{id}/correction",
		Summary: "Correct an e-invoice", Tags: tags, DefaultStatus: http.StatusAccepted, MaxBodyBytes: maxDocumentBody,
		Description: "The body is the issue body (the complete replacement document, as for POST /v1/einvoices) with " +
			"docStorno: 2, reason (a correction-reasons code, C0x) and an optional comment, all at the top level. The " +
			"correction references the original's EUID; when UJP accepts it, the original moves to corrected. Same 409s as " +
			"storno; clientReference and validating work as on issue. 202 with the correction.",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, func(ctx context.Context, in *correctionInput) (*einvoiceOutput, error) {
		e, err := h.svc.CorrectEInvoice(ctx, caller(ctx), einvoicing.Correction{CompanyID: httpx.CompanyFrom(ctx), ID: in.ID, Request: &in.Body})
		if err != nil {
			return nil, err
		}
		return &einvoiceOutput{Location: e.Path(), Body: e}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getEInvoicePDF", Method: http.MethodGet, Path: "/v1/einvoices/{id}/pdf",
		Summary: "UJP's PDF of an e-invoice", Tags: tags,
		Description: "application/pdf: UJP's rendering (in the sandbox, the simulator's: Cyrillic text, the EUID and a QR code " +
			"of UJP's link). It is fetched with a signed read once the document is delivered; until then, and while the " +
			"signer has not signed that read, 409 pdf_not_ready.",
		Responses: map[string]*huma.Response{"200": {Description: "The PDF.", Content: map[string]*huma.MediaType{
			"application/pdf": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}},
	}, httpx.Spec{Scope: "einvoices:read", Company: true}, func(ctx context.Context, in *einvoiceIDInput) (*pdfOutput, error) {
		pdf, err := h.pipe.PDF(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &pdfOutput{ContentType: "application/pdf", ContentDisposition: `inline; filename="` + in.ID + `.pdf"`, Body: pdf}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "simulateEInvoice", Method: http.MethodPost, Path: "/v1/sandbox/einvoices/{id}/simulate",
		Summary: "Drive a sandbox e-invoice through a UJP transition", Tags: []string{"Sandbox"}, DefaultStatus: http.StatusAccepted,
		Description: "Sandbox companies on the simulator only (403 sandbox_only otherwise). buyer_accepts, buyer_rejects " +
			"and deadline_passes act at the simulator on a delivered document (409 einvoice_state_conflict otherwise) and " +
			"schedule a read of the change feed at once, so the e-invoice moves to accepted, rejected or auto_accepted as soon " +
			"as the signer signs that read; buyer_accepts on a delivered storno is the buyer's confirmation that voids its " +
			"original (07). outage_starts and outage_ends make UJP unreachable for this company only " +
			"(submissions go to held and are resubmitted after the outage). terminal_error makes the company's next " +
			"submission fail with ujpCode (failed, with UJP's code in problems).",
	}, httpx.Spec{Scope: "einvoices:write", Company: true}, func(ctx context.Context, in *simulateInput) (*simulateOutput, error) {
		b := in.Body
		out, err := h.pipe.Simulate(ctx, caller(ctx), pipeline.Simulate{CompanyID: httpx.CompanyFrom(ctx), ID: in.ID, Action: b.Action,
			RejectReasonCode: b.RejectReasonCode, Comment: b.Comment, UJPCode: b.UJPCode})
		if err != nil {
			return nil, err
		}
		return &simulateOutput{Body: out}, nil
	})
}
