package einvoicing

import "github.com/denar-mk/denar/internal/auth"

// Tenancy is decided in SQL and in one rule.
//
// Every query that reads a tenant's rows for a request takes the
// credential's reach in its WHERE clause (scopeOf): the account, the
// environment, and the allow-list as an "every company" flag plus the
// listed ids (internal/store/queries/tenancy.sql says how both engines
// read them). Lists therefore fill their page in SQL.
//
// A resource named in a path is read by such a scoped query. When it
// returns nothing, auth.InReach decides what the caller is told, for every
// entity alike, from where the row lives in the account (RowHome, read
// with the account only) — see auth.Principal.Reach.

// Scope is a credential's reach as query parameters.
type Scope struct {
	AccountID, Environment string
	// AllCompanies: no allow-list. Allowed: the listed company ids,
	// separated by spaces (the zero values reach nothing).
	AllCompanies bool
	Allowed      string
}

// ScopeOf is p's reach (the allow-list as auth.Principal.AllowList gives
// it to every room's queries).
func ScopeOf(p *auth.Principal) Scope {
	all, allowed := p.AllowList()
	return Scope{AccountID: p.AccountID, Environment: p.Environment, AllCompanies: all, Allowed: allowed}
}
