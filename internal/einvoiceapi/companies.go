package einvoiceapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/httpx"
)

type listCompaniesInput struct {
	Cursor string `query:"cursor" maxLength:"200" doc:"nextCursor of the previous page."`
	Limit  int    `query:"limit" default:"25" minimum:"1" maximum:"100" doc:"Page size."`
}

type listCompaniesOutput struct {
	Body httpx.Page[companies.Company]
}

type representative struct {
	Name  string `json:"name" minLength:"1" maxLength:"200" example:"Марија Николовска" doc:"The full name of the person who may grant the mandate for the company (its manager or owner)."`
	Email string `json:"email" minLength:"3" maxLength:"254" format:"email" example:"marija@example.mk" doc:"Where the mandate link is mailed: the person opens it and accepts the mandate to make the company active."`
}

// createCompanyBody is the POST /v1/companies body.
type createCompanyBody struct {
	TaxNumber      string         `json:"taxNumber" example:"4030000000001" doc:"The company's ЕДБ: the bare 13 digits (no MK prefix), the 13th the mod-11 check digit of the first 12 (docs/errors.md, Tax numbers); a wrong check digit is 422 validation_failed at taxNumber, before UJP's registry is asked. Its name, VAT number and address come from the registry." pattern:"^[0-9]{13}$"`
	ExternalRef    *string        `json:"externalRef,omitempty" maxLength:"200" nullable:"true" example:"crm-1042" doc:"Your own identifier for the company (your CRM's id, say), up to 200 characters."`
	SigningMode    string         `json:"signingMode,omitempty" enum:"bridge,sdk" default:"bridge" example:"bridge" doc:"bridge (default): documents are signed by a paired signing agent (denar-agent) on the company's device; sdk: you sign them yourself through the signing requests API (docs/signing.md)."`
	Representative representative `json:"representative" doc:"Who grants the company's mandate: they get an e-mail with a link to accept it."`
}

type createCompanyInput struct {
	Body createCompanyBody
}

type companyOutput struct {
	Location string `header:"Location"`
	Body     companies.Company
}

type companyIDInput struct {
	ID string `path:"id" maxLength:"100" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company's id (cmp_…), as POST /v1/companies answered it."`
}

// nullableString is a PATCH field that tells absent from null.
type nullableString struct {
	set   bool
	value *string
}

// UnmarshalJSON records that the field was present, and its value or null.
func (n *nullableString) UnmarshalJSON(b []byte) error {
	n.set = true
	if string(b) == "null" {
		n.value = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n.value = &s
	return nil
}

// Schema documents the field as a nullable string.
func (nullableString) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: "string", Nullable: true, MaxLength: ptr(200),
		Description: "Absent leaves it; null or an empty string clears it."}
}

func ptr[T any](v T) *T { return &v }

type patchCompanyBody struct {
	ExternalRef nullableString `json:"externalRef,omitempty" required:"false" doc:"Your own identifier for the company, up to 200 characters. Absent leaves it; null or an empty string clears it."`
	SigningMode string         `json:"signingMode,omitempty" enum:"bridge,sdk" example:"sdk" doc:"bridge or sdk (see POST /v1/companies); absent leaves it."`
}

type patchCompanyInput struct {
	ID   string `path:"id" maxLength:"100" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company's id (cmp_…)."`
	Body patchCompanyBody
}

type annualAccountInput struct {
	ID   string `path:"id" maxLength:"100" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company's id (cmp_…)."`
	Year int    `path:"year" minimum:"2000" maximum:"2100" example:"2025" doc:"The year whose annual account was filed, 2000 to 2100."`
}

func (h *handlers) registerCompanies(s *httpx.Service) {
	tags := []string{"Companies"}
	httpx.Register(s, huma.Operation{
		OperationID: "listCompanies", Method: http.MethodGet, Path: "/v1/companies",
		Summary: "List companies", Tags: tags,
		Description: "Newest first. A credential sees the companies of its environment within its allow-list.",
	}, httpx.Spec{Scope: "companies:read", CompanyFilter: true}, func(ctx context.Context, in *listCompaniesInput) (*listCompaniesOutput, error) {
		after, err := httpx.DecodeCursor(in.Cursor, "")
		if err != nil {
			return nil, err
		}
		if id := httpx.CompanyFrom(ctx); id != "" {
			// X-Company-Id narrows the list to that company.
			c, err := h.companies.Company(ctx, httpx.PrincipalFrom(ctx), id)
			if err != nil {
				return nil, err
			}
			return &listCompaniesOutput{Body: httpx.NewPage([]companies.Company{c}, in.Limit, func(c companies.Company) string { return c.ID }, "")}, nil
		}
		out, err := h.companies.Companies(ctx, httpx.PrincipalFrom(ctx), after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &listCompaniesOutput{Body: httpx.NewPage(out, in.Limit, func(c companies.Company) string { return c.ID }, "")}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "createCompany", Method: http.MethodPost, Path: "/v1/companies",
		Summary: "Onboard a company", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Looks the tax number up in UJP's registry (name, address and VAT number come only from there), " +
			"creates the company in pending_mandate and e-mails the representative a mandate link. " +
			"An unknown tax number is 422; a tax number the account already has in this environment is 409 company_exists " +
			"(the existing id in companyId); a registry that does not answer in time is 503 ujp_unavailable and nothing is created.",
	}, httpx.Spec{Scope: "companies:write"}, func(ctx context.Context, in *createCompanyInput) (*companyOutput, error) {
		b := in.Body
		c, err := h.companies.OnboardCompany(ctx, caller(ctx), companies.OnboardCompany{TaxNumber: b.TaxNumber, ExternalRef: b.ExternalRef,
			SigningMode: b.SigningMode, Representative: companies.Representative{Name: b.Representative.Name, Email: b.Representative.Email}})
		if err != nil {
			return nil, err
		}
		return &companyOutput{Location: c.Path(), Body: c}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getCompany", Method: http.MethodGet, Path: "/v1/companies/{id}",
		Summary: "Get a company", Tags: tags,
		Description: "One company the credential can reach, with its onboarding (mandate) state and settings.",
	}, httpx.Spec{Scope: "companies:read"}, func(ctx context.Context, in *companyIDInput) (*companyOutput, error) {
		c, err := h.companies.Company(ctx, httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &companyOutput{Body: c}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "updateCompany", Method: http.MethodPatch, Path: "/v1/companies/{id}",
		Summary: "Change a company's settings", Tags: tags,
		Description: "Only externalRef and signingMode may change; any other field is 422. externalRef: null clears it.",
	}, httpx.Spec{Scope: "companies:write"}, func(ctx context.Context, in *patchCompanyInput) (*companyOutput, error) {
		cmd := companies.UpdateCompany{SigningMode: in.Body.SigningMode,
			ExternalRef: einvoicing.Optional[string]{Set: in.Body.ExternalRef.set, Value: in.Body.ExternalRef.value}}
		c, err := h.companies.UpdateCompany(ctx, caller(ctx), in.ID, cmd)
		if err != nil {
			return nil, err
		}
		return &companyOutput{Body: c}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "setAnnualAccountFiled", Method: http.MethodPut, Path: "/v1/companies/{id}/annual-accounts/{year}",
		Summary: "Record that the annual account for a year is filed", Tags: tags,
		Description: "Sets annualAccountFiledFor to year (never lowers it): storno and correction of documents of that year " +
			"and earlier are refused with period_closed. Idempotent.",
	}, httpx.Spec{Scope: "companies:write"}, func(ctx context.Context, in *annualAccountInput) (*companyOutput, error) {
		c, err := h.companies.SetAnnualAccountFiled(ctx, caller(ctx), in.ID, in.Year)
		if err != nil {
			return nil, err
		}
		return &companyOutput{Body: c}, nil
	})
}

type mandateLinkOutput struct{ Body companies.SandboxMandateLink }

// registerSandboxMandate adds the sandbox's mandate link: the sandbox's
// representatives are fictitious and read no mail, so a program finishing
// a sandbox onboarding asks for the link instead of reading the log.
func (h *handlers) registerSandboxMandate(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "sandboxMandateLink", Method: http.MethodPost, Path: "/v1/sandbox/companies/{id}/mandate-link",
		Summary: "Get a mandate link of a sandbox company", Tags: []string{"Sandbox"}, DefaultStatus: http.StatusCreated,
		Description: "A fresh mandate link of a sandbox company in pending_mandate, as the representative's e-mail carries it: " +
			"POST to it (an empty form) or open it in a browser to accept the mandate, and the company becomes active. " +
			"The link is shown once. A production company is 403 sandbox_only (its representative gets the link by e-mail only); " +
			"an active company is 409 mandate_already_accepted.",
	}, httpx.Spec{Scope: "companies:write"}, func(ctx context.Context, in *companyIDInput) (*mandateLinkOutput, error) {
		l, err := h.companies.SandboxMandateLink(ctx, caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &mandateLinkOutput{Body: l}, nil
	})
}
