package jobs

import (
	"context"
	"slices"
	"time"

	"github.com/denar-mk/denar/internal/store"
)

// Args are the arguments of one kind of job, as River types them: a
// JSON-encoded value whose type names its kind. Kind must work on the zero
// value (a value receiver returning a constant).
type Args interface {
	Kind() string
}

// Register sets the worker of T's kind on r. The runner decodes each job's
// arguments into a T once, before work sees them; arguments that do not
// decode cancel the job (no retry can make them decode). It panics like
// Runner.Register.
func Register[T Args](r *Runner, work func(ctx context.Context, job *Job, args T) error, opts Options) {
	var zero T
	r.Register(zero.Kind(), WorkerFunc(func(ctx context.Context, j *Job) error {
		var a T
		if err := j.DecodeArgs(&a); err != nil {
			return Cancel(err)
		}
		return work(ctx, j, a)
	}), opts)
}

// InsertOpts are the options of Insert, those of Spec but the kind and
// the arguments.
type InsertOpts struct {
	RunAt       time.Time
	MaxAttempts int
	UniqueKey   string
}

// Insert enqueues a job of args's kind in tx (Enqueue).
func Insert(ctx context.Context, tx *store.Tx, args Args, o InsertOpts) (Enqueued, error) {
	return Enqueue(ctx, tx, Spec{Kind: args.Kind(), Args: args, RunAt: o.RunAt, MaxAttempts: o.MaxAttempts, UniqueKey: o.UniqueKey})
}

// Kinds returns the kinds registered on r, sorted.
func (r *Runner) Kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.kinds))
	for k := range r.kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// RegisterBatch sets the batch worker of T's kind on r (Runner.RegisterBatch).
// The runner decodes each job's arguments into a T once, before work sees
// them, and hands work the jobs whose arguments decode with their T at the
// same index; a job whose arguments do not decode is cancelled without
// reaching work. It panics like Runner.RegisterBatch.
func RegisterBatch[T Args](r *Runner, work func(ctx context.Context, batch []*Job, args []T) []error, opts Options) {
	var zero T
	r.RegisterBatch(zero.Kind(), BatchWorkerFunc(func(ctx context.Context, batch []*Job) []error {
		results := make([]error, len(batch))
		jobs, args, at := make([]*Job, 0, len(batch)), make([]T, 0, len(batch)), make([]int, 0, len(batch))
		for i, j := range batch {
			var a T
			if err := j.DecodeArgs(&a); err != nil {
				results[i] = Cancel(err)
				continue
			}
			jobs, args, at = append(jobs, j), append(args, a), append(at, i)
		}
		if len(jobs) == 0 {
			return results
		}
		for k, err := range work(ctx, jobs, args) {
			results[at[k]] = err
		}
		return results
	}), opts)
}
