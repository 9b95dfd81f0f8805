package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Reach is the one rule of what a credential reaches of its account, for
// the resource a path names (a company, an agent, a webhook endpoint, a
// reconciliation, an archive export, an event), applied after the resource
// was read with the account in the query's WHERE clause (not found there:
// 404 not_found, so ids of other accounts are never confirmed):
//
//   - a company outside the credential's allow-list: 403
//     company_not_allowed (what a credential may not act for, it learns
//     nothing more of, the environment included);
//   - the other environment: 403 environment_mismatch.
//
// what names the resource in the message ("Archive export exp_…").
// Documents reached through their company (e-invoices and inbox documents,
// under X-Company-Id) are judged on the company by this rule, then looked
// up under it: one that is not there is 404. A company named in a body or
// a query (companyId) answers 403 company_not_allowed also when it is not in
// the account (einvoicing.CompanyRef), so the answer does not tell whether it exists.
func (p *Principal) Reach(what, environment string, companies ...string) error {
	for _, c := range companies {
		if !p.AllowsCompany(c) {
			return denar.Errorf("company_not_allowed", "%s belongs to company %s, which this credential may not act for.", what, c)
		}
	}
	if environment != p.Environment {
		return denar.Errorf("environment_mismatch", "%s belongs to %s; this is a %s credential.", what, environment, p.Environment)
	}
	return nil
}

// AllowList is the allow-list as the queries of a tenant's rows take it:
// all when there is none (every company of the account), else the listed
// company ids separated by spaces.
func (p *Principal) AllowList() (all bool, ids string) {
	return len(p.CompanyIDs) == 0, strings.Join(p.CompanyIDs, " ")
}

// InReach passes on the result (r, err) of a scoped read (account,
// environment and allow-list in its WHERE clause) of the resource what (for
// example "Archive export") id named in a path: r when found; else 404
// not_found when it is not in p's account (or not at all), or Reach's 403
// for where it lives (RowHome, read with the account only). Every
// application room answers a resource out of reach through it.
func InReach[R any](ctx context.Context, q *dbq.Queries, p *Principal, what, id string, r R, err error) (R, error) {
	var zero R
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, sql.ErrNoRows):
		return zero, p.outOfReach(ctx, q, what, id)
	default:
		return zero, fmt.Errorf("%s %s: %w", what, id, err)
	}
}

// outOfReach answers a resource named in a path that the scoped read did
// not return: 404 not_found when it is not in the credential's account (or
// not at all), else Reach's 403 for where it lives.
func (p *Principal) outOfReach(ctx context.Context, q *dbq.Queries, what, id string) error {
	notFound := denar.Errorf(denar.ECodeNotFound, "No %s %s in this account.", strings.ToLower(what[:1])+what[1:], id)
	h, err := q.RowHome(ctx, dbq.RowHomeParams{ID: id, AccountID: p.AccountID})
	if errors.Is(err, sql.ErrNoRows) {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, id, err)
	}
	if err := p.Reach(what+" "+id, h.Environment, h.CompanyID); err != nil {
		return err
	}
	return notFound // gone between the two reads
}
