package usage

import (
	"context"
	"fmt"
	"regexp"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Usage is the spec's Usage object: the documents of a calendar month
// (Europe/Skopje) of the account, by company, against its plan.
type Usage struct {
	Object      string         `json:"object" enum:"usage" example:"usage" doc:"Always usage."`
	Period      string         `json:"period" doc:"YYYY-MM, a calendar month in Europe/Skopje."`
	Environment string         `json:"environment" enum:"sandbox,production" example:"production" doc:"The environment counted: the credential's."`
	Plan        UsagePlan      `json:"plan" doc:"The account's current plan."`
	Totals      UsageTotals    `json:"totals" doc:"The sums over the companies shown."`
	ByCompany   []CompanyUsage `json:"byCompany" doc:"Companies with documents in the period (or the one asked for), by id."`
}

// UsagePlan is the account's plan as usage shows it.
type UsagePlan struct {
	Code               string `json:"code" example:"business" doc:"The plan's code."`
	IncludedDocuments  int    `json:"includedDocuments" doc:"Production documents (sent plus received) a month the plan includes."`
	ExtraDocumentPrice string `json:"extraDocumentPrice" doc:"Price of each billable document, a decimal string in currency."`
	Currency           string `json:"currency" example:"MKD" doc:"The currency of extraDocumentPrice."`
}

// UsageTotals sums the companies shown.
type UsageTotals struct {
	Sent     int `json:"sent" doc:"Documents UJP assigned an EUID to in the period (storno and correction documents included), each counted once however often it was submitted."`
	Received int `json:"received" doc:"Documents that arrived in the inbox in the period."`
	Billable int `json:"billable" doc:"Production: max(0, sent + received of every company of the account − plan.includedDocuments), whatever companyId narrows the rest to. Sandbox: always 0."`
}

// CompanyUsage is one company's documents in the period.
type CompanyUsage struct {
	CompanyID string `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company (cmp_…)."`
	Sent      int    `json:"sent" example:"42" doc:"Its documents UJP assigned an EUID to in the period."`
	Received  int    `json:"received" example:"17" doc:"Its documents that arrived in the inbox in the period."`
}

// Query selects a usage report.
type Query struct {
	// Period is YYYY-MM.
	Period string
	// CompanyID, when set, narrows the companies (and sent/received
	// totals) to one.
	CompanyID string
	// Environment is sandbox or production (the default).
	Environment string
}

var periodPattern = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)

// Usage reports the documents of a month. Usage is the account's, but its
// figures are per environment: the environment asked for must be the
// credential's (403 environment_mismatch otherwise), so a sandbox key asks
// with environment=sandbox. Companies outside the credential's allow-list
// are left out; billable is always the account's.
func (s *Service) Usage(ctx context.Context, p *auth.Principal, u Query) (Usage, error) {
	if u.Environment == "" {
		u.Environment = auth.EnvProduction
	}
	if !periodPattern.MatchString(u.Period) {
		return Usage{}, denar.Invalid(denar.FieldError{Path: "query.period", Message: "must be a month, YYYY-MM"})
	}
	if u.Environment != auth.EnvSandbox && u.Environment != auth.EnvProduction {
		return Usage{}, denar.Invalid(denar.FieldError{Path: "query.environment", Message: "must be sandbox or production"})
	}
	if u.Environment != p.Environment {
		return Usage{}, denar.Errorf("environment_mismatch", "This is a %s credential; it reads %s usage (environment=%s).", p.Environment, p.Environment, p.Environment)
	}
	q := s.db.Reader()
	if u.CompanyID != "" {
		if _, err := einvoicing.CompanyRef(ctx, q, p, u.CompanyID); err != nil {
			return Usage{}, err
		}
	}
	acct, err := q.GetAccountWithPlan(ctx, p.AccountID)
	if err != nil {
		return Usage{}, fmt.Errorf("usage: account %s: %w", p.AccountID, err)
	}
	sc := einvoicing.ScopeOf(p)
	rows, err := q.UsageByCompany(ctx, dbq.UsageByCompanyParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, Period: u.Period})
	if err != nil {
		return Usage{}, fmt.Errorf("usage of %s: %w", p.AccountID, err)
	}
	account, err := q.UsageTotal(ctx, dbq.UsageTotalParams{AccountID: p.AccountID, Environment: sc.Environment, Period: u.Period})
	if err != nil {
		return Usage{}, fmt.Errorf("usage of %s: %w", p.AccountID, err)
	}
	out := Usage{Object: "usage", Period: u.Period, Environment: u.Environment, ByCompany: []CompanyUsage{},
		Plan: UsagePlan{Code: acct.Plan, IncludedDocuments: int(acct.IncludedDocuments), ExtraDocumentPrice: acct.ExtraDocumentPrice, Currency: acct.Currency}}
	for _, r := range rows {
		if u.CompanyID != "" && r.CompanyID != u.CompanyID {
			continue
		}
		if n := len(out.ByCompany); n == 0 || out.ByCompany[n-1].CompanyID != r.CompanyID {
			out.ByCompany = append(out.ByCompany, CompanyUsage{CompanyID: r.CompanyID})
		}
		c := &out.ByCompany[len(out.ByCompany)-1]
		switch r.Direction {
		case einvoicing.DirectionSent:
			c.Sent += int(r.N)
			out.Totals.Sent += int(r.N)
		case einvoicing.DirectionReceived:
			c.Received += int(r.N)
			out.Totals.Received += int(r.N)
		}
	}
	if u.CompanyID != "" && len(out.ByCompany) == 0 {
		out.ByCompany = append(out.ByCompany, CompanyUsage{CompanyID: u.CompanyID})
	}
	if u.Environment == auth.EnvProduction {
		out.Totals.Billable = max(0, int(account)-int(acct.IncludedDocuments))
	}
	return out, nil
}
