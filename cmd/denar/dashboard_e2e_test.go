package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// chromiumPath finds Debian's chromium, or skips (fails under
// DENAR_TEST_REQUIRE_BROWSER=1).
func chromiumPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("DENAR_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatal("Chromium is required (DENAR_TEST_REQUIRE_BROWSER=1) but not installed: apt-get install chromium")
		}
		t.Skip("SKIPPING the browser test: Chromium is not installed (apt-get install chromium); set DENAR_TEST_REQUIRE_BROWSER=1 to fail instead")
	}
	return path
}

// artifactsDir is where screenshots go: $DENAR_TEST_ARTIFACTS/<test>, or a
// temporary directory.
func artifactsDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("DENAR_TEST_ARTIFACTS")
	if base == "" {
		return t.TempDir()
	}
	dir := filepath.Join(base, strings.ReplaceAll(t.Name(), "/", "_"))
	// This run's screenshots only.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDashboardBrowser drives the dashboard in headless Chromium against
// the real denar serve and denar ujp-sim on both stores, with the SDK
// worker signing: an owner signs in, finds the incoming invoice due
// soonest, rejects it with a reason from UJP's list, sees the signing
// request waiting and then the rejected state; opens an issued e-invoice
// with its history and PDF; creates and revokes an API key; replays a
// webhook delivery. Every page is saved as a screenshot.
func TestDashboardBrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		art := artifactsDir(t)
		w := newInboxWorld(t, dbURL, "DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX=true")

		// The clock on the 5th of next month, so that a document of this
		// month is due on the 10th (5 days) and one of that month later.
		today := time.Now().In(ujpdoc.Skopje)
		at := time.Date(today.Year(), today.Month()+1, 5, 12, 0, 0, 0, ujpdoc.Skopje)
		w.restartAt(at)
		drop := func(txDate string) string {
			r := call(t, "POST", w.sim.url+"/_sim/buyers/"+ujpsim.TaxBuyer+"/incoming", simToken, nil, `{"transactionDate":"`+txDate+`"}`)
			var d struct{ EUID string }
			if err := json.Unmarshal(r.body, &d); err != nil || r.status != 200 {
				t.Fatalf("drop: %d %s", r.status, r.body)
			}
			return d.EUID
		}
		soonEUID := drop(today.Format(time.DateOnly))
		laterEUID := drop(at.Format(time.DateOnly))

		// A webhook endpoint of the account, receiving every event.
		var (
			mu   sync.Mutex
			hits = map[string]int{} // event id → deliveries received
		)
		recv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var ev struct{ ID string }
			_ = json.Unmarshal(body, &ev)
			mu.Lock()
			hits[ev.ID]++
			mu.Unlock()
		}))
		defer recv.Close()
		var hookKey struct{ Key string }
		if err := json.Unmarshal([]byte(runAdminCmd(t, w.srv.env, "key", "create", "--account", w.account, "--service", "einvoice",
			"--env", "sandbox", "--scope", "webhooks:write", "--scope", "events:read", "--json")), &hookKey); err != nil {
			t.Fatal(err)
		}
		if r := call(t, "POST", w.srv.einvoice+"/v1/webhook-endpoints", hookKey.Key, map[string]string{"Idempotency-Key": "dash-ep"},
			`{"url":"`+recv.URL+`/hooks","events":["*"]}`); r.status != 201 {
			t.Fatalf("webhook endpoint: %d %s", r.status, r.body)
		}

		// The seller issues an e-invoice dated on the shifted clock.
		body := strings.Replace(invoiceBody("DASH-1", ""), `"issueDate":"`+time.Now().Format(time.DateOnly)+`"`, `"issueDate":"`+at.Format(time.DateOnly)+`"`, 1)
		r := w.post("/v1/einvoices", body)
		if r.status != 202 {
			t.Fatalf("issue: %d %s", r.status, r.body)
		}
		var issued struct{ ID string }
		_ = json.Unmarshal(r.body, &issued)
		w.waitStatus(issued.ID, "delivered", 30*time.Second)
		docs := w.waitInbox([]string{soonEUID, laterEUID}, 30*time.Second)
		soon := docs[soonEUID]
		wantBy := einvoice.DecideBy(today).Format(time.DateOnly)
		if soon["decideBy"] != wantBy || soon["daysLeft"] != float64(5) {
			t.Fatalf("the document due soonest: decideBy %v daysLeft %v, want %s and 5", soon["decideBy"], soon["daysLeft"], wantBy)
		}
		soonID := soon["id"].(string)

		// The owner.
		var user struct{ Email, Password string }
		if err := json.Unmarshal([]byte(runAdminCmd(t, w.srv.env, "user", "create", "--account", w.account, "--email", "vesna@biro.mk",
			"--role", "owner", "--json")), &user); err != nil || user.Password == "" {
			t.Fatalf("user create: %v %+v", err, user)
		}

		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
			chromedp.WindowSize(1280, 900), chromedp.UserDataDir(t.TempDir()),
		}
		ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
		defer cancel()
		actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
		defer acancel()
		b, bcancel := chromedp.NewContext(actx)
		defer bcancel()
		run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
			t.Helper()
			if err := chromedp.Do(b, actions...); err != nil {
				t.Fatalf("browser: %s: %v\nserver log tail:\n%s", what, err, tail(w.srv.stderr.String(), 2000))
			}
		}
		shots := 0
		shot := func(name string) {
			t.Helper()
			png, err := chromedp.Run(b, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", name, err)
			}
			shots++
			if err := os.WriteFile(filepath.Join(art, fmt.Sprintf("%02d-%s.png", shots, name)), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		text := func(sel string) string {
			t.Helper()
			s, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(sel)))
			if err != nil {
				t.Fatalf("browser: read %s: %v", sel, err)
			}
			return s
		}
		attr := func(sel, name string) string {
			t.Helper()
			v, err := chromedp.Run(b, chromedp.AttributeValue(chromedp.CSS(sel), name))
			if err != nil {
				t.Fatalf("browser: %s of %s: %v", name, sel, err)
			}
			return v.Value
		}
		base := w.srv.einvoice + "/dashboard"

		// Sign in.
		run("open the sign-in page", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS("#email")))
		shot("sign-in")
		// By keyboard only: type the address, Tab to the password, Enter.
		run("sign in", chromedp.SendKeys(chromedp.CSS("#email"), user.Email+"\t"+user.Password+"\r"),
			chromedp.WaitVisible(chromedp.CSS("#deadlines")))
		if s := text("#env-banner"); !strings.Contains(s, "ТЕСТ") {
			t.Fatalf("sandbox banner: %q", s)
		}
		// The home page: what needs attention, the invoice due in 5 days first.
		if id := attr("tr.deadline", "data-id"); id != soonID {
			t.Fatalf("home's first deadline %s, want the document due soonest %s", id, soonID)
		}
		shot("home")
		run("companies", chromedp.Navigate(base+"/companies"), chromedp.WaitVisible(chromedp.CSS("#companies")))
		shot("companies")
		// A URL that is none: a page in Macedonian with the way back.
		run("unknown page", chromedp.Navigate(base+"/no-such-page"), chromedp.WaitVisible(chromedp.CSS("#back")))
		if s := text("#error"); !strings.Contains(s, "Нема страница") {
			t.Fatalf("unknown page: %q", s)
		}
		shot("not-found")

		// The inbox, most urgent first: the document due soonest on top.
		run("inbox", chromedp.Navigate(base+"/inbox"), chromedp.WaitVisible(chromedp.CSS("#inbox")))
		first := attr("tr.inbox-row", "data-id")
		if first != soonID {
			t.Fatalf("first inbox row %s, want the document due soonest %s", first, soonID)
		}
		shot("inbox")

		// Reject it with O-2 while the signer is away: the signing request waits.
		w.stop()
		run("open the document", chromedp.Click(chromedp.CSS("tr.inbox-row a")), chromedp.WaitVisible(chromedp.CSS("#reject-reason")))
		// О-7 needs a comment: without one, the error is next to the
		// comment, in Macedonian, the reason still chosen.
		run("reject with О-7 and no comment", chromedp.SetValue(chromedp.CSS("#reject-reason"), "О-7"),
			chromedp.Click(chromedp.CSS("#reject")), chromedp.WaitVisible(chromedp.CSS("#reject-comment-err")))
		if s := text("#reject-comment-err"); !strings.Contains(s, "задолжително") {
			t.Fatalf("the comment's error: %q", s)
		}
		if v := attr("#reject-reason option[selected]", "value"); v != "О-7" {
			t.Fatalf("the reason after the error: %q", v)
		}
		shot("reject-needs-comment")
		run("reject", chromedp.SetValue(chromedp.CSS("#reject-reason"), "O-2"),
			chromedp.SendKeys(chromedp.CSS("#reject-comment"), "погрешна количина"),
			chromedp.Click(chromedp.CSS("#reject")), chromedp.WaitVisible(chromedp.CSS("#signing-request")))
		srState := attr("#signing-request", "data-state")
		if srState != "pending" || !strings.Contains(text("#requested"), "одбивање") {
			t.Fatalf("after reject: signing request %q, requested %q", srState, text("#requested"))
		}
		shot("reject-signing-request")
		w.startWorker()
		deadline := time.Now().Add(45 * time.Second)
		for {
			run("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#decision")))
			state := attr("#decision", "data-state")
			if state == "rejected" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the document is %s after 45 s, not rejected\nlog tail:\n%s", state, tail(w.srv.stderr.String(), 3000))
			}
			time.Sleep(300 * time.Millisecond)
		}
		if s := text("#decision"); !strings.Contains(s, "O-2") {
			t.Fatalf("decision shown: %q", s)
		}
		shot("rejected")

		// The issue side: the e-invoice's detail with history and PDF.
		run("e-invoices", chromedp.Navigate(base+"/einvoices?company="+w.company+"&number=DASH-1"), chromedp.WaitVisible(chromedp.CSS("#einvoices")))
		if l := text("#einvoices"); !strings.Contains(l, "Тест Купувач ДОО Скопје") {
			t.Fatalf("e-invoice list without the buyer: %q", l)
		}
		shot("einvoices")
		run("detail", chromedp.Click(chromedp.CSS("#einvoices a")), chromedp.WaitVisible(chromedp.CSS("#history")))
		if h := text("#history"); !strings.Contains(h, "доставена") || !strings.Contains(h, "чека потпис") || strings.Contains(h, "awaiting_signature") {
			t.Fatalf("history: %q", h)
		}
		if l := text("#lines"); !strings.Contains(l, "Услуга\t3\t900\t486\t3186") {
			t.Fatalf("lines: %q", l)
		}
		if g := text("#total-gross"); g != "3186.00" {
			t.Fatalf("gross %q, want 3186.00 (3 × 900 + 18 %%)", g)
		}
		pdfHref := attr("#pdf", "href")
		shot("einvoice-detail")
		pdfOK := dashboardFetch(t, w.srv.einvoice, user.Email, user.Password, pdfHref)
		if !pdfOK {
			t.Fatal("the PDF link never answered with a PDF")
		}

		// The correction form, filled from the e-invoice: a quantity that is
		// no number is refused next to its field, and nothing is issued.
		corrHref := attr("#correction", "href")
		run("correction form", chromedp.Click(chromedp.CSS("#correction")), chromedp.WaitVisible(chromedp.CSS("#correction-form")))
		if q := attr("#l0q", "value"); q != "3" {
			t.Fatalf("the correction form's first quantity %q, want the original's 3", q)
		}
		run("correction refused", chromedp.SetValue(chromedp.CSS("#l0q"), "три"), chromedp.Click(chromedp.CSS("#correct")),
			chromedp.WaitVisible(chromedp.CSS("#l0q-e")))
		shot("correction-form-error")
		run("back to the e-invoice", chromedp.Navigate(w.srv.einvoice+strings.TrimSuffix(corrHref, "/correction")),
			chromedp.WaitVisible(chromedp.CSS("#storno-reason")))

		// Storno of the issued e-invoice, from its page (S-1 from UJP's list).
		// (#message is only on the page the storno leads to.)
		run("storno", chromedp.SetValue(chromedp.CSS("#storno-reason"), "S-1"), chromedp.Click(chromedp.CSS("#storno")),
			chromedp.WaitVisible(chromedp.CSS("#message")))
		if k := text("#summary"); !strings.Contains(k, "сторно") || !strings.Contains(k, issued.ID) || !strings.Contains(k, "-3186.00") {
			t.Fatalf("after the storno: %q", k)
		}
		shot("storno")

		// A key: created, shown once, works; revoked, refused.
		run("keys", chromedp.Navigate(base+"/keys"), chromedp.WaitVisible(chromedp.CSS("#create-key")))
		run("create key", chromedp.Click(chromedp.CSS("#create-key")), chromedp.WaitVisible(chromedp.CSS("#new-key")))
		secret := text("#new-key")
		keyID := attr("#new-key", "data-id")
		if !strings.HasPrefix(secret, "dn_test_") {
			t.Fatalf("new key %q", secret)
		}
		if r := call(t, "GET", w.srv.einvoice+"/v1/companies", secret, nil, ""); r.status != 200 {
			t.Fatalf("the new key: %d %s", r.status, r.body)
		}
		shot("key-created")
		run("revoke key", chromedp.Click(chromedp.CSS(`tr.key[data-id="`+keyID+`"] button.revoke`)),
			chromedp.WaitVisible(chromedp.CSS(`tr.key[data-id="`+keyID+`"] .revoked`)))
		if r := call(t, "GET", w.srv.einvoice+"/v1/companies", secret, nil, ""); r.status != 401 || r.code(t) != "key_revoked" {
			t.Fatalf("the revoked key: %d %s", r.status, r.body)
		}
		shot("key-revoked")

		// Replay the delivery of the rejection's event.
		evs := w.buyerEvents("type=inbox.rejected&objectId=" + soonID)
		if len(evs) != 1 {
			t.Fatalf("inbox.rejected events: %v", evs)
		}
		evID := evs[0]["id"].(string)
		delivered := func() int {
			mu.Lock()
			defer mu.Unlock()
			return hits[evID]
		}
		waitFor(t, "the rejection's webhook delivery", func() bool { return delivered() >= 1 })
		// The events: each with the object it is about and its company.
		run("events", chromedp.Navigate(base+"/events"), chromedp.WaitVisible(chromedp.CSS("tr.event")))
		if o, c := text(`tr.event[data-id="`+evID+`"] td.object`), text(`tr.event[data-id="`+evID+`"] td.company`); o == "" || c == "" {
			t.Fatalf("the rejection's event row: object %q, company %q", o, c)
		}
		shot("events")
		run("event", chromedp.Navigate(base+"/events/"+evID), chromedp.WaitVisible(chromedp.CSS("tr.delivery")))
		shot("event-deliveries")
		before := delivered()
		run("replay", chromedp.Click(chromedp.CSS("tr.delivery button.replay")), chromedp.WaitVisible(chromedp.CSS("#message")))
		waitFor(t, "the replayed delivery", func() bool { return delivered() > before })
		run("event again", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("tr.delivery")))
		attempts, err := chromedp.Run(b, chromedp.Evaluate[int](`document.querySelectorAll("tr.delivery li").length`))
		if err != nil {
			t.Fatal(err)
		}
		if attempts < 2 {
			t.Fatalf("%d attempts shown after the replay", attempts)
		}
		shot("event-replayed")

		run("webhooks", chromedp.Navigate(base+"/webhooks"), chromedp.WaitVisible(chromedp.CSS("#endpoints")),
			chromedp.Click(chromedp.CSS("#endpoints a")), chromedp.WaitVisible(chromedp.CSS("tr.delivery")))
		shot("webhook-endpoint")
		// A new secret for the endpoint, shown once.
		run("rotate secret", chromedp.Navigate(base+"/webhooks"), chromedp.WaitVisible(chromedp.CSS("#endpoints")),
			chromedp.Click(chromedp.CSS("tr.endpoint button.rotate")), chromedp.WaitVisible(chromedp.CSS("#new-secret")))
		if s := text("#new-secret"); !strings.HasPrefix(s, "whsec_") {
			t.Fatalf("rotated secret %q", s)
		}
		shot("webhook-secret-rotated")
		run("users", chromedp.Navigate(base+"/users"), chromedp.WaitVisible(chromedp.CSS("#users")))
		shot("users")

		// Usage and the English switch; the audit log names what was done.
		run("usage", chromedp.Navigate(base+"/usage"), chromedp.WaitVisible(chromedp.CSS("#usage-chart")))
		shot("usage")
		run("english", chromedp.Click(chromedp.CSS("#lang-switch")), chromedp.WaitVisible(chromedp.CSS(`html[lang="en"] #usage-chart`)))
		lang := attr("html", "lang")
		if lang != "en" || !strings.Contains(text("h1"), "Usage") {
			t.Fatalf("after the switch: lang %q, title %q", lang, text("h1"))
		}
		shot("usage-en")
		run("audit", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS("#audit")))
		audit := text("#audit")
		for _, a := range []string{"inbox.reject", "einvoice.storno", "key.create", "key.revoke", "event.replay", "webhook.rotate_secret"} {
			if !strings.Contains(audit, a) {
				t.Errorf("audit log lacks %s:\n%s", a, audit)
			}
		}
		shot("audit")
		t.Logf("%d screenshots in %s", shots, art)
	})
}

// dashboardFetch signs in over plain HTTP and polls path until it answers
// with a PDF (the first request asks the signer for UJP's read).
func dashboardFetch(t *testing.T, base, email, password, path string) bool {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(base + "/dashboard/login")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field on the sign-in page")
	}
	resp, err = c.PostForm(base+"/dashboard/login", url.Values{"csrf": {string(m[1])}, "email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 && resp.Header.Get("Content-Type") == "application/pdf" && strings.HasPrefix(string(b), "%PDF") {
			return true
		}
	}
	return false
}
