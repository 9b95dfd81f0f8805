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

type waveArgs struct {
	Name string `json:"name"`
}

func (waveArgs) Kind() string { return "test.wave" }

// TestTypedBatchJobs: a batch worker registered by its arguments' type
// gets each job with its arguments decoded, at the same index, and its
// results land on the right jobs; a job whose arguments do not decode is
// cancelled without reaching the worker.
func TestTypedBatchJobs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		r := NewRunner(db, quietConfig("typed-batch"))
		var got []string
		RegisterBatch(r, func(_ context.Context, batch []*Job, args []waveArgs) []error {
			out := make([]error, len(batch))
			for i, a := range args {
				got = append(got, a.Name)
				if a.Name == "Марко" {
					out[i] = Cancel(context.Canceled)
				}
			}
			return out
		}, Options{BatchSize: 8})
		var ana, marko, bad Enqueued
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if ana, err = Insert(ctx, tx, waveArgs{Name: "Ана"}, InsertOpts{}); err != nil {
				return err
			}
			if bad, err = Enqueue(ctx, tx, Spec{Kind: "test.wave", Args: map[string]int{"name": 7}}); err != nil {
				return err
			}
			marko, err = Insert(ctx, tx, waveArgs{Name: "Марко"}, InsertOpts{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		runOnce(t, r, 3)
		if len(got) != 2 {
			t.Errorf("worker saw %v, want Ана and Марко", got)
		}
		for _, c := range []struct {
			id   int64
			want string
		}{{ana.ID, StateCompleted}, {marko.ID, StateCancelled}, {bad.ID, StateCancelled}} {
			if j := getJob(t, db, c.id); j.State != c.want {
				t.Errorf("job %d: %s, want %s", c.id, j.State, c.want)
			}
		}
	})
}
