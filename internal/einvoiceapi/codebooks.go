package einvoiceapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/httpx"
)

type codebookInput struct {
	Name string `path:"name" maxLength:"40" example:"tax-indicators" doc:"The list's name, as GET /v1/codebooks lists them and the codebook member of a field error names them: document-types, ref-document-types, payment-types, currencies, countries, tax-groups, tax-indicators, void-reasons, correction-reasons, reject-reasons, document-statuses."`
}

type codebookListOutput struct{ Body codelists.CodebookList }

type codebookOutput struct{ Body codelists.Codebook }

func (h *handlers) registerCodebooks(s *httpx.Service) {
	tags := []string{"Codebooks"}
	httpx.Register(s, huma.Operation{
		OperationID: "listCodebooks", Method: http.MethodGet, Path: "/v1/codebooks",
		Summary: "List UJP's code lists", Tags: tags,
		Description: "The code lists (codebooks) whose values e-invoices and decisions must use: what each is, which request " +
			"fields take its codes and how many values it has. source says whether they are UJP's lists (read at fetchedAt) " +
			"or the snapshot the service ships (docs/codebooks.md). Any credential of the service may read them; the lists " +
			"are those of its environment.",
	}, httpx.Spec{}, func(ctx context.Context, _ *struct{}) (*codebookListOutput, error) {
		return &codebookListOutput{Body: h.lists.Codebooks(httpx.PrincipalFrom(ctx))}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getCodebook", Method: http.MethodGet, Path: "/v1/codebooks/{name}",
		Summary: "Get the values of a code list", Tags: tags,
		Description: "Every value of one code list, as the service checks requests against it right now. A field error with a " +
			"codebook member (422 validation_failed) names the list to read here. Tax indicators carry their vatImpact and " +
			"the VAT rates (vatPercents) a line may have with them. A name that is no list is 404 not_found.",
	}, httpx.Spec{}, func(ctx context.Context, in *codebookInput) (*codebookOutput, error) {
		cb, err := h.lists.Codebook(httpx.PrincipalFrom(ctx), in.Name)
		if err != nil {
			return nil, err
		}
		return &codebookOutput{Body: cb}, nil
	})
}
