package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/payroll"
)

// workLog matches what belongs to the project's own history, not to a guide
// for the people who call the API: issue numbers, the payroll rule labels of
// the specification (R1…R12), citations of the research notes, and the
// wording of a progress report.
var workLog = []struct {
	re   *regexp.Regexp
	hint string
}{
	{regexp.MustCompile(`(?i)\bissues? #?[0-9]+`), "an issue number (an МПИН check is \"check 66\", not \"issue 66\")"},
	{regexp.MustCompile(`\bR(1[0-2]|[1-9])\b`), "a rule label of the specification: name the rule in words"},
	{regexp.MustCompile(`(?i)research(/[a-z_-]+\.md)? ?§|research notes?\b`), "a citation of the research notes: cite the source itself, or move the reasoning to docs/decisions.md"},
	{regexp.MustCompile(`(?i)state of the work|^#+ *not done|work in progress`), "work-log wording"},
}

// TestDocsForCallers keeps the user documentation (README.md and every
// docs/*.md but docs/decisions.md, the record of design reasoning) free of
// work-log references: a caller reading a guide cannot look up "issue 11"
// or "R5", and a heading "(issues 7 and 11) — state of the work" tells them
// nothing about the API.
func TestDocsForCallers(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("docs: %v %v", files, err)
	}
	files = append(files, "../../README.md")
	checked := 0
	for _, f := range files {
		if filepath.Base(f) == "decisions.md" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		name := strings.TrimPrefix(f, "../../")
		for i, line := range strings.Split(string(b), "\n") {
			for _, w := range workLog {
				if m := w.re.FindString(line); m != "" {
					t.Errorf("%s:%d: %q is %s: %s", name, i+1, m, w.hint, strings.TrimSpace(line))
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d documents", checked)
	}
}

// TestDocsWorkLogPatterns shows that each pattern catches what it is for
// and lets through what a guide legitimately says.
func TestDocsWorkLogPatterns(t *testing.T) {
	t.Parallel()
	hits := func(line string) bool {
		for _, w := range workLog {
			if w.re.MatchString(line) {
				return true
			}
		}
		return false
	}
	for _, line := range []string{
		"# E-invoices (issues 7 and 11) — state of the work",
		"### Validation (issue 11)",
		"see Issue #16",
		"## R5, the reference case",
		"Statutory tables (R1, R2, R3, R6)",
		"the fund, 176 (R12's figure)",
		"The layout UJP accepted in 2026 (research §4.2)",
		"no Official Gazette number found (research/payroll.md §1, §7.1)",
		"## Not done",
	} {
		if !hits(line) {
			t.Errorf("not caught: %q", line)
		}
	}
	for _, line := range []string{
		"МПИН check 66: municipality not in UJP's list",
		"the blocking issue `edb_invalid`",
		`{"ok":true,"issues":[]}`,
		"RS256, RFC 6749 §5.2, filing-formats.md §6",
		"a key reaching two companies: X-Company-Id",
		"E1016, O-2, C01, P12, DDV-A, 4030000000010",
	} {
		if hits(line) {
			t.Errorf("caught, but fine in a guide: %q", line)
		}
	}
}

// workLogIn reports every work-log reference in text, one per line.
func workLogIn(text string) []string {
	var found []string
	for i, line := range strings.Split(text, "\n") {
		for _, w := range workLog {
			if m := w.re.FindString(line); m != "" {
				found = append(found, fmt.Sprintf("line %d: %q is %s", i+1, m, w.hint))
			}
		}
	}
	return found
}

// TestExplainForCallers: the explanation of a calculation
// (?explain=true) is read by payroll accountants; its formulas and the
// sources of its figures name rules and laws, never the project's rule
// labels or research notes. Inputs over every table period (2019's bases,
// the July 2026 rates, the provisional 2027 figures), a contractor and a
// net-first calculation, so every source a line can cite is shown.
func TestExplainForCallers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, body := range []string{
		`{"grossSalary":"30000","effectiveDate":"2019-06-15"}`,
		`{"grossSalary":"80000","effectiveDate":"2019-06-15"}`,
		`{"grossSalary":"1200000","effectiveDate":"2025-06-15"}`,
		`{"grossSalary":"30000","effectiveDate":"2026-11-22","nightHours":16,"overtimeHours":10,"seniority":{"months":125},"bonusAmount":"5000"}`,
		`{"grossSalary":"30000","absentHours":88,"effectiveDate":"2026-11-22"}`,
		`{"grossSalary":"11111","contractor":true,"effectiveDate":"2026-11-22"}`,
		`{"targetNet":"50000","effectiveDate":"2026-11-22"}`,
		`{"grossSalary":"30000","effectiveDate":"2027-01-20"}`,
	} {
		in, err := payroll.DecodeInput([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		r, err := payroll.CalculateExplained(in, now)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		out := string(r.AppendJSON(nil))
		if !strings.Contains(out, `"explain"`) {
			t.Fatalf("%s: no explanation", body)
		}
		for _, f := range workLogIn(strings.ReplaceAll(out, `},{`, "},\n{")) {
			t.Errorf("the explanation of %s: %s", body, f)
		}
	}
}

// TestOpenAPIForCallers: the API reference (the /docs pages, the SDK's
// comments) is user documentation too.
func TestOpenAPIForCallers(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../api/*.openapi.json")
	if err != nil || len(files) < 2 {
		t.Fatalf("api: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, found := range workLogIn(string(b)) {
			t.Errorf("%s: %s", strings.TrimPrefix(f, "../../"), found)
		}
	}
}
