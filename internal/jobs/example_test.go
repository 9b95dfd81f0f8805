package jobs_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// delivery is the arguments of a job: its type names its kind.
type delivery struct {
	URL   string `json:"url"`
	Event string `json:"event"`
}

func (delivery) Kind() string { return "webhook.deliver" }

// A job enqueued in the same transaction as the domain change, run by a
// runner with an exact retry schedule. RunOnce steps the runner; a server
// calls Start and Stop instead.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "jobs-example")
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

	runner := jobs.NewRunner(db, jobs.Config{Workers: 2})
	// The worker receives its arguments decoded; arguments that do not
	// decode cancel the job, since no retry could fix them.
	jobs.Register(runner, func(ctx context.Context, job *jobs.Job, d delivery) error {
		fmt.Printf("attempt %d: POST %s (%s)\n", job.Attempt, d.URL, d.Event)
		return nil
	}, jobs.Options{Backoff: jobs.Schedule(time.Minute, 5*time.Minute, 30*time.Minute, 2*time.Hour, 6*time.Hour, 12*time.Hour)})

	err = db.InTx(ctx, func(tx *store.Tx) error {
		// … the domain write that makes the event happen …
		_, err := jobs.Insert(ctx, tx, delivery{URL: "https://example.mk/hook", Event: "invoice.accepted"},
			jobs.InsertOpts{MaxAttempts: 7, UniqueKey: "webhook:evt_1"})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := runner.RunOnce(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: attempt 1: POST https://example.mk/hook (invoice.accepted)
}
