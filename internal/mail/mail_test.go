package mail_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/mail/smtptest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

const from = "denar <no-reply@denar.mk>"

func TestParseSMTPURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, from string
		ok        bool
	}{
		{"smtp://user:pass@mail.example.mk:587", from, true},
		{"smtp://mail.example.mk", from, true},
		{"smtps://u:p@mail.example.mk", from, true},
		{"http://mail.example.mk", from, false},
		{"smtp://", from, false},
		{"smtp://mail.example.mk:99999", from, false},
		{"smtp://mail.example.mk", "not an address", false},
	} {
		if _, err := mail.ParseSMTPURL(tc.url, tc.from); (err == nil) != tc.ok {
			t.Errorf("%s from %q: err %v, want ok=%v", tc.url, tc.from, err, tc.ok)
		}
	}
}

// An unparsable URL's error does not repeat the password.
func TestParseSMTPURLKeepsPasswordOutOfErrors(t *testing.T) {
	t.Parallel()
	_, err := mail.ParseSMTPURL("smtp://user:s3cret@mail example.mk:587", from)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err %v", err)
	}
}

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// clock replaces store.DB.Now, so that retry delays pass when a test says.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func useClock(db *store.DB) *clock {
	c := &clock{now: t0}
	db.Now = c.Now
	return c
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func queue(t *testing.T, db *store.DB, m mail.Message) string {
	t.Helper()
	var id string
	if err := db.InTx(t.Context(), func(tx *store.Tx) error {
		var err error
		id, err = mail.Queue(t.Context(), tx, m)
		return err
	}); err != nil {
		t.Fatalf("queue %+v: %v", m, err)
	}
	return id
}

func runner(db *store.DB, cfg mail.WorkerConfig) *jobs.Runner {
	r := jobs.NewRunner(db, jobs.Config{Workers: 16, Logger: slog.New(slog.DiscardHandler)})
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	mail.Register(r, db, cfg)
	return r
}

func step(t *testing.T, r *jobs.Runner, want int) {
	t.Helper()
	n, err := r.RunOnce(t.Context())
	if err != nil || n != want {
		t.Fatalf("RunOnce: ran %d jobs (%v), want %d", n, err, want)
	}
}

func row(t *testing.T, db *store.DB, id string) dbq.MailOutbox {
	t.Helper()
	m, err := db.Reader().GetOutboxMail(t.Context(), id)
	if err != nil {
		t.Fatalf("mail %s: %v", id, err)
	}
	return m
}

func smtpTo(t *testing.T, url string) *mail.SMTP {
	t.Helper()
	s, err := mail.ParseSMTPURL(url, from)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestQueueIsTransactional: the row and its job exist exactly when the
// causing transaction commits.
func TestQueueIsTransactional(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		rollback := errors.New("rollback")
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := mail.Queue(ctx, tx, mail.Message{To: "a@example.mk", Subject: "x", Body: "x"}); err != nil {
				return err
			}
			return rollback
		}); !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := mail.Queue(ctx, tx, mail.Message{Subject: "no recipient"})
			return err
		}); err == nil {
			t.Fatal("queued a message without recipient")
		}
		id := queue(t, db, mail.Message{To: "b@example.mk", Subject: "Овластување", Body: "Почитувани", Link: "http://x/mandates/mdt_1"})
		mails, err := db.Reader().ListOutboxMail(ctx)
		if err != nil || len(mails) != 1 {
			t.Fatalf("outbox: %+v %v", mails, err)
		}
		if m := mails[0]; m.ID != id || m.State != mail.StateQueued || m.Attempts != 0 || m.Link != "http://x/mandates/mdt_1" || m.Subject != "Овластување" {
			t.Fatalf("row %+v", m)
		}
		js, err := db.Reader().ListJobsByKind(ctx, mail.JobKind)
		if err != nil || len(js) != 1 || js[0].Args != `{"id":"`+id+`"}` || js[0].State != jobs.StateAvailable {
			t.Fatalf("jobs %+v %v", js, err)
		}
	})
}

// TestDelivery walks messages through a real SMTP server that answers per
// recipient: accepted at once, refused for good (at RCPT, and at the end of
// DATA), refused for now (then accepted), refused for now every time, and
// an address that cannot be written. The failing ones are queued first and
// block nothing.
func TestDelivery(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		clk := useClock(db)
		var mu sync.Mutex
		tries := map[string]int{}
		srv := smtptest.Start(t, smtptest.Options{Recipient: func(addr string) smtptest.Reply {
			mu.Lock()
			defer mu.Unlock()
			tries[addr]++
			switch {
			case strings.HasPrefix(addr, "refused"):
				return smtptest.Reply{Code: 550, Text: "5.1.1 no such mailbox"}
			case strings.HasPrefix(addr, "busy"):
				return smtptest.Reply{Code: 451, Text: "4.3.0 try again later"}
			case strings.HasPrefix(addr, "later") && tries[addr] == 1:
				return smtptest.Reply{Code: 452, Text: "4.2.2 mailbox full for now"}
			}
			return smtptest.Reply{}
		}, Data: func(m smtptest.Message) smtptest.Reply {
			if m.To[0] == "toobig@example.mk" {
				return smtptest.Reply{Code: 552, Text: "5.3.4 message too big"}
			}
			return smtptest.Reply{}
		}})
		const max = 3
		r := runner(db, mail.WorkerConfig{SMTP: smtpTo(t, srv.URL()), MaxAttempts: max, RetryDelays: []time.Duration{time.Minute, 2 * time.Minute}})

		ids := map[string]string{}
		for _, to := range []string{"refused@example.mk", "busy@example.mk", "not an address", "toobig@example.mk", "later@example.mk", "ok@example.mk"} {
			ids[to] = queue(t, db, mail.Message{To: to, Subject: "Овластување за е-фактури: Тест ДООЕЛ", Body: "Почитувани,\n\nhttp://x/mandates/mdt_" + to + "\n", Link: "http://x/mandates/mdt_" + to})
		}

		type want struct {
			state    string
			attempts int32
			errHas   string
		}
		check := func(stage string, wants map[string]want) {
			t.Helper()
			for to, w := range wants {
				m := row(t, db, ids[to])
				if m.State != w.state || m.Attempts != w.attempts || !strings.Contains(m.LastError, w.errHas) || (w.errHas == "" && m.LastError != "") {
					t.Errorf("%s: %s: state %s attempts %d error %q; want %+v", stage, to, m.State, m.Attempts, m.LastError, w)
				}
				if (m.State == mail.StateSent) != m.SentAt.Valid {
					t.Errorf("%s: %s: state %s with sent_at %v", stage, to, m.State, m.SentAt)
				}
			}
		}

		step(t, r, 6)
		check("first round", map[string]want{
			"refused@example.mk": {mail.StateDead, 1, "550"},
			"toobig@example.mk":  {mail.StateDead, 1, "552"},
			"not an address":     {mail.StateDead, 1, `smtp: to "not an address"`},
			"busy@example.mk":    {mail.StateQueued, 1, "451"},
			"later@example.mk":   {mail.StateQueued, 1, "452"},
			"ok@example.mk":      {mail.StateSent, 1, ""},
		})
		// Nothing is due before the first delay has passed.
		clk.Advance(time.Minute - time.Microsecond)
		step(t, r, 0)
		clk.Advance(time.Microsecond)
		step(t, r, 2)
		check("second round", map[string]want{
			"busy@example.mk":  {mail.StateQueued, 2, "451"},
			"later@example.mk": {mail.StateSent, 2, ""},
		})
		clk.Advance(2 * time.Minute)
		step(t, r, 1)
		check("third round", map[string]want{
			"busy@example.mk": {mail.StateDead, max, "gave up after 3 attempts"},
		})
		clk.Advance(24 * time.Hour)
		step(t, r, 0)

		// The server got each deliverable message once, with its own
		// Message-ID, subject and body intact.
		got := srv.Messages()
		if len(got) != 2 {
			t.Fatalf("server received %d messages, want 2", len(got))
		}
		for i, to := range []string{"ok@example.mk", "later@example.mk"} {
			m := got[i]
			h, err := m.Header()
			if err != nil {
				t.Fatal(err)
			}
			body, err := m.Body()
			if err != nil {
				t.Fatal(err)
			}
			if len(m.To) != 1 || m.To[0] != to || m.From != "no-reply@denar.mk" ||
				h.Get("Message-Id") != "<"+ids[to]+"@denar.mk>" ||
				m.Subject() != "Овластување за е-фактури: Тест ДООЕЛ" ||
				!strings.Contains(body, "Почитувани,") || !strings.Contains(body, "http://x/mandates/mdt_"+to) {
				t.Errorf("message %d: from %s to %v id %s subject %q body %q", i, m.From, m.To, h.Get("Message-Id"), m.Subject(), body)
			}
		}

		// The jobs ended as the outcomes say.
		js, err := db.Reader().ListJobsByKind(t.Context(), mail.JobKind)
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]int{}
		for _, j := range js {
			states[j.State]++
		}
		if states[jobs.StateCompleted] != 2 || states[jobs.StateCancelled] != 4 || len(js) != 6 {
			t.Fatalf("job states %v", states)
		}
	})
}

// TestConnectionFailureIsRetried: no server listening is a temporary
// failure, retried up to the limit.
func TestConnectionFailureIsRetried(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		clk := useClock(db)
		r := runner(db, mail.WorkerConfig{SMTP: smtpTo(t, "smtp://"+closed), MaxAttempts: 2, RetryDelays: []time.Duration{time.Minute}})
		id := queue(t, db, mail.Message{To: "a@example.mk", Subject: "s", Body: "b"})
		step(t, r, 1)
		if m := row(t, db, id); m.State != mail.StateQueued || m.Attempts != 1 || !strings.Contains(m.LastError, "refused") {
			t.Fatalf("after attempt 1: %+v", m)
		}
		clk.Advance(time.Minute)
		step(t, r, 1)
		if m := row(t, db, id); m.State != mail.StateDead || m.Attempts != 2 || !strings.Contains(m.LastError, "gave up after 2 attempts") {
			t.Fatalf("after attempt 2: %+v", m)
		}
	})
}

// TestInterruptedLastAttempt: a job whose runner died during the last
// allowed attempt is dead without another send.
func TestInterruptedLastAttempt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		clk := useClock(db)
		srv := smtptest.Start(t, smtptest.Options{})
		r := runner(db, mail.WorkerConfig{SMTP: smtpTo(t, srv.URL()), MaxAttempts: 1})
		id := queue(t, db, mail.Message{To: "a@example.mk", Subject: "s", Body: "b"})
		// What a runner that died mid-attempt leaves behind.
		if _, err := db.WriteDB().ExecContext(t.Context(),
			`UPDATE jobs SET state = 'running', attempt = 1, locked_by = 'dead-runner', locked_until = $1 WHERE kind = $2`,
			clk.Now().Add(time.Minute), mail.JobKind); err != nil {
			t.Fatal(err)
		}
		step(t, r, 0)
		clk.Advance(time.Minute)
		step(t, r, 1)
		if m := row(t, db, id); m.State != mail.StateDead || m.Attempts != 1 || !strings.Contains(m.LastError, "interrupted") {
			t.Fatalf("%+v", m)
		}
		if n := len(srv.Messages()); n != 0 {
			t.Fatalf("sent %d messages", n)
		}
	})
}

// TestWithoutSMTP: with no server the message is logged once, link
// included, and ends logged instead of being retried.
func TestWithoutSMTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		var buf bytes.Buffer
		var mu sync.Mutex
		log := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
		r := runner(db, mail.WorkerConfig{Log: log})
		for _, tc := range []struct {
			name string
			msg  mail.Message
		}{
			{"with link", mail.Message{To: "ana@example.mk", Subject: "Овластување", Body: "… http://127.0.0.1:8081/mandates/mdt_abc …", Link: "http://127.0.0.1:8081/mandates/mdt_abc"}},
			{"without link", mail.Message{To: "ana@example.mk", Subject: "Известување", Body: "текст"}},
		} {
			mu.Lock()
			buf.Reset()
			mu.Unlock()
			id := queue(t, db, tc.msg)
			step(t, r, 1)
			step(t, r, 0)
			if m := row(t, db, id); m.State != mail.StateLogged || m.Attempts != 0 || m.SentAt.Valid {
				t.Fatalf("%s: %+v", tc.name, m)
			}
			mu.Lock()
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			mu.Unlock()
			if len(lines) != 1 {
				t.Fatalf("%s: %d log lines: %q", tc.name, len(lines), lines)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
				t.Fatal(err)
			}
			link, hasLink := rec["link"]
			if rec["level"] != "INFO" || rec["mail"] != id || rec["to"] != tc.msg.To || rec["subject"] != tc.msg.Subject ||
				hasLink != (tc.msg.Link != "") || (hasLink && link != tc.msg.Link) {
				t.Fatalf("%s: log line %v", tc.name, rec)
			}
			if _, hasBody := rec["body"]; hasBody {
				t.Fatalf("%s: body logged", tc.name)
			}
		}
	})
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestRetry: an operator's retry of a message that was not sent queues it
// again with fresh attempts; a sent, unknown or still pending one is refused.
func TestRetry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		useClock(db)
		refuse := true
		var mu sync.Mutex
		srv := smtptest.Start(t, smtptest.Options{Recipient: func(string) smtptest.Reply {
			mu.Lock()
			defer mu.Unlock()
			if refuse {
				return smtptest.Reply{Code: 550, Text: "5.7.1 relaying denied"}
			}
			return smtptest.Reply{}
		}})
		r := runner(db, mail.WorkerConfig{SMTP: smtpTo(t, srv.URL())})
		id := queue(t, db, mail.Message{To: "a@example.mk", Subject: "s", Body: "b"})
		if err := mail.Retry(t.Context(), db, id); !errors.Is(err, mail.ErrPending) {
			t.Fatalf("retry of a pending message: %v", err)
		}
		step(t, r, 1)
		if m := row(t, db, id); m.State != mail.StateDead {
			t.Fatalf("%+v", m)
		}
		mu.Lock()
		refuse = false
		mu.Unlock()
		if err := mail.Retry(t.Context(), db, id); err != nil {
			t.Fatal(err)
		}
		if m := row(t, db, id); m.State != mail.StateQueued || m.Attempts != 0 || !strings.Contains(m.LastError, "550") {
			t.Fatalf("requeued: %+v", m)
		}
		step(t, r, 1)
		if m := row(t, db, id); m.State != mail.StateSent || m.Attempts != 1 || len(srv.Messages()) != 1 {
			t.Fatalf("after retry: %+v, %d messages", m, len(srv.Messages()))
		}
		for _, tc := range []struct {
			id   string
			want error
		}{{id, mail.ErrAlreadySent}, {"mail_nope", mail.ErrNotFound}} {
			if err := mail.Retry(t.Context(), db, tc.id); !errors.Is(err, tc.want) {
				t.Errorf("retry %s: %v, want %v", tc.id, err, tc.want)
			}
		}
	})
}

// TestTwoRunnersDeliverEachOnce: two runners on two connections to one
// database (as two processes would have) deliver N messages to a real SMTP
// server exactly once each.
func TestTwoRunnersDeliverEachOnce(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		t.Parallel()
		const n = 60
		srv := smtptest.Start(t, smtptest.Options{})
		var dbs [2]*store.DB
		var runners [2]*jobs.Runner
		for i := range dbs {
			db, err := store.Open(t.Context(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := db.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			dbs[i] = db
		}
		want := map[string]bool{}
		for i := range n {
			to := fmt.Sprintf("rcpt%03d@example.mk", i)
			want[to] = true
			queue(t, dbs[i%2], mail.Message{To: to, Subject: "s", Body: "b"})
		}
		var logs [2]bytes.Buffer
		var logMu [2]sync.Mutex
		for i, db := range dbs {
			r := jobs.NewRunner(db, jobs.Config{ID: fmt.Sprintf("runner-%d", i), Workers: 4, PollInterval: 5 * time.Millisecond,
				Logger: slog.New(slog.DiscardHandler)})
			mail.Register(r, db, mail.WorkerConfig{SMTP: smtpTo(t, srv.URL()),
				Log: slog.New(slog.NewJSONHandler(lockedWriter{&logMu[i], &logs[i]}, nil))})
			runners[i] = r
		}
		for _, r := range runners {
			if err := r.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		_, waitErr := srv.Wait(ctx, n)
		// Every row is recorded as sent before the runners stop.
		for waitErr == nil {
			mails, err := dbs[0].Reader().ListMail(ctx, dbq.ListMailParams{State: mail.StateSent, Lim: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if len(mails) == n {
				break
			}
			select {
			case <-ctx.Done():
				waitErr = fmt.Errorf("%d of %d rows sent: %w", len(mails), n, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
		for _, r := range runners {
			if err := r.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if waitErr != nil {
			t.Fatal(waitErr)
		}
		got := map[string]int{}
		for _, m := range srv.Messages() {
			for _, to := range m.To {
				got[to]++
			}
		}
		for to := range want {
			if got[to] != 1 {
				t.Errorf("%s received %d times", to, got[to])
			}
		}
		if len(got) != n {
			t.Errorf("%d recipients, want %d", len(got), n)
		}
		js, err := dbs[0].Reader().ListJobsByKind(t.Context(), mail.JobKind)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			if j.State != jobs.StateCompleted || j.Attempt != 1 {
				t.Errorf("job %d: %s after %d attempts", j.ID, j.State, j.Attempt)
			}
		}
		var split [2]int
		for i := range logs {
			logMu[i].Lock()
			split[i] = strings.Count(logs[i].String(), `"msg":"mail sent"`)
			logMu[i].Unlock()
		}
		if split[0]+split[1] != n {
			t.Errorf("runners logged %v sends, want %d in all", split, n)
		}
		t.Logf("messages sent per runner: %v", split)
	})
}

// FuzzParseSMTPURL: no input panics, and an accepted URL has a host and
// a port in range.
func FuzzParseSMTPURL(f *testing.F) {
	for _, u := range []string{"smtp://user:pass@mail.example.mk:587", "smtps://mail.example.mk", "smtp://", "smtp://[::1]:25", "smtp://h:0", "%"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := mail.ParseSMTPURL(raw, from)
		if err != nil {
			return
		}
		host, port, err := net.SplitHostPort(s.Addr())
		if err != nil || host == "" || s.From != from {
			t.Fatalf("%q: address %q (%v), from %q", raw, s.Addr(), err, s.From)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			t.Fatalf("%q: port %q", raw, port)
		}
	})
}

// TestSealedMessage: a message queued sealed keeps neither its body nor
// its link in clear in the outbox; the worker opens them to send (the
// receiver gets the link) or, without SMTP, to log the link; a worker
// without the key cannot send it and says why.
func TestSealedMessage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		box, err := auth.NewSecretBox(bytes.Repeat([]byte{9}, auth.SecretKeySize))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan smtptest.Message, 1)
		srv := smtptest.Start(t, smtptest.Options{Data: func(m smtptest.Message) smtptest.Reply { got <- m; return smtptest.Reply{} }})
		link := "http://x/mandates/mdt_SEALEDTOKEN123"
		queueSealed := func(box *auth.SecretBox) string {
			t.Helper()
			var id string
			if err := db.InTx(t.Context(), func(tx *store.Tx) error {
				var err error
				id, err = mail.QueueSealed(t.Context(), tx, box, mail.Message{To: "rep@example.mk", Subject: "Овластување",
					Body: "Почитувани,\n\n" + link + "\n", Link: link})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return id
		}
		id := queueSealed(box)
		if m := row(t, db, id); strings.Contains(m.Body, "SEALEDTOKEN") || strings.Contains(m.Link, "SEALEDTOKEN") ||
			!auth.Sealed(m.Body) || !auth.Sealed(m.Link) {
			t.Fatalf("stored %+v", m)
		}
		// Without the key: not sent, retried.
		keyless := runner(db, mail.WorkerConfig{SMTP: smtpTo(t, srv.URL())})
		step(t, keyless, 1)
		if m := row(t, db, id); m.State != mail.StateQueued {
			t.Fatalf("without the key: %+v", m)
		}
		_, _ = db.WriteDB().ExecContext(t.Context(), "UPDATE jobs SET run_at = $1 WHERE unique_key = $2", db.Now(), "mail:"+id)
		r := runner(db, mail.WorkerConfig{SMTP: smtpTo(t, srv.URL()), Secrets: box})
		step(t, r, 1)
		m := <-got
		body, _ := m.Body()
		if !strings.Contains(body, link) {
			t.Fatalf("sent body %q lacks the link", body)
		}
		if m := row(t, db, id); m.State != mail.StateSent {
			t.Fatalf("after sending: %+v", m)
		}
		b, l, err := mail.Opened(box, id, row(t, db, id).Body, row(t, db, id).Link)
		if err != nil || !strings.Contains(b, link) || l != link {
			t.Fatalf("opened %q %q %v", b, l, err)
		}
	})
}
