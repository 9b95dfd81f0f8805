package einvoiceapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/httpx"
)

type listInboxInput struct {
	Status         string `query:"status" enum:"pending,accepted,auto_accepted,rejected" doc:"The decision state."`
	DeadlineBefore string `query:"deadlineBefore" format:"date" doc:"Only documents whose decideBy is before this date, YYYY-MM-DD."`
	Cursor         string `query:"cursor" maxLength:"200" doc:"nextCursor of the previous page (with the same filters)."`
}

type listInboxOutput struct {
	Body httpx.Page[einvoicing.InboxDocument]
}

type inboxIDInput struct {
	ID string `path:"id" maxLength:"100" example:"inbd_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The incoming e-invoice's id (inbd_…), as GET /v1/inbox lists it."`
}

type inboxOutput struct {
	Body einvoicing.InboxDocument
}

// AcceptBody is the body of POST /v1/inbox/{id}/accept.
type AcceptBody struct {
	Comment *string `json:"comment,omitempty" maxLength:"500" nullable:"true" doc:"Free text sent to UJP with the acceptance."`
}

type acceptInput struct {
	ID   string      `path:"id" maxLength:"100" example:"inbd_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The incoming e-invoice's id (inbd_…)."`
	Body *AcceptBody `required:"false"`
}

// RejectBody is the body of POST /v1/inbox/{id}/reject.
type RejectBody struct {
	ReasonCode string  `json:"reasonCode" minLength:"1" maxLength:"10" doc:"A code of UJP's reject-reasons codebook, O-1 to O-7. UJP spells О-6 and О-7 with a Cyrillic О; either spelling is accepted and UJP's own is sent."`
	Comment    *string `json:"comment,omitempty" maxLength:"500" nullable:"true" doc:"Free text sent with the rejection; required with О-7 (other)."`
}

type rejectInput struct {
	ID   string `path:"id" maxLength:"100" example:"inbd_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The incoming e-invoice's id (inbd_…)."`
	Body RejectBody
}

type rawOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	Body               []byte
}

type sandboxIncomingInput struct {
	Body *struct {
		TransactionDate string `json:"transactionDate,omitempty" format:"date" doc:"The transaction (supply) date, YYYY-MM-DD; the deadline is the 10th of the following month. Default today (Europe/Skopje)."`
		IssueDate       string `json:"issueDate,omitempty" format:"date" doc:"The issue date, YYYY-MM-DD; default the transaction date."`
	} `required:"false"`
}

type sandboxIncomingOutput struct{ Body inbox.SandboxIncoming }

type simulateInboxInput struct {
	ID   string `path:"id" maxLength:"100" example:"inbd_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The id (inbd_…) of a sandbox incoming e-invoice."`
	Body struct {
		Action     string `json:"action" enum:"deadline_passes,seller_stornos" doc:"The transition to drive."`
		VoidReason string `json:"voidReason,omitempty" maxLength:"10" doc:"seller_stornos: the seller's void reason (S-x); default the first of UJP's list."`
	}
}

type simulateInboxOutput struct{ Body inbox.InboxSimulation }

func (h *handlers) registerInbox(s *httpx.Service) {
	tags := []string{"Inbox"}
	httpx.Register(s, huma.Operation{
		OperationID: "listInbox", Method: http.MethodGet, Path: "/v1/inbox",
		Summary: "List incoming e-invoices", Tags: tags,
		Description: "Newest first, of the company in X-Company-Id, 25 a page. Documents arrive from UJP's purchase side, " +
			"read by signed queries the company's signer signs (docs/inbox.md).",
	}, httpx.Spec{Scope: "inbox:read", Company: true}, func(ctx context.Context, in *listInboxInput) (*listInboxOutput, error) {
		digest := filterDigest("inbox", in.Status, in.DeadlineBefore)
		after, err := httpx.DecodeCursor(in.Cursor, digest)
		if err != nil {
			return nil, err
		}
		out, err := h.inbox.Inbox(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx),
			inbox.InboxFilter{Status: in.Status, DeadlineBefore: in.DeadlineBefore}, after)
		if err != nil {
			return nil, err
		}
		return &listInboxOutput{Body: httpx.NewPage(out, inbox.InboxPageSize, func(d einvoicing.InboxDocument) string { return d.ID }, digest)}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getInboxDocument", Method: http.MethodGet, Path: "/v1/inbox/{id}",
		Summary: "Get an incoming e-invoice", Tags: tags, Description: "404 outside the company.",
	}, httpx.Spec{Scope: "inbox:read", Company: true}, func(ctx context.Context, in *inboxIDInput) (*inboxOutput, error) {
		d, err := h.inbox.InboxDocument(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &inboxOutput{Body: d}, nil
	})
	decisionDoc := " The decision is signed on the company's device: the answer is 202 with the document in its " +
		"pending-decision form (decision.state pending, decision.requested, decision.signingRequestId); it moves to " +
		"accepted or rejected when UJP confirms. A refused or expired signature, or UJP's refusal, puts it back to " +
		"pending with a problem and inbox.decision_failed. 409 decision_deadline_passed after decideBy (Europe/Skopje) " +
		"or once UJP reports 04; 409 inbox_state_conflict when it is already decided, a decision is on its way, or the " +
		"seller voided or corrected it; 409 mandate_pending for a company whose mandate is not accepted; 409 " +
		"signer_not_ready without a valid signing certificate."
	httpx.Register(s, huma.Operation{
		OperationID: "acceptInboxDocument", Method: http.MethodPost, Path: "/v1/inbox/{id}/accept",
		Summary: "Accept an incoming e-invoice", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "No reason is needed; the body may be omitted." + decisionDoc,
	}, httpx.Spec{Scope: "inbox:write", Company: true}, func(ctx context.Context, in *acceptInput) (*inboxOutput, error) {
		var comment *string
		if in.Body != nil {
			comment = in.Body.Comment
		}
		d, err := h.inbox.DecideInbox(ctx, caller(ctx), inbox.DecideInbox{CompanyID: httpx.CompanyFrom(ctx), ID: in.ID, Accept: true, Comment: comment})
		if err != nil {
			return nil, err
		}
		return &inboxOutput{Body: d}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "rejectInboxDocument", Method: http.MethodPost, Path: "/v1/inbox/{id}/reject",
		Summary: "Reject an incoming e-invoice", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "reasonCode from UJP's reject-reasons codebook (O-1 to O-7; 422 validation_failed on reasonCode " +
			"otherwise, naming the codebook); О-7 needs a comment." + decisionDoc,
	}, httpx.Spec{Scope: "inbox:write", Company: true}, func(ctx context.Context, in *rejectInput) (*inboxOutput, error) {
		d, err := h.inbox.DecideInbox(ctx, caller(ctx), inbox.DecideInbox{CompanyID: httpx.CompanyFrom(ctx), ID: in.ID,
			ReasonCode: in.Body.ReasonCode, Comment: in.Body.Comment})
		if err != nil {
			return nil, err
		}
		return &inboxOutput{Body: d}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getInboxDocumentPayload", Method: http.MethodGet, Path: "/v1/inbox/{id}/payload",
		Summary: "The seller's original document", Tags: tags,
		Description: "application/json: the seller's document JSON exactly as UJP gave it, byte for byte (UJP's own " +
			"field names; for UJP, the signed payload with its requestTimestamp).",
		Responses: map[string]*huma.Response{"200": {Description: "The document, unmodified.", Content: map[string]*huma.MediaType{
			"application/json": {Schema: &huma.Schema{Type: "object", Description: "UJP's document JSON, unmodified.",
				Examples: []any{exEInvoiceOf().Document}}}}}},
	}, httpx.Spec{Scope: "inbox:read", Company: true}, func(ctx context.Context, in *inboxIDInput) (*rawOutput, error) {
		b, err := h.inbox.InboxPayload(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &rawOutput{ContentType: "application/json", Body: b}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getInboxDocumentPDF", Method: http.MethodGet, Path: "/v1/inbox/{id}/pdf",
		Summary: "UJP's PDF of an incoming e-invoice", Tags: tags,
		Description: "application/pdf: UJP's rendering, fetched with a read the company's signer signs, asked for the " +
			"first time the PDF is requested; until it is here, 409 pdf_not_ready.",
		Responses: map[string]*huma.Response{"200": {Description: "The PDF.", Content: map[string]*huma.MediaType{
			"application/pdf": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}},
	}, httpx.Spec{Scope: "inbox:read", Company: true}, func(ctx context.Context, in *inboxIDInput) (*rawOutput, error) {
		pdf, err := h.inbox.InboxPDF(ctx, httpx.PrincipalFrom(ctx), httpx.CompanyFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &rawOutput{ContentType: "application/pdf", ContentDisposition: `inline; filename="` + in.ID + `.pdf"`, Body: pdf}, nil
	})

	sandbox := []string{"Sandbox"}
	httpx.Register(s, huma.Operation{
		OperationID: "sandboxDropIncoming", Method: http.MethodPost, Path: "/v1/sandbox/inbox",
		Summary: "Drop an incoming invoice into a sandbox company's inbox", Tags: sandbox, DefaultStatus: http.StatusAccepted,
		Description: "Sandbox companies on the simulator only (403 sandbox_only otherwise). The simulator's fictitious " +
			"supplier (4030000000044, Тест Добавувач ДООЕЛ Тетово) sends the company a realistic invoice (three lines at " +
			"18% and 5% VAT) with the chosen transaction date, so deadline behaviour can be tried today: a transaction date " +
			"in last month gives a deadline this month's 10th. The document appears in GET /v1/inbox (with inbox.received) " +
			"once the company's signer has signed the reads; a read is scheduled at once. The same Idempotency-Key drops it once.",
	}, httpx.Spec{Scope: "inbox:write", Company: true}, func(ctx context.Context, in *sandboxIncomingInput) (*sandboxIncomingOutput, error) {
		cmd := inbox.SandboxIncomingCommand{CompanyID: httpx.CompanyFrom(ctx)}
		if in.Body != nil {
			cmd.TransactionDate, cmd.IssueDate = in.Body.TransactionDate, in.Body.IssueDate
		}
		out, err := h.inbox.SandboxDropIncoming(ctx, caller(ctx), cmd)
		if err != nil {
			return nil, err
		}
		return &sandboxIncomingOutput{Body: out}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "simulateInboxDocument", Method: http.MethodPost, Path: "/v1/sandbox/inbox/{id}/simulate",
		Summary: "Drive a sandbox inbox document through a UJP transition", Tags: sandbox, DefaultStatus: http.StatusAccepted,
		Description: "Sandbox companies on the simulator only (403 sandbox_only otherwise). deadline_passes: UJP " +
			"auto-accepts the document now (04), whatever its decideBy; the inbox shows auto_accepted (inbox.auto_accepted) " +
			"with the next read, and a later accept or reject is 409 decision_deadline_passed. seller_stornos: the seller " +
			"sends a storno of it (only of a document still in 01), which arrives as a document of kind storno; UJP voids the " +
			"original (07, inbox.cancelled_by_storno) once the company accepts the storno. A document the " +
			"simulator no longer allows it for: 409 inbox_state_conflict with UJP's code.",
	}, httpx.Spec{Scope: "inbox:write", Company: true}, func(ctx context.Context, in *simulateInboxInput) (*simulateInboxOutput, error) {
		out, err := h.inbox.SimulateInbox(ctx, caller(ctx), inbox.SimulateInboxCommand{CompanyID: httpx.CompanyFrom(ctx), ID: in.ID,
			Action: in.Body.Action, VoidReason: in.Body.VoidReason})
		if err != nil {
			return nil, err
		}
		return &simulateInboxOutput{Body: out}, nil
	})
}
