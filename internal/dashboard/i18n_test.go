package dashboard

import (
	"io/fs"
	"regexp"
	"testing"

	"github.com/denar-mk/denar/einvoice"
)

// TestCatalogueComplete checks every string a template or handler asks for
// exists in both languages, and that neither language has keys the other
// lacks.
func TestDashboardCatalogueComplete(t *testing.T) {
	t.Parallel()
	cat := newCatalogue()
	used := map[string]bool{}
	lit := regexp.MustCompile(`\.T "([a-z0-9_.]+)"`)
	err := fs.WalkDir(templateFS, "templates", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(templateFS, path)
		for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Keys built from values.
	for _, s := range einvoice.DecisionStates {
		used["decision."+s] = true
	}
	for _, k := range []string{"decision.accept", "decision.reject", "status.active", "status.pending_mandate",
		"sr.pending", "sr.claimed", "sr.signed", "sr.refused", "sr.expired", "env.sandbox", "env.production",
		"role.owner", "role.staff", "role.viewer", "user.lastowner", "user.self", "user.badrole",
		"password.current", "password.new", "password.repeat", "password.mismatch", "password.wrong", "password.short", "password.done", "key.scopes.none",
		"corr.notnow", "corr.toolong", "corr.description", "corr.unit", "corr.quantity", "corr.unitPrice", "corr.unitDiscount", "corr.vatPercent", "corr.taxIndicator", "corr.line", "corr.long"} {
		used[k] = true
	}
	if len(used) < 50 {
		t.Fatalf("found only %d keys; is the pattern right?", len(used))
	}
	for k := range used {
		for _, lang := range languages {
			if _, ok := cat[lang][k]; !ok {
				t.Errorf("%s: no %q", lang, k)
			}
		}
	}
	for k := range cat["mk"] {
		if _, ok := cat["en"][k]; !ok {
			t.Errorf("en lacks %q", k)
		}
	}
	for k := range cat["en"] {
		if _, ok := cat["mk"][k]; !ok {
			t.Errorf("mk lacks %q", k)
		}
	}
}
