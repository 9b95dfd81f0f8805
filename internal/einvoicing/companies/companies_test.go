package companies_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// Tax numbers the registry below answers for (valid ЕДБ check digits).
const (
	taxKnown   = "4030000000001" // a VAT payer
	taxSilent  = "4039999999989" // the registry never answers
	taxUnknown = "4030000000010" // not in the registry
)

type registry struct{}

func (registry) LookupCompany(ctx context.Context, env, as, tax string) (einvoicing.RegistryCompany, error) {
	switch tax {
	case taxKnown:
		return einvoicing.RegistryCompany{Name: "Тест Трговија ДООЕЛ Скопје", VATNumber: "MK" + tax,
			Address: einvoicing.Address{Street: "Партизанска", Number: "1", City: "Скопје", Zip: "1000"}}, nil
	case taxSilent:
		<-ctx.Done()
		return einvoicing.RegistryCompany{}, ctx.Err()
	}
	return einvoicing.RegistryCompany{}, einvoicing.ErrRegistryNotFound
}

func code(err error) string {
	var de *denar.Error
	if errors.As(err, &de) {
		return de.Code
	}
	return ""
}

// TestOnboardingAndMandate: the room's use cases end to end on both
// stores: the registry pre-flight refuses (and creates nothing) when the
// registry is silent or does not know the number, a company is onboarded
// pending its mandate once, and its mandate link is shown, accepted once
// (the company becomes active) and then reads as used.
func TestOnboardingAndMandate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		acct, err := (&auth.Store{DB: db}).CreateAccount(ctx, "Биро", "business")
		if err != nil {
			t.Fatal(err)
		}
		room := companies.New(companies.Deps{DB: db, Registry: registry{}},
			companies.Config{PublicURL: "http://mandates.test/", RegistryTimeout: 50 * time.Millisecond})
		c := einvoicing.Caller{Principal: &auth.Principal{AccountID: acct.ID, Environment: auth.EnvSandbox}}
		rep := companies.Representative{Name: "Ана Петрова", Email: "ana@example.mk"}

		for _, tc := range []struct {
			tax, code string
		}{{taxSilent, "ujp_unavailable"}, {taxUnknown, denar.ECodeValidation}, {"4030000000002", denar.ECodeValidation}} {
			if _, err := room.OnboardCompany(ctx, c, companies.OnboardCompany{TaxNumber: tc.tax, Representative: rep}); code(err) != tc.code {
				t.Errorf("onboarding %s: %v, want %s", tc.tax, err, tc.code)
			}
		}
		if cs, err := room.Companies(ctx, c.Principal, "", 10); err != nil || len(cs) != 0 {
			t.Fatalf("after refused onboardings: %v, %v; want none", cs, err)
		}

		co, err := room.OnboardCompany(ctx, c, companies.OnboardCompany{TaxNumber: taxKnown, Representative: rep})
		if err != nil {
			t.Fatal(err)
		}
		if co.Status != "pending_mandate" || co.Name != "Тест Трговија ДООЕЛ Скопје" || co.SigningMode != "bridge" {
			t.Errorf("onboarded: %+v", co)
		}
		if _, err := room.OnboardCompany(ctx, c, companies.OnboardCompany{TaxNumber: taxKnown, Representative: rep}); code(err) != "company_exists" {
			t.Errorf("second onboarding: %v, want company_exists", err)
		}

		link, err := room.SandboxMandateLink(ctx, c, co.ID)
		if err != nil {
			t.Fatal(err)
		}
		tok, ok := strings.CutPrefix(link.URL, "http://mandates.test"+companies.MandatePath(""))
		if !ok {
			t.Fatalf("link %s", link.URL)
		}
		if m, err := room.Mandate(ctx, tok); err != nil || m.State != companies.MandateOpen || m.Company != co.Name {
			t.Fatalf("mandate page: %+v, %v", m, err)
		}
		for _, want := range []string{companies.MandateAccepted, companies.MandateUsed} {
			if m, err := room.AcceptMandate(ctx, tok); err != nil || m.State != want {
				t.Errorf("accept: %+v, %v; want %s", m, err, want)
			}
		}
		if got, err := room.Company(ctx, c.Principal, co.ID); err != nil || got.Status != "active" {
			t.Errorf("after acceptance: %+v, %v", got, err)
		}
		if _, err := room.SandboxMandateLink(ctx, c, co.ID); code(err) != companies.ECodeMandateAccepted {
			t.Errorf("link of an active company: %v", err)
		}
		if m, err := room.Mandate(ctx, "mdt_nothing"); err != nil || m.State != companies.MandateUnknown {
			t.Errorf("unknown token: %+v, %v", m, err)
		}
	})
}
