// Package jobs is denar's durable job queue: work that must happen later or
// must survive a crash (tax-authority submissions, webhook deliveries,
// deadlines, housekeeping) is stored as a row of the jobs table and run by a
// Runner in any denar process that shares the store.
//
// Enqueue writes the job inside the caller's own transaction, so a job
// exists exactly when the domain change that asked for it was committed
// (the transactional outbox). A Runner claims due jobs with a lease
// (locked_by, locked_until), runs the Worker registered for their kind,
// extends the lease while a long job runs, and records the result:
//
//   - nil: completed;
//   - Snooze(d): runs again after d, and the attempt does not count;
//   - Cancel(err): cancelled for good, never retried;
//   - any other error: retryable after the kind's Backoff, or discarded
//     once the job has used MaxAttempts attempts.
//
// A job whose runner died keeps its lease until locked_until passes; then
// any runner claims it again (as a new attempt). Claiming uses one UPDATE …
// RETURNING statement, with FOR UPDATE SKIP LOCKED on PostgreSQL so that
// runners in several processes never take the same job; SQLite has a single
// writer, so the same statement without it is already atomic.
//
// Kinds whose jobs are many and short (webhook deliveries) can be
// registered with RegisterBatch instead: the runner claims up to BatchSize
// of their jobs in one statement and hands them to one BatchWorker call,
// which returns a result per job and may record them, with its own writes,
// in one transaction through SettleAll.
//
// Every time the package records comes from store.DB.Now (and store.Tx.Now
// inside Enqueue), so tests replace that clock and step the runner with
// RunOnce instead of sleeping.
//
// Typical use:
//
//	r := jobs.NewRunner(db, jobs.Config{Workers: 4})
//	r.Register("webhook.deliver", jobs.WorkerFunc(deliver), jobs.Options{
//		Backoff: jobs.Schedule(time.Minute, 5*time.Minute, 30*time.Minute, 2*time.Hour, 6*time.Hour, 12*time.Hour),
//	})
//	r.Register("idempotency.purge", jobs.WorkerFunc(purge), jobs.Options{Every: time.Hour})
//	_ = r.Start(ctx)
//	defer r.Stop(shutdownCtx)
//
//	err := db.InTx(ctx, func(tx *store.Tx) error {
//		// … the domain write …
//		_, err := jobs.Enqueue(ctx, tx, jobs.Spec{Kind: "webhook.deliver", Args: delivery, MaxAttempts: 7})
//		return err
//	})
//
// A job enqueued due at once wakes the started runners of every process on
// the store when its transaction commits (store.Tx.Notify), so it runs
// without waiting for a poll; the poll is the fallback, and what runs jobs
// scheduled for later.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Job states as stored in jobs.state.
const (
	StateAvailable = "available"
	StateRunning   = "running"
	StateRetryable = "retryable"
	StateCompleted = "completed"
	StateCancelled = "cancelled"
	StateDiscarded = "discarded"
)

// DefaultMaxAttempts applies when Spec.MaxAttempts is zero.
const DefaultMaxAttempts = 10

// Spec describes a job to enqueue.
type Spec struct {
	// Kind selects the Worker; it must be registered on some Runner.
	Kind string
	// Args is encoded as JSON (a json.RawMessage is stored as is). Nil
	// stores {}.
	Args any
	// RunAt is the earliest time the job runs; zero means now.
	RunAt time.Time
	// MaxAttempts bounds the attempts before the job is discarded; zero
	// means DefaultMaxAttempts.
	MaxAttempts int
	// UniqueKey, when set, makes the enqueue a no-op while another
	// unfinished job (available, running or retryable) has the same key.
	UniqueKey string
}

// Enqueued reports what Enqueue did.
type Enqueued struct {
	// ID is the new job, or, for a duplicate, the unfinished job that holds
	// the unique key.
	ID int64
	// Duplicate is true when nothing was inserted because of UniqueKey.
	Duplicate bool
}

// Enqueue stores a job in the caller's transaction. It becomes visible to
// runners when tx commits and disappears with it if tx rolls back.
func Enqueue(ctx context.Context, tx *store.Tx, s Spec) (Enqueued, error) {
	if s.Kind == "" {
		return Enqueued{}, errors.New("jobs: enqueue: empty kind")
	}
	if s.MaxAttempts < 0 {
		return Enqueued{}, fmt.Errorf("jobs: enqueue %s: negative MaxAttempts %d", s.Kind, s.MaxAttempts)
	}
	args, err := encodeArgs(s.Args)
	if err != nil {
		return Enqueued{}, fmt.Errorf("jobs: enqueue %s: encode args: %w", s.Kind, err)
	}
	now := utc(tx.Now)
	runAt := now
	if !s.RunAt.IsZero() {
		runAt = utc(s.RunAt)
	}
	maxAttempts := s.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = DefaultMaxAttempts
	}
	key := sql.NullString{String: s.UniqueKey, Valid: s.UniqueKey != ""}
	if key.Valid {
		if err := tx.ReleaseJobUniqueKey(ctx, key); err != nil {
			return Enqueued{}, fmt.Errorf("jobs: enqueue %s: release finished unique key: %w", s.Kind, err)
		}
	}
	id, err := tx.InsertJob(ctx, dbq.InsertJobParams{
		Kind:        s.Kind,
		Args:        args,
		RunAt:       runAt,
		MaxAttempts: int32(maxAttempts),
		UniqueKey:   key,
		CreatedAt:   now,
	})
	switch {
	case err == nil:
		if !runAt.After(now) {
			// Due at once: the runners look now, not at their next poll.
			if err := tx.Notify(ctx, notifyChannel, notifyDue); err != nil {
				return Enqueued{}, fmt.Errorf("jobs: enqueue %s: %w", s.Kind, err)
			}
		}
		return Enqueued{ID: id}, nil
	case errors.Is(err, sql.ErrNoRows) && key.Valid:
		id, err := tx.GetJobIDByUniqueKey(ctx, key)
		if err != nil {
			return Enqueued{}, fmt.Errorf("jobs: enqueue %s: find job holding unique key %q: %w", s.Kind, s.UniqueKey, err)
		}
		return Enqueued{ID: id, Duplicate: true}, nil
	default:
		return Enqueued{}, fmt.Errorf("jobs: enqueue %s: %w", s.Kind, err)
	}
}

// Reschedule moves the waiting job (available or retryable) that holds
// uniqueKey to run at runAt, inside the caller's transaction: a retry
// brought forward because a person asked for it now. It reports whether
// such a job was waiting; a running or finished job is left alone.
func Reschedule(ctx context.Context, tx *store.Tx, uniqueKey string, runAt time.Time) (bool, error) {
	if uniqueKey == "" {
		return false, errors.New("jobs: reschedule: empty unique key")
	}
	n, err := tx.RescheduleJob(ctx, dbq.RescheduleJobParams{UniqueKey: sql.NullString{String: uniqueKey, Valid: true}, RunAt: utc(runAt)})
	if err != nil {
		return false, fmt.Errorf("jobs: reschedule %s: %w", uniqueKey, err)
	}
	if n > 0 && !utc(runAt).After(utc(tx.Now)) {
		if err := tx.Notify(ctx, notifyChannel, notifyDue); err != nil {
			return false, fmt.Errorf("jobs: reschedule %s: %w", uniqueKey, err)
		}
	}
	return n > 0, nil
}

// The store channel and key on which a transaction that makes a job due
// at once wakes the runners of every process sharing the store
// (store.Tx.Notify); their poll stays the fallback.
const (
	notifyChannel = "jobs"
	notifyDue     = "due"
)

func encodeArgs(v any) (string, error) {
	switch a := v.(type) {
	case nil:
		return "{}", nil
	case json.RawMessage:
		if !json.Valid(a) {
			return "", errors.New("invalid JSON")
		}
		return string(a), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// utc normalises a time for storage: UTC, so that SQLite's text timestamps
// compare in time order, and microseconds, which is what PostgreSQL keeps.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Job is a claimed job as a Worker sees it.
type Job struct {
	ID   int64
	Kind string
	Args json.RawMessage
	// Attempt counts this run: 1 on the first run. Snoozes do not count.
	Attempt     int
	MaxAttempts int
	// RunAt is when this run was due.
	RunAt     time.Time
	CreatedAt time.Time
	UniqueKey string
	// LastError is the error of the previous failed attempt, if any.
	LastError string

	runner  *Runner      // that claimed it (Settle)
	settled *atomic.Bool // Settle's transaction committed
}

// DecodeArgs unmarshals the job's JSON arguments into v.
func (j *Job) DecodeArgs(v any) error {
	if err := json.Unmarshal(j.Args, v); err != nil {
		return fmt.Errorf("jobs: decode args of %s job %d: %w", j.Kind, j.ID, err)
	}
	return nil
}

// Worker runs jobs of one kind. Work should honour ctx: it is cancelled when
// the kind's Timeout passes, when the lease is lost, and when Stop gives up
// waiting.
type Worker interface {
	Work(ctx context.Context, job *Job) error
}

// BatchWorker runs a batch of claimed jobs of one kind (Runner.RegisterBatch)
// and returns one result per job, in order, each what Work would return for
// that job. ctx ends as it does for Work (the kind's Timeout then applies to
// the whole batch). A job the worker settles itself, with its own writes
// (Job.Settle, any number of jobs in one transaction), keeps that outcome;
// the runner records the others' results together in one transaction.
type BatchWorker interface {
	WorkBatch(ctx context.Context, batch []*Job) []error
}

// BatchWorkerFunc adapts a function to BatchWorker.
type BatchWorkerFunc func(ctx context.Context, batch []*Job) []error

// WorkBatch calls f.
func (f BatchWorkerFunc) WorkBatch(ctx context.Context, batch []*Job) []error { return f(ctx, batch) }

// WorkerFunc adapts a function to Worker.
type WorkerFunc func(ctx context.Context, job *Job) error

// Work calls f.
func (f WorkerFunc) Work(ctx context.Context, job *Job) error { return f(ctx, job) }

type snoozeError struct{ d time.Duration }

func (e *snoozeError) Error() string { return fmt.Sprintf("jobs: snoozed for %s", e.d) }

// Snooze, returned by Work, reschedules the job d from now without counting
// the attempt: for "not yet" rather than "failed" (a dependency still
// processing, a rate limit).
func Snooze(d time.Duration) error {
	if d < 0 {
		d = 0
	}
	return &snoozeError{d: d}
}

type cancelError struct{ err error }

func (e *cancelError) Error() string {
	if e.err == nil {
		return "jobs: cancelled"
	}
	return "jobs: cancelled: " + e.err.Error()
}

func (e *cancelError) Unwrap() error { return e.err }

// Cancel, returned by Work, ends the job for good: a failure that no retry
// can fix (invalid arguments, a permanent rejection). err is recorded as the
// job's last error.
func Cancel(err error) error { return &cancelError{err: err} }

// Backoff returns how long to wait before retrying after failed attempt
// number attempt (1 after the first failure).
type Backoff func(attempt int) time.Duration

// Schedule is a Backoff with an exact list of delays: the delay after
// attempt n is delays[n-1], and the last delay repeats after the list ends.
// For example the webhook schedule Schedule(1m, 5m, 30m, 2h, 6h, 12h).
func Schedule(delays ...time.Duration) Backoff {
	delays = append([]time.Duration(nil), delays...)
	return func(attempt int) time.Duration {
		if len(delays) == 0 {
			return 0
		}
		if attempt < 1 {
			attempt = 1
		}
		if attempt > len(delays) {
			attempt = len(delays)
		}
		return delays[attempt-1]
	}
}

// DefaultBackoff grows polynomially, attempt⁴ seconds plus one (2s, 17s,
// 82s, 4m17s, …), capped at 24 hours. It has no jitter so that tests can
// predict it; the poll interval already spreads retries out.
func DefaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 60 {
		return 24 * time.Hour
	}
	d := time.Duration(attempt*attempt*attempt*attempt+1) * time.Second
	return min(d, 24*time.Hour)
}
