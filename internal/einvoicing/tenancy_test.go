package einvoicing

import (
	"errors"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
)

// TestReach: the one rule of 403s for a resource of the account, in its
// order — a company outside the allow-list before the environment, so a
// limited credential learns nothing of what it may not act for.
func TestReach(t *testing.T) {
	t.Parallel()
	all := &auth.Principal{AccountID: "acc_1", Environment: auth.EnvSandbox}
	limited := &auth.Principal{AccountID: "acc_1", Environment: auth.EnvSandbox, CompanyIDs: []string{"cmp_a"}}
	for _, tc := range []struct {
		name      string
		p         *auth.Principal
		env       string
		companies []string
		want      string // "" for reached
	}{
		{"own environment, no company", all, auth.EnvSandbox, nil, ""},
		{"own environment, any company", all, auth.EnvSandbox, []string{"cmp_b"}, ""},
		{"other environment", all, auth.EnvProduction, []string{"cmp_b"}, "environment_mismatch"},
		{"allowed company", limited, auth.EnvSandbox, []string{"cmp_a"}, ""},
		{"company outside the list", limited, auth.EnvSandbox, []string{"cmp_b"}, "company_not_allowed"},
		{"outside the list and the other environment", limited, auth.EnvProduction, []string{"cmp_b"}, "company_not_allowed"},
		{"allowed company, other environment", limited, auth.EnvProduction, []string{"cmp_a"}, "environment_mismatch"},
	} {
		err := reach(tc.p, "Thing x", tc.env, tc.companies...)
		var de *denar.Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &de) || de.Code != tc.want):
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}
