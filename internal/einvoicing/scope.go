package einvoicing

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Tenancy is decided in SQL and in one rule.
//
// Every query that reads a tenant's rows for a request takes the
// credential's reach in its WHERE clause (scopeOf): the account, the
// environment, and the allow-list as an "every company" flag plus the
// listed ids (internal/store/queries/tenancy.sql says how both engines
// read them). Lists therefore fill their page in SQL.
//
// A resource named in a path is read by such a scoped query. When it
// returns nothing, outOfReach decides what the caller is told, for every
// entity alike, from where the row lives in the account (RowHome, read
// with the account only) — see reach.

// scope is a credential's reach as query parameters.
type scope struct {
	AccountID, Environment string
	// AllCompanies: no allow-list. Allowed: the listed company ids,
	// separated by spaces (the zero values reach nothing).
	AllCompanies bool
	Allowed      string
}

// scopeOf is p's reach.
func scopeOf(p *auth.Principal) scope {
	return scope{AccountID: p.AccountID, Environment: p.Environment, AllCompanies: len(p.CompanyIDs) == 0,
		Allowed: strings.Join(p.CompanyIDs, " ")}
}

// inReach passes on the result (r, err) of a scoped read of the resource
// what (for example "Archive export") id: r when found, else the answer of
// outOfReach.
func inReach[R any](ctx context.Context, q *dbq.Queries, p *auth.Principal, what, id string, r R, err error) (R, error) {
	var zero R
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, sql.ErrNoRows):
		return zero, outOfReach(ctx, q, p, what, id)
	default:
		return zero, fmt.Errorf("%s %s: %w", what, id, err)
	}
}

// outOfReach answers a resource named in a path that the scoped read did
// not return: 404 not_found when it is not in the credential's account (or
// not at all), else reach's 403 for where it lives.
func outOfReach(ctx context.Context, q *dbq.Queries, p *auth.Principal, what, id string) error {
	notFound := denar.Errorf(denar.ECodeNotFound, "No %s %s in this account.", strings.ToLower(what[:1])+what[1:], id)
	h, err := q.RowHome(ctx, dbq.RowHomeParams{ID: id, AccountID: p.AccountID})
	if errors.Is(err, sql.ErrNoRows) {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, id, err)
	}
	if err := reach(p, what+" "+id, h.Environment, h.CompanyID); err != nil {
		return err
	}
	return notFound // gone between the two reads
}
