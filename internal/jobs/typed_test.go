package jobs

import (
	"context"
	"testing"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

type greetArgs struct {
	Name string `json:"name"`
}

func (greetArgs) Kind() string { return "test.greet" }

// TestTypedJobs: a job inserted from typed arguments runs its kind's
// worker with the arguments decoded; arguments that do not decode into
// the type cancel the job at its first attempt instead of retrying.
func TestTypedJobs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		r := NewRunner(db, quietConfig("typed"))
		var got []string
		Register(r, func(_ context.Context, _ *Job, a greetArgs) error {
			got = append(got, a.Name)
			return nil
		}, Options{})
		if k := r.Kinds(); len(k) != 1 || k[0] != "test.greet" {
			t.Fatalf("kinds %v", k)
		}
		var ok, bad Enqueued
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if ok, err = Insert(ctx, tx, greetArgs{Name: "Ана"}, InsertOpts{}); err != nil {
				return err
			}
			bad, err = Enqueue(ctx, tx, Spec{Kind: "test.greet", Args: map[string]int{"name": 7}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		runOnce(t, r, 2)
		if len(got) != 1 || got[0] != "Ана" {
			t.Errorf("worker saw %v, want [Ана]", got)
		}
		if j := getJob(t, db, ok.ID); j.State != StateCompleted {
			t.Errorf("typed job: %s", j.State)
		}
		if j := getJob(t, db, bad.ID); j.State != StateCancelled {
			t.Errorf("job with undecodable arguments: %s, want cancelled", j.State)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := Insert(ctx, tx, greetArgs{}, InsertOpts{MaxAttempts: -1})
			return err
		}); err == nil {
			t.Error("a negative MaxAttempts was inserted")
		}
	})
}
