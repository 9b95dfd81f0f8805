package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestAPIReferencePages opens /docs of both services of a running denar
// serve in headless Chromium and checks that the page, rendered from the
// service's own OpenAPI document by the embedded Redoc bundle, shows every
// operation of it (its summary and its path). Nothing may be fetched from
// another origin: the browser is offline apart from loopback.
func TestAPIReferencePages(t *testing.T) {
	t.Parallel()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("DENAR_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatal("Chromium is required (DENAR_TEST_REQUIRE_BROWSER=1) but not installed: apt-get install chromium")
		}
		t.Skip("SKIPPING the /docs browser test: Chromium is not installed (apt-get install chromium); set DENAR_TEST_REQUIRE_BROWSER=1 to fail instead")
	}
	s := startServer(t, baseEnv(t, storetest.SQLiteURL(t)))
	docs, err := openAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []struct{ name, base string }{{"payroll", s.payroll}, {"einvoice", s.einvoice}} {
		t.Run(svc.name, func(t *testing.T) {
			var doc struct {
				Paths map[string]map[string]struct {
					Summary string `json:"summary"`
				} `json:"paths"`
			}
			if err := json.Unmarshal(docs[svc.name], &doc); err != nil {
				t.Fatal(err)
			}
			opts := []chromedp.ExecAllocatorOption{
				chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
				chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
				chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
				// Offline but for loopback (which Chromium never sends to a proxy):
				// a request to anywhere else goes to a dead proxy and fails.
				chromedp.ProxyServer("http://127.0.0.1:9"),
				chromedp.UserDataDir(t.TempDir()),
			}
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
			defer acancel()
			bctx, bcancel := chromedp.NewContext(actx)
			defer bcancel()
			if err := chromedp.Do(bctx, chromedp.Navigate(svc.base+"/docs"), chromedp.WaitVisible(chromedp.CSS("body[data-rendered]"))); err != nil {
				t.Fatalf("browser: open %s/docs: %v", svc.base, err)
			}
			state, err := chromedp.Run(bctx, chromedp.Evaluate[string]("document.body.dataset.rendered"))
			if err != nil {
				t.Fatalf("browser: %v", err)
			}
			text, err := chromedp.Run(bctx, chromedp.Evaluate[string]("document.getElementById('reference').textContent"))
			if err != nil {
				t.Fatalf("browser: %v", err)
			}
			if state != "ok" {
				t.Fatalf("the page did not render: %s", text)
			}
			n := 0
			for p, ops := range doc.Paths {
				for method, op := range ops {
					if !strings.Contains(text, op.Summary) {
						t.Errorf("the page lacks %s %s (%q)", strings.ToUpper(method), p, op.Summary)
					}
					n++
				}
				if !strings.Contains(text, p) {
					t.Errorf("the page lacks the path %s", p)
				}
			}
			if n < 5 {
				t.Fatalf("only %d operations in the %s document", n, svc.name)
			}
			t.Logf("%s: %d operations shown", svc.name, n)
		})
	}
}
