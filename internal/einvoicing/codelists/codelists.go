package codelists

// UJP's code lists as validation uses them: read from UJP by a periodic job
// (one process at a time, one kind per environment), recorded in the store
// (ujp_codelists) when they change, and read from there by every process.
// A change is recorded once, by a conditional write on the row's version,
// and told to every company of the environment as a codelists.changed
// event, in the same transaction.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// kindPrefix is the periodic job that reads UJP's code lists of one
// environment: kindPrefix + "." + the environment.
const kindPrefix = "ujp.codelists"

// CodeListChange is how UJP's code lists changed: the object of a
// codelists.changed event.
type CodeListChange struct {
	ID          string              `json:"id" example:"clc_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"Prefix clc_: the change, the same in the event of every company."`
	Object      string              `json:"object" enum:"codelist_change" example:"codelist_change" doc:"Always codelist_change."`
	Environment string              `json:"environment" enum:"sandbox,production" example:"production" doc:"The environment whose UJP changed its lists."`
	DetectedAt  time.Time           `json:"detectedAt" example:"2026-09-01T06:00:00Z" doc:"When the service read the changed lists from UJP; requests are checked against them from then on."`
	Summary     string              `json:"summary" example:"payment-types: removed P13 · tax-indicators: added DDV-14-3-10" doc:"The change in one line."`
	Lists       []ujpdoc.ListChange `json:"lists" doc:"Each list that changed: the codes added, removed and changed. GET /v1/codebooks/{name} lists the values now."`
}

// recordedState is what is recorded of an environment's lists besides the
// lists themselves.
type recordedState struct {
	// Version grows by one at each change.
	Version int64
	// FetchedAt is when UJP's lists were last read; ChangedAt when they
	// last differed from the lists before.
	FetchedAt, ChangedAt time.Time
	// Lists are the lists of ujpdoc.DiffLists by name.
	Lists map[string]listState
}

// listState is one recorded list.
type listState struct {
	Digest string    `json:"digest"`
	Since  time.Time `json:"since"` // unchanged since
	// Live: the values are UJP's (read now or earlier); false while a list
	// UJP served empty keeps the snapshot's.
	Live bool `json:"live"`
}

// codeLists is a process's copy of an environment's recorded lists.
type codeLists struct {
	env     string
	mu      sync.RWMutex
	cur     *ujpdoc.Codebooks // nil: none recorded (the snapshot applies)
	state   recordedState
	loaded  bool
	checked time.Time // when the store was last looked at (real time)
	loading atomic.Bool
}

func newCodeLists() map[string]*codeLists {
	return map[string]*codeLists{auth.EnvSandbox: {env: auth.EnvSandbox}, auth.EnvProduction: {env: auth.EnvProduction}}
}

func (l *codeLists) view() (*ujpdoc.Codebooks, recordedState) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cur, l.state
}

func (l *codeLists) set(cb *ujpdoc.Codebooks, st recordedState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cb != nil || st.Version == 0 {
		l.cur = cb
	}
	l.state, l.loaded, l.checked = st, true, time.Now()
}

// recordedLists returns env's lists as recorded (nil when none is) and
// their state. The first call of a process reads the store; later calls
// answer from the process's copy and, once it is older than
// Config.Reload, have it read again in the background (one read
// at a time), so a change recorded by another process is followed within
// that time and a request never waits for it.
func (s *Service) recordedLists(env string) (*ujpdoc.Codebooks, recordedState) {
	l := s.lists[env]
	if l == nil || s.db == nil {
		return nil, recordedState{}
	}
	l.mu.RLock()
	loaded, checked := l.loaded, l.checked
	l.mu.RUnlock()
	switch {
	case !loaded:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.reloadLists(ctx, l); err != nil {
			s.log.Warn("ujp code lists: the recorded lists were not read; validating with the snapshot for now", "environment", env, "err", err)
			l.set(nil, recordedState{})
		}
	case time.Since(checked) >= s.cfg.Reload && l.loading.CompareAndSwap(false, true):
		go func() {
			defer l.loading.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := s.reloadLists(ctx, l); err != nil {
				s.log.Warn("ujp code lists: the recorded lists were not read again; keeping this process's copy", "environment", env, "err", err)
			}
		}()
	}
	return l.view()
}

// reloadLists reads env's recorded state, and its lists when their version
// differs from the copy's.
func (s *Service) reloadLists(ctx context.Context, l *codeLists) error {
	q := s.db.Reader()
	st, err := q.GetUJPCodeListsState(ctx, l.env)
	if errors.Is(err, sql.ErrNoRows) {
		l.set(nil, recordedState{})
		return nil
	}
	if err != nil {
		return err
	}
	state, err := codeListState(st.Digests, st.Version, st.FetchedAt, st.ChangedAt)
	if err != nil {
		return err
	}
	cur, have := l.view()
	if cur != nil && have.Version == st.Version {
		l.set(cur, state)
		return nil
	}
	row, err := q.GetUJPCodeLists(ctx, l.env)
	if err != nil {
		return err
	}
	var cb ujpdoc.Codebooks
	if err := json.Unmarshal([]byte(row.Lists), &cb); err != nil {
		return fmt.Errorf("recorded lists of %s: %w", l.env, err)
	}
	if state, err = codeListState(row.Digests, row.Version, row.FetchedAt, row.ChangedAt); err != nil {
		return err
	}
	l.set(&cb, state)
	return nil
}

func codeListState(digests string, version int64, fetched, changed time.Time) (recordedState, error) {
	st := recordedState{Version: version, FetchedAt: fetched.UTC(), ChangedAt: changed.UTC()}
	if err := json.Unmarshal([]byte(digests), &st.Lists); err != nil {
		return st, fmt.Errorf("recorded code-list digests: %w", err)
	}
	return st, nil
}

// codeListsJob is the periodic code-list job of one environment: a job
// without arguments whose kind names the environment, kindPrefix + "." +
// the environment (one kind per environment, so that each has its own
// periodic job; the kinds are those stored before jobs were typed).
type codeListsJob interface {
	jobs.Args
	environment() string
}

type (
	sandboxCodeLists    struct{}
	productionCodeLists struct{}
)

func (sandboxCodeLists) environment() string    { return auth.EnvSandbox }
func (productionCodeLists) environment() string { return auth.EnvProduction }
func (j sandboxCodeLists) Kind() string         { return kindPrefix + "." + j.environment() }
func (j productionCodeLists) Kind() string      { return kindPrefix + "." + j.environment() }

// registerCodeListsOf registers T's job when its environment has a gateway
// and an operator.
func registerCodeListsOf[T codeListsJob](s *Service, r *jobs.Runner) {
	var zero T
	env := zero.environment()
	if _, ok := s.gateways[env]; !ok {
		return
	}
	if _, ok := s.operators[env]; !ok {
		return
	}
	jobs.Register(r, func(ctx context.Context, _ *jobs.Job, _ T) error {
		_, err := s.RefreshCodeLists(ctx, env)
		return err
	}, jobs.Options{Every: s.cfg.Every, MaxAttempts: 20,
		Backoff: jobs.Schedule(time.Minute, 2*time.Minute, 5*time.Minute, 15*time.Minute, 30*time.Minute)})
}

// RefreshCodeLists reads UJP's code lists of env as the operator (at
// code-list priority, in the operator's turns) and records them: the change
// they make, if any, is returned (nil for none), logged, and written to
// every company of env as a codelists.changed event. When another process
// recorded the same change first, nothing is written and nil is returned.
func (s *Service) RefreshCodeLists(ctx context.Context, env string) (*CodeListChange, error) {
	gw, ok := s.gateways[env]
	if !ok {
		return nil, fmt.Errorf("ujp code lists: no UJP gateway for %s", env)
	}
	op, ok := s.operators[env]
	if !ok {
		return nil, fmt.Errorf("ujp code lists: no operator identity for %s (DENAR_UJP_USER, DENAR_UJP_EDB)", env)
	}
	fetched, err := gw.Codebooks(ujp.WithPriority(ctx, ujp.PriorityCodeList), op)
	if err != nil {
		s.log.Warn("ujp code lists: not read, keeping the recorded lists", "environment", env, "err", err)
		return nil, err
	}
	return s.recordCodeLists(ctx, env, fetched)
}

// recordCodeLists records the lists UJP served (fetched), merged with the
// recorded ones (or the snapshot).
func (s *Service) recordCodeLists(ctx context.Context, env string, fetched *ujpdoc.Codebooks) (*CodeListChange, error) {
	q := s.db.Reader()
	prev, prevState := s.snapshot(), recordedState{}
	row, err := q.GetUJPCodeLists(ctx, env)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// Nothing recorded: validation used the snapshot until now.
	case err != nil:
		return nil, err
	default:
		var cb ujpdoc.Codebooks
		if err := json.Unmarshal([]byte(row.Lists), &cb); err != nil {
			return nil, fmt.Errorf("recorded lists of %s: %w", env, err)
		}
		if prevState, err = codeListState(row.Digests, row.Version, row.FetchedAt, row.ChangedAt); err != nil {
			return nil, err
		}
		prev = &cb
	}
	merged, kept := ujp.MergeCodebooks(prev, fetched)
	now := s.db.Now().UTC()
	merged.FetchedAt = now
	digests := ujpdoc.Digests(merged)
	lists := make(map[string]listState, len(digests))
	changed := row.Version == 0
	for name, d := range digests {
		ls := listState{Digest: d, Since: now, Live: true}
		for _, k := range kept {
			if k == name {
				ls.Live = prevState.Lists[name].Live
			}
		}
		if p, ok := prevState.Lists[name]; ok && p.Digest == d {
			ls.Since = p.Since
		} else if row.Version != 0 {
			changed = true
		}
		lists[name] = ls
	}
	var change *CodeListChange
	if diff := ujpdoc.Diff(prev, merged); changed && len(diff) > 0 {
		change = &CodeListChange{ID: denar.NewID("clc"), Object: "codelist_change", Environment: env, DetectedAt: now,
			Summary: ujpdoc.Summary(diff, 10), Lists: diff}
	}
	listsJSON, err := json.Marshal(merged)
	if err != nil {
		return nil, err
	}
	digestsJSON, err := json.Marshal(lists)
	if err != nil {
		return nil, err
	}
	recorded := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var n int64
		var err error
		switch {
		case row.Version == 0:
			n, err = tx.InsertUJPCodeLists(ctx, dbq.InsertUJPCodeListsParams{Environment: env, Lists: string(listsJSON),
				Digests: string(digestsJSON), FetchedAt: now})
		case changed:
			n, err = tx.ChangeUJPCodeLists(ctx, dbq.ChangeUJPCodeListsParams{Environment: env, Lists: string(listsJSON),
				Digests: string(digestsJSON), FetchedAt: now, Version: row.Version})
		default:
			return tx.TouchUJPCodeLists(ctx, dbq.TouchUJPCodeListsParams{Environment: env, FetchedAt: now})
		}
		if err != nil || n == 0 {
			return err // n == 0: another process recorded them first
		}
		recorded = true
		if change == nil {
			return nil
		}
		return s.writeCodeListEvents(ctx, tx, *change)
	})
	if err != nil {
		return nil, fmt.Errorf("ujp code lists of %s: %w", env, err)
	}
	if l := s.lists[env]; l != nil {
		// This process follows at once; the others within Config.Reload.
		if err := s.reloadLists(ctx, l); err != nil {
			s.log.Warn("ujp code lists: recorded, but not read back", "environment", env, "err", err)
		}
	}
	if !recorded || change == nil {
		return nil, nil
	}
	s.log.Warn("ujp code lists changed: requests are checked against UJP's new lists", "environment", env, "change", change.ID,
		"summary", change.Summary)
	return change, nil
}

// writeCodeListEvents tells every company of the change's environment: a
// code list is no one company's, but what each company may send changed,
// and events (and webhook endpoints and keys) are per company.
func (s *Service) writeCodeListEvents(ctx context.Context, tx *store.Tx, c CodeListChange) error {
	cos, err := tx.CompaniesOfEnvironment(ctx, c.Environment)
	if err != nil {
		return err
	}
	obj, err := json.Marshal(c)
	if err != nil {
		return err
	}
	drafts := make([]webhooks.Draft, len(cos))
	for i, co := range cos {
		drafts[i] = webhooks.Draft{AccountID: co.AccountID, CompanyID: co.ID, Environment: c.Environment,
			Type: webhooks.EventCodeListsChanged, ObjectID: c.ID, Object: c, Rendered: obj, At: c.DetectedAt}
	}
	return s.events.Publish(ctx, tx, drafts...)
}
