package einvoiceapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/httpx"
)

// ReconciliationBody is the body of POST /v1/reconciliations.
type ReconciliationBody struct {
	CompanyID string `json:"companyId" minLength:"1" maxLength:"100" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company whose day to reconcile (cmp_…)."`
	Date      string `json:"date" format:"date" example:"2026-05-04" doc:"The day, YYYY-MM-DD (Europe/Skopje); it must have ended at least 5 minutes ago (UJP's lists of a day are final then)."`
}

type createReconciliationInput struct {
	Body ReconciliationBody
}

type reconciliationIDInput struct {
	ID string `path:"id" maxLength:"100" example:"rcn_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The reconciliation's id (rcn_…)."`
}

type listReconciliationsInput struct {
	CompanyID string `query:"companyId" maxLength:"100" doc:"Only this company's (as X-Company-Id; a company the credential cannot reach is 403 company_not_allowed, one of the other environment 403 environment_mismatch)."`
	Date      string `query:"date" maxLength:"10" format:"date" example:"2026-05-04" doc:"Only the reconciliations of this day, YYYY-MM-DD."`
	Limit     int    `query:"limit" default:"25" minimum:"1" maximum:"100" example:"25" doc:"Page size: 1 to 100."`
	Cursor    string `query:"cursor" maxLength:"200" doc:"nextCursor of the previous page (with the same filters); absent for the first page."`
}

type reconciliationOutput struct {
	Location string `header:"Location"`
	Body     reconcile.Reconciliation
}

type reconciliationPage struct {
	Body httpx.Page[reconcile.Reconciliation]
}

// Reconciliation reads both of UJP's sides of a company's documents and
// may repair, import and add documents; it is work on e-invoices, so its
// scopes are theirs: einvoices:write to ask for a day, einvoices:read to
// read the results.
const (
	reconcileScope          = "einvoices:write"
	readReconciliationScope = "einvoices:read"
)

func (h *handlers) registerReconciliations(s *httpx.Service) {
	tags := []string{"Reconciliations"}
	httpx.Register(s, huma.Operation{
		OperationID: "createReconciliation", Method: http.MethodPost, Path: "/v1/reconciliations",
		Summary: "Reconcile a company's day with UJP's records", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "202 with the day's reconciliation, running: UJP's sales and purchase lists of the day are read (each read signed by " +
			"the company's agent, at the lowest priority of its UJP user) and compared with the service's documents and inbox. A " +
			"document UJP holds that the service shows otherwise is repaired to UJP's status; one the service never issued is " +
			"imported as an e-invoice of kind external; one the service shows delivered that UJP does not know is flagged " +
			"ujp_missing; an incoming document missing from the inbox is added. reconciliation.completed (and " +
			"reconciliation.mismatch when anything was fixed) tell when it is done. The daily job reconciles every day on its own " +
			"(docs/reconciliation.md); a day running already answers as it is, a completed day runs again. A day that has not " +
			"ended (Europe/Skopje, 5 minutes' margin): 422 at date; a company pending its mandate: 409 mandate_pending; without " +
			"a signing certificate: 409 signer_not_ready.",
	}, httpx.Spec{Scope: reconcileScope}, func(ctx context.Context, in *createReconciliationInput) (*reconciliationOutput, error) {
		r, err := h.recon.Reconcile(ctx, caller(ctx), reconcile.Reconcile{CompanyID: in.Body.CompanyID, Date: in.Body.Date})
		if err != nil {
			return nil, err
		}
		return &reconciliationOutput{Location: r.Path(), Body: r}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "listReconciliations", Method: http.MethodGet, Path: "/v1/reconciliations",
		Summary: "List reconciliations", Tags: tags,
		Description: "Reconciliations of the account in the credential's environment and within its allow-list, newest first: one per " +
			"company and day. companyId (or X-Company-Id) and date narrow the list.",
	}, httpx.Spec{Scope: readReconciliationScope, CompanyFilter: true}, func(ctx context.Context, in *listReconciliationsInput) (*reconciliationPage, error) {
		company := in.CompanyID
		if hdr := httpx.CompanyFrom(ctx); hdr != "" {
			if company != "" && company != hdr {
				return nil, denar.Invalid(denar.FieldError{Path: "query.companyId", Message: "differs from X-Company-Id " + hdr})
			}
			company = hdr
		}
		filter := company + "|" + in.Date
		after, err := httpx.DecodeCursor(in.Cursor, filter)
		if err != nil {
			return nil, err
		}
		out, err := h.recon.Reconciliations(ctx, httpx.PrincipalFrom(ctx), reconcile.ReconciliationFilter{CompanyID: company, Date: in.Date}, after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &reconciliationPage{Body: httpx.NewPage(out, in.Limit, func(r reconcile.Reconciliation) string { return r.ID }, filter)}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getReconciliation", Method: http.MethodGet, Path: "/v1/reconciliations/{id}",
		Summary: "Get a reconciliation", Tags: tags,
		Description: "The reconciliation's state and figures. clean is true once it completed with nothing to fix and no problems: " +
			"proof that the service's records of that day were complete.",
	}, httpx.Spec{Scope: readReconciliationScope}, func(ctx context.Context, in *reconciliationIDInput) (*reconciliationOutput, error) {
		r, err := h.recon.Reconciliation(ctx, httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &reconciliationOutput{Body: r}, nil
	})
}
