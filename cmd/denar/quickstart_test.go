package main

import (
	"bytes"
	"context"
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
// bash with -e, in a fresh directory that holds the module's sources (so
// `go build ./cmd/…` builds them there): payroll calculation, МПИН file and
// its checks (no issue at all),
// a sandbox company whose mandate link is taken from the log, the sandbox
// signer, an e-invoice watched until delivered. Only the default ports are
// replaced by free ones, so runs do not collide.
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
	for _, want := range []string{"denar serve", "/v1/calculations", "/v1/files/mpin/xml", "/v1/files/mpin/validate", "/v1/companies", "/mandates/",
		"denar-agent run --sandbox-self-signed", "/v1/einvoices", `"status":"delivered"`} {
		if !strings.Contains(script, want) {
			t.Fatalf("the quickstart's commands lack %q", want)
		}
	}
	pa, ea := freeAddr(t), freeAddr(t)
	script = strings.ReplaceAll(script, "127.0.0.1:8080", pa)
	script = strings.ReplaceAll(script, "127.0.0.1:8081", ea)

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

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-u", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(withoutDenarEnv(), "DENAR_PAYROLL_ADDR="+pa, "DENAR_EINVOICE_ADDR="+ea)
	// Its own process group, so the server and agent it starts in the
	// background die with it whatever happens.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil || t.Failed() {
		for _, f := range []string{"denar.log", "agent.out", "agent.log"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			t.Logf("%s:\n%s", f, tail(string(b), 4000))
		}
		t.Fatalf("the quickstart failed: %v\nstdout:\n%s\nstderr:\n%s", err, tail(stdout.String(), 4000), tail(stderr.String(), 4000))
	}
	out := stdout.String()
	// The МПИН example is clean: the checks find neither an error nor a
	// warning (a fund of hours other than the month's would be 105).
	for _, want := range []string{`"salaryNet":"20533"`, "<NetoIznosVk>20533</NetoIznosVk>", `{"ok":true,"issues":[]}`, `"to":"delivered"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the quickstart's output lacks %s:\n%s", want, out)
		}
	}
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
