// Package crashpoint marks the instants a kill test may crash the server
// at. In the production build (no build tag) Hit is an empty function the
// compiler removes: the binary has no hook, no environment variable is
// read, nothing can crash it on purpose.
//
// A binary built with -tags crashpoints reads DENAR_CRASHPOINTS once, at
// the first Hit, and kills its own process with SIGKILL — no deferred
// function, no flush, no graceful anything — when an armed point's rule
// says so. The end-to-end crash test (cmd/denar, crash_e2e_test.go) builds
// such a binary; nothing else should.
//
// DENAR_CRASHPOINTS (test builds only) lists armed points separated by
// ";", each NAME@RULE, where RULE is
//
//	hit=N          crash at the N-th hit of the point (N ≥ 1)
//	p=F,seed=S     crash at each hit with probability F (0 < F ≤ 1), drawn
//	               from a generator seeded with S, so a run is repeatable
//	               for the same sequence of hits
//
// for example
//
//	DENAR_CRASHPOINTS="store.after_commit@hit=40;httpx.before_response@p=0.02,seed=7"
//
// Before it dies the process writes one line to standard error,
// "crashpoint: NAME fired at hit N", so a test can tell which point
// crashed it. An unknown point name or a malformed rule makes the first
// Hit panic: a test that arms a point it misspelt must not pass silently.
//
// The points (constants below) sit one line each in the production code:
// inside a write transaction just before its commit, just after the
// commit before anything else runs, when a response is about to be
// written after the handler returned, and after a reconciliation applied
// one read of UJP (a point of its own, so that a test can kill the
// process at a given read whatever else commits meanwhile).
package crashpoint

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Env is the environment variable a crashpoints build reads.
const Env = "DENAR_CRASHPOINTS"

// The crash points.
const (
	// StoreBeforeCommit is in store.DB.InTx after the transaction's work,
	// just before COMMIT: the crash loses the work and the idempotent
	// response stored with it.
	StoreBeforeCommit = "store.before_commit"
	// StoreAfterCommit is in store.DB.InTx just after COMMIT, before the
	// after-commit hooks: the work and its response are durable, nobody
	// has been told.
	StoreAfterCommit = "store.after_commit"
	// HTTPBeforeResponse is in httpx when the status line of a response
	// is about to be written, after the handler returned: the client
	// never hears the outcome.
	HTTPBeforeResponse = "httpx.before_response"
	// ReconcileAfterRead is in a reconciliation's query job just after
	// the transaction that applied one signed read of UJP (the documents
	// it repaired, imported, flagged or added, and the ask for the next
	// read) committed, before the job is recorded as done: part of the
	// day's work is durable, the rest is still to do. Its hits count the
	// reads applied, so hit=N kills after the N-th.
	ReconcileAfterRead = "einvoicing.reconcile_after_read"
)

// Names lists every point, for the parser of DENAR_CRASHPOINTS.
func Names() []string {
	return []string{StoreBeforeCommit, StoreAfterCommit, HTTPBeforeResponse, ReconcileAfterRead}
}

// Rule is one armed point of DENAR_CRASHPOINTS.
type Rule struct {
	Name string
	Hit  int64   // crash at this hit (1-based); 0 when P is used
	P    float64 // probability per hit
	Seed uint64  // seed of the draws for P
}

// Parse reads a DENAR_CRASHPOINTS value ("" arms nothing).
func Parse(v string) ([]Rule, error) {
	var out []Rule
	seen := map[string]bool{}
	for _, item := range strings.Split(v, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, spec, ok := strings.Cut(item, "@")
		if !ok || !slices.Contains(Names(), name) {
			return nil, fmt.Errorf("crashpoint: %s: %q is not NAME@RULE with NAME one of %s", Env, item, strings.Join(Names(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("crashpoint: %s: %s is armed twice", Env, name)
		}
		seen[name] = true
		r := Rule{Name: name}
		hasP, hasSeed := false, false
		for _, kv := range strings.Split(spec, ",") {
			k, val, _ := strings.Cut(kv, "=")
			var err error
			switch k {
			case "hit":
				r.Hit, err = strconv.ParseInt(val, 10, 64)
				if err == nil && r.Hit < 1 {
					err = errors.New("must be at least 1")
				}
			case "p":
				hasP = true
				r.P, err = strconv.ParseFloat(val, 64)
				if err == nil && (r.P <= 0 || r.P > 1) {
					err = errors.New("must be in (0, 1]")
				}
			case "seed":
				hasSeed = true
				r.Seed, err = strconv.ParseUint(val, 10, 64)
			default:
				err = errors.New("unknown key")
			}
			if err != nil {
				return nil, fmt.Errorf("crashpoint: %s: %s: %q: %v", Env, name, kv, err)
			}
		}
		if (r.Hit > 0) == hasP || hasP != hasSeed {
			return nil, fmt.Errorf("crashpoint: %s: %s needs hit=N, or p=F,seed=S", Env, name)
		}
		out = append(out, r)
	}
	return out, nil
}
