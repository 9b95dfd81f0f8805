package einvoicing

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// Registry is the part of the tax authority the company pre-flight and the
// buyer check need. cmd/denar adapts the UJP gateway (internal/ujp) to it.
type Registry interface {
	// LookupCompany returns the registry entry of taxNumber in env
	// (sandbox or production), asked for the company asTaxNumber (UJP's
	// X-EDB is the company performing the supply: the company being
	// onboarded, or the seller whose buyer is checked). An unknown number
	// is ErrRegistryNotFound; any other error means the registry could not
	// answer.
	LookupCompany(ctx context.Context, env, asTaxNumber, taxNumber string) (RegistryCompany, error)
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
	Street string `json:"street" example:"бул. Партизански одреди" doc:"Street name, from UJP's registry."`
	Number string `json:"number" example:"1" doc:"House number."`
	City   string `json:"city" example:"Скопје" doc:"City."`
	Zip    string `json:"zip" example:"1000" doc:"Postal code."`
}

// CompanyRow loads a CompanyRow the caller may act for: 404 outside the
// account (ids of other tenants are not confirmed), 403 outside the
// credential's allow-list or environment (auth.InReach).
func CompanyRow(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.Company, error) {
	sc := ScopeOf(p)
	r, err := q.GetCompanyInReach(ctx, dbq.GetCompanyInReachParams{ID: id, AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed})
	return auth.InReach(ctx, q, p, "Company", id, r, err)
}

// errMandatePending refuses what the service would do for a company before
// its representative accepted the mandate: the spec makes the company
// active only then, and until then the service may not act for it at UJP.
var errMandatePending = denar.Errorf("mandate_pending", "The company's representative has not accepted the mandate yet; the service acts for the company at UJP once they have.")

// ActingCompany is company for what the service does at UJP on the
// company's behalf: errMandatePending unless it is active.
func ActingCompany(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.Company, error) {
	return Mandated(CompanyRow(ctx, q, p, id))
}

// Mandated passes on a company read (co, err), errMandatePending in place
// of a company that is not active.
func Mandated(co dbq.Company, err error) (dbq.Company, error) {
	if err == nil && co.Status != "active" {
		err = errMandatePending
	}
	return co, err
}

// CompanyRef is the company for an id the caller names as a parameter (a
// companyId filter or body field) rather than as the resource of the path:
// outside the account it is 403 company_not_allowed, as X-Company-Id is,
// so the answer to a reference does not depend on whether it exists in
// another account.
func CompanyRef(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.Company, error) {
	co, err := CompanyRow(ctx, q, p, id)
	var de *denar.Error
	if errors.As(err, &de) && de.Code == denar.ECodeNotFound {
		return co, denar.Errorf("company_not_allowed", "The credential may not act for company %s.", id)
	}
	return co, err
}

// CompanyEnvironment answers X-Company-Id for the e-invoicing service: the
// environment of company id when it is in p's account. A company's account
// and environment never change, so a company found once is answered from
// memory after (the row itself is read by the use case).
func (s *Service) CompanyEnvironment(ctx context.Context, p *auth.Principal, id string) (string, bool, error) {
	if home, ok := s.homes.get(id); ok {
		if home.account != p.AccountID {
			return "", false, nil
		}
		return home.environment, true, nil
	}
	r, err := s.db.Reader().GetAccountCompany(ctx, dbq.GetAccountCompanyParams{ID: id, AccountID: p.AccountID})
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("company %s: %w", id, err)
	}
	s.homes.put(id, companyHome{account: r.AccountID, environment: r.Environment})
	return r.Environment, true, nil
}

// companyHome is what never changes about a company: its account and
// environment.
type companyHome struct{ account, environment string }

// homeCache remembers the homes of companies found, bounded.
type homeCache struct {
	mu sync.Mutex
	m  map[string]companyHome
}

func (c *homeCache) get(id string) (companyHome, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[id]
	return h, ok
}

func (c *homeCache) put(id string, h companyHome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 10000 {
		c.m = map[string]companyHome{} // bounded: start over rather than grow
	}
	c.m[id] = h
}

// CompanyIDs returns up to limit ids of the companies of p's account and
// environment, for X-Company-Id's default.
func (s *Service) CompanyIDs(ctx context.Context, p *auth.Principal, limit int) ([]string, error) {
	sc := ScopeOf(p)
	ids, err := s.db.Reader().ListAccountCompanyIDs(ctx, dbq.ListAccountCompanyIDsParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, Lim: int64(limit)})
	if err != nil {
		return nil, fmt.Errorf("companies of %s: %w", p.AccountID, err)
	}
	return ids, nil
}

// Optional is a field of a partial update (usecase.Optional).
type Optional[T any] = usecase.Optional[T]
