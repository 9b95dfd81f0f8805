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
