//go:build crashpoints && unix

package crashpoint

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// Enabled reports whether this build has crash points.
const Enabled = true

// armed is the parsed DENAR_CRASHPOINTS of this process. It is the one
// piece of package state, read once; it exists only in the crashpoints
// build, where the whole point is a hook the production code does not
// have to be handed.
var armed = sync.OnceValue(func() map[string]*rule {
	specs, err := Parse(os.Getenv(Env))
	if err != nil {
		panic(err)
	}
	rules := make(map[string]*rule, len(specs))
	for _, s := range specs {
		rules[s.Name] = &rule{at: s.Hit, p: s.P, rnd: rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))}
	}
	return rules
})

// Hit counts a pass through the point name and, if its rule says so,
// writes "crashpoint: NAME fired at hit N" to standard error and kills the
// process with SIGKILL.
func Hit(name string) {
	r := armed()[name]
	if r == nil {
		return
	}
	n, fire := r.pass()
	if !fire {
		return
	}
	_, _ = fmt.Fprintf(os.Stderr, "crashpoint: %s fired at hit %d\n", name, n)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught; wait for it to land
}

func (r *rule) pass() (int64, bool) {
	n := r.hits.Add(1)
	if r.at > 0 {
		return n, n == r.at
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return n, r.rnd.Float64() < r.p
}

// rule is one armed point.
type rule struct {
	hits atomic.Int64
	at   int64 // hit=N
	mu   sync.Mutex
	p    float64 // p=F,seed=S
	rnd  *rand.Rand
}
