package einvoiceapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing/usage"
	"github.com/denar-mk/denar/internal/httpx"
)

type usageInput struct {
	Period      string `query:"period" required:"true" pattern:"^[0-9]{4}-(0[1-9]|1[0-2])$" doc:"The month, YYYY-MM (Europe/Skopje calendar)."`
	CompanyID   string `query:"companyId" maxLength:"100" doc:"Only this company (byCompany and the sent/received totals); billable stays the account's."`
	Environment string `query:"environment" enum:"sandbox,production" doc:"sandbox for sandbox usage; production otherwise. It must be the credential's environment (403 environment_mismatch)."`
}

type usageOutput struct{ Body usage.Usage }

func (h *handlers) registerUsage(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "getUsage", Method: http.MethodGet, Path: "/v1/usage",
		Summary: "Monthly document usage against the plan", Tags: []string{"Usage"},
		Description: "Documents of the account in a calendar month (Europe/Skopje), per company: sent counts every document " +
			"UJP assigned an EUID to in the month (storno and correction documents are documents too), received every " +
			"document that arrived in the inbox in the month; each document counts once, however often it was submitted " +
			"or read. billable (production): max(0, sent + received of every company of the account − " +
			"plan.includedDocuments), each billed at plan.extraDocumentPrice. Sandbox usage is never billable: billable is " +
			"always 0 there. The plan is the account's current one.",
	}, httpx.Spec{Scope: "usage:read"}, func(ctx context.Context, in *usageInput) (*usageOutput, error) {
		u, err := h.usage.Usage(ctx, httpx.PrincipalFrom(ctx), usage.Query{Period: in.Period, CompanyID: in.CompanyID, Environment: in.Environment})
		if err != nil {
			return nil, err
		}
		return &usageOutput{Body: u}, nil
	})
}
