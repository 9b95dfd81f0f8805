package signing

// An agent's reach is never more than its creator's: a pairing code keeps
// the company allow-list of the credential that created it, the agent it
// pairs keeps that list (its principal's CompanyIDs), and every agent
// operation — certificate registration, what it is sent, get, claim, sign,
// refuse — applies it. Empty is every company of the account in the
// agent's environment (agents paired before scopes were recorded keep it).

import (
	"slices"

	"github.com/denar-mk/denar"
)

// agentScope is the scope a pairing code created by a credential with
// allow-list ids gives its agent: a copy, [] for every company.
func agentScope(ids []string) []string {
	out := []string{}
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// scopeCovers reports whether a credential with allow-list outer reaches
// every company an agent with scope inner may act for: an unrestricted
// credential covers every agent, a restricted one only agents restricted
// to companies of its own list.
func scopeCovers(outer, inner []string) bool {
	if len(outer) == 0 {
		return true
	}
	if len(inner) == 0 {
		return false
	}
	for _, id := range inner {
		if !slices.Contains(outer, id) {
			return false
		}
	}
	return true
}

// errAgentBeyondReach refuses a credential acting on an agent that may act
// for companies outside the credential's allow-list.
func errAgentBeyondReach(agent string) error {
	return denar.Errorf("company_not_allowed", "Agent %s may act for companies outside this credential's allow-list; "+
		"only a credential that reaches all of them (an unrestricted key, or an owner in the dashboard) may change it.", agent)
}

// errOutsideAgentScope refuses an agent naming a company outside its scope.
func errOutsideAgentScope(agent, company string) error {
	return &denar.Error{Code: "company_not_allowed",
		Message: "Agent " + agent + " may not act for company " + company + ": it was paired with a code limited to other companies. " +
			"Pair an agent with a code created by a credential that reaches the company.",
		Fields: []denar.FieldError{{Path: "companyId", Message: "outside the agent's companies"}}}
}
