package mail_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
)

// A message queued with the change that causes it, then delivered by the
// job runner. Without an SMTP server (WorkerConfig.SMTP nil) the runner
// logs it, link included, and marks it logged; a server calls Start and
// Stop instead of stepping with RunOnce.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mail-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "denar.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	runner := jobs.NewRunner(db, jobs.Config{})
	mail.Register(runner, db, mail.WorkerConfig{SMTP: nil, Log: slog.New(slog.DiscardHandler)})

	var id string
	err = db.InTx(ctx, func(tx *store.Tx) error {
		// … the change that makes the mail necessary (a new company) …
		link := "http://127.0.0.1:8081/mandates/mdt_example"
		id, err = mail.Queue(ctx, tx, mail.Message{
			To: "ana@example.mk", Subject: "Овластување за е-фактури", Body: "Прифатете го овластувањето: " + link, Link: link,
		})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := runner.RunOnce(ctx); err != nil {
		log.Fatal(err)
	}
	m, err := db.Reader().GetOutboxMail(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Recipient, m.State)
	// Output: ana@example.mk logged
}
