package einvoiceapi

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Registry is the part of the tax authority the company pre-flight needs.
// cmd/denar adapts the UJP gateway (internal/ujp) to it.
type Registry interface {
	// LookupCompany returns the registry entry of taxNumber in env
	// (sandbox or production). An unknown number is ErrRegistryNotFound;
	// any other error means the registry could not answer.
	LookupCompany(ctx context.Context, env, taxNumber string) (RegistryCompany, error)
}

// ErrRegistryNotFound is the registry's "no such tax number".
var ErrRegistryNotFound = errors.New("registry: tax number not found")

// RegistryCompany is what the registry tells about a company.
type RegistryCompany struct {
	Name      string
	VATNumber string // "" when not a VAT payer
	Address   Address
}

// Address is a company's registered address.
type Address struct {
	Street string `json:"street"`
	Number string `json:"number"`
	City   string `json:"city"`
	Zip    string `json:"zip"`
}

// EnvironmentState is one environment of a company.
type EnvironmentState struct {
	Enabled     bool `json:"enabled"`
	SignerReady bool `json:"signerReady" doc:"A signing agent with a valid certificate for this company was reachable in the last 90 seconds."`
}

// Environments of a company.
type Environments struct {
	Sandbox    EnvironmentState `json:"sandbox"`
	Production EnvironmentState `json:"production"`
}

// Company is the public form of a client company.
type Company struct {
	ID                    string       `json:"id" doc:"Prefix cmp_."`
	Object                string       `json:"object" enum:"company"`
	Name                  string       `json:"name" doc:"Legal name from the tax authority's registry."`
	TaxNumber             string       `json:"taxNumber" doc:"ЕДБ, 13 digits."`
	VATNumber             *string      `json:"vatNumber" doc:"From the registry; null when the company is not a VAT payer."`
	Address               Address      `json:"address" doc:"From the registry."`
	ExternalRef           *string      `json:"externalRef"`
	Status                string       `json:"status" enum:"pending_mandate,active"`
	SigningMode           string       `json:"signingMode" enum:"bridge,sdk"`
	Environments          Environments `json:"environments"`
	AnnualAccountFiledFor *int         `json:"annualAccountFiledFor" doc:"Latest year whose annual account is filed; storno and correction are blocked up to it."`
	CreatedAt             time.Time    `json:"createdAt"`
}

// renderCompany renders a row as the API shows it, with signerReady read
// from the signing tables for the company's own environment.
func (h *handlers) renderCompany(ctx context.Context, r dbq.Company, prodPlan bool) (Company, error) {
	c := companyFrom(r, prodPlan)
	ready, err := einvoicing.SignerReady(ctx, h.deps.DB.Reader(), r.ID, h.deps.DB.Now())
	if err != nil {
		return c, err
	}
	if r.Environment == auth.EnvProduction {
		c.Environments.Production.SignerReady = ready && c.Environments.Production.Enabled
	} else {
		c.Environments.Sandbox.SignerReady = ready
	}
	return c, nil
}

// companyFrom renders a row without consulting the signing tables. prodPlan
// is the account's production plan.
func companyFrom(r dbq.Company, prodPlan bool) Company {
	c := Company{
		ID: r.ID, Object: "company", Name: r.Name, TaxNumber: r.TaxNumber,
		Status: r.Status, SigningMode: r.SigningMode, CreatedAt: r.CreatedAt,
		Environments: Environments{
			Sandbox:    EnvironmentState{Enabled: true},
			Production: EnvironmentState{Enabled: r.Environment == auth.EnvProduction && prodPlan},
		},
	}
	if r.VatNumber != "" {
		c.VATNumber = &r.VatNumber
	}
	if r.ExternalRef != "" {
		c.ExternalRef = &r.ExternalRef
	}
	_ = json.Unmarshal([]byte(r.Address), &c.Address)
	if r.AnnualAccountFiledFor.Valid {
		y := int(r.AnnualAccountFiledFor.Int32)
		c.AnnualAccountFiledFor = &y
	}
	return c
}

type listCompaniesInput struct {
	Cursor string `query:"cursor" doc:"nextCursor of the previous page."`
	Limit  int    `query:"limit" default:"25" minimum:"1" maximum:"100" doc:"Page size."`
}

type listCompaniesOutput struct {
	Body httpx.Page[Company]
}

type representative struct {
	Name  string `json:"name" minLength:"1" maxLength:"200"`
	Email string `json:"email" minLength:"3" maxLength:"254" format:"email"`
}

// createCompanyBody is the POST /v1/companies body.
type createCompanyBody struct {
	TaxNumber      string         `json:"taxNumber" doc:"ЕДБ, 13 digits." pattern:"^[0-9]{13}$"`
	ExternalRef    *string        `json:"externalRef,omitempty" maxLength:"200" nullable:"true"`
	SigningMode    string         `json:"signingMode,omitempty" enum:"bridge,sdk" default:"bridge"`
	Representative representative `json:"representative"`
}

type createCompanyInput struct {
	Body createCompanyBody
}

type companyOutput struct {
	Location string `header:"Location"`
	Body     Company
}

type companyIDInput struct {
	ID string `path:"id"`
}

type patchCompanyBody struct {
	ExternalRef *string `json:"externalRef,omitempty" maxLength:"200" nullable:"true" doc:"Absent leaves it; empty string clears it."`
	SigningMode string  `json:"signingMode,omitempty" enum:"bridge,sdk"`
}

type patchCompanyInput struct {
	ID   string `path:"id"`
	Body patchCompanyBody
}

type annualAccountInput struct {
	ID   string `path:"id"`
	Year int    `path:"year" minimum:"2000" maximum:"2100"`
}

func (h *handlers) registerCompanies(s *httpx.Service) {
	tags := []string{"Companies"}
	httpx.Register(s, huma.Operation{
		OperationID: "listCompanies", Method: http.MethodGet, Path: "/v1/companies",
		Summary: "List companies", Tags: tags,
		Description: "Newest first. A credential sees the companies of its environment within its allow-list.",
	}, httpx.Spec{Scope: "companies:read"}, h.listCompanies)
	httpx.Register(s, huma.Operation{
		OperationID: "createCompany", Method: http.MethodPost, Path: "/v1/companies",
		Summary: "Onboard a company", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Looks the tax number up in UJP's registry (name, address and VAT number come only from there), " +
			"creates the company in pending_mandate and e-mails the representative a mandate link. " +
			"An unknown tax number is 422; a registry that does not answer in time is 503 ujp_unavailable and nothing is created.",
	}, httpx.Spec{Scope: "companies:write"}, h.createCompany)
	httpx.Register(s, huma.Operation{
		OperationID: "getCompany", Method: http.MethodGet, Path: "/v1/companies/{id}",
		Summary: "Get a company", Tags: tags,
	}, httpx.Spec{Scope: "companies:read"}, h.getCompany)
	httpx.Register(s, huma.Operation{
		OperationID: "updateCompany", Method: http.MethodPatch, Path: "/v1/companies/{id}",
		Summary: "Change a company's settings", Tags: tags,
		Description: "Only externalRef and signingMode may change; any other field is 422.",
	}, httpx.Spec{Scope: "companies:write"}, h.patchCompany)
	httpx.Register(s, huma.Operation{
		OperationID: "setAnnualAccountFiled", Method: http.MethodPut, Path: "/v1/companies/{id}/annual-accounts/{year}",
		Summary: "Record that the annual account for a year is filed", Tags: tags,
		Description: "Sets annualAccountFiledFor to year (never lowers it): storno and correction of documents of that year " +
			"and earlier are refused with period_closed. Idempotent.",
	}, httpx.Spec{Scope: "companies:write"}, h.setAnnualAccount)
}

func (h *handlers) listCompanies(ctx context.Context, in *listCompaniesInput) (*listCompaniesOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	after, err := httpx.DecodeCursor(in.Cursor, "")
	if err != nil {
		return nil, err
	}
	out := make([]Company, 0, in.Limit+1)
	// Rows outside the allow-list or environment are skipped, so keep
	// reading until the page (plus one, to know there is more) is full.
	for len(out) <= in.Limit {
		rows, err := h.deps.DB.Reader().ListCompanies(ctx, dbq.ListCompaniesParams{
			AccountID: p.AccountID, After: after, Lim: int64(in.Limit + 1),
		})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			after = r.ID
			if p.AllowsCompany(r.ID) && r.Environment == p.Environment && len(out) <= in.Limit {
				c, err := h.renderCompany(ctx, r, p.ProductionEnabled)
				if err != nil {
					return nil, err
				}
				out = append(out, c)
			}
		}
		if len(rows) < in.Limit+1 {
			break
		}
	}
	return &listCompaniesOutput{Body: httpx.NewPage(out, in.Limit, func(c Company) string { return c.ID }, "")}, nil
}

// company loads a company the principal may touch: 404 outside the account,
// 403 outside the allow-list or environment.
func (h *handlers) company(ctx context.Context, q *dbq.Queries, id string) (dbq.Company, error) {
	p := httpx.PrincipalFrom(ctx)
	r, err := q.GetCompany(ctx, id)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && r.AccountID != p.AccountID) {
		return dbq.Company{}, problem(denar.ECodeNotFound, "No company "+id+" in this account.")
	}
	if err != nil {
		return dbq.Company{}, fmt.Errorf("load company: %w", err)
	}
	if !p.AllowsCompany(id) {
		return dbq.Company{}, problem("company_not_allowed", "The credential may not act for company "+id+".")
	}
	if r.Environment != p.Environment {
		return dbq.Company{}, problem("environment_mismatch",
			fmt.Sprintf("Company %s belongs to %s; this is a %s credential.", id, r.Environment, p.Environment))
	}
	return r, nil
}

func (h *handlers) getCompany(ctx context.Context, in *companyIDInput) (*companyOutput, error) {
	r, err := h.company(ctx, h.deps.DB.Reader(), in.ID)
	if err != nil {
		return nil, err
	}
	c, err := h.renderCompany(ctx, r, httpx.PrincipalFrom(ctx).ProductionEnabled)
	if err != nil {
		return nil, err
	}
	return &companyOutput{Body: c}, nil
}

var edbPattern = regexp.MustCompile(`^[0-9]{13}$`)

func (h *handlers) createCompany(ctx context.Context, in *createCompanyInput) (*companyOutput, error) {
	p := httpx.PrincipalFrom(ctx)
	b := in.Body
	if len(p.CompanyIDs) > 0 {
		return nil, problem("company_not_allowed", "A credential limited to an allow-list of companies cannot onboard new companies.")
	}
	var fe denar.FieldErrors
	if !edbPattern.MatchString(b.TaxNumber) {
		fe.Add("taxNumber", "must be 13 digits (ЕДБ)")
	}
	addr, err := mail.ParseAddress(b.Representative.Email)
	if err != nil || addr.Address != b.Representative.Email {
		fe.Add("representative.email", "is not an e-mail address")
	}
	if strings.TrimSpace(b.Representative.Name) == "" {
		fe.Add("representative.name", "is required")
	}
	if len(fe) > 0 {
		return nil, problem(denar.ECodeValidation, "The company cannot be created.", fe...)
	}
	if b.SigningMode == "" {
		b.SigningMode = "bridge"
	}
	reg, err := h.lookup(ctx, p.Environment, b.TaxNumber)
	if err != nil {
		return nil, err
	}
	addrJSON, _ := json.Marshal(reg.Address)
	ext := ""
	if b.ExternalRef != nil {
		ext = *b.ExternalRef
	}
	var row dbq.Company
	err = h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		acct, err := tx.GetAccount(ctx, p.AccountID)
		if err != nil {
			return fmt.Errorf("load account: %w", err)
		}
		row, err = tx.CreateCompany(ctx, dbq.CreateCompanyParams{
			ID: denar.NewID("cmp"), AccountID: p.AccountID, Name: reg.Name, TaxNumber: b.TaxNumber,
			VatNumber: reg.VATNumber, ExternalRef: ext, Status: "pending_mandate", SigningMode: b.SigningMode,
			Environment: p.Environment, Address: string(addrJSON),
			RepresentativeName: b.Representative.Name, RepresentativeEmail: b.Representative.Email,
			CreatedAt: tx.Now,
		})
		if err != nil {
			return fmt.Errorf("create company: %w", err)
		}
		return h.sendMandate(ctx, tx, row, acct)
	})
	if err != nil {
		return nil, err
	}
	c, err := h.renderCompany(ctx, row, p.ProductionEnabled)
	if err != nil {
		return nil, err
	}
	return &companyOutput{Location: "/v1/companies/" + row.ID, Body: c}, nil
}

// lookup runs the registry pre-flight within the configured timeout.
func (h *handlers) lookup(ctx context.Context, env, taxNumber string) (RegistryCompany, error) {
	unavailable := problem("ujp_unavailable", "UJP's registry did not answer in time; nothing was created. Retry with the same Idempotency-Key.")
	if h.deps.Registry == nil {
		return RegistryCompany{}, unavailable
	}
	timeout := h.deps.RegistryTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		c   RegistryCompany
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := h.deps.Registry.LookupCompany(lctx, env, taxNumber)
		done <- result{c, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-lctx.Done():
		h.deps.Log.WarnContext(ctx, "registry pre-flight timed out", "taxNumber", taxNumber, "timeout", timeout)
		return RegistryCompany{}, unavailable
	}
	switch {
	case errors.Is(res.err, ErrRegistryNotFound):
		return RegistryCompany{}, problem(denar.ECodeValidation, "UJP's registry does not know this tax number.",
			denar.FieldError{Path: "taxNumber", Message: "not found in UJP's registry"})
	case res.err != nil:
		h.deps.Log.WarnContext(ctx, "registry pre-flight failed", "taxNumber", taxNumber, "err", res.err)
		return RegistryCompany{}, unavailable
	}
	return res.c, nil
}

func (h *handlers) patchCompany(ctx context.Context, in *patchCompanyInput) (*companyOutput, error) {
	var row dbq.Company
	err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		r, err := h.company(ctx, tx.Queries, in.ID)
		if err != nil {
			return err
		}
		ext, mode := r.ExternalRef, r.SigningMode
		if in.Body.ExternalRef != nil {
			ext = *in.Body.ExternalRef
		}
		if in.Body.SigningMode != "" {
			mode = in.Body.SigningMode
		}
		row, err = tx.UpdateCompanySettings(ctx, dbq.UpdateCompanySettingsParams{ID: r.ID, ExternalRef: ext, SigningMode: mode})
		return err
	})
	if err != nil {
		return nil, err
	}
	c, err := h.renderCompany(ctx, row, httpx.PrincipalFrom(ctx).ProductionEnabled)
	if err != nil {
		return nil, err
	}
	return &companyOutput{Body: c}, nil
}

func (h *handlers) setAnnualAccount(ctx context.Context, in *annualAccountInput) (*companyOutput, error) {
	var row dbq.Company
	err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		r, err := h.company(ctx, tx.Queries, in.ID)
		if err != nil {
			return err
		}
		if r.AnnualAccountFiledFor.Valid && int(r.AnnualAccountFiledFor.Int32) >= in.Year {
			row = r
			return nil
		}
		row, err = tx.SetCompanyAnnualAccount(ctx, dbq.SetCompanyAnnualAccountParams{ID: r.ID, Year: sql.NullInt32{Int32: int32(in.Year), Valid: true}})
		return err
	})
	if err != nil {
		return nil, err
	}
	c, err := h.renderCompany(ctx, row, httpx.PrincipalFrom(ctx).ProductionEnabled)
	if err != nil {
		return nil, err
	}
	return &companyOutput{Body: c}, nil
}

// problem is an API error with code; returned as *denar.Error so the
// service fills in the request id and status.
func problem(code, detail string, fields ...denar.FieldError) error {
	return &denar.Error{Code: code, Message: detail, Fields: fields}
}
