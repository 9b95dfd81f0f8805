package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// fakeClock replaces store.DB.Now so that leases and schedules move only
// when a test says so.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func useFakeClock(dbs ...*store.DB) *fakeClock {
	c := &fakeClock{now: t0}
	for _, db := range dbs {
		db.Now = c.Now
	}
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func quietConfig(id string) Config {
	return Config{ID: id, Workers: 4, PollInterval: 5 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
}

func enqueue(t *testing.T, db *store.DB, s Spec) Enqueued {
	t.Helper()
	var res Enqueued
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		res, err = Enqueue(context.Background(), tx, s)
		return err
	})
	if err != nil {
		t.Fatalf("enqueue %+v: %v", s, err)
	}
	return res
}

func getJob(t *testing.T, db *store.DB, id int64) dbq.Job {
	t.Helper()
	j, err := db.Reader().GetJob(context.Background(), id)
	if err != nil {
		t.Fatalf("get job %d: %v", id, err)
	}
	return j
}

func runOnce(t *testing.T, r *Runner, want int) {
	t.Helper()
	n, err := r.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	if n != want {
		t.Fatalf("RunOnce ran %d jobs, want %d", n, want)
	}
}

// recorder is a worker that records the jobs it ran and returns the next
// result from a script (nil once the script is used up).
type recorder struct {
	mu      sync.Mutex
	runs    []Job
	results []error
}

func (w *recorder) Work(_ context.Context, j *Job) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs = append(w.runs, *j)
	if len(w.results) == 0 {
		return nil
	}
	err := w.results[0]
	w.results = w.results[1:]
	return err
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	webhook := Schedule(time.Minute, 5*time.Minute, 30*time.Minute, 2*time.Hour, 6*time.Hour, 12*time.Hour)
	tests := []struct {
		name    string
		backoff Backoff
		attempt int
		want    time.Duration
	}{
		{"first", webhook, 1, time.Minute},
		{"third", webhook, 3, 30 * time.Minute},
		{"last", webhook, 6, 12 * time.Hour},
		{"past the end repeats the last", webhook, 9, 12 * time.Hour},
		{"attempt zero is the first", webhook, 0, time.Minute},
		{"empty schedule retries at once", Schedule(), 3, 0},
		{"default first", DefaultBackoff, 1, 2 * time.Second},
		{"default fourth", DefaultBackoff, 4, 257 * time.Second},
		{"default capped", DefaultBackoff, 1000, 24 * time.Hour},
	}
	for _, tt := range tests {
		if got := tt.backoff(tt.attempt); got != tt.want {
			t.Errorf("%s: backoff(%d) = %s, want %s", tt.name, tt.attempt, got, tt.want)
		}
	}
}

func TestEnqueueIsTransactional(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		useFakeClock(db)
		w := &recorder{}
		r := NewRunner(db, quietConfig("r1"))
		r.Register("greet", w, Options{})

		errRollback := errors.New("domain write failed")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := Enqueue(ctx, tx, Spec{Kind: "greet", Args: map[string]string{"who": "rolled back"}}); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatalf("InTx = %v", err)
		}
		runOnce(t, r, 0)

		res := enqueue(t, db, Spec{Kind: "greet", Args: map[string]string{"who": "Марија"}})
		if res.Duplicate || res.ID == 0 {
			t.Fatalf("enqueue = %+v", res)
		}
		runOnce(t, r, 1)
		runOnce(t, r, 0)
		if len(w.runs) != 1 {
			t.Fatalf("runs = %d", len(w.runs))
		}
		var args struct{ Who string }
		if err := w.runs[0].DecodeArgs(&args); err != nil || args.Who != "Марија" {
			t.Errorf("args = %+v, %v", args, err)
		}
		if got := w.runs[0]; got.Attempt != 1 || got.MaxAttempts != DefaultMaxAttempts || !got.RunAt.Equal(t0) {
			t.Errorf("job = %+v", got)
		}
		j := getJob(t, db, res.ID)
		if j.State != StateCompleted || !j.FinishedAt.Valid || !j.FinishedAt.Time.Equal(t0) || j.LockedBy != "" || j.LockedUntil.Valid {
			t.Errorf("stored job = %+v", j)
		}
	})
}

func TestRunAtInTheFuture(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		r := NewRunner(db, quietConfig("r1"))
		r.Register("later", &recorder{}, Options{})
		enqueue(t, db, Spec{Kind: "later", RunAt: t0.Add(time.Hour)})
		// A kind no runner here knows is left alone.
		unknown := enqueue(t, db, Spec{Kind: "someone-else"})
		runOnce(t, r, 0)
		clock.Advance(time.Hour - time.Microsecond)
		runOnce(t, r, 0)
		clock.Advance(time.Microsecond)
		runOnce(t, r, 1)
		if j := getJob(t, db, unknown.ID); j.State != StateAvailable || j.Attempt != 0 {
			t.Errorf("unknown kind job = %+v", j)
		}
	})
}

func TestUniqueKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		useFakeClock(db)
		r := NewRunner(db, quietConfig("r1"))
		w := &recorder{results: []error{errors.New("flaky")}}
		r.Register("sync", w, Options{Backoff: Schedule(0)})

		first := enqueue(t, db, Spec{Kind: "sync", UniqueKey: "company-7"})
		if first.Duplicate {
			t.Fatal("first enqueue reported as duplicate")
		}
		// Same key while available, also twice in one transaction.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 2 {
				res, err := Enqueue(ctx, tx, Spec{Kind: "sync", UniqueKey: "company-7"})
				if err != nil {
					return err
				}
				if !res.Duplicate || res.ID != first.ID {
					t.Errorf("second enqueue = %+v, want duplicate of %d", res, first.ID)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Still a duplicate while retryable.
		runOnce(t, r, 1)
		if j := getJob(t, db, first.ID); j.State != StateRetryable {
			t.Fatalf("state = %s", j.State)
		}
		if res := enqueue(t, db, Spec{Kind: "sync", UniqueKey: "company-7"}); !res.Duplicate {
			t.Errorf("enqueue while retryable = %+v", res)
		}
		// Other keys and keyless jobs are independent.
		other := enqueue(t, db, Spec{Kind: "sync", UniqueKey: "company-8"})
		plain := enqueue(t, db, Spec{Kind: "sync"})
		if other.Duplicate || plain.Duplicate {
			t.Errorf("other = %+v, plain = %+v", other, plain)
		}
		runOnce(t, r, 3)
		// Finished: the key is free again.
		again := enqueue(t, db, Spec{Kind: "sync", UniqueKey: "company-7"})
		if again.Duplicate || again.ID == first.ID {
			t.Errorf("enqueue after completion = %+v", again)
		}
		if j := getJob(t, db, first.ID); j.State != StateCompleted || j.UniqueKey.Valid {
			t.Errorf("finished job = %+v, want completed with key released", j)
		}
	})
}

func TestRetryScheduleThenDiscard(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		r := NewRunner(db, quietConfig("r1"))
		boom := errors.New("tax authority unavailable")
		w := &recorder{results: []error{boom, boom, boom, boom, boom}}
		r.Register("submit", w, Options{Backoff: Schedule(time.Minute, 5*time.Minute, 30*time.Minute)})
		id := enqueue(t, db, Spec{Kind: "submit", MaxAttempts: 5}).ID

		steps := []struct {
			wait      time.Duration // clock advance before the step
			state     string
			nextAfter time.Duration // run_at relative to the clock, for retryable
		}{
			{0, StateRetryable, time.Minute},
			{time.Minute, StateRetryable, 5 * time.Minute},
			{5 * time.Minute, StateRetryable, 30 * time.Minute},
			{30 * time.Minute, StateRetryable, 30 * time.Minute}, // the schedule's last delay repeats
			{30 * time.Minute, StateDiscarded, 0},
		}
		for i, st := range steps {
			clock.Advance(st.wait)
			if st.wait > 0 {
				// Not due a microsecond early.
				clock.Advance(-time.Microsecond)
				runOnce(t, r, 0)
				clock.Advance(time.Microsecond)
			}
			runOnce(t, r, 1)
			j := getJob(t, db, id)
			if j.State != st.state || int(j.Attempt) != i+1 || j.LastError != boom.Error() {
				t.Fatalf("step %d: job = %+v", i, j)
			}
			if st.state == StateRetryable && !j.RunAt.Equal(clock.Now().Add(st.nextAfter)) {
				t.Fatalf("step %d: run_at = %s, want now+%s", i, j.RunAt, st.nextAfter)
			}
		}
		j := getJob(t, db, id)
		if !j.FinishedAt.Valid || !j.FinishedAt.Time.Equal(clock.Now()) {
			t.Errorf("discarded job finished_at = %v", j.FinishedAt)
		}
		clock.Advance(24 * time.Hour)
		runOnce(t, r, 0)
		for i, run := range w.runs {
			if run.Attempt != i+1 {
				t.Errorf("run %d saw attempt %d", i, run.Attempt)
			}
			if i > 0 && run.LastError != boom.Error() {
				t.Errorf("run %d saw last error %q", i, run.LastError)
			}
		}
	})
}

func TestSnoozeAndCancel(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		r := NewRunner(db, quietConfig("r1"))
		w := &recorder{results: []error{Snooze(10 * time.Minute), Snooze(10 * time.Minute), nil}}
		r.Register("wait", w, Options{})
		r.Register("doomed", WorkerFunc(func(context.Context, *Job) error {
			return Cancel(fmt.Errorf("invoice %s rejected", "INV-1"))
		}), Options{Backoff: Schedule(0)})

		waitID := enqueue(t, db, Spec{Kind: "wait", MaxAttempts: 1}).ID
		doomedID := enqueue(t, db, Spec{Kind: "doomed"}).ID
		runOnce(t, r, 2)

		// Snoozed twice with MaxAttempts 1: snoozes do not use attempts.
		for range 2 {
			j := getJob(t, db, waitID)
			if j.State != StateAvailable || j.Attempt != 0 || !j.RunAt.Equal(clock.Now().Add(10*time.Minute)) {
				t.Fatalf("snoozed job = %+v", j)
			}
			runOnce(t, r, 0)
			clock.Advance(10 * time.Minute)
			runOnce(t, r, 1)
		}
		if j := getJob(t, db, waitID); j.State != StateCompleted || j.Attempt != 1 {
			t.Errorf("job after snoozes = %+v", j)
		}
		for _, run := range w.runs {
			if run.Attempt != 1 {
				t.Errorf("snoozed job ran as attempt %d", run.Attempt)
			}
		}

		j := getJob(t, db, doomedID)
		if j.State != StateCancelled || j.Attempt != 1 || !strings.Contains(j.LastError, "INV-1 rejected") || !j.FinishedAt.Valid {
			t.Errorf("cancelled job = %+v", j)
		}
	})
}

func TestPanicIsARetryableError(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		useFakeClock(db)
		r := NewRunner(db, quietConfig("r1"))
		r.Register("bad", WorkerFunc(func(context.Context, *Job) error { panic("nil map") }), Options{})
		id := enqueue(t, db, Spec{Kind: "bad"}).ID
		runOnce(t, r, 1)
		if j := getJob(t, db, id); j.State != StateRetryable || !strings.Contains(j.LastError, "panic in bad worker: nil map") {
			t.Errorf("job = %+v", j)
		}
	})
}

// TestExpiredLeaseRecovered simulates a crash: runner A claims a job and
// never finishes it. Until the lease runs out nobody else may take it; then
// runner B does, and A's late result is ignored.
func TestExpiredLeaseRecovered(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clock := useFakeClock(db)
		lease := time.Minute
		cfgA, cfgB := quietConfig("runner-a"), quietConfig("runner-b")
		cfgA.Lease, cfgB.Lease = lease, lease
		a, b := NewRunner(db, cfgA), NewRunner(db, cfgB)
		wa, wb := &recorder{}, &recorder{}
		a.Register("long", wa, Options{})
		b.Register("long", wb, Options{})
		id := enqueue(t, db, Spec{Kind: "long", MaxAttempts: 2}).ID

		claimed, err := a.claim(ctx, a.kindsJ, "", 1, true)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim = %v, %v", claimed, err)
		}
		j := getJob(t, db, id)
		if j.State != StateRunning || j.LockedBy != "runner-a" || !j.LockedUntil.Time.Equal(t0.Add(lease)) {
			t.Fatalf("claimed job = %+v", j)
		}

		clock.Advance(lease - time.Microsecond)
		runOnce(t, b, 0)
		clock.Advance(time.Microsecond)
		runOnce(t, b, 1)
		if len(wb.runs) != 1 || wb.runs[0].Attempt != 2 {
			t.Fatalf("runner b runs = %+v", wb.runs)
		}
		if j := getJob(t, db, id); j.State != StateCompleted {
			t.Fatalf("job after recovery = %+v", j)
		}

		// A comes back and reports a failure: the job stays completed.
		a.finish(ctx, claimed[0], errors.New("late failure"))
		if j := getJob(t, db, id); j.State != StateCompleted || j.LastError != "" {
			t.Errorf("job after late result = %+v", j)
		}
	})
}

// TestExpiredLeaseOnLastAttempt: a job whose runner died on its final
// attempt is discarded when recovered, not run once more.
func TestExpiredLeaseOnLastAttempt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		a, b := NewRunner(db, quietConfig("a")), NewRunner(db, quietConfig("b"))
		wb := &recorder{}
		a.Register("k", &recorder{}, Options{})
		b.Register("k", wb, Options{})
		id := enqueue(t, db, Spec{Kind: "k", MaxAttempts: 1}).ID
		if _, err := a.claim(context.Background(), a.kindsJ, "", 1, true); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour)
		runOnce(t, b, 1)
		if j := getJob(t, db, id); j.State != StateDiscarded || !strings.Contains(j.LastError, "lease expired") || len(wb.runs) != 0 {
			t.Errorf("job = %+v, runs = %d", j, len(wb.runs))
		}
	})
}

func TestHeartbeatExtendsLease(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		cfg := quietConfig("r1")
		cfg.Lease = 60 * time.Millisecond // heartbeat every 20ms of real time
		r := NewRunner(db, cfg)
		release := make(chan struct{})
		started := make(chan struct{})
		r.Register("long", WorkerFunc(func(ctx context.Context, _ *Job) error {
			close(started)
			<-release
			return ctx.Err()
		}), Options{})
		id := enqueue(t, db, Spec{Kind: "long"}).ID
		done := make(chan error, 1)
		go func() { _, err := r.RunOnce(context.Background()); done <- err }()
		<-started
		clock.Advance(time.Hour)
		want := clock.Now().Add(cfg.Lease)
		deadline := time.Now().Add(10 * time.Second)
		for {
			j := getJob(t, db, id)
			if j.LockedUntil.Valid && j.LockedUntil.Time.Equal(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("lease not extended: %+v", j)
			}
			time.Sleep(5 * time.Millisecond)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if j := getJob(t, db, id); j.State != StateCompleted {
			t.Errorf("job = %+v", j)
		}
	})
}

func TestPeriodic(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clock := useFakeClock(db)
		w := &recorder{results: []error{nil, Cancel(errors.New("skip this hour"))}}
		newRunner := func(id string) *Runner {
			r := NewRunner(db, quietConfig(id))
			r.Register("purge", w, Options{Every: time.Hour})
			return r
		}
		r1, r2 := newRunner("p1"), newRunner("p2")
		for _, r := range []*Runner{r1, r2, r1} { // several processes starting
			if err := r.EnsurePeriodic(ctx); err != nil {
				t.Fatal(err)
			}
		}
		all := func() []dbq.Job {
			js, err := db.Reader().ListJobsByKind(ctx, "purge")
			if err != nil {
				t.Fatal(err)
			}
			return js
		}
		if n := len(all()); n != 1 {
			t.Fatalf("%d periodic instances, want 1", n)
		}
		clock.Advance(10 * time.Second)
		runOnce(t, r1, 1)
		runOnce(t, r2, 0)
		js := all()
		if len(js) != 2 || js[1].State != StateAvailable || !js[1].RunAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("after first run: %+v", js)
		}
		// A cancelled instance still schedules the next one.
		clock.Advance(time.Hour)
		runOnce(t, r2, 1)
		// Runner down for a day: the next instance is an interval after
		// now, not a backlog of missed hours.
		clock.Advance(24 * time.Hour)
		runOnce(t, r1, 1)
		runOnce(t, r1, 0)
		js = all()
		if len(js) != 4 || js[1].State != StateCancelled || !js[3].RunAt.Equal(clock.Now().Add(time.Hour)) {
			t.Errorf("instances: %+v", js)
		}
	})
}

// TestStartWakeStop runs the background loop: Wake starts a job without
// waiting for the (long) poll interval, and Stop waits for it.
func TestStartWakeStop(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cfg := quietConfig("r1")
		cfg.PollInterval = time.Hour
		// The first poll happens at Start. It must be over before the job
		// exists, or the job could start without Wake: the clock signals
		// the poll reading it, then moves on, so the new job is due only
		// after that poll's "now".
		clock := useFakeClock(db)
		firstPoll := make(chan struct{})
		var once sync.Once
		db.Now = func() time.Time {
			once.Do(func() { close(firstPoll) })
			return clock.Now()
		}
		r := NewRunner(db, cfg)
		started, release := make(chan struct{}), make(chan struct{})
		var finished atomic.Bool
		r.Register("slow", WorkerFunc(func(context.Context, *Job) error {
			close(started)
			<-release
			finished.Store(true)
			return nil
		}), Options{})
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		<-firstPoll
		clock.Advance(time.Second)
		id := enqueue(t, db, Spec{Kind: "slow"}).ID
		r.Wake()
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("woken runner did not start the job")
		}
		stopped := make(chan error, 1)
		go func() { stopped <- r.Stop(ctx) }()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned before the job finished: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		if err := <-stopped; err != nil || !finished.Load() {
			t.Fatalf("Stop = %v, finished = %v", err, finished.Load())
		}
		if j := getJob(t, db, id); j.State != StateCompleted {
			t.Errorf("job = %+v", j)
		}
	})
}

// TestStopTimeoutPutsJobBack: when Stop gives up waiting, the running
// attempt is cancelled and the job made available again without using an
// attempt.
func TestStopTimeoutPutsJobBack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		r := NewRunner(db, quietConfig("r1"))
		started := make(chan struct{})
		r.Register("stuck", WorkerFunc(func(ctx context.Context, _ *Job) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}), Options{})
		id := enqueue(t, db, Spec{Kind: "stuck"}).ID
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := r.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop = %v", err)
		}
		if j := getJob(t, db, id); j.State != StateAvailable || j.Attempt != 0 || j.LockedBy != "" {
			t.Errorf("job = %+v", j)
		}
	})
}

// TestTwoRunnersRace: two runners, each on its own connection pool as in
// two processes, drain 200 jobs concurrently; every job runs exactly once.
func TestTwoRunnersRace(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		open := func() *store.DB {
			db, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
		db1, db2 := open(), open()
		if err := db1.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		const n = 200
		err := db1.InTx(ctx, func(tx *store.Tx) error {
			for i := range n {
				if _, err := Enqueue(ctx, tx, Spec{Kind: "count", Args: map[string]int{"i": i}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		var (
			mu    sync.Mutex
			runs  = map[int64]int{}
			byRun = map[string]int{}
			total atomic.Int64
		)
		var runners []*Runner
		for i, db := range []*store.DB{db1, db2} {
			id := fmt.Sprintf("racer-%d", i)
			r := NewRunner(db, quietConfig(id))
			r.Register("count", WorkerFunc(func(_ context.Context, j *Job) error {
				mu.Lock()
				runs[j.ID]++
				byRun[id]++
				mu.Unlock()
				total.Add(1)
				return nil
			}), Options{})
			runners = append(runners, r)
		}
		for _, r := range runners {
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			counts, err := db1.Reader().CountJobsByState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(counts) == 1 && counts[0].State == StateCompleted && counts[0].N == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not drained: %+v", counts)
			}
			time.Sleep(10 * time.Millisecond)
		}
		for _, r := range runners {
			if err := r.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(runs) != n || total.Load() != n {
			t.Fatalf("%d distinct jobs ran, %d runs; want %d each", len(runs), total.Load(), n)
		}
		for id, c := range runs {
			if c != 1 {
				t.Errorf("job %d ran %d times", id, c)
			}
		}
		t.Logf("runs per runner: %v", byRun)
	})
}

func TestEnqueueRejects(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tests := []struct {
			name string
			spec Spec
			want string
		}{
			{"empty kind", Spec{}, "empty kind"},
			{"negative attempts", Spec{Kind: "k", MaxAttempts: -1}, "negative MaxAttempts"},
			{"invalid raw JSON", Spec{Kind: "k", Args: json.RawMessage(`{"a":`)}, "invalid JSON"},
			{"unencodable args", Spec{Kind: "k", Args: make(chan int)}, "encode args"},
		}
		for _, tt := range tests {
			err := db.InTx(context.Background(), func(tx *store.Tx) error {
				_, err := Enqueue(context.Background(), tx, tt.spec)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
			}
		}
		counts, err := db.Reader().CountJobsByState(context.Background())
		if err != nil || len(counts) != 0 {
			t.Errorf("jobs stored after rejected enqueues: %+v, %v", counts, err)
		}
	})
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		useFakeClock(db)
		r := NewRunner(db, quietConfig("r1"))
		r.Register("slow", WorkerFunc(func(ctx context.Context, _ *Job) error {
			<-ctx.Done()
			return fmt.Errorf("calling the tax authority: %w", ctx.Err())
		}), Options{Timeout: 10 * time.Millisecond})
		id := enqueue(t, db, Spec{Kind: "slow"}).ID
		runOnce(t, r, 1)
		if j := getJob(t, db, id); j.State != StateRetryable || !strings.Contains(j.LastError, "deadline exceeded") {
			t.Errorf("job = %+v", j)
		}
	})
}

func TestPurgeFinished(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clock := useFakeClock(db)
		r := NewRunner(db, quietConfig("r1"))
		r.Register("k", &recorder{}, Options{})
		old := enqueue(t, db, Spec{Kind: "k"}).ID
		runOnce(t, r, 1)
		clock.Advance(time.Hour)
		recent := enqueue(t, db, Spec{Kind: "k"}).ID
		runOnce(t, r, 1)
		pending := enqueue(t, db, Spec{Kind: "k", RunAt: t0.Add(48 * time.Hour)}).ID
		n, err := PurgeFinished(ctx, db, clock.Now().Add(-time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("PurgeFinished = %d, %v; want 1", n, err)
		}
		if _, err := db.Reader().GetJob(ctx, old); err == nil {
			t.Error("old finished job survived the purge")
		}
		getJob(t, db, recent)
		getJob(t, db, pending)
	})
}

// BenchmarkEnqueueAndRun measures the queue's own overhead per job, one job
// at a time: an enqueue transaction, a claim and a result transaction.
func BenchmarkEnqueueAndRun(b *testing.B) {
	for _, engine := range []struct {
		name string
		open func(testing.TB) *store.DB
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(engine.name, func(b *testing.B) {
			ctx := context.Background()
			db := engine.open(b)
			r := NewRunner(db, quietConfig("bench"))
			r.Register("noop", WorkerFunc(func(context.Context, *Job) error { return nil }), Options{})
			for b.Loop() {
				err := db.InTx(ctx, func(tx *store.Tx) error {
					_, err := Enqueue(ctx, tx, Spec{Kind: "noop", Args: map[string]int{"n": 1}})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				if n, err := r.RunOnce(ctx); err != nil || n != 1 {
					b.Fatalf("RunOnce = %d, %v", n, err)
				}
			}
		})
	}
}

// TestLostLeaseCancelsAttempt: a runner that was presumed dead (its lease
// ran out and another runner took the job) notices at its next heartbeat,
// cancels its attempt, and its result is dropped.
func TestLostLeaseCancelsAttempt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clock := useFakeClock(db)
		cfgA := quietConfig("slow-a")
		cfgA.Lease = 90 * time.Millisecond // heartbeat every 30ms of real time
		a, b := NewRunner(db, cfgA), NewRunner(db, quietConfig("b"))
		started := make(chan struct{})
		a.Register("k", WorkerFunc(func(ctx context.Context, _ *Job) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}), Options{})
		wb := &recorder{}
		b.Register("k", wb, Options{})
		id := enqueue(t, db, Spec{Kind: "k"}).ID

		done := make(chan error, 1)
		go func() { _, err := a.RunOnce(context.Background()); done <- err }()
		<-started
		// The clock jumps past A's lease (as if A had hung) and B takes
		// the job over; A's next heartbeat finds the lease gone. Should A's
		// heartbeat land between the jump and B's claim, jump again.
		for deadline := time.Now().Add(10 * time.Second); ; {
			clock.Advance(time.Hour)
			n, err := b.RunOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("runner b never took over the expired lease")
			}
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("runner a's attempt was not cancelled after losing its lease")
		}
		if j := getJob(t, db, id); j.State != StateCompleted || j.LastError != "" || j.Attempt != 2 {
			t.Errorf("job = %+v", j)
		}
	})
}

// TestSettleInTheWorkersTransaction: a worker that records its result with
// its own writes (Settle) commits both together, and the runner records
// nothing more; a worker whose lease was taken over cannot commit its
// writes at all; a retry settled in the transaction follows the backoff.
func TestSettleInTheWorkersTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		clock := useFakeClock(db)
		write := func(j *Job, result error) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.ClaimSetting(ctx, dbq.ClaimSettingParams{Name: fmt.Sprintf("work-%d-%d", j.ID, j.Attempt), Value: "done", UpdatedAt: tx.Now}); err != nil {
					return err
				}
				return j.Settle(ctx, tx, result)
			})
		}
		r := NewRunner(db, quietConfig("settler"))
		var returned []error
		r.Register("k", WorkerFunc(func(ctx context.Context, j *Job) error {
			err := errors.New("temporary")
			if j.Attempt == 2 {
				err = nil
			}
			if serr := write(j, err); serr != nil {
				return serr
			}
			// What Work returns after settling no longer counts.
			returned = append(returned, Cancel(errors.New("ignored")))
			return Cancel(errors.New("ignored"))
		}), Options{Backoff: Schedule(time.Minute)})
		id := enqueue(t, db, Spec{Kind: "k"}).ID
		runOnce(t, r, 1)
		if j := getJob(t, db, id); j.State != StateRetryable || j.LastError != "temporary" || !j.RunAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("after a settled failure: %+v", j)
		}
		clock.Advance(time.Minute)
		runOnce(t, r, 1)
		if j := getJob(t, db, id); j.State != StateCompleted || j.LastError != "" || j.Attempt != 2 {
			t.Fatalf("after a settled success: %+v", j)
		}
		written := func(name string) bool {
			var n int
			if err := db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM instance_settings WHERE name = $1", name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		for _, name := range []string{fmt.Sprintf("work-%d-1", id), fmt.Sprintf("work-%d-2", id)} {
			if !written(name) {
				t.Fatalf("the work's write %s is missing", name)
			}
		}
		if len(returned) != 2 {
			t.Fatalf("%d runs", len(returned))
		}

		// A lease taken over: the late worker's writes roll back.
		a, b := NewRunner(db, quietConfig("late-a")), NewRunner(db, quietConfig("b"))
		started, release := make(chan *Job, 1), make(chan struct{})
		var late error
		a.Register("slow", WorkerFunc(func(ctx context.Context, j *Job) error {
			started <- j
			<-release
			late = write(j, nil)
			return late
		}), Options{})
		b.Register("slow", WorkerFunc(func(ctx context.Context, j *Job) error { return write(j, nil) }), Options{})
		id = enqueue(t, db, Spec{Kind: "slow"}).ID
		done := make(chan struct{})
		go func() { _, _ = a.RunOnce(context.Background()); close(done) }()
		<-started
		clock.Advance(time.Hour)
		runOnce(t, b, 1)
		close(release)
		<-done
		if !errors.Is(late, ErrLeaseLost) {
			t.Fatalf("late Settle: %v", late)
		}
		if written(fmt.Sprintf("work-%d-1", id)) {
			t.Fatal("the late worker's write committed")
		}
		if j := getJob(t, db, id); j.State != StateCompleted || j.Attempt != 2 {
			t.Fatalf("job %+v", j)
		}
	})
}

// TestCommitWakesRunners: a job enqueued due at once runs without waiting
// for a poll (the runner's poll is an hour), in the process that enqueued
// it and, on PostgreSQL, in another process on the store; a job rolled
// back wakes nobody into running it.
func TestCommitWakesRunners(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		writer := storetest.Open(t, url)
		runs := []*store.DB{writer} // SQLite: one process
		if strings.HasPrefix(url, "postgres") {
			runs = append(runs, storetest.Open(t, url))
		}
		for i, db := range runs {
			// The first poll (at Start) reads the clock at t0; the job is
			// due a second later, so only a wake-up runs it.
			clock := useFakeClock(writer, db)
			firstPoll := make(chan struct{})
			var once sync.Once
			db.Now = func() time.Time {
				once.Do(func() { close(firstPoll) })
				return clock.Now()
			}
			cfg := quietConfig(fmt.Sprintf("woken-%d", i))
			cfg.PollInterval = time.Hour
			r := NewRunner(db, cfg)
			ran := make(chan int64, 2)
			kind := fmt.Sprintf("woken-%d", i)
			r.Register(kind, WorkerFunc(func(_ context.Context, j *Job) error {
				ran <- j.ID
				return nil
			}), Options{})
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			<-firstPoll
			clock.Advance(time.Second)
			// Rolled back: no job, and the wake-up is not sent.
			rollback := errors.New("rolled back")
			if err := writer.InTx(ctx, func(tx *store.Tx) error {
				if _, err := Enqueue(ctx, tx, Spec{Kind: kind}); err != nil {
					return err
				}
				return rollback
			}); !errors.Is(err, rollback) {
				t.Fatal(err)
			}
			id := enqueue(t, writer, Spec{Kind: kind}).ID
			select {
			case got := <-ran:
				if got != id {
					t.Fatalf("ran job %d, want %d", got, id)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("runner %d (same process: %v) was not woken by the commit", i, i == 0)
			}
			if err := r.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestSnoozeWakesItsRunner: a job its worker snoozes for less than the
// poll interval runs again when due, not at the next poll (an hour).
func TestSnoozeWakesItsRunner(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cfg := quietConfig("snoozer")
		cfg.PollInterval = time.Hour
		r := NewRunner(db, cfg)
		var attempts atomic.Int32
		done := make(chan struct{})
		r.Register("turn", WorkerFunc(func(context.Context, *Job) error {
			switch attempts.Add(1) {
			case 1:
				return Snooze(30 * time.Millisecond)
			case 2:
				return errors.New("once more") // retried after the backoff
			}
			close(done)
			return nil
		}), Options{Backoff: Schedule(30 * time.Millisecond)})
		enqueue(t, db, Spec{Kind: "turn"})
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer r.Stop(ctx)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("after %d attempts the snoozed or retried job waited for the poll", attempts.Load())
		}
	})
}

// TestScheduledJobRunsWhenDue: a job enqueued for a moment later, by any
// process, runs when due, not at the runner's next poll (an hour): once
// nothing is due, the runner looks when the next waiting job is.
func TestScheduledJobRunsWhenDue(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db := storetest.Open(t, url)
		cfg := quietConfig("scheduled")
		cfg.PollInterval = time.Hour
		r := NewRunner(db, cfg)
		ran := make(chan struct{})
		r.Register("later", WorkerFunc(func(context.Context, *Job) error {
			close(ran)
			return nil
		}), Options{})
		r.Register("now", WorkerFunc(func(context.Context, *Job) error { return nil }), Options{})
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer r.Stop(ctx)
		// Enqueued in one transaction with a job due now, whose
		// wake-up makes the runner look at what waits.
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := Enqueue(ctx, tx, Spec{Kind: "later", RunAt: tx.Now.Add(100 * time.Millisecond)}); err != nil {
				return err
			}
			_, err := Enqueue(ctx, tx, Spec{Kind: "now"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-ran:
		case <-time.After(20 * time.Second):
			t.Fatal("the scheduled job waited for the poll")
		}
	})
}
