package einvoiceapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Company is the public form of a client company.
type Company struct {
	ID        string    `json:"id" doc:"Prefix cmp_."`
	Object    string    `json:"object" enum:"company"`
	Name      string    `json:"name" doc:"Legal name from the tax authority's registry."`
	TaxNumber string    `json:"taxNumber" doc:"ЕДБ, 13 digits."`
	CreatedAt time.Time `json:"createdAt"`
}

type listCompaniesInput struct {
	Cursor string `query:"cursor" doc:"nextCursor of the previous page."`
	Limit  int    `query:"limit" default:"25" minimum:"1" maximum:"100" doc:"Page size."`
}

type listCompaniesOutput struct {
	Body httpx.Page[Company]
}

func (h *handlers) registerCompanies(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "listCompanies", Method: http.MethodGet, Path: "/v1/companies",
		Summary: "List companies", Tags: []string{"Companies"},
	}, httpx.Spec{Scope: "companies:read"}, h.listCompanies)
}

func (h *handlers) listCompanies(ctx context.Context, in *listCompaniesInput) (*listCompaniesOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	after, err := httpx.DecodeCursor(in.Cursor, "")
	if err != nil {
		return nil, err
	}
	rows, err := h.deps.DB.Reader().ListCompanies(ctx, dbq.ListCompaniesParams{
		AccountID: p.AccountID, After: after, Lim: int64(in.Limit + 1),
	})
	if err != nil {
		return nil, err
	}
	out := make([]Company, 0, len(rows))
	for _, r := range rows {
		if !p.AllowsCompany(r.ID) {
			continue
		}
		out = append(out, Company{ID: r.ID, Object: "company", Name: r.Name, TaxNumber: r.TaxNumber, CreatedAt: r.CreatedAt})
	}
	return &listCompaniesOutput{Body: httpx.NewPage(out, in.Limit, func(c Company) string { return c.ID }, "")}, nil
}
