package denar_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/denar-mk/denar/sdk/denar"
	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
)

// TestGuideProgram: the complete program of docs/sdk.md is Example, which
// go test runs against the real server: the guide's main holds Example's
// body line for line, so a change to either shows here.
func TestGuideProgram(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("example_program_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "\nfunc Example() {\n")
	if !ok {
		t.Fatal("no func Example in example_program_test.go")
	}
	body, _, _ = strings.Cut(body, "\t// Output:")
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "sdk.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(guide), "func main() {\n"+body+"}\n") {
		t.Errorf("docs/sdk.md's program is not Example's body (sdk/denar/example_program_test.go); copy it into func main")
	}
	// And it imports what Example's file imports.
	_, imports, _ := strings.Cut(string(src), "\nimport (\n")
	imports, _, _ = strings.Cut(imports, "\n)\n")
	if !strings.Contains(string(guide), "package main\n\nimport (\n"+imports+"\n)\n") {
		t.Errorf("docs/sdk.md's program does not import what sdk/denar/example_program_test.go imports")
	}
}

// TestCompanyClientScopes: every request of a client bound to a company
// carries its X-Company-Id, whatever the client's default; a list follows
// the cursors; a problem keeps the members its code adds.
func TestCompanyClientScopes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]string{}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery] = r.Header.Get("X-Company-Id")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/einvoices" && r.URL.Query().Get("cursor") == "":
			w.Write([]byte(`{"data":[{"id":"einv_1"}],"nextCursor":"c2"}`))
		case r.URL.Path == "/v1/einvoices":
			w.Write([]byte(`{"data":[{"id":"einv_2"}],"nextCursor":null}`))
		case r.URL.Path == "/v1/companies":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(409)
			w.Write([]byte(`{"type":"x","title":"t","status":409,"detail":"d","instance":"i","code":"company_exists","errors":[],"companyId":"cmp_9"}`))
		default:
			w.Write([]byte(`{"id":"x","status":"delivered"}`))
		}
	}))
	defer fake.Close()
	c, err := denar.NewEInvoice(fake.URL, denar.Options{APIKey: "dn_test_x", CompanyID: "cmp_default"})
	if err != nil {
		t.Fatal(err)
	}
	co := c.Company("cmp_bound")
	ctx := t.Context()
	var ids []string
	for e, err := range co.EInvoices(ctx, einvoiceapi.ListEInvoicesParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.Id)
	}
	if strings.Join(ids, ",") != "einv_1,einv_2" {
		t.Errorf("iterated %v", ids)
	}
	_, _ = co.EInvoice(ctx, "einv_1")
	_, _ = co.InboxDocument(ctx, "inbd_1")
	_, _ = co.StatusHistory(ctx, "einv_1")
	_, _ = c.Get(ctx, "", "einv_3") // no company bound: the client's default
	mu.Lock()
	for req, company := range seen {
		want := "cmp_bound"
		switch req {
		case "GET /v1/einvoices/einv_3?":
			want = "cmp_default"
		case "POST /v1/companies?":
			continue
		}
		if company != want {
			t.Errorf("%s sent X-Company-Id %q, want %q", req, company, want)
		}
	}
	mu.Unlock()

	_, err = c.CreateCompany(ctx, einvoiceapi.CreateCompanyBody{TaxNumber: "4030000000001",
		Representative: einvoiceapi.Representative{Name: "Ана", Email: "ana@example.mk"}})
	var p *denar.Problem
	ok := errors.As(err, &p)
	var id string
	if !ok || p.Code != denar.CodeCompanyExists || !p.Member("companyId", &id) || id != "cmp_9" {
		t.Errorf("problem %#v", err)
	}
}
