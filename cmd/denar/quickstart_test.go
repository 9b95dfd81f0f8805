package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// quickstartScript is the shell of docs/quickstart.md: its ```sh blocks in
// order, each as written.
func quickstartScript(t *testing.T, page []byte) string {
	t.Helper()
	blocks := regexp.MustCompile("(?ms)^```sh\n(.*?)^```\n").FindAllSubmatch(page, -1)
	if len(blocks) < 5 {
		t.Fatalf("docs/quickstart.md has %d sh blocks", len(blocks))
	}
	var b strings.Builder
	for _, m := range blocks {
		b.Write(m[1])
		b.WriteString("\n")
	}
	return b.String()
}

// TestQuickstart runs the commands of docs/quickstart.md as written, in one
// bash with -e and -u, in a directory that holds the module's sources (so
// `go build ./cmd/…` builds them there): payroll calculation, МПИН file and
// its checks (no issue at all), two sandbox companies whose mandates are
// accepted through the sandbox's mandate-link endpoint, the sandbox signer,
// an e-invoice watched until delivered with X-Company-Id (the key reaches
// both companies, and a read without it is company_required), the buyer
// simulated. Then again in the same directory, where ./denar-data exists
// (no banner: keys from `denar admin key create`, the companies onboarded
// already), and block 1 once more with the payroll port taken, which must
// fail at once saying so. Each run gets free ports through
// DENAR_PAYROLL_ADDR and DENAR_EINVOICE_ADDR, the settings the page tells
// a reader to change.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("DENAR_TEST_REQUIRE_CURL") == "1" {
			t.Fatal("curl is required (DENAR_TEST_REQUIRE_CURL=1) but not installed: apt-get install curl")
		}
		t.Skip("SKIPPING the quickstart: curl is not installed (apt-get install curl); set DENAR_TEST_REQUIRE_CURL=1 to fail instead")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "quickstart.md"))
	if err != nil {
		t.Fatal(err)
	}
	script := quickstartScript(t, page)
	for _, want := range []string{"denar serve", "/v1/calculations", "/v1/files/mpin/xml", "/v1/files/mpin/validate", "/v1/companies",
		"/mandate-link", "denar admin key create", "denar-agent run --sandbox-self-signed", "/v1/einvoices", `"status":"delivered"`,
		"X-Company-Id", "--fail-with-body", "/simulate"} {
		if !strings.Contains(script, want) {
			t.Fatalf("the quickstart's commands lack %q", want)
		}
	}
	// The waits are bounded: no `until` loop, every loop a `seq`.
	if strings.Contains(script, "until ") || strings.Count(script, "for i in $(seq ") < 3 {
		t.Fatalf("the quickstart's waits must be bounded loops (for i in $(seq N)), not until loops")
	}

	// A fresh directory standing for the clone: the module's top-level
	// entries linked in, nothing else (no bin/, no denar-data/).
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "bin", "denar-data", ".git":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}

	for _, run := range []string{"a fresh directory", "./denar-data already there"} {
		out, err := runQuickstart(t, dir, script, freeAddr(t), freeAddr(t))
		if err != nil {
			t.Fatalf("the quickstart failed in %s: %v\n%s", run, err, out)
		}
		// The МПИН example is clean: the checks find neither an error nor
		// a warning (a fund of hours other than the month's would be 105).
		for _, want := range []string{`"salaryNet":"20533"`, "<NetoIznosVk>20533</NetoIznosVk>", `{"ok":true,"issues":[]}`, `"to":"delivered"`,
			`"code":"company_required"`, `"object":"sandbox_simulation","action":"buyer_accepts"`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the quickstart's output lacks %s:\n%s", run, want, out)
			}
		}
		banner, _ := os.ReadFile(filepath.Join(dir, "denar.out"))
		if fresh := run == "a fresh directory"; fresh != strings.Contains(string(banner), "API key (sandbox)") {
			t.Errorf("%s: the banner was printed: %v, want %v:\n%s", run, !fresh, fresh, banner)
		}
	}

	// A port in use: block 1 stops at once and says which.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	blocks := regexp.MustCompile("(?ms)^```sh\n(.*?)^```\n").FindAllSubmatch(page, -1)
	start := time.Now()
	out, err := runQuickstart(t, dir, string(blocks[0][1]), ln.Addr().String(), freeAddr(t))
	if err == nil || !strings.Contains(out, "address already in use") {
		t.Errorf("block 1 with the payroll port taken: %v, want a failure naming the port in use:\n%s", err, out)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("block 1 with the payroll port taken took %v to give up", d)
	}
}

// runQuickstart runs script in dir with the two services on the given
// addresses, and returns its output (with the logs' tails when it fails).
func runQuickstart(t *testing.T, dir, script, payrollAddr, einvoiceAddr string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-u", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(withoutDenarEnv(), "DENAR_PAYROLL_ADDR="+payrollAddr, "DENAR_EINVOICE_ADDR="+einvoiceAddr)
	// Its own process group, so the server and agent it starts in the
	// background die with it whatever happens.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	out := stdout.String() + stderr.String()
	if err != nil {
		var logs strings.Builder
		for _, f := range []string{"denar.log", "agent.out", "agent.log"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			fmt.Fprintf(&logs, "%s:\n%s\n", f, tail(string(b), 4000))
		}
		return fmt.Sprintf("stdout:\n%s\nstderr:\n%s\n%s", tail(stdout.String(), 4000), tail(stderr.String(), 4000), logs.String()), err
	}
	return out, nil
}

// TestReadmeLinksEveryDoc keeps the README's documentation table complete.
func TestReadmeLinksEveryDoc(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs: %v %v", docs, err)
	}
	for _, d := range docs {
		if link := "](docs/" + filepath.Base(d) + ")"; !bytes.Contains(readme, []byte(link)) {
			t.Errorf("README.md does not link docs/%s", filepath.Base(d))
		}
	}
}
