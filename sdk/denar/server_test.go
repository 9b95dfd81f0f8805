package denar_test

import (
	"bufio"
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

	"github.com/denar-mk/denar/sdk/denar"
	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
)

// The server every test and example of this package talks to: the real
// denar binary, built from this module and started on loopback with an
// embedded SQLite store, in TestMain. Set once there, read afterwards.
var srv struct {
	dir                     string
	payrollURL, einvoiceURL string
	payrollKey, einvoiceKey string
	log                     string // the server's stderr
	company                 string // 4030000000001, active, with a sandbox signer
}

func TestMain(m *testing.M) {
	code, err := runWithServer(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdk/denar tests:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func runWithServer(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "denar-sdk-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	srv.dir = dir
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/denar", "./cmd/denar-agent")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build: %v\n%s", err, out)
	}
	pa, ea := freeAddr(), freeAddr()
	srv.payrollURL, srv.einvoiceURL = "http://"+pa, "http://"+ea
	srv.log = filepath.Join(dir, "denar.log")
	stdout, _ := os.Create(filepath.Join(dir, "denar.out"))
	stderr, _ := os.Create(srv.log)
	serve := exec.Command(filepath.Join(dir, "denar"), "serve")
	// Webhook endpoints on loopback, as a developer's own machine needs
	// (ExampleEInvoice_CreateWebhookEndpoint, Example).
	serve.Env = append(cleanEnv(), "DENAR_PAYROLL_ADDR="+pa, "DENAR_EINVOICE_ADDR="+ea, "DENAR_DATA_DIR="+filepath.Join(dir, "data"),
		"DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX=true")
	serve.Stdout, serve.Stderr = stdout, stderr
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := serve.Start(); err != nil {
		return 0, err
	}
	defer func() {
		_ = syscall.Kill(-serve.Process.Pid, syscall.SIGTERM)
		_ = serve.Wait()
	}()
	if err := waitFor(srv.log, regexp.MustCompile(`denar serving`), 60*time.Second); err != nil {
		return 0, err
	}
	out, _ := os.ReadFile(filepath.Join(dir, "denar.out"))
	srv.payrollKey = field(out, "payroll API key (sandbox):")
	srv.einvoiceKey = field(out, "e-invoicing API key (sandbox):")
	if srv.payrollKey == "" || srv.einvoiceKey == "" {
		return 0, fmt.Errorf("no API keys in the banner: %s", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id, agent, err := onboard(ctx, "4030000000001")
	if err != nil {
		return 0, err
	}
	defer func() {
		_ = syscall.Kill(-agent.Process.Pid, syscall.SIGTERM)
		_ = agent.Wait()
	}()
	srv.company = id
	// The complete program of docs/sdk.md (Example) reads its server and
	// key from the environment, as a program of a caller does.
	os.Setenv("DENAR_EINVOICE_URL", srv.einvoiceURL)
	os.Setenv("DENAR_API_KEY", srv.einvoiceKey)
	return m.Run(), nil
}

// onboard creates a sandbox company through the SDK, accepts its mandate
// as its representative would (EInvoice.AcceptSandboxMandate), and starts
// a sandbox signer for it.
func onboard(ctx context.Context, taxNumber string) (string, *exec.Cmd, error) {
	c, err := denar.NewEInvoice(srv.einvoiceURL, denar.Options{APIKey: srv.einvoiceKey})
	if err != nil {
		return "", nil, err
	}
	co, err := c.CreateCompany(ctx, einvoiceapi.CreateCompanyBody{TaxNumber: taxNumber,
		Representative: einvoiceapi.Representative{Name: "Марија Николовска", Email: "marija@example.mk"}})
	if err != nil {
		return "", nil, err
	}
	if err := c.AcceptSandboxMandate(ctx, co.Id); err != nil {
		return "", nil, fmt.Errorf("mandate: %w", err)
	}
	agentOut := filepath.Join(srv.dir, "agent-"+co.Id+".out")
	f, _ := os.Create(agentOut)
	agent := exec.Command(filepath.Join(srv.dir, "denar-agent"), "run", "--sandbox-self-signed", "--server", srv.einvoiceURL, "--company", co.Id)
	agent.Env = append(cleanEnv(), "DENAR_API_KEY="+srv.einvoiceKey)
	agent.Stdout, agent.Stderr = f, f
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := agent.Start(); err != nil {
		return "", nil, err
	}
	if err := waitFor(agentOut, regexp.MustCompile(`registered for`), 30*time.Second); err != nil {
		_ = syscall.Kill(-agent.Process.Pid, syscall.SIGTERM)
		_ = agent.Wait()
		return "", nil, err
	}
	return co.Id, agent, nil
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DENAR_") {
			env = append(env, kv)
		}
	}
	return env
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitFor waits until the file holds a match of re.
func waitFor(path string, re *regexp.Regexp, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		b, _ := os.ReadFile(path)
		if re.Match(b) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no %q within %s:\n%s", path, re, limit, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// field is the rest of the banner line that starts with label.
func field(out []byte, label string) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, label); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
