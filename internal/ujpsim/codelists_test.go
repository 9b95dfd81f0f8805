package ujpsim

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// refLines reads a reference text of testdata/reference (verbatim copies
// of UJP's wiki pages); lines[n] is line n (1-based), as cited.
func refLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/reference/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{""}, strings.Split(string(b), "\n")...)
}

// cell is a table cell of the wiki's text: the line without its " |".
func cell(s string) string {
	s = strings.TrimSuffix(s, "|")
	return strings.TrimSpace(s)
}

// codePairs reads a codebook table of (code, name) lines from..to.
func codePairs(t *testing.T, lines []string, from, to int) [][2]string {
	t.Helper()
	if (to-from+1)%2 != 0 {
		t.Fatalf("lines %d-%d are not pairs", from, to)
	}
	var out [][2]string
	for n := from; n < to; n += 2 {
		out = append(out, [2]string{cell(lines[n]), cell(lines[n+1])})
	}
	return out
}

// taxRecord is a row of tax-indicators.txt's table (lines 10-478): code,
// name, note, description and the tax groups with their rates.
type taxRecord struct {
	line                   int
	code, name, note, desc string
	groups                 []string
	rates                  map[string]string
}

var rateRE = regexp.MustCompile(`(DDV-[A-Z]) \(Даночна стапка:? (\d+)%?\)`)

func taxTable(t *testing.T, lines []string) []taxRecord {
	t.Helper()
	var out []taxRecord
	n := 10 // the header is lines 5-9
	for n <= 478 {
		if !strings.HasSuffix(lines[n], " |") {
			t.Fatalf("tax-indicators.txt:%d: want a code cell, got %q", n, lines[n])
		}
		r := taxRecord{line: n, code: cell(lines[n]), name: cell(lines[n+1]), note: cell(lines[n+2]), rates: map[string]string{}}
		end := n + 3
		for !strings.Contains(lines[end], "(Даночна стапка") {
			end++
		}
		r.desc = cell(strings.Join(lines[n+3:end], "\n"))
		for _, m := range rateRE.FindAllStringSubmatch(lines[end], -1) {
			r.groups = append(r.groups, m[1])
			r.rates[m[1]] = m[2]
		}
		if len(r.groups) == 0 {
			t.Fatalf("tax-indicators.txt:%d: no rate in %q", end, lines[end])
		}
		out = append(out, r)
		n = end + 1
	}
	return out
}

// TestCodeListsFollowTheReference checks the simulator's code lists
// (codelists/*.json) against every machine-readable part of the reference
// texts they were written from (codelists/SOURCES.md says which list comes
// from which lines, and what is kept from elsewhere).
func TestCodeListsFollowTheReference(t *testing.T) {
	t.Parallel()
	cl := testLists(t)
	ti := refLines(t, "tax-indicators.txt")
	cb := refLines(t, "sifrarnici-field-codebook.txt")
	st := refLines(t, "statuses.txt")
	api := refLines(t, "api-specification.txt")

	t.Run("tax indicators and their groups", func(t *testing.T) {
		table := taxTable(t, ti)
		if len(table) != 90 {
			t.Fatalf("tax-indicators.txt's table has %d rows, want 90", len(table))
		}
		seen := map[string]int{}
		for _, r := range table {
			if first, dup := seen[r.code]; dup {
				// tax-indicators.txt:335 repeats the code of :305 for
				// article 14(6); one code has one meaning: the first.
				if r.code != "DDV-10-14-4-6" || first != 305 {
					t.Errorf("tax-indicators.txt:%d repeats %s of line %d", r.line, r.code, first)
				}
				continue
			}
			seen[r.code] = r.line
			entries := cl.indicator(r.code)
			var groups []string
			for _, e := range entries {
				groups = append(groups, e.TaxGroupCode)
				if e.CategoryName != r.name || e.Note != r.note || e.CategoryDesc != r.desc || e.CategoryCode != r.code {
					t.Errorf("tax-indicators.txt:%d %s: the served entry %+v differs from name %q, note %q, description %q", r.line, r.code, e, r.name, r.note, r.desc)
				}
			}
			if strings.Join(groups, ",") != strings.Join(r.groups, ",") {
				t.Errorf("tax-indicators.txt:%d %s: served with groups %v, the reference has %v", r.line, r.code, groups, r.groups)
			}
			for g, rate := range r.rates {
				if _, p, ok := cl.taxGroup(g); !ok || p.String() != rate {
					t.Errorf("tax-indicators.txt:%d %s: group %s is %s%% in tax-groups.json (%t), the reference says %s%%", r.line, r.code, g, p, ok, rate)
				}
			}
		}
		// The common indicators (tax-indicators.txt:518-578): name,
		// description and note as printed; indicators also in the table
		// follow the table.
		common := regexp.MustCompile(`^¶ Код на даночен индикатор: (.+)$`)
		for n := 518; n <= 578; n++ {
			m := common.FindStringSubmatch(ti[n])
			if m == nil || seen[m[1]] != 0 {
				continue
			}
			code := m[1]
			seen[code] = n
			name := strings.TrimPrefix(ti[n+1], "Назив на даночен индикатор: ")
			desc := strings.TrimPrefix(ti[n+2], "Опис на даночен индикатор: ")
			note := strings.TrimPrefix(ti[n+3], "Напомена: ")
			entries := cl.indicator(code)
			if len(entries) != 1 {
				t.Errorf("tax-indicators.txt:%d %s: %d entries served, want 1", n, code, len(entries))
			}
			for _, e := range entries {
				if e.CategoryName != name || strings.TrimSpace(e.CategoryDesc) != strings.TrimSpace(desc) || e.Note != note {
					t.Errorf("tax-indicators.txt:%d %s: served %q / %q / %q", n, code, e.CategoryName, e.CategoryDesc, e.Note)
				}
			}
		}
		for _, e := range cl.TaxIndicators {
			if seen[e.Code] == 0 {
				t.Errorf("%s is served and is nowhere in tax-indicators.txt", e.Code)
			}
		}
		if n := len(seen); n != 96 {
			t.Errorf("%d indicator codes in the reference, want 96", n)
		}
	})

	t.Run("tax groups", func(t *testing.T) {
		// DDV-A as api-specification.txt:617-623 prints it; the rates of
		// the others are checked with the indicators above.
		field := func(n int, name string) string {
			m := regexp.MustCompile(`"` + name + `": "?([^",]+)"?,`).FindStringSubmatch(api[n])
			if m == nil {
				t.Fatalf("api-specification.txt:%d has no %s: %q", n, name, api[n])
			}
			return m[1]
		}
		g, p, ok := cl.taxGroup(field(617, "code"))
		if !ok || g.Name != field(618, "name") || p.String() != field(619, "percent") || g.Description != field(620, "description") ||
			g.ValidDateFrom != field(622, "validDateFrom") {
			t.Errorf("DDV-A: %+v %s", g, p)
		}
		if len(cl.TaxGroups) != 4 {
			t.Errorf("%d tax groups, want DDV-A, DDV-B, DDV-V, DDV-G", len(cl.TaxGroups))
		}
	})

	t.Run("document statuses", func(t *testing.T) {
		// statuses.txt:5-28, code, name, description.
		var want []string
		for n := 5; n <= 28; n += 3 {
			want = append(want, cell(st[n])+"|"+cell(st[n+1])+"|"+cell(st[n+2]))
		}
		var got []string
		for _, s := range cl.Statuses {
			got = append(got, s.Code+"|"+s.Name+"|"+s.Description)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("statuses:\n%s\nwant (statuses.txt:5-28)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("currencies", func(t *testing.T) {
		// sifrarnici-field-codebook.txt:1244-1269 (UJP10-08/09): code and
		// name; /currency writes the code as name, the name as description
		// (api-specification.txt:133-147).
		want := codePairs(t, cb, 1244, 1269)
		if len(cl.Currencies) != len(want) {
			t.Fatalf("%d currencies, the codebook has %d", len(cl.Currencies), len(want))
		}
		for i, c := range cl.Currencies {
			if c.Code != want[i][0] || c.Name != c.Code || c.Description != want[i][1] {
				t.Errorf("currency %d: %+v, want %v", i, c, want[i])
			}
		}
	})

	t.Run("countries", func(t *testing.T) {
		// sifrarnici-field-codebook.txt:296-607 (UJP05-01/02, ISO 3166-1
		// alpha-2); 156 as api-specification.txt:209 counts them; tin as
		// the examples write it (api-specification.txt:196-203).
		want := codePairs(t, cb, 296, 607)
		if len(want) != 156 || !strings.Contains(api[209], "156") {
			t.Fatalf("the codebook lists %d countries; api-specification.txt:209 says %q", len(want), api[209])
		}
		if len(cl.Countries) != len(want) {
			t.Fatalf("%d countries served, want %d", len(cl.Countries), len(want))
		}
		for i, c := range cl.Countries {
			if c.Code != want[i][0] || c.Name != want[i][1] || c.Tin != c.Code+"001" {
				t.Errorf("country %d: %+v, want %v", i, c, want[i])
			}
		}
	})

	t.Run("reference document types", func(t *testing.T) {
		// sifrarnici-field-codebook.txt:44-69 (UJP02-01), SYS and JN
		// (api-specification.txt:578-591), NAR (api-specification.txt:59-60).
		want := codePairs(t, cb, 44, 69)
		want = append(want, [2]string{"SYS", "Од систем"}, [2]string{"JN", "Документ за јавна набавка"}, [2]string{"NAR", "Нарачка"})
		for _, l := range []string{api[578], api[579], api[590], api[591], api[59], api[60]} {
			if !strings.Contains(l, "SYS") && !strings.Contains(l, "Од систем") && !strings.Contains(l, "JN") &&
				!strings.Contains(l, "Документ за јавна набавка") && !strings.Contains(l, "NAR") && !strings.Contains(l, "Нарачка") {
				t.Fatalf("api-specification.txt moved: %q", l)
			}
		}
		for _, w := range want {
			if r, ok := cl.refType(w[0]); !ok || r.Name != w[1] {
				t.Errorf("%s: %+v (%t), want %q", w[0], r, ok, w[1])
			}
		}
		if len(cl.RefDocumentTypes) != len(want) {
			t.Errorf("%d reference document types served, the reference names %d", len(cl.RefDocumentTypes), len(want))
		}
	})

	t.Run("payment types", func(t *testing.T) {
		// The codebook's ten payment ways (sifrarnici-field-codebook.txt:
		// 1205-1224, PDF codes 1000-1090) in order onto the API's P10-P19;
		// P10, P11 (api-specification.txt:365-374) and P12
		// (api-specification.txt:67-68) confirm the first three.
		want := codePairs(t, cb, 1205, 1224)
		if len(cl.PaymentTypes) != len(want) {
			t.Fatalf("%d payment types, the codebook has %d", len(cl.PaymentTypes), len(want))
		}
		for i, p := range cl.PaymentTypes {
			if p.Code != fmt.Sprintf("P%d", 10+i) || p.Description != want[i][1] {
				t.Errorf("payment type %d: %+v, want P%d %q", i, p, 10+i, want[i][1])
			}
		}
		for _, c := range [][2]string{{"P10", "Плаќање во готово"}, {"P11", "Плаќање со картичка"}, {"P12", "Плаќање преку банка"}} {
			if !strings.Contains(strings.Join(api[60:380], "\n"), c[1]) {
				t.Errorf("api-specification.txt does not show %s %q", c[0], c[1])
			}
		}
	})

	// The lists api-specification.txt prints in full or in part, as JSON
	// examples: each printed entry is served as printed.
	apiText := strings.Join(api, "\n")
	for _, c := range []struct {
		name, field string
		served      func(code string) (string, bool)
		min         int
	}{
		{"void reasons (api-specification.txt:243-269)", "voidReason", func(c string) (string, bool) { r, ok := cl.voidReason(c); return r.VoidReason, ok }, 3},
		{"reject reasons (api-specification.txt:324-349)", "rejectReason", func(c string) (string, bool) { r, ok := cl.rejectReason(c); return r.RejectReason, ok }, 3},
		{"correction reasons (api-specification.txt:281-312)", "correctionReason", func(c string) (string, bool) {
			r, ok := cl.correctionReason(c)
			return r.CorrectionReason, ok
		}, 2},
		{"document types (api-specification.txt:426-441)", "name", func(c string) (string, bool) { d, ok := cl.docType(c); return d.Name, ok }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			re := regexp.MustCompile(`"code": "([^"]+)",[^\n]*\n"` + c.field + `": "([^"]+)"`)
			found := 0
			for _, m := range re.FindAllStringSubmatch(apiText, -1) {
				if c.field == "name" && m[1] != "100" {
					continue // other lists print a name too
				}
				found++
				if got, ok := c.served(m[1]); !ok || got != m[2] {
					t.Errorf("%s: served %q (%t), the example prints %q", m[1], got, ok, m[2])
				}
			}
			if found < c.min {
				t.Fatalf("found %d printed entries, want at least %d", found, c.min)
			}
		})
	}

	t.Run("purchase tax indicators", func(t *testing.T) {
		// tax-indicators.txt:483-517: code and name of each.
		code := regexp.MustCompile(`^(DDV-[0-9]+(-[A-Z])?) \|$`)
		var want [][2]string
		for n := 483; n <= 517; n++ {
			if m := code.FindStringSubmatch(ti[n]); m != nil {
				want = append(want, [2]string{m[1], cell(ti[n+1])})
			}
		}
		if len(want) != 9 || len(cl.PurchaseTax) != len(want) {
			t.Fatalf("%d purchase indicators in the reference, %d served", len(want), len(cl.PurchaseTax))
		}
		for i, p := range cl.PurchaseTax {
			if p.Code != want[i][0] || p.Name != want[i][1] {
				t.Errorf("purchase indicator %d: %s %q, want %v", i, p.Code, p.Name, want[i])
			}
		}
	})

	t.Run("document type x tax indicator", func(t *testing.T) {
		// The reference pairs no indicator with a type (docs/decisions.md):
		// every type, every indicator, under the type's own name.
		pairs := map[[2]string]bool{}
		for _, e := range cl.DocTypeTax {
			dt, ok := cl.docType(e.DocTypeCode)
			if !ok || e.DocTypeName != dt.Name || len(cl.indicator(e.TaxIndicatorCode)) == 0 {
				t.Errorf("entry %+v: unknown type or indicator, or another name", e)
			}
			pairs[[2]string{e.DocTypeCode, e.TaxIndicatorCode}] = true
		}
		codes := map[string]bool{}
		for _, ti := range cl.TaxIndicators {
			codes[ti.Code] = true
		}
		if len(pairs) != len(cl.DocumentTypes)*len(codes) || len(cl.DocTypeTax) != len(pairs) {
			t.Errorf("%d pairs in %d entries; want %d types × %d indicators", len(pairs), len(cl.DocTypeTax), len(cl.DocumentTypes), len(codes))
		}
	})
}
