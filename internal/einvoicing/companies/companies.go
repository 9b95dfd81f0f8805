package companies

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/ident"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/usecase"
)

// EnvironmentState is one environment of a company.
type EnvironmentState struct {
	Enabled     bool `json:"enabled" doc:"Whether the company works in this environment: a company belongs to the environment it was onboarded in, and production also needs the account's production plan."`
	SignerReady bool `json:"signerReady" doc:"A signing agent with a valid certificate for this company was reachable in the last 90 seconds."`
}

// Environments of a company.
type Environments struct {
	Sandbox    EnvironmentState `json:"sandbox" doc:"The company in the sandbox (UJP's simulator)."`
	Production EnvironmentState `json:"production" doc:"The company at UJP itself."`
}

// Company is the public form of a client company.
type Company struct {
	ID                    string                      `json:"id" doc:"Prefix cmp_."`
	Object                string                      `json:"object" enum:"company" example:"company" doc:"Always company."`
	Name                  string                      `json:"name" doc:"Legal name from the tax authority's registry."`
	TaxNumber             string                      `json:"taxNumber" doc:"ЕДБ: 13 digits, the 13th a check digit."`
	VATNumber             *string                     `json:"vatNumber" doc:"From the registry; null when the company is not a VAT payer."`
	Address               einvoicing.Address          `json:"address" doc:"From the registry."`
	ExternalRef           *string                     `json:"externalRef" example:"crm-1042" doc:"Your own identifier for the company (your CRM's id, say); null when none."`
	Status                string                      `json:"status" enum:"pending_mandate,active" example:"active" doc:"pending_mandate: the representative has not yet accepted the mandate mailed to them, and the company cannot issue; active: it can."`
	SigningMode           string                      `json:"signingMode" enum:"bridge,sdk" example:"bridge" doc:"bridge: documents are signed by a paired signing agent (denar-agent) on the company's device; sdk: you sign them yourself through the signing requests API (docs/signing.md)."`
	Environments          Environments                `json:"environments" doc:"Where the company works and whether its signer is ready there."`
	AnnualAccountFiledFor *int                        `json:"annualAccountFiledFor" doc:"Latest year whose annual account is filed; storno and correction are blocked up to it."`
	Problems              []einvoicing.CompanyProblem `json:"problems" doc:"What UJP refuses the service for this company (access or a portal privilege missing); empty when nothing is wrong. Each is cleared by the next call of its kind that UJP accepts. See docs/going-live.md."`
	CreatedAt             time.Time                   `json:"createdAt" example:"2026-05-04T09:00:00Z" doc:"When the company was onboarded."`
}

// Path is the company's path in the API.
func (c Company) Path() string { return "/v1/companies/" + c.ID }

// companyView renders a row as the API shows it, with signerReady read
// from the signing tables for the company's own environment. prodPlan is
// the account's production plan.
func companyView(ctx context.Context, q *dbq.Queries, r dbq.Company, prodPlan bool, now time.Time) (Company, error) {
	c := Company{
		ID: r.ID, Object: "company", Name: r.Name, TaxNumber: r.TaxNumber,
		Status: r.Status, SigningMode: r.SigningMode, CreatedAt: r.CreatedAt.UTC(),
		Environments: Environments{
			Sandbox:    EnvironmentState{Enabled: r.Environment == auth.EnvSandbox},
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
	c.Problems = einvoicing.CompanyProblems(r.UjpProblems)
	ready, err := einvoicing.SignerReady(ctx, q, r.ID, now)
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

// Company returns one company.
func (s *Service) Company(ctx context.Context, p *auth.Principal, id string) (Company, error) {
	q := s.db.Reader()
	r, err := einvoicing.CompanyRow(ctx, q, p, id)
	if err != nil {
		return Company{}, err
	}
	return companyView(ctx, q, r, p.ProductionEnabled, s.db.Now())
}

// Companies returns up to limit+1 companies of the caller's account and
// environment within its allow-list, newest first, after the id after
// ("" for the start): the extra one tells the caller there is more.
func (s *Service) Companies(ctx context.Context, p *auth.Principal, after string, limit int) ([]Company, error) {
	q := s.db.Reader()
	now := s.db.Now()
	sc := einvoicing.ScopeOf(p)
	rows, err := q.ListAccountCompanies(ctx, dbq.ListAccountCompaniesParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, After: after, Lim: int64(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list companies: %w", err)
	}
	out := make([]Company, 0, len(rows))
	for _, r := range rows {
		v, err := companyView(ctx, q, r, p.ProductionEnabled, now)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Representative is who accepts a company's mandate.
type Representative struct {
	Name  string
	Email string
}

// OnboardCompany is the command of POST /v1/companies.
type OnboardCompany struct {
	TaxNumber      string
	ExternalRef    *string
	SigningMode    string // bridge (default) or sdk
	Representative Representative
}

// OnboardCompany looks the tax number up in UJP's registry (name, address
// and VAT number come only from there), then creates the company in
// pending_mandate with its mandate and the mandate mail, in one
// transaction. An ЕДБ the account already has in this environment is 409
// company_exists; a registry that does not answer in time is 503
// ujp_unavailable, and nothing is created.
func (s *Service) OnboardCompany(ctx context.Context, c einvoicing.Caller, cmd OnboardCompany) (Company, error) {
	p := c.Principal
	if len(p.CompanyIDs) > 0 {
		return Company{}, denar.Errorf("company_not_allowed", "A credential limited to an allow-list of companies cannot onboard new companies.")
	}
	var fe denar.FieldErrors
	switch err := ident.EDB(cmd.TaxNumber); {
	case errors.Is(err, ident.ErrChecksum):
		fe.Add("taxNumber", "is not a valid ЕДБ: the 13th digit is not the check digit of the first 12")
	case err != nil:
		fe.Add("taxNumber", "must be 13 digits (ЕДБ)")
	}
	addr, err := mail.ParseAddress(cmd.Representative.Email)
	if err != nil || addr.Address != cmd.Representative.Email {
		fe.Add("representative.email", "is not an e-mail address")
	}
	if strings.TrimSpace(cmd.Representative.Name) == "" {
		fe.Add("representative.name", "is required")
	}
	switch cmd.SigningMode {
	case "":
		cmd.SigningMode = "bridge"
	case "bridge", "sdk":
	default:
		fe.Add("signingMode", "must be bridge or sdk")
	}
	if err := fe.Err(); err != nil {
		return Company{}, err
	}
	if err := s.companyExists(ctx, s.db.Reader(), p, cmd.TaxNumber); err != nil {
		return Company{}, err
	}
	reg, err := s.lookup(ctx, p.Environment, cmd.TaxNumber, cmd.TaxNumber)
	if err != nil {
		return Company{}, err
	}
	addrJSON, err := json.Marshal(reg.Address)
	if err != nil {
		return Company{}, fmt.Errorf("encode address: %w", err)
	}
	ext := ""
	if cmd.ExternalRef != nil {
		ext = *cmd.ExternalRef
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (Company, error) {
		if err := s.companyExists(ctx, tx.Queries, p, cmd.TaxNumber); err != nil {
			return Company{}, err
		}
		acct, err := tx.GetAccount(ctx, p.AccountID)
		if err != nil {
			return Company{}, fmt.Errorf("load account: %w", err)
		}
		row, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{
			ID: denar.NewID("cmp"), AccountID: p.AccountID, Name: reg.Name, TaxNumber: cmd.TaxNumber,
			VatNumber: reg.VATNumber, ExternalRef: ext, Status: "pending_mandate", SigningMode: cmd.SigningMode,
			Environment: p.Environment, Address: string(addrJSON),
			RepresentativeName: cmd.Representative.Name, RepresentativeEmail: cmd.Representative.Email,
			CreatedAt: tx.Now,
		})
		if err != nil {
			return Company{}, fmt.Errorf("create company: %w", err)
		}
		if err := s.sendMandate(ctx, tx, row, acct); err != nil {
			return Company{}, err
		}
		return companyView(ctx, tx.Queries, row, p.ProductionEnabled, tx.Now)
	})
}

// companyExists is 409 company_exists when the account already has a
// company with taxNumber in p's environment. The unique index behind it
// settles two onboardings that race.
func (s *Service) companyExists(ctx context.Context, q *dbq.Queries, p *auth.Principal, taxNumber string) error {
	r, err := q.GetCompanyByTaxNumber(ctx, dbq.GetCompanyByTaxNumberParams{AccountID: p.AccountID, Environment: p.Environment, TaxNumber: taxNumber})
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("company by tax number: %w", err)
	}
	return &denar.Error{Code: "company_exists", Message: fmt.Sprintf("The account already has company %s with tax number %s in %s.", r.ID, taxNumber, p.Environment),
		Fields: []denar.FieldError{{Path: "taxNumber", Message: "already onboarded as " + r.ID}}, Detail: map[string]any{"companyId": r.ID}}
}

// lookup runs the registry pre-flight within the configured timeout, as
// the company asTaxNumber.
func (s *Service) lookup(ctx context.Context, env, asTaxNumber, taxNumber string) (einvoicing.RegistryCompany, error) {
	unavailable := denar.Errorf("ujp_unavailable", "UJP's registry did not answer in time; nothing was created. Retry with the same Idempotency-Key.")
	if s.registry == nil {
		return einvoicing.RegistryCompany{}, unavailable
	}
	lctx, cancel := context.WithTimeout(ujp.WithTurnWait(ctx, s.cfg.RegistryTimeout), s.cfg.RegistryTimeout)
	defer cancel()
	type result struct {
		c   einvoicing.RegistryCompany
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := s.registry.LookupCompany(lctx, env, asTaxNumber, taxNumber)
		done <- result{c, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-lctx.Done():
		s.log.WarnContext(ctx, "registry pre-flight timed out", "taxNumber", taxNumber, "timeout", s.cfg.RegistryTimeout)
		return einvoicing.RegistryCompany{}, unavailable
	}
	switch {
	case errors.Is(res.err, einvoicing.ErrRegistryNotFound):
		return einvoicing.RegistryCompany{}, &denar.Error{Code: denar.ECodeValidation, Message: "UJP's registry does not know this tax number.",
			Fields: []denar.FieldError{{Path: "taxNumber", Message: "not found in UJP's registry", Codebook: einvoicing.CBRegistry}}}
	case res.err != nil:
		s.log.WarnContext(ctx, "registry pre-flight failed", "taxNumber", taxNumber, "err", res.err)
		return einvoicing.RegistryCompany{}, unavailable
	}
	return res.c, nil
}

// UpdateCompany is the command of PATCH /v1/companies/{id}: only these two
// settings may change.
type UpdateCompany struct {
	ExternalRef einvoicing.Optional[string] // null or "" clears it
	SigningMode string                      // "" leaves it
}

// UpdateCompany changes a company's settings.
func (s *Service) UpdateCompany(ctx context.Context, c einvoicing.Caller, id string, cmd UpdateCompany) (Company, error) {
	switch cmd.SigningMode {
	case "", "bridge", "sdk":
	default:
		return Company{}, denar.Invalid(denar.FieldError{Path: "signingMode", Message: "must be bridge or sdk"})
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (Company, error) {
		r, err := einvoicing.CompanyRow(ctx, tx.Queries, c.Principal, id)
		if err != nil {
			return Company{}, err
		}
		ext, mode := r.ExternalRef, r.SigningMode
		if cmd.ExternalRef.Set {
			ext = ""
			if cmd.ExternalRef.Value != nil {
				ext = *cmd.ExternalRef.Value
			}
		}
		if cmd.SigningMode != "" {
			mode = cmd.SigningMode
		}
		row, err := tx.UpdateCompanySettings(ctx, dbq.UpdateCompanySettingsParams{ID: r.ID, AccountID: r.AccountID, ExternalRef: ext, SigningMode: mode})
		if err != nil {
			return Company{}, fmt.Errorf("update company %s: %w", id, err)
		}
		return companyView(ctx, tx.Queries, row, c.ProductionEnabled, tx.Now)
	})
}

// SetAnnualAccountFiled records that the annual account for year is filed
// (never lowering the year): storno and correction of documents of that
// year and earlier are refused with period_closed.
func (s *Service) SetAnnualAccountFiled(ctx context.Context, c einvoicing.Caller, id string, year int) (Company, error) {
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (Company, error) {
		r, err := einvoicing.CompanyRow(ctx, tx.Queries, c.Principal, id)
		if err != nil {
			return Company{}, err
		}
		if !r.AnnualAccountFiledFor.Valid || int(r.AnnualAccountFiledFor.Int32) < year {
			r, err = tx.SetCompanyAnnualAccount(ctx, dbq.SetCompanyAnnualAccountParams{ID: r.ID, AccountID: r.AccountID,
				Year: sql.NullInt32{Int32: int32(year), Valid: true}})
			if err != nil {
				return Company{}, fmt.Errorf("annual account of %s: %w", id, err)
			}
		}
		return companyView(ctx, tx.Queries, r, c.ProductionEnabled, tx.Now)
	})
}
