package main

import (
	"bufio"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/mail/smtptest"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// mailView is one message of `denar admin mail list --json`.
type mailView struct {
	ID        string  `json:"id"`
	To        string  `json:"to"`
	Subject   string  `json:"subject"`
	State     string  `json:"state"`
	Attempts  int     `json:"attempts"`
	LastError string  `json:"lastError"`
	Body      *string `json:"body"`
}

func listMail(t *testing.T, env []string, args ...string) []mailView {
	t.Helper()
	var out []mailView
	raw := runAdminCmd(t, env, append([]string{"mail", "list", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("mail list: %v: %s", err, raw)
	}
	return out
}

// eventually waits for cond, checking every 50 ms, for at most 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited 30 s for %s", what)
		case <-tick.C:
		}
	}
}

// logLines returns the server's JSON log lines with message msg.
func logLines(s *server, msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s.stderr.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

var mandateLinkRE = regexp.MustCompile(`/mandates/(mdt_[0-9A-Za-z]+)`)

func createCompany(t *testing.T, s *server, key, tax, email string) {
	t.Helper()
	r := call(t, "POST", s.einvoice+"/v1/companies", key, map[string]string{"Idempotency-Key": "mail-" + tax},
		`{"taxNumber":"`+tax+`","representative":{"name":"Марија Николовска","email":"`+email+`"}}`)
	if r.status != 201 {
		t.Fatalf("create company %s: %d %s", tax, r.status, r.body)
	}
}

// TestMandateMailEndToEnd: the mandate mail of a company created through
// the API, through the real binary on both stores. Without SMTP it is
// logged once with its link (which works) and listed as logged; with SMTP
// it reaches a real SMTP server, a refused recipient is dead and listed as
// such until `denar admin mail retry`; the mandate token never appears in
// the access log.
func TestMandateMailEndToEnd(t *testing.T) {
	t.Parallel()
	t.Run("without SMTP", func(t *testing.T) {
		storetest.EachURL(t, func(t *testing.T, dbURL string) {
			s := startServer(t, append(baseEnv(t, dbURL), "DENAR_JOB_POLL_INTERVAL=50ms"))
			createCompany(t, s, s.einvoiceKey, "4030000000001", "marija@example.mk")
			const logged = "mail logged, not sent: DENAR_SMTP_URL is unset"
			eventually(t, "the mail's log line", func() bool { return len(logLines(s, logged)) > 0 })
			lines := logLines(s, logged)
			link, _ := lines[0]["link"].(string)
			tok := mandateLinkRE.FindStringSubmatch(link)
			if len(lines) != 1 || tok == nil || !strings.HasPrefix(link, s.einvoice+"/mandates/") || lines[0]["to"] != "marija@example.mk" {
				t.Fatalf("log lines %v", lines)
			}
			if page := call(t, "GET", link, "", nil, ""); page.status != 200 || !strings.Contains(string(page.body), "Тест Продавач") {
				t.Fatalf("the logged link: %d %s", page.status, page.body)
			}
			eventually(t, "the access log line of the mandate page", func() bool {
				for _, l := range logLines(s, "request") {
					if l["path"] == "/mandates/[redacted]" {
						return true
					}
				}
				return false
			})
			// Only the mail's own log line has the token.
			if n := strings.Count(s.stderr.String(), tok[1]); n != 1 {
				t.Fatalf("the token is in the log %d times:\n%s", n, s.stderr.String())
			}

			mails := listMail(t, s.env)
			if len(mails) != 1 || mails[0].State != "logged" || mails[0].To != "marija@example.mk" || mails[0].Body != nil ||
				!strings.Contains(mails[0].Subject, "Тест Продавач") {
				t.Fatalf("mail list: %+v", mails)
			}
			if plain := runAdminCmd(t, s.env, "mail", "list"); strings.Contains(plain, tok[1]) || !strings.Contains(plain, "logged") {
				t.Fatalf("mail list shows:\n%s", plain)
			}
			if withBody := runAdminCmd(t, s.env, "mail", "list", "--show-body"); !strings.Contains(withBody, link) {
				t.Fatalf("mail list --show-body lacks the link:\n%s", withBody)
			}
			if dead := listMail(t, s.env, "--state", "dead"); len(dead) != 0 {
				t.Fatalf("dead: %+v", dead)
			}
		})
	})

	t.Run("with SMTP", func(t *testing.T) {
		storetest.EachURL(t, func(t *testing.T, dbURL string) {
			var mu sync.Mutex
			refuse := true
			srv := smtptest.Start(t, smtptest.Options{Recipient: func(addr string) smtptest.Reply {
				mu.Lock()
				defer mu.Unlock()
				if refuse && addr == "refused@example.mk" {
					return smtptest.Reply{Code: 550, Text: "5.1.1 no such mailbox"}
				}
				return smtptest.Reply{}
			}})
			s := startServer(t, append(baseEnv(t, dbURL), "DENAR_JOB_POLL_INTERVAL=50ms", "DENAR_SMTP_URL="+srv.URL()))
			createCompany(t, s, s.einvoiceKey, "4030000000001", "marija@example.mk")
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			got, err := srv.Wait(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			body, err := got[0].Body()
			if err != nil {
				t.Fatal(err)
			}
			link := regexp.MustCompile(regexp.QuoteMeta(s.einvoice) + `/mandates/\S+`).FindString(body)
			if got[0].To[0] != "marija@example.mk" || link == "" || !strings.Contains(got[0].Subject(), "Тест Продавач") {
				t.Fatalf("delivered: to %v subject %q body %q", got[0].To, got[0].Subject(), body)
			}
			if page := call(t, "GET", link, "", nil, ""); page.status != 200 {
				t.Fatalf("the mailed link: %d", page.status)
			}
			eventually(t, "the mail recorded as sent", func() bool {
				m := listMail(t, s.env, "--state", "sent")
				return len(m) == 1 && m[0].Attempts == 1
			})

			createCompany(t, s, s.einvoiceKey, "4030000000010", "refused@example.mk")
			var dead []mailView
			eventually(t, "the refused mail dead", func() bool {
				dead = listMail(t, s.env, "--state", "dead")
				return len(dead) == 1
			})
			if dead[0].To != "refused@example.mk" || dead[0].Attempts != 1 || !strings.Contains(dead[0].LastError, "550") {
				t.Fatalf("dead: %+v", dead)
			}
			mu.Lock()
			refuse = false
			mu.Unlock()
			if out := runAdminCmd(t, s.env, "mail", "retry", dead[0].ID); !strings.Contains(out, dead[0].ID) {
				t.Fatalf("retry: %s", out)
			}
			if _, err := srv.Wait(ctx, 2); err != nil {
				t.Fatal(err)
			}
			eventually(t, "both mails sent", func() bool { return len(listMail(t, s.env, "--state", "sent")) == 2 })
			if n := len(srv.Messages()); n != 2 {
				t.Fatalf("the server received %d messages, want 2", n)
			}
			// With SMTP the link goes only to the recipient: never to the log.
			if mandateLinkRE.MatchString(strings.ReplaceAll(s.stderr.String(), "/mandates/[redacted]", "")) {
				t.Fatalf("a mandate token in the log:\n%s", s.stderr.String())
			}
		})
	})
}

// TestMandateMailSurvivesAKill: `denar serve` is SIGKILLed while the SMTP
// server holds the mandate mail's DATA unanswered (so the server never
// acknowledged it); after a restart the job's lease runs out, the mail is
// sent by the new process, and the SMTP server has it exactly once.
func TestMandateMailSurvivesAKill(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		inData := make(chan struct{}, 1)
		release := make(chan struct{})
		var releaseOnce sync.Once
		var calls atomic.Int32
		srv := smtptest.Start(t, smtptest.Options{Data: func(smtptest.Message) smtptest.Reply {
			if calls.Add(1) == 1 {
				inData <- struct{}{}
				<-release
				// The client is gone: a real server drops the transaction.
				return smtptest.Reply{Code: 451, Text: "4.4.2 connection lost"}
			}
			return smtptest.Reply{}
		}})
		// Before the server's own cleanup, which waits for its connections.
		t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

		s := startServer(t, append(baseEnv(t, dbURL), "DENAR_JOB_POLL_INTERVAL=50ms", "DENAR_JOB_LEASE=2s", "DENAR_SMTP_URL="+srv.URL()))
		createCompany(t, s, s.einvoiceKey, "4030000000001", "marija@example.mk")
		select {
		case <-inData:
		case <-time.After(30 * time.Second):
			t.Fatal("the mail never reached DATA")
		}
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = s.cmd.Wait()
		releaseOnce.Do(func() { close(release) })
		if m := listMail(t, s.env); len(m) != 1 || m[0].State != "queued" {
			t.Fatalf("after the kill: %+v", m)
		}

		again := startServer(t, s.env)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		got, err := srv.Wait(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the mail recorded as sent", func() bool {
			m := listMail(t, again.env, "--state", "sent")
			return len(m) == 1 && m[0].Attempts == 2
		})
		body, err := got[0].Body()
		if err != nil || !strings.Contains(body, again.einvoice+"/mandates/mdt_") {
			t.Fatalf("delivered body %q (%v)", body, err)
		}
		if n := len(srv.Messages()); n != 1 {
			t.Fatalf("the SMTP server has %d messages, want 1", n)
		}
	})
}
