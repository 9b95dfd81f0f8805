package jobs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Config tunes a Runner. Zero values take the defaults.
type Config struct {
	// ID names this runner in jobs.locked_by; default host-pid-random. Two
	// runners must never share an ID.
	ID string
	// Workers is the number of jobs run at once; default 4.
	Workers int
	// PollInterval is how often the runner looks for due jobs when nothing
	// woke it; default 1s. It bounds the latency of jobs enqueued by other
	// processes and of scheduled jobs coming due.
	PollInterval time.Duration
	// Lease is how long a claim holds a job before another runner may take
	// it over; default 5 minutes. A running job's lease is extended every
	// Lease/3, so only a dead runner lets it run out.
	Lease time.Duration
	// Logger receives failures the runner cannot return; default slog.Default().
	Logger *slog.Logger
}

// Options configure one kind.
type Options struct {
	// Backoff is the retry delay after a failed attempt; default DefaultBackoff.
	Backoff Backoff
	// Timeout, if set, cancels the context of an attempt that runs longer.
	Timeout time.Duration
	// Every, if set, makes the kind periodic: the runner keeps exactly one
	// instance of it scheduled across all processes (unique key
	// "periodic:<kind>"), enqueued by Start and re-enqueued Every after the
	// previous one was due, each time one finishes (completed, cancelled or
	// discarded).
	Every time.Duration
	// MaxAttempts of the periodic instance; default DefaultMaxAttempts.
	MaxAttempts int
}

type kind struct {
	worker Worker
	opts   Options
}

// Runner claims and runs due jobs of its registered kinds.
type Runner struct {
	db     *store.DB
	cfg    Config
	log    *slog.Logger
	kinds  map[string]kind
	kindsJ string // JSON array of the registered kinds, for the claim filter

	wake    chan struct{}
	running atomic.Int64
	jobsWG  sync.WaitGroup

	mu       sync.Mutex
	started  bool
	stopping atomic.Bool
	stopLoop chan struct{}
	loopDone chan struct{}
	cancel   context.CancelFunc // cancels the contexts of running jobs
}

// NewRunner returns a runner on db. Register kinds before Start.
func NewRunner(db *store.DB, cfg Config) *Runner {
	if cfg.ID == "" {
		cfg.ID = defaultID()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 5 * time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Runner{
		db:     db,
		cfg:    cfg,
		log:    log.With("runner", cfg.ID),
		kinds:  map[string]kind{},
		kindsJ: "[]",
		wake:   make(chan struct{}, 1),
	}
}

func defaultID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// ID returns the runner's lease owner name.
func (r *Runner) ID() string { return r.cfg.ID }

// Register sets the worker for kind. It panics when called twice for one
// kind or after Start: both are programming errors found at start-up.
func (r *Runner) Register(kindName string, w Worker, opts Options) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		panic("jobs: Register after Start")
	}
	if _, dup := r.kinds[kindName]; dup {
		panic("jobs: kind registered twice: " + kindName)
	}
	if w == nil || kindName == "" {
		panic("jobs: Register needs a kind and a worker")
	}
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	r.kinds[kindName] = kind{worker: w, opts: opts}
	names := make([]string, 0, len(r.kinds))
	for k := range r.kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	b, _ := json.Marshal(names)
	r.kindsJ = string(b)
}

// EnsurePeriodic enqueues the next instance of every periodic kind that has
// none unfinished. Start calls it; it is safe in any number of processes.
func (r *Runner) EnsurePeriodic(ctx context.Context) error {
	for name, k := range r.kinds {
		if k.opts.Every <= 0 {
			continue
		}
		err := r.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := Enqueue(ctx, tx, periodicSpec(name, k.opts, tx.Now))
			return err
		})
		if err != nil {
			return fmt.Errorf("jobs: schedule periodic %s: %w", name, err)
		}
	}
	return nil
}

func periodicSpec(name string, o Options, runAt time.Time) Spec {
	return Spec{Kind: name, RunAt: runAt, MaxAttempts: o.MaxAttempts, UniqueKey: "periodic:" + name}
}

// Wake makes a started runner look for due jobs now instead of at the next
// poll; call it after committing an Enqueue in the same process.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start schedules periodic kinds and starts polling in the background. ctx
// bounds only the start-up; Stop ends the runner.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("jobs: runner already started")
	}
	if err := r.EnsurePeriodic(ctx); err != nil {
		return err
	}
	r.started = true
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	r.stopLoop = make(chan struct{})
	r.loopDone = make(chan struct{})
	go r.loop(jobCtx)
	return nil
}

// Stop stops claiming, then waits for running jobs to finish. When ctx ends
// first it cancels their contexts, waits for them to return (their results
// are still recorded; an attempt cut short by shutdown is put back without
// counting) and returns ctx.Err().
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		return nil
	}
	r.started = false
	r.stopping.Store(true)
	defer r.stopping.Store(false)
	close(r.stopLoop)
	<-r.loopDone
	done := make(chan struct{})
	go func() { r.jobsWG.Wait(); close(done) }()
	select {
	case <-done:
		r.cancel()
		return nil
	case <-ctx.Done():
		r.cancel()
		<-done
		return ctx.Err()
	}
}

func (r *Runner) loop(ctx context.Context) {
	defer close(r.loopDone)
	t := time.NewTicker(r.cfg.PollInterval)
	defer t.Stop()
	// Jobs of dead runners are looked for once a poll interval, not on
	// every wake-up: a busy runner wakes once per finished job.
	var lastExpiredScan time.Time
	for {
		if free := r.cfg.Workers - int(r.running.Load()); free > 0 {
			scan := time.Since(lastExpiredScan) >= r.cfg.PollInterval
			if scan {
				lastExpiredScan = time.Now()
			}
			claimed, err := r.claim(ctx, free, scan)
			if err != nil {
				r.log.Error("jobs: claim failed", "err", err)
			}
			for _, j := range claimed {
				r.running.Add(1)
				r.jobsWG.Add(1)
				go func() {
					defer r.jobsWG.Done()
					r.execute(ctx, j)
					r.running.Add(-1)
					r.Wake() // a slot is free
				}()
			}
		}
		select {
		case <-r.stopLoop:
			return
		case <-r.wake:
		case <-t.C:
		}
	}
}

// RunOnce claims up to Config.Workers due jobs, runs them concurrently and
// returns when all have finished, with the number run. It is the step
// function for tests and tools; do not mix it with Start on one Runner.
func (r *Runner) RunOnce(ctx context.Context) (int, error) {
	claimed, err := r.claim(ctx, r.cfg.Workers, true)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, j := range claimed {
		wg.Go(func() { r.execute(ctx, j) })
	}
	wg.Wait()
	return len(claimed), nil
}

// The claim is the one statement whose text differs by dialect. It runs in
// two parts: first jobs whose lease ran out (their runner died), found by
// the state index among the few running jobs; then due jobs (available or
// retryable with run_at passed), oldest first, walked in order on the
// partial index jobs_due (run_at, id) of waiting jobs, so that a claim
// reads only the rows it takes, however many jobs wait. Both take only
// kinds this runner knows. $1 runner id, $2 new lease end, $3 now, $4 JSON
// array of kinds, $5 limit.
const (
	// FOR UPDATE SKIP LOCKED lets concurrent runners pass over rows another
	// claim is taking; a row claimed and committed meanwhile is re-checked
	// against the WHERE clause (it is running with a live lease) and skipped.
	claimExpiredPostgres = `UPDATE jobs SET state = 'running', attempt = attempt + 1, locked_by = $1, locked_until = $2
WHERE id IN (
  SELECT id FROM jobs
  WHERE state = 'running' AND locked_until <= $3
    AND kind IN (SELECT jsonb_array_elements_text($4::jsonb))
  ORDER BY run_at, id
  LIMIT $5
  FOR UPDATE SKIP LOCKED)
RETURNING id, kind, args, attempt, max_attempts, run_at, created_at, unique_key, last_error`
	claimDuePostgres = `UPDATE jobs SET state = 'running', attempt = attempt + 1, locked_by = $1, locked_until = $2
WHERE id IN (
  SELECT id FROM jobs
  WHERE state IN ('available', 'retryable') AND run_at <= $3
    AND kind IN (SELECT jsonb_array_elements_text($4::jsonb))
  ORDER BY run_at, id
  LIMIT $5
  FOR UPDATE SKIP LOCKED)
RETURNING id, kind, args, attempt, max_attempts, run_at, created_at, unique_key, last_error`

	// SQLite has a single writer, so the statements are atomic as they are.
	claimExpiredSQLite = `UPDATE jobs SET state = 'running', attempt = attempt + 1, locked_by = $1, locked_until = $2
WHERE id IN (
  SELECT id FROM jobs
  WHERE state = 'running' AND locked_until <= $3
    AND kind IN (SELECT value FROM json_each($4))
  ORDER BY run_at, id
  LIMIT $5)
RETURNING id, kind, args, attempt, max_attempts, run_at, created_at, unique_key, last_error`
	claimDueSQLite = `UPDATE jobs SET state = 'running', attempt = attempt + 1, locked_by = $1, locked_until = $2
WHERE id IN (
  SELECT id FROM jobs
  WHERE state IN ('available', 'retryable') AND run_at <= $3
    AND kind IN (SELECT value FROM json_each($4))
  ORDER BY run_at, id
  LIMIT $5)
RETURNING id, kind, args, attempt, max_attempts, run_at, created_at, unique_key, last_error`
)

func (r *Runner) claim(ctx context.Context, limit int, scanExpired bool) ([]*Job, error) {
	if limit <= 0 || len(r.kinds) == 0 {
		return nil, nil
	}
	expired, due := claimExpiredSQLite, claimDueSQLite
	if r.db.Dialect() == store.Postgres {
		expired, due = claimExpiredPostgres, claimDuePostgres
	}
	queries := []string{due}
	if scanExpired {
		queries = []string{expired, due}
	}
	now := utc(r.db.Now())
	var out []*Job
	for _, q := range queries {
		got, err := r.claimWith(ctx, q, now, limit-len(out))
		out = append(out, got...)
		if err != nil {
			// Jobs claimed by the first statement run all the same.
			return out, err
		}
		if len(out) >= limit {
			break
		}
	}
	// RETURNING has no defined order.
	slices.SortFunc(out, func(a, b *Job) int {
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	return out, nil
}

func (r *Runner) claimWith(ctx context.Context, q string, now time.Time, limit int) ([]*Job, error) {
	rows, err := r.db.QueryWrite(ctx, q, r.cfg.ID, now.Add(r.cfg.Lease), now, r.kindsJ, limit)
	if err != nil {
		return nil, fmt.Errorf("jobs: claim: %w", err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		var (
			j       Job
			args    string
			attempt int32
			maxAtt  int32
			key     sql.NullString
		)
		if err := rows.Scan(&j.ID, &j.Kind, &args, &attempt, &maxAtt, &j.RunAt, &j.CreatedAt, &key, &j.LastError); err != nil {
			return out, fmt.Errorf("jobs: claim: scan: %w", err)
		}
		j.Args = json.RawMessage(args)
		j.runner, j.settled = r, new(atomic.Bool)
		j.Attempt, j.MaxAttempts, j.UniqueKey = int(attempt), int(maxAtt), key.String
		j.RunAt, j.CreatedAt = j.RunAt.UTC(), j.CreatedAt.UTC()
		out = append(out, &j)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("jobs: claim: %w", err)
	}
	return out, nil
}

// errLeaseExpiredLast is the result of a job whose last allowed attempt
// ended with its runner's death: it is discarded without running again.
var errLeaseExpiredLast = errors.New("jobs: lease expired on the last attempt (runner stopped or crashed)")

func (r *Runner) execute(ctx context.Context, j *Job) {
	k, ok := r.kinds[j.Kind]
	if !ok { // cannot happen: the claim filters on registered kinds
		r.finish(ctx, j, Snooze(r.cfg.PollInterval))
		return
	}
	if j.Attempt > j.MaxAttempts {
		r.finish(ctx, j, errLeaseExpiredLast)
		return
	}
	workCtx, cancel := context.WithCancel(ctx)
	if k.opts.Timeout > 0 {
		workCtx, cancel = context.WithTimeout(ctx, k.opts.Timeout)
	}
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		r.heartbeat(workCtx, cancel, j)
	}()
	err := r.work(workCtx, k.worker, j)
	shutdown := workCtx.Err() != nil && ctx.Err() != nil && r.stopping.Load()
	cancel()
	<-hbDone
	if j.settled != nil && j.settled.Load() {
		return // the worker recorded the result with its own writes
	}
	if shutdown && err != nil {
		err = Snooze(0) // cut short by Stop: not the job's fault
	}
	r.finish(ctx, j, err)
}

// work runs the worker, turning a panic into an error so that one bad job
// neither kills the process nor stays running until its lease expires.
func (r *Runner) work(ctx context.Context, w Worker, j *Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("jobs: panic in %s worker: %v\n%s", j.Kind, p, debug.Stack())
		}
	}()
	return w.Work(ctx, j)
}

// heartbeat extends the lease every Lease/3 until ctx ends. When the lease
// turns out to be lost (another runner took the job over) it cancels the
// work: the other runner's attempt is the one that counts.
func (r *Runner) heartbeat(ctx context.Context, cancel context.CancelFunc, j *Job) {
	t := time.NewTicker(r.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if j.settled != nil && j.settled.Load() {
			return
		}
		n, err := r.db.Writer().ExtendJobLease(ctx, dbq.ExtendJobLeaseParams{
			LockedUntil: sql.NullTime{Time: utc(r.db.Now()).Add(r.cfg.Lease), Valid: true},
			ID:          j.ID, LockedBy: r.cfg.ID, Attempt: int32(j.Attempt),
		})
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("jobs: extend lease failed", "job", j.ID, "kind", j.Kind, "err", err)
		case err == nil && n == 0:
			r.log.Warn("jobs: lease lost; cancelling attempt", "job", j.ID, "kind", j.Kind, "attempt", j.Attempt)
			cancel()
			return
		}
	}
}

// maxErrorLen bounds last_error: a stack trace is useful, a megabyte
// response body quoted in an error is not.
const maxErrorLen = 4000

// ErrLeaseLost is returned by Job.Settle when another runner took the job
// over (its lease ran out): the caller's transaction must roll back, and
// the other runner's attempt is the one that counts.
var ErrLeaseLost = errors.New("jobs: the job's lease was lost to another runner")

// Settle records the result of this attempt — what Work would return: nil,
// Snooze, Cancel or an error to retry — inside the caller's transaction,
// fenced by the claim: the work's own writes and the job's outcome commit
// together or not at all, and they never commit if another runner has
// taken the job over (ErrLeaseLost). Once tx commits, the runner records
// nothing more for the attempt, whatever Work returns.
func (j *Job) Settle(ctx context.Context, tx *store.Tx, result error) error {
	if j.runner == nil {
		return errors.New("jobs: Settle on a job that no runner claimed")
	}
	if err := j.runner.settleTx(ctx, tx, j, result); err != nil {
		return err
	}
	tx.AfterCommit(func() { j.settled.Store(true) })
	return nil
}

// finish records the attempt's result. It runs even when ctx was cancelled
// by Stop, so a finished attempt is never left to lease expiry.
func (r *Runner) finish(ctx context.Context, j *Job, workErr error) {
	ctx = context.WithoutCancel(ctx)
	err := r.db.InTx(ctx, func(tx *store.Tx) error { return r.settleTx(ctx, tx, j, workErr) })
	switch {
	case errors.Is(err, ErrLeaseLost):
		r.log.Warn("jobs: result dropped, lease was lost", "job", j.ID, "kind", j.Kind, "attempt", j.Attempt, "err", workErr)
	case err != nil:
		// The lease will run out and another attempt will follow.
		r.log.Error("jobs: record result failed", "job", j.ID, "kind", j.Kind, "attempt", j.Attempt, "err", err, "work_err", workErr)
	}
}

// settleTx records workErr as the result of j's attempt in tx.
func (r *Runner) settleTx(ctx context.Context, tx *store.Tx, j *Job, workErr error) error {
	var (
		snooze *snoozeError
		cancel *cancelError
	)
	msg := ""
	if workErr != nil {
		msg = workErr.Error()
		if len(msg) > maxErrorLen {
			msg = msg[:maxErrorLen]
		}
	}
	k := r.kinds[j.Kind]
	now := utc(tx.Now)
	hold := func(n int64, err error) error {
		if err == nil && n == 0 {
			return ErrLeaseLost
		}
		return err
	}
	end := func(state string) error {
		n, err := tx.FinishJob(ctx, dbq.FinishJobParams{
			State: state, LastError: msg, FinishedAt: sql.NullTime{Time: now, Valid: true},
			ID: j.ID, LockedBy: r.cfg.ID, Attempt: int32(j.Attempt),
		})
		if err != nil || n == 0 || k.opts.Every <= 0 {
			return hold(n, err)
		}
		next := utc(j.RunAt).Add(k.opts.Every)
		if !next.After(now) {
			next = now.Add(k.opts.Every)
		}
		_, err = Enqueue(ctx, tx, periodicSpec(j.Kind, k.opts, next))
		return err
	}
	switch {
	case workErr == nil:
		return end(StateCompleted)
	case errors.As(workErr, &snooze):
		return hold(tx.SnoozeJob(ctx, dbq.SnoozeJobParams{
			RunAt: now.Add(snooze.d), ID: j.ID, LockedBy: r.cfg.ID, Attempt: int32(j.Attempt),
		}))
	case errors.As(workErr, &cancel):
		return end(StateCancelled)
	case j.Attempt >= j.MaxAttempts:
		return end(StateDiscarded)
	default:
		return hold(tx.RetryJob(ctx, dbq.RetryJobParams{
			LastError: msg, RunAt: now.Add(k.opts.Backoff(j.Attempt)),
			ID: j.ID, LockedBy: r.cfg.ID, Attempt: int32(j.Attempt),
		}))
	}
}

// PurgeFinished deletes jobs that finished (completed, cancelled or
// discarded) before the cutoff, for a periodic retention job; it returns
// how many it deleted.
func PurgeFinished(ctx context.Context, db *store.DB, before time.Time) (int64, error) {
	n, err := db.Writer().DeleteFinishedJobs(ctx, sql.NullTime{Time: utc(before), Valid: true})
	if err != nil {
		return 0, fmt.Errorf("jobs: purge finished: %w", err)
	}
	return n, nil
}
