package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
)

// Functions whose format argument becomes a denar.FieldError's format:
// the two recorders of denar.FieldErrors, and the rule checker of ujpdoc,
// whose problems einvoice.Build turns into field errors with
// einvoice.UJPCodeSuffix added.
const (
	fnAdd         = "(*github.com/denar-mk/denar.FieldErrors).Add"
	fnAddCodebook = "(*github.com/denar-mk/denar.FieldErrors).AddCodebook"
	fnUJPCheck    = "(*github.com/denar-mk/denar/einvoice/ujpdoc.checker).add"
	modulePrefix  = "github.com/denar-mk/denar"
)

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
}

// fieldFormats type-checks the non-test code of every package of this
// module the dashboard depends on and returns the formats of the field
// errors it can make: the constant format of every call of
// FieldErrors.Add and AddCodebook, every ujpdoc rule's format with
// einvoice.UJPCodeSuffix, and the constant Message of every FieldError
// literal (whose Message is its own key), each with where it is.
func fieldFormats(t *testing.T) map[string]string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the dashboard's packages: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", "-export", "-json=ImportPath,Dir,GoFiles,Export,Standard", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	var own []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if !p.Standard && strings.HasPrefix(p.ImportPath, modulePrefix) {
			own = append(own, p)
		}
	}
	if len(own) < 5 {
		t.Fatalf("found only %d packages of the module; is go list right?", len(own))
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	formats := map[string]string{}
	var ujpFormats []string
	var suffixed []string // where a checker format gets einvoice.UJPCodeSuffix
	calls := 0
	for _, p := range own {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		constString := func(e ast.Expr) (string, bool) {
			tv := info.Types[e]
			if tv.Value == nil || tv.Value.Kind() != constant.String {
				return "", false
			}
			return constant.StringVal(tv.Value), true
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					tv := info.Types[n]
					if named, ok := tv.Type.(*types.Named); !ok || named.Obj().Pkg() == nil ||
						named.Obj().Pkg().Path() != modulePrefix || named.Obj().Name() != "FieldError" {
						return true
					}
					for _, el := range n.Elts {
						kv, ok := el.(*ast.KeyValueExpr)
						if id, isID := kv.Key.(*ast.Ident); ok && isID && id.Name == "Message" {
							if s, ok := constString(kv.Value); ok {
								formats[s] = fset.Position(n.Pos()).String()
							}
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					fn, ok := info.Uses[sel.Sel].(*types.Func)
					if !ok {
						return true
					}
					name := fn.FullName()
					if name != fnAdd && name != fnAddCodebook && name != fnUJPCheck {
						return true
					}
					calls++
					sig := fn.Type().(*types.Signature)
					at := -1
					for i := range sig.Params().Len() {
						if sig.Params().At(i).Name() == "format" {
							at = i
						}
					}
					if at < 0 || at >= len(n.Args) {
						t.Fatalf("%s: %s has no format argument", fset.Position(n.Pos()), name)
					}
					pos := fset.Position(n.Pos()).String()
					s, ok := constString(n.Args[at])
					switch {
					case ok && name == fnUJPCheck:
						ujpFormats = append(ujpFormats, s)
					case ok:
						formats[s] = pos
					default:
						// The one non-constant format allowed: a ujpdoc
						// rule's format with einvoice.UJPCodeSuffix.
						suffix, c := "", false
						if bin, isBin := n.Args[at].(*ast.BinaryExpr); isBin {
							suffix, c = constString(bin.Y)
						}
						if !c || suffix != einvoice.UJPCodeSuffix {
							t.Errorf("%s: the format of %s is not a constant; the dashboard cannot translate it", pos, name)
						} else {
							suffixed = append(suffixed, pos)
						}
					}
				}
				return true
			})
		}
	}
	if calls < 50 || len(ujpFormats) < 10 || len(suffixed) == 0 {
		t.Fatalf("found %d calls, %d ujpdoc rules and %d suffixed uses; is the walk right?", calls, len(ujpFormats), len(suffixed))
	}
	for _, f := range ujpFormats {
		formats[f+einvoice.UJPCodeSuffix] = "ujpdoc rule via " + suffixed[0]
	}
	return formats
}

// verbs are the formatting verbs of a format, in order (%% is none).
var verbRE = regexp.MustCompile(`%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

func verbs(format string) []string {
	var out []string
	for _, v := range verbRE.FindAllString(format, -1) {
		if v != "%%" {
			out = append(out, v)
		}
	}
	return out
}

// wordless reports whether a format has nothing to translate ("%s").
func wordless(format string) bool {
	return strings.IndexFunc(verbRE.ReplaceAllString(format, ""), func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	}) < 0
}

// TestFieldErrorFormatsTranslated fails when a field error the dashboard
// can show has no Macedonian wording, or when a wording has other verbs
// than its format (the arguments would not fit), or when the catalogue
// keeps a wording no code uses any more.
func TestFieldErrorFormatsTranslated(t *testing.T) {
	t.Parallel()
	formats := fieldFormats(t)
	mk := fieldMessagesMK()
	var keys []string
	for f := range formats {
		keys = append(keys, f)
	}
	slices.Sort(keys)
	for _, f := range keys {
		if wordless(f) {
			continue
		}
		tr, ok := mk[f]
		if !ok {
			t.Errorf("no Macedonian for %q (%s)", f, formats[f])
			continue
		}
		if !slices.Equal(verbs(f), verbs(tr)) {
			t.Errorf("%q: the Macedonian %q has verbs %v, the format %v", f, tr, verbs(tr), verbs(f))
		}
	}
	for f := range mk {
		if _, ok := formats[f]; !ok {
			t.Errorf("the Macedonian of %q is used by no field error", f)
		}
	}
}

func TestFieldMessage(t *testing.T) {
	t.Parallel()
	var fe denar.FieldErrors
	fe.Add("lines[0].quantity", "must not be empty or only white space")
	fe.Add("lines[0].description", "is longer than %d characters", 400)
	fe.Add("x", "no such format anywhere %d", 3)
	lit := denar.FieldError{Path: "inputs", Message: "is required"}
	mk := fieldMessagesMK()
	for _, tt := range []struct {
		f          denar.FieldError
		lang, want string
	}{
		{fe[0], "mk", "не смее да биде празно или само празни места"},
		{fe[0], "en", "must not be empty or only white space"},
		{fe[1], "mk", "е подолг од 400 знаци"},
		{fe[1], "en", "is longer than 400 characters"},
		{fe[2], "mk", "no such format anywhere 3"},
		{lit, "mk", "е задолжително"},
		{lit, "en", "is required"},
	} {
		if got := fieldMessage(mk, tt.lang, tt.f); got != tt.want {
			t.Errorf("%s %q: got %q, want %q", tt.lang, tt.f.Message, got, tt.want)
		}
	}
}
