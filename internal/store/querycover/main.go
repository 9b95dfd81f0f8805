// Command querycover names the generated queries (internal/store/dbq) that
// a run of the test suite did not run on both engines. Run the suite with
// DENAR_TEST_QUERY_LOG=DIR (storetest records each query a store of the
// suite ran, per engine), then:
//
//	go run ./internal/store/querycover DIR
//
// It exits 1 when a query ran on one engine only or on none, unless
// internal/store/querycover/gaps.txt lists it with the reason. A listed
// gap that is one no more is reported, so that its line is removed (not an
// error: a path only some runs take, a retry, may run in one run and not
// in the next). -write rewrites gaps.txt with the gaps found, keeping the
// reasons already written.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

var engines = []string{"sqlite", "postgres"}

func main() {
	write := flag.Bool("write", false, "rewrite gaps.txt with the gaps found")
	root := flag.String("root", ".", "the module's root directory")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: querycover [-write] [-root DIR] LOGDIR")
		os.Exit(2)
	}
	if err := run(*root, flag.Arg(0), *write); err != nil {
		fmt.Fprintln(os.Stderr, "querycover:", err)
		os.Exit(1)
	}
}

func run(root, logDir string, write bool) error {
	all, err := generated(filepath.Join(root, "internal/store/queries"))
	if err != nil {
		return err
	}
	ran, err := readLogs(logDir)
	if err != nil {
		return err
	}
	if len(ran) == 0 {
		return fmt.Errorf("no query recorded in %s: was the suite run with DENAR_TEST_QUERY_LOG=%s?", logDir, logDir)
	}
	gapsFile := filepath.Join(root, "internal/store/querycover/gaps.txt")
	known, err := readGaps(gapsFile)
	if err != nil {
		return err
	}
	var found []string
	for _, q := range all {
		for _, e := range engines {
			if !ran[e+" "+q] {
				found = append(found, e+" "+q)
			}
		}
	}
	fmt.Printf("querycover: %d generated queries, %d runs of one on one engine recorded, %d not run\n", len(all), len(ran), len(found))
	if write {
		return writeGaps(gapsFile, found, known)
	}
	var problems []string
	for _, g := range found {
		if _, ok := known[g]; !ok {
			problems = append(problems, "not run: "+g)
		}
	}
	var closed []string
	for g := range known {
		if !slices.Contains(found, g) {
			closed = append(closed, g)
		}
	}
	slices.Sort(closed)
	for _, g := range closed {
		fmt.Printf("querycover: listed in gaps.txt and run in this run (remove the line if it always is): %s\n", g)
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return nil
}

var nameRE = regexp.MustCompile(`(?m)^-- name: (\w+) `)

// generated lists the names of the queries sqlc generates.
func generated(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no query files in %s: %v", dir, err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range nameRE.FindAllStringSubmatch(string(b), -1) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out, nil
}

func readLogs(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "queries-*.txt"))
	if err != nil {
		return nil, err
	}
	ran := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(b)) {
			if l := strings.TrimSpace(line); l != "" {
				ran[l] = true
			}
		}
	}
	return ran, nil
}

// readGaps reads "engine Name: reason" lines; # starts a comment.
func readGaps(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, reason, _ := strings.Cut(line, ":")
		out[strings.TrimSpace(key)] = strings.TrimSpace(reason)
	}
	return out, sc.Err()
}

func writeGaps(path string, found []string, known map[string]string) error {
	var b strings.Builder
	b.WriteString("# Generated queries the test suite does not run on an engine, with why.\n")
	b.WriteString("# querycover fails on a gap not listed here, and reports a line that is no gap any more.\n")
	for _, g := range found {
		reason := known[g]
		if reason == "" {
			reason = "no test runs it on this engine yet"
		}
		fmt.Fprintf(&b, "%s: %s\n", g, reason)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
