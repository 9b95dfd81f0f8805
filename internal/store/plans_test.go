package store_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestQueriesSeek asks SQLite's planner how it would run every generated
// query (internal/store/dbq) on the migrated schema, and fails on a query
// that reads a whole table (a SCAN of a table, with or without walking an
// index in order) unless testdata/full_scans.txt names it with the reason
// it may: a small table, an operator's listing, a periodic purge. A
// lookup that should seek and walks every row instead costs nothing on a
// test's few rows and grows with the data; at month-end on SQLite a
// hundred PDF reads, each walking every signing request for an index that
// was not there, held the one writer for most of a second.
//
// SQLite only: the planner without statistics plans the same on any data,
// where PostgreSQL's scans an empty table rather than use an index.
func TestQueriesSeek(t *testing.T) {
	t.Parallel()
	queries := generatedQueries(t)
	if len(queries) < 100 {
		t.Fatalf("read %d generated queries: the parse found nothing", len(queries))
	}
	allowed := allowedScans(t)
	db := storetest.SQLite(t).ReadDB()
	param := regexp.MustCompile(`\$(\d+)`)
	used := map[string]bool{}
	names := keys(queries)
	slices.Sort(names)
	for _, name := range names {
		q := queries[name]
		n := 0
		for _, m := range param.FindAllStringSubmatch(q, -1) {
			k, _ := strconv.Atoi(m[1])
			n = max(n, k)
		}
		rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, make([]any, n)...)
		if err != nil {
			if _, ok := allowed[name]; ok {
				used[name] = true
				continue
			}
			t.Errorf("%s: SQLite cannot plan it: %v", name, err)
			continue
		}
		var plan []string
		for rows.Next() {
			var id, parent, notUsed int
			var detail string
			if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		scans := fullScans(plan)
		if len(scans) == 0 {
			continue
		}
		if _, ok := allowed[name]; ok {
			used[name] = true
			continue
		}
		t.Errorf("%s reads a whole table (%s); add an index it can seek, or list it in testdata/full_scans.txt with the reason it may\nplan: %s",
			name, strings.Join(scans, "; "), strings.Join(plan, " | "))
	}
	for name := range allowed {
		if !used[name] {
			t.Errorf("testdata/full_scans.txt lists %s, which now seeks (or is gone): remove its line", name)
		}
	}
}

// fullScans are the steps of a plan that read a whole table: "SCAN x" of
// a table (its alias), not of a subquery SQLite materialized or ran as a
// co-routine, a constant row or a table-valued function such as
// json_each.
func fullScans(plan []string) []string {
	sub := map[string]bool{}
	for _, d := range plan {
		for _, p := range []string{"MATERIALIZE ", "CO-ROUTINE "} {
			if name, ok := strings.CutPrefix(d, p); ok {
				sub[name] = true
			}
		}
	}
	var out []string
	for _, d := range plan {
		rest, ok := strings.CutPrefix(d, "SCAN ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		if sub[name] || strings.HasPrefix(name, "(") || name == "CONSTANT" || strings.Contains(rest, "VIRTUAL TABLE") {
			continue
		}
		out = append(out, d)
	}
	return out
}

// generatedQueries reads the text of every query sqlc generated, by name,
// from the source of internal/store/dbq.
func generatedQueries(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("dbq", "*.sql.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if name, ok := storetest.QueryName(s); ok {
				out[name] = s
			}
			return true
		})
	}
	return out
}

// allowedScans reads testdata/full_scans.txt: "Name: reason" per line,
// # comments and blank lines aside. A line without a reason is an error.
func allowedScans(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "full_scans.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, ":")
		if strings.TrimSpace(reason) == "" {
			t.Errorf("testdata/full_scans.txt: %q gives no reason", line)
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(reason)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
