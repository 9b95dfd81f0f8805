package einvoicing

import (
	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
)

// reach is the one rule of what a credential reaches of its account, for
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
// the account (companyRef), so the answer does not tell whether it exists.
func reach(p *auth.Principal, what, environment string, companies ...string) error {
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
