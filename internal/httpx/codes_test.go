package httpx_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/httpx"
)

// repoRoot is the module root, two levels up from this package.
const repoRoot = "../.."

// docRow is a table row of docs/errors.md: | `code` | status | meaning |.
var docRow = regexp.MustCompile("^\\|\\s*`([a-z][a-z0-9_]*)`\\s*\\|\\s*([0-9]{3}|—)\\s*\\|")

// documentedCodes reads every code and its status out of docs/errors.md.
func documentedCodes(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			if prev, dup := out[m[1]]; dup && prev != m[2] {
				t.Errorf("docs/errors.md lists %s twice, with %s and %s", m[1], prev, m[2])
			}
			out[m[1]] = m[2]
		}
	}
	return out
}

// usedCode is a code the source hands to the error machinery, and where.
type usedCode struct {
	code, kind, pos string
}

// codeKinds says what kind of code each constructor takes.
const (
	kindProblem = httpx.InProblem
	kindItem    = httpx.InEInvoiceProblems
	kindInbox   = httpx.InInboxProblems
	kindCompany = httpx.InCompanyProblems
	kindRecon   = httpx.InReconciliationProblems
	kindOAuth   = httpx.InOAuth
)

// sourceCodes parses every non-test Go file of the module and returns the
// codes given as literals or constants to denar.Errorf, httpx.NewProblem
// and the Code of denar.Error, httpx.Problem, einvoicing's problems items
// and auth.OAuthError literals.
func sourceCodes(t *testing.T) []usedCode {
	t.Helper()
	fset := token.NewFileSet()
	type file struct {
		f   *ast.File
		dir string
	}
	var files []file
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "dbq") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, file{f, filepath.Dir(path)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// String constants by "dir|Name" (same package) and "pkg.Name".
	consts := map[string]string{}
	for _, fl := range files {
		for _, decl := range fl.f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						consts[fl.dir+"|"+name.Name] = v
						consts[fl.f.Name.Name+"."+name.Name] = v
					}
				}
			}
		}
	}
	var out []usedCode
	for _, fl := range files {
		pkg := fl.f.Name.Name
		value := func(e ast.Expr) (string, bool) {
			switch x := e.(type) {
			case *ast.BasicLit:
				if x.Kind == token.STRING {
					v, err := strconv.Unquote(x.Value)
					return v, err == nil
				}
			case *ast.Ident:
				v, ok := consts[fl.dir+"|"+x.Name]
				return v, ok
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					v, ok := consts[id.Name+"."+x.Sel.Name]
					return v, ok
				}
			}
			return "", false // computed (UJP's codes, sentinel errors): not ours to list
		}
		// name returns the package qualifier (or this package) and the
		// name of a function or type expression.
		name := func(e ast.Expr) (string, string) {
			switch x := e.(type) {
			case *ast.Ident:
				return pkg, x.Name
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					return id.Name, x.Sel.Name
				}
			case *ast.StarExpr:
				return "", ""
			}
			return "", ""
		}
		add := func(e ast.Expr, kind string) {
			if v, ok := value(e); ok {
				out = append(out, usedCode{v, kind, fset.Position(e.Pos()).String()})
			}
		}
		kindOf := func(typ ast.Expr) string {
			q, n := name(typ)
			switch {
			case q == "denar" && n == "Error", q == "httpx" && n == "Problem":
				return kindProblem
			case q == "einvoicing" && n == "ProblemItem":
				return kindItem
			case q == "inbox" && n == "inboxProblem":
				return kindInbox
			case q == "einvoicing" && n == "CompanyProblem":
				return kindCompany
			case (q == "einvoicing" || q == "reconcile") && n == "ReconciliationProblem":
				return kindRecon
			case q == "auth" && n == "OAuthError":
				return kindOAuth
			}
			return ""
		}
		scan := func(lit *ast.CompositeLit, kind string) {
			for i, el := range lit.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Code" {
						add(kv.Value, kind)
					}
				} else if i == 0 && kind == kindOAuth {
					add(el, kind)
				}
			}
		}
		ast.Inspect(fl.f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				q, fn := name(x.Fun)
				if len(x.Args) > 0 && ((q == "denar" && fn == "Errorf") || (q == "httpx" && fn == "NewProblem")) {
					add(x.Args[0], kindProblem)
				}
			case *ast.CompositeLit:
				if at, ok := x.Type.(*ast.ArrayType); ok {
					// []ProblemItem{{Code: …}}: the elements' type is
					// the slice's.
					if kind := kindOf(at.Elt); kind != "" {
						for _, el := range x.Elts {
							if inner, ok := el.(*ast.CompositeLit); ok && inner.Type == nil {
								scan(inner, kind)
							}
						}
					}
					return true
				}
				if kind := kindOf(x.Type); kind != "" {
					scan(x, kind)
				}
			}
			return true
		})
	}
	return out
}

// TestCodesDocumented: every code in httpx.Codes is in docs/errors.md with
// the same status and the reverse; every code the source hands to the error
// machinery is in httpx.Codes where it belongs; there is no bare
// "conflict".
func TestCodesDocumented(t *testing.T) {
	t.Parallel()
	docs := documentedCodes(t)
	table := map[string]httpx.Code{}
	for _, c := range httpx.Codes() {
		if _, dup := table[c.Code]; dup {
			t.Errorf("%s is twice in httpx.Codes", c.Code)
		}
		table[c.Code] = c
		want := "—"
		if c.Status != 0 {
			want = strconv.Itoa(c.Status)
		}
		got, ok := docs[c.Code]
		switch {
		case !ok:
			t.Errorf("%s (%s) is not in docs/errors.md", c.Code, want)
		case got != want:
			t.Errorf("docs/errors.md gives %s status %s, httpx.Codes %s", c.Code, got, want)
		}
		if c.Meaning == "" || c.Title == "" {
			t.Errorf("%s has no title or meaning", c.Code)
		}
		if c.In == httpx.InProblem && httpx.StatusFor(c.Code) != c.Status {
			t.Errorf("StatusFor(%s) = %d, want %d", c.Code, httpx.StatusFor(c.Code), c.Status)
		}
	}
	for code := range docs {
		if _, ok := table[code]; !ok {
			t.Errorf("docs/errors.md lists %s, which httpx.Codes does not know (docs describe only what exists)", code)
		}
	}

	used := sourceCodes(t)
	seen := map[string]bool{}
	for _, u := range used {
		seen[u.code] = true
		if u.code == "conflict" {
			t.Errorf("%s: a bare conflict code; name what conflicts", u.pos)
			continue
		}
		c, ok := table[u.code]
		switch {
		case !ok:
			t.Errorf("%s: code %q is in neither httpx.Codes nor docs/errors.md", u.pos, u.code)
		case c.In != u.kind:
			t.Errorf("%s: code %q is used as a %s code but listed as %s", u.pos, u.code, u.kind, c.In)
		}
	}
	// The scan must see the codes it is meant to guard (no vacuous pass).
	var missing []string
	for _, want := range []string{"company_exists", "einvoice_state_conflict", "pairing_code_invalid", "signature_refused",
		"hold_window_exceeded", "invalid_client", "mpin_validation_failed", "validation_failed", "unauthenticated",
		"decision_deadline_passed", "inbox_state_conflict", "decided_elsewhere", "payload_unreadable", "ujp_missing", "status_conflict",
		"einvoice_external"} {
		if !seen[want] {
			missing = append(missing, want)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the source scan did not find %v", missing)
	}
}
