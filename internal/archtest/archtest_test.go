// Package archtest enforces the dependency rules of docs/architecture.md:
// the domain at the centre imports no adapter, HTTP or SQL package; public
// packages import nothing internal; the signing agent imports no server code.
package archtest

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/denar-mk/denar"

// domain reports whether pkg is a domain package.
func domain(pkg string) bool {
	rel := strings.TrimPrefix(pkg, module)
	if rel == "" {
		return true
	}
	for _, d := range []string{"/ident", "/money", "/jsontext", "/payroll", "/filing", "/einvoice"} {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// allowedInDomain reports whether a domain package may depend on d: the
// standard library, golang.org/x, and the module's domain packages. One
// exception is recorded in docs/decisions.md: einvoice/jwsverify uses
// go-jose (RS256 verification).
func allowedInDomain(pkg, d string) bool {
	first, _, _ := strings.Cut(d, "/")
	switch {
	case !strings.Contains(first, "."):
		return true // the standard library
	case strings.HasPrefix(d, "golang.org/x/"):
		return true
	case strings.HasPrefix(d, module+"/") || d == module:
		return domain(d)
	case strings.HasPrefix(d, "github.com/go-jose/go-jose/v4"):
		return pkg == module+"/einvoice/jwsverify"
	}
	return false
}

// forbiddenInDomain lists import paths (or prefixes ending in "/") that a
// domain package must not depend on, even indirectly.
var forbiddenInDomain = []string{
	"net/http", "database/sql",
	module + "/internal/",
	"github.com/danielgtaylor/huma/",
	"github.com/jackc/pgx/", "modernc.org/sqlite", "github.com/pressly/goose/",
}

// httpPackage reports whether pkg is an HTTP adapter: the shared plumbing,
// one service's API, or the web dashboard.
func httpPackage(pkg string) bool {
	rel := strings.TrimPrefix(pkg, module+"/internal/")
	return rel != pkg && (rel == "httpx" || rel == "dashboard" || strings.HasPrefix(rel, "dashboard/") ||
		(strings.HasSuffix(rel, "api") && !strings.Contains(rel, "/")))
}

// storeImports lists what an HTTP package must not import directly: it
// reaches state only through an application layer (or an adapter such as
// auth and idempotency that owns its own tables).
var storeImports = []string{module + "/internal/store", module + "/internal/store/dbq", "database/sql"}

// httpViolations returns the direct imports of an HTTP package that break
// the rule.
func httpViolations(pkg string, imports []string) []string {
	if !httpPackage(pkg) {
		return nil
	}
	var bad []string
	for _, imp := range imports {
		for _, f := range storeImports {
			if imp == f {
				bad = append(bad, imp)
			}
		}
	}
	return bad
}

// TestHTTPRuleCatchesAHandlerImportingTheStore shows the rule would fail a
// handler package that reaches for the store.
func TestHTTPRuleCatchesAHandlerImportingTheStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg     string
		imports []string
		want    int
	}{
		{module + "/internal/einvoiceapi", []string{"context", module + "/internal/store"}, 1},
		{module + "/internal/payrollapi", []string{module + "/internal/store/dbq", "database/sql"}, 2},
		{module + "/internal/httpx", []string{module + "/internal/idempotency", module + "/internal/auth"}, 0},
		{module + "/internal/inboxapi", []string{module + "/internal/store"}, 1},
		{module + "/internal/einvoicing", []string{module + "/internal/store"}, 0},
		{module + "/internal/dashboard", []string{module + "/internal/store", module + "/internal/auth"}, 1},
	} {
		if got := httpViolations(tc.pkg, tc.imports); len(got) != tc.want {
			t.Errorf("%s importing %v: violations %v, want %d", tc.pkg, tc.imports, got, tc.want)
		}
	}
}

// ujpsimViolations returns what of deps the simulator must not depend on:
// the gateway's document and application code and its UJP client.
func ujpsimViolations(deps []string) []string {
	var bad []string
	for _, d := range deps {
		if d == module+"/einvoice" || strings.HasPrefix(d, module+"/einvoice/") ||
			d == einvoicingPkg || strings.HasPrefix(d, einvoicingPkg+"/") || d == module+"/internal/ujp" {
			bad = append(bad, d)
		}
	}
	return bad
}

// gatewayPackage reports whether pkg is part of the gateway's reading of
// UJP, which must not lean on the simulator (cmd/denar may wire both).
func gatewayPackage(pkg string) bool {
	return pkg == module+"/internal/ujp" || pkg == einvoicingPkg || strings.HasPrefix(pkg, einvoicingPkg+"/") || pkg == module+"/einvoice" ||
		strings.HasPrefix(pkg, module+"/einvoice/")
}

// TestSimulatorRuleCatchesTheGatewaysCode shows the rule would fail a
// simulator that reaches for the gateway's packages.
func TestSimulatorRuleCatchesTheGatewaysCode(t *testing.T) {
	t.Parallel()
	deps := []string{"context", module + "/money", module + "/internal/store", module + "/einvoice/ujpdoc", module + "/internal/ujp",
		module + "/internal/einvoicing", module + "/einvoice", module + "/internal/ujpsim"}
	if got := ujpsimViolations(deps); len(got) != 4 {
		t.Fatalf("violations %v, want the four gateway packages", got)
	}
	if !gatewayPackage(module+"/einvoice/ujpdoc") || gatewayPackage(module+"/cmd/denar") || gatewayPackage(module+"/internal/ujpsim") {
		t.Fatal("gatewayPackage misclassifies")
	}
}

// applicationPackage reports whether pkg is part of the e-invoicing
// application layer: internal/einvoicing and its rooms (the packages under
// it), and what their use cases share (internal/usecase).
func applicationPackage(pkg string) bool {
	return pkg == einvoicingPkg || strings.HasPrefix(pkg, einvoicingPkg+"/") || pkg == module+"/internal/usecase"
}

// serverViolations returns what of deps an application package must not
// depend on: HTTP server code (the API calls the application, never the
// other way round).
func serverViolations(deps []string) []string {
	var bad []string
	for _, d := range deps {
		if strings.HasPrefix(d, module+"/internal/httpx") || strings.HasPrefix(d, module+"/internal/einvoiceapi") ||
			strings.HasPrefix(d, module+"/internal/dashboard") || strings.HasPrefix(d, "github.com/danielgtaylor/huma") {
			bad = append(bad, d)
		}
	}
	return bad
}

// The e-invoicing application's packages: the core and its rooms.
const (
	einvoicingPkg = module + "/internal/einvoicing"
	webhooksRoom  = einvoicingPkg + "/webhooks"
	codelistsRoom = einvoicingPkg + "/codelists"
	signingRoom   = einvoicingPkg + "/signing"
	pipelineRoom  = einvoicingPkg + "/pipeline"
	inboxRoom     = einvoicingPkg + "/inbox"
	reconcileRoom = einvoicingPkg + "/reconcile"
	archiveRoom   = einvoicingPkg + "/archive"
	companiesRoom = einvoicingPkg + "/companies"
	usageRoom     = einvoicingPkg + "/usage"
)

// roomDirections are the directions between internal/einvoicing and its
// rooms, as what each package must not depend on. From the bottom up:
//   - the webhooks room knows nothing of the rest: einvoicing's Publisher
//     port is satisfied by webhooks.Service, wired in cmd/denar;
//   - the code lists (UJP's lists as validation uses them, their periodic
//     read, GET /v1/codebooks) stand on webhooks alone: the core reads
//     them through its CodeLists port, which codelists.Service satisfies;
//   - internal/einvoicing, the core (who may act for a company, e-invoices
//     and their moves, signing requests and the signed-links registry,
//     the usage ledger), knows no room above it: each room registers
//     what it handles (HandleLink, jobs) and satisfies core's ports when
//     it is built;
//   - signing (the signers' use cases and agents) and the pipeline
//     (submission, pacing, UJP's sales side) stand on the core side by
//     side, neither knowing the other;
//   - the inbox reads UJP's purchase side through the pipeline;
//   - reconciliation compares a day with UJP's records through the
//     pipeline and stores what it finds through the inbox;
//   - the archive reads what was sent and received in the core's
//     vocabulary, behind its own seam for received documents;
//   - the companies room (onboarding, settings, mandates) stands on the
//     core alone, and no room reads companies through it: they read them
//     through the core's access rule;
//   - the usage room (the monthly report from the ledger's counters)
//     stands on the core alone, and no room imports it.
var roomDirections = map[string][]string{
	webhooksRoom:  {codelistsRoom, einvoicingPkg, signingRoom, pipelineRoom, inboxRoom, reconcileRoom, archiveRoom, companiesRoom, usageRoom},
	codelistsRoom: {einvoicingPkg, signingRoom, pipelineRoom, inboxRoom, reconcileRoom, archiveRoom, companiesRoom, usageRoom},
	einvoicingPkg: {signingRoom, pipelineRoom, inboxRoom, reconcileRoom, archiveRoom, companiesRoom, usageRoom},
	signingRoom:   {pipelineRoom, inboxRoom, reconcileRoom, archiveRoom, companiesRoom, usageRoom},
	pipelineRoom:  {signingRoom, inboxRoom, reconcileRoom, archiveRoom, companiesRoom, usageRoom},
	inboxRoom:     {signingRoom, reconcileRoom, archiveRoom, companiesRoom, usageRoom},
	reconcileRoom: {signingRoom, archiveRoom, companiesRoom, usageRoom},
	archiveRoom:   {signingRoom, pipelineRoom, inboxRoom, reconcileRoom, companiesRoom, usageRoom},
	companiesRoom: {signingRoom, pipelineRoom, inboxRoom, reconcileRoom, archiveRoom, usageRoom},
	usageRoom:     {signingRoom, pipelineRoom, inboxRoom, reconcileRoom, archiveRoom, companiesRoom},
}

// roomViolations returns what of deps pkg must not depend on by
// roomDirections.
func roomViolations(pkg string, deps []string) []string {
	var bad []string
	for _, d := range deps {
		if slices.Contains(roomDirections[pkg], d) {
			bad = append(bad, d)
		}
	}
	return bad
}

// TestApplicationRulesCatchWrongDirections shows the rules would fail a
// room reaching the wrong way (the webhooks room into the core or the code
// lists, the code lists into the core or a room above it, the core into a
// room, the pipeline into the inbox, the inbox into reconciliation) and
// let the right ways through (the core onto the code lists), and that an
// application package reaching for HTTP server code is caught.
func TestApplicationRulesCatchWrongDirections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg  string
		deps []string
		want int
	}{
		{webhooksRoom, []string{module + "/internal/store", einvoicingPkg, einvoicingPkg + "/einvoicingtest"}, 1},
		{einvoicingPkg, []string{webhooksRoom}, 0},
		{codelistsRoom, []string{webhooksRoom, module + "/internal/store", einvoicingPkg, pipelineRoom}, 2},
		{einvoicingPkg, []string{codelistsRoom, webhooksRoom}, 0},
		{webhooksRoom, []string{codelistsRoom}, 1},
		{einvoicingPkg, []string{webhooksRoom, archiveRoom, inboxRoom}, 2},
		{archiveRoom, []string{einvoicingPkg, webhooksRoom, module + "/internal/usecase"}, 0},
		{pipelineRoom, []string{einvoicingPkg, inboxRoom}, 1},
		{inboxRoom, []string{einvoicingPkg, pipelineRoom, reconcileRoom}, 1},
		{reconcileRoom, []string{einvoicingPkg, pipelineRoom, inboxRoom, webhooksRoom}, 0},
		{signingRoom, []string{einvoicingPkg, pipelineRoom}, 1},
		{companiesRoom, []string{einvoicingPkg, signingRoom}, 1},
	} {
		if got := roomViolations(tc.pkg, tc.deps); len(got) != tc.want {
			t.Errorf("%s depending on %v: violations %v, want %d", tc.pkg, tc.deps, got, tc.want)
		}
	}
	if got := serverViolations([]string{module + "/internal/httpx", module + "/internal/dashboard", "github.com/danielgtaylor/huma/v2", module + "/internal/auth"}); len(got) != 3 {
		t.Errorf("server violations %v, want 3", got)
	}
	if !applicationPackage(webhooksRoom) || !applicationPackage(inboxRoom) || !applicationPackage(module+"/internal/usecase") || applicationPackage(module+"/internal/einvoiceapi") {
		t.Error("applicationPackage misclassifies")
	}
}

func TestImportRules(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Deps " "}}|{{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		pkg, rest, _ := strings.Cut(sc.Text(), "|")
		depList, importList, _ := strings.Cut(rest, "|")
		deps := strings.Fields(depList)
		for _, bad := range httpViolations(pkg, strings.Fields(importList)) {
			t.Errorf("HTTP package %s imports %s; it must go through the application layer", pkg, bad)
		}
		switch {
		case domain(pkg):
			checked++
			for _, d := range deps {
				if !allowedInDomain(pkg, d) {
					t.Errorf("domain package %s depends on %s: the domain imports only the standard library, golang.org/x and the domain", pkg, d)
				}
				for _, f := range forbiddenInDomain {
					if d == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(d, f)) {
						t.Errorf("domain package %s depends on %s", pkg, d)
					}
				}
			}
		case strings.HasPrefix(pkg, module+"/sdk"):
			for _, d := range deps {
				if strings.HasPrefix(d, module+"/internal/") {
					t.Errorf("public package %s depends on %s", pkg, d)
				}
			}
		case applicationPackage(pkg):
			// The application layer knows no HTTP server: handlers call it,
			// never the other way round.
			for _, d := range serverViolations(deps) {
				t.Errorf("application package %s depends on %s", pkg, d)
			}
			for _, d := range roomViolations(pkg, deps) {
				t.Errorf("%s depends on %s: the rooms of internal/einvoicing depend one way only (roomDirections)", pkg, d)
			}
			if gatewayPackage(pkg) {
				for _, d := range deps {
					if d == module+"/internal/ujpsim" {
						t.Errorf("gateway package %s depends on the simulator outside its tests", pkg)
					}
				}
			}
		case pkg == module+"/internal/ujpsim":
			for _, bad := range ujpsimViolations(deps) {
				t.Errorf("simulator package %s depends on %s: it is an independent reading of UJP (docs/decisions.md)", pkg, bad)
			}
		case gatewayPackage(pkg):
			for _, d := range deps {
				if d == module+"/internal/ujpsim" {
					t.Errorf("gateway package %s depends on the simulator outside its tests", pkg)
				}
			}
		case pkg == module+"/cmd/denar-agent" || strings.HasPrefix(pkg, module+"/internal/agent"):
			for _, d := range deps {
				for _, server := range []string{"/internal/store", "/internal/httpx", "/internal/einvoiceapi", "/internal/einvoicing", "/internal/payrollapi", "/internal/auth", "/internal/jobs", "/internal/ujp"} {
					if strings.HasPrefix(d, module+server) {
						t.Errorf("signing agent package %s depends on server package %s", pkg, d)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no domain package found; is the module path right?")
	}
}
