package einvoicing

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestScopeInSQL: the allow-list as the queries take it (scopeOf: a flag
// and the ids between spaces) selects exactly the listed companies on both
// engines — not an id another one begins with or ends with, not one that
// differs only where a LIKE pattern would match any character — and the
// zero values select nothing.
func TestScopeInSQL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		acct := denar.NewID("acct")
		ids := []string{"co_a", "co_ab", "xco_a", "coXa", "co_b", "co_prod"}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: acct, Name: "Биро", Plan: "test", CreatedAt: tx.Now}); err != nil {
				return err
			}
			for i, id := range ids {
				env := auth.EnvSandbox
				if id == "co_prod" {
					env = auth.EnvProduction
				}
				if _, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: acct + id, AccountID: acct, Name: id,
					TaxNumber: fmt.Sprintf("40300000000%02d", i), Status: "active", SigningMode: "bridge", Environment: env,
					Address: "{}", CreatedAt: tx.Now}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			p    *auth.Principal
			zero bool // the parameters' zero values instead of scopeOf(p)
			want []string
		}{
			{"no allow-list", &auth.Principal{}, false, []string{"co_a", "co_ab", "xco_a", "coXa", "co_b"}},
			{"one", &auth.Principal{CompanyIDs: []string{"co_a"}}, false, []string{"co_a"}},
			{"a longer id", &auth.Principal{CompanyIDs: []string{"co_ab"}}, false, []string{"co_ab"}},
			{"two, any order", &auth.Principal{CompanyIDs: []string{"co_b", "coXa"}}, false, []string{"coXa", "co_b"}},
			{"another environment's", &auth.Principal{CompanyIDs: []string{"co_prod", "co_b"}}, false, []string{"co_b"}},
			{"none of the account", &auth.Principal{CompanyIDs: []string{"co_zz"}}, false, nil},
			{"zero values", &auth.Principal{}, true, nil},
		} {
			p := *tc.p
			p.AccountID, p.Environment = acct, auth.EnvSandbox
			for i, id := range p.CompanyIDs {
				p.CompanyIDs[i] = acct + id
			}
			sc := ScopeOf(&p)
			if tc.zero {
				sc = Scope{AccountID: acct, Environment: auth.EnvSandbox}
			}
			rows, err := db.Reader().ListAccountCompanies(ctx, dbq.ListAccountCompaniesParams{AccountID: sc.AccountID, Environment: sc.Environment,
				AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, After: "", Lim: 100})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, strings.TrimPrefix(r.ID, acct))
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", tc.name, got, want)
			}
		}
	})
}
