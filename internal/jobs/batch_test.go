package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// batchRecorder is a batch worker that records each batch's job ids and
// returns, per job, the result script[id] (nil when absent).
type batchRecorder struct {
	mu      sync.Mutex
	batches [][]int64
	script  map[int64]error
}

func (w *batchRecorder) WorkBatch(_ context.Context, batch []*Job) []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]int64, len(batch))
	out := make([]error, len(batch))
	for i, j := range batch {
		ids[i] = j.ID
		out[i] = w.script[j.ID]
	}
	w.batches = append(w.batches, ids)
	return out
}

// TestBatchKind: a batch kind's due jobs are claimed together, at most
// BatchSize and never more than the free workers, beside the jobs of other
// kinds, and each job's result is recorded as Work's would be.
func TestBatchKind(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		useFakeClock(db)
		cfg := quietConfig("r")
		cfg.Workers = 5
		r := NewRunner(db, cfg)
		bw := &batchRecorder{script: map[int64]error{}}
		single := &recorder{}
		r.RegisterBatch("hook", bw, Options{BatchSize: 3, Backoff: Schedule(time.Minute)})
		r.Register("mail", single, Options{})
		var ids []int64
		for range 7 {
			ids = append(ids, enqueue(t, db, Spec{Kind: "hook", MaxAttempts: 3}).ID)
		}
		mailID := enqueue(t, db, Spec{Kind: "mail"}).ID
		bw.script[ids[1]] = errors.New("receiver said 500")
		bw.script[ids[2]] = Cancel(errors.New("gone"))
		bw.script[ids[3]] = Snooze(time.Hour)

		// 5 workers: the mail job, then a batch of 3 and one of 1.
		runOnce(t, r, 5)
		if len(single.runs) != 1 || single.runs[0].ID != mailID {
			t.Fatalf("single runs = %+v", single.runs)
		}
		slices.SortFunc(bw.batches, func(a, b []int64) int { return len(b) - len(a) })
		if fmt.Sprint(bw.batches) != fmt.Sprint([][]int64{ids[0:3], ids[3:4]}) {
			t.Fatalf("batches = %v, want %v and %v", bw.batches, ids[0:3], ids[3:4])
		}
		want := map[int64]string{ids[0]: StateCompleted, ids[1]: StateRetryable, ids[2]: StateCancelled, ids[3]: StateAvailable}
		for id, st := range want {
			if j := getJob(t, db, id); j.State != st {
				t.Errorf("job %d: state %s, want %s (%+v)", id, j.State, st, j)
			}
		}
		if j := getJob(t, db, ids[1]); j.LastError != "receiver said 500" || !j.RunAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("retried job = %+v", j)
		}
		if j := getJob(t, db, ids[3]); j.Attempt != 0 {
			t.Errorf("snoozed job's attempt = %d, want it given back", j.Attempt)
		}
		runOnce(t, r, 3) // the rest: one batch of 3
		for _, id := range ids[4:] {
			if j := getJob(t, db, id); j.State != StateCompleted {
				t.Errorf("job %d: %s", id, j.State)
			}
		}
	})
}

// TestBatchPanicAndExpiredLast: a panicking batch worker fails every job of
// the batch (retryable); a job whose last attempt died with its runner is
// discarded without reaching the worker.
func TestBatchPanicAndExpiredLast(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		dead := NewRunner(db, quietConfig("dead"))
		dead.RegisterBatch("hook", &batchRecorder{}, Options{})
		last := enqueue(t, db, Spec{Kind: "hook", MaxAttempts: 1}).ID
		if _, err := dead.claim(context.Background(), "", "hook", 1, true); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour)
		other := enqueue(t, db, Spec{Kind: "hook", MaxAttempts: 3}).ID

		r := NewRunner(db, quietConfig("r"))
		var got [][]int64
		r.RegisterBatch("hook", BatchWorkerFunc(func(_ context.Context, batch []*Job) []error {
			var ids []int64
			for _, j := range batch {
				ids = append(ids, j.ID)
			}
			got = append(got, ids)
			panic("bad batch")
		}), Options{})
		runOnce(t, r, 2)
		if fmt.Sprint(got) != fmt.Sprint([][]int64{{other}}) {
			t.Fatalf("worker saw %v, want only %d", got, other)
		}
		if j := getJob(t, db, last); j.State != StateDiscarded || !strings.Contains(j.LastError, "lease expired") {
			t.Errorf("expired last attempt = %+v", j)
		}
		if j := getJob(t, db, other); j.State != StateRetryable || !strings.Contains(j.LastError, "panic in hook batch worker: bad batch") {
			t.Errorf("job of the panicking batch = %+v", j)
		}
	})
}

// TestSettleAll: a worker settles a batch in its own transaction; a job
// whose lease another runner took over is reported not held and nothing is
// written for it, while the others (completed in one statement, failed one
// by one) commit with the worker's writes and are marked settled.
func TestSettleAll(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clock := useFakeClock(db)
		cfg := quietConfig("a")
		cfg.Lease = time.Minute
		a, b := NewRunner(db, cfg), NewRunner(db, quietConfig("b"))
		a.RegisterBatch("hook", &batchRecorder{}, Options{})
		b.RegisterBatch("hook", &batchRecorder{}, Options{})
		var ids []int64
		for range 3 {
			ids = append(ids, enqueue(t, db, Spec{Kind: "hook", MaxAttempts: 5}).ID)
		}
		claimed, err := a.claim(ctx, "", "hook", 3, true)
		if err != nil || len(claimed) != 3 {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		// a's lease runs out (no heartbeat here) and b takes the first job.
		clock.Advance(time.Minute)
		if taken, err := b.claim(ctx, "", "hook", 1, true); err != nil || len(taken) != 1 || taken[0].ID != ids[0] {
			t.Fatalf("b's claim: %v %v", taken, err)
		}
		var held []bool
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			held, err = SettleAll(ctx, tx, claimed, []error{nil, errors.New("HTTP 500"), nil})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(held) != "[false true true]" {
			t.Fatalf("held = %v, want the first lost to b", held)
		}
		if j := getJob(t, db, ids[0]); j.State != StateRunning || j.LockedBy != "b" {
			t.Errorf("job taken over by b = %+v", j)
		}
		if j := getJob(t, db, ids[1]); j.State != StateRetryable || j.LastError != "HTTP 500" {
			t.Errorf("failed job = %+v", j)
		}
		if j := getJob(t, db, ids[2]); j.State != StateCompleted || j.LockedBy != "" || !j.FinishedAt.Valid {
			t.Errorf("completed job = %+v", j)
		}
		if claimed[0].settled.Load() || !claimed[1].settled.Load() || !claimed[2].settled.Load() {
			t.Error("settled marks do not follow the leases held")
		}
	})
}

// TestObserve: Config.Observe hears of each committed outcome, whether the
// runner, a worker's Settle or SettleAll recorded it, and never of a
// result dropped with a lost lease.
func TestObserve(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		useFakeClock(db)
		var mu sync.Mutex
		seen := map[string]int{}
		cfg := quietConfig("r")
		cfg.Observe = func(kind, outcome string) {
			mu.Lock()
			defer mu.Unlock()
			seen[kind+" "+outcome]++
		}
		r := NewRunner(db, cfg)
		single := &recorder{results: []error{errors.New("flaky"), Snooze(time.Minute), Cancel(errors.New("no"))}}
		r.Register("mail", single, Options{})
		r.RegisterBatch("hook", &batchRecorder{}, Options{})
		for range 4 {
			enqueue(t, db, Spec{Kind: "mail", MaxAttempts: 1})
		}
		for range 3 {
			enqueue(t, db, Spec{Kind: "hook"})
		}
		runOnce(t, r, 4) // the four mail jobs, one at a time each
		runOnce(t, r, 3) // the batch
		want := map[string]int{"mail discarded": 1, "mail snoozed": 1, "mail cancelled": 1, "mail completed": 1, "hook completed": 3}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("observed %v, want %v", seen, want)
		}
	})
}

// TestBatchHeartbeat: a running batch's leases are extended; a job of the
// batch taken over by another runner meanwhile is left to it (its result
// from the batch is dropped) while the others' results are recorded.
func TestBatchHeartbeat(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		cfg := quietConfig("r1")
		cfg.Lease = 60 * time.Millisecond // heartbeat every 20ms of real time
		r := NewRunner(db, cfg)
		release := make(chan struct{})
		started := make(chan struct{})
		r.RegisterBatch("hook", BatchWorkerFunc(func(ctx context.Context, batch []*Job) []error {
			close(started)
			<-release
			return make([]error, len(batch))
		}), Options{})
		a := enqueue(t, db, Spec{Kind: "hook"}).ID
		b := enqueue(t, db, Spec{Kind: "hook"}).ID
		done := make(chan error, 1)
		go func() { _, err := r.RunOnce(context.Background()); done <- err }()
		<-started
		// Another runner's claim of b: as if its lease had run out.
		if _, err := db.WriteDB().Exec("UPDATE jobs SET locked_by = 'r2', attempt = attempt + 1 WHERE id = $1", b); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour)
		want := clock.Now().Add(cfg.Lease)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if j := getJob(t, db, a); j.LockedUntil.Valid && j.LockedUntil.Time.Equal(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("lease not extended: %+v", getJob(t, db, a))
			}
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if j := getJob(t, db, a); j.State != StateCompleted {
			t.Errorf("job a = %+v", j)
		}
		if j := getJob(t, db, b); j.State != StateRunning || j.LockedBy != "r2" || j.LockedUntil.Time.Equal(want) {
			t.Errorf("job b, taken over = %+v", j)
		}
	})
}
