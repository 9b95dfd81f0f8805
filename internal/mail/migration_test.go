package mail_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestMigrationFromTheOutbox: migration 00009 turns the old outbox into
// mail jobs (a sent row is sent, an unsent one is queued with a job, so a
// deployment upgraded with mail still waiting delivers it), and its Down
// step undoes that.
func TestMigrationFromTheOutbox(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		t.Parallel()
		ctx := t.Context()
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dialect := goose.DialectSQLite3
		if db.Dialect() == store.Postgres {
			dialect = goose.DialectPostgres
		}
		p, err := goose.NewProvider(dialect, db.WriteDB(), os.DirFS(filepath.Join("..", "store", "migrations", string(db.Dialect()))))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpTo(ctx, 8); err != nil {
			t.Fatal(err)
		}
		created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		for _, r := range []struct {
			id   string
			sent any
		}{{"mail_old_sent", created.Add(time.Minute)}, {"mail_old_unsent", nil}} {
			if _, err := db.WriteDB().ExecContext(ctx, `INSERT INTO mail_outbox (id, recipient, subject, body, created_at, sent_at)
VALUES ($1, 'a@example.mk', 's', 'b', $2, $3)`, r.id, created, r.sent); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := p.UpTo(ctx, 9); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{"mail_old_sent": mail.StateSent, "mail_old_unsent": mail.StateQueued} {
			if m := row(t, db, id); m.State != want {
				t.Errorf("%s: %s, want %s", id, m.State, want)
			}
		}
		js, err := db.Reader().ListJobsByKind(ctx, mail.JobKind)
		if err != nil {
			t.Fatal(err)
		}
		if len(js) != 1 || js[0].Args != `{"id":"mail_old_unsent"}` || js[0].State != jobs.StateAvailable ||
			!js[0].RunAt.Equal(created) || js[0].UniqueKey.String != "mail:mail_old_unsent" {
			t.Fatalf("jobs %+v", js)
		}
		// The job delivers it like new mail.
		r := runner(db, mail.WorkerConfig{})
		step(t, r, 1)
		if m := row(t, db, "mail_old_unsent"); m.State != mail.StateLogged {
			t.Fatalf("after the job: %+v", m)
		}
		if _, err := p.DownTo(ctx, 8); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.WriteDB().QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE kind = 'mail.send'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("mail jobs after down: %d %v", n, err)
		}
		if _, err := db.WriteDB().ExecContext(ctx, `SELECT state FROM mail_outbox`); err == nil {
			t.Fatal("state column still there after down")
		}
	})
}
