package einvoiceapi_test

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/internal/ujpturns"
)

// simWindow is the simulator's per-user rate window in these tests, and the
// pipeline's signer interval with it: UJP's limit is on, shortened, never
// off.
const simWindow = 20 * time.Millisecond

// newSimGateway starts the simulator on db with its rate limit on (one call
// per opts.Window, simWindow when unset, per X-EUJP-ID) and returns it with a client whose every call
// takes its turn from the store, as cmd/denar wires it.
func newSimGateway(t testing.TB, db *store.DB, opts ujpsim.Options) (*ujpsim.Sim, *ujp.Client, *simTransport) {
	t.Helper()
	opts.Window = cmp.Or(opts.Window, simWindow)
	sim, err := ujpsim.New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The operator's user, as UJP's portal would know it.
	if err := sim.AddUser(context.Background(), testOperator); err != nil {
		t.Fatal(err)
	}
	turns := ujpturns.New(db, ujpturns.Config{Interval: opts.Window, Margin: 30 * time.Millisecond, Now: opts.Now})
	tr := &simTransport{next: sim.Transport(), now: opts.Now}
	if tr.now == nil {
		tr.now = time.Now
	}
	client, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL, HTTPClient: &http.Client{Transport: tr},
		Now: opts.Now, Turns: turns, Scope: "sandbox", TurnWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return sim, client, tr
}

// simTransport is the way to the simulator, which can answer the next
// calls of a path itself (as something in front of UJP, or UJP in a shape
// the simulator does not make, would) and records every call.
type simTransport struct {
	next   http.RoundTripper
	now    func() time.Time // the clock calls arrive by (the simulator's)
	mu     sync.Mutex
	faults []answer
	calls  []call
	// plainDuplicate answers E1023 with UJP's own text, which names no
	// EUID (error-codes.txt), where the simulator adds one.
	plainDuplicate bool
}

// answer is a canned answer to the next count calls whose path ends with
// suffix.
type answer struct {
	suffix string
	count  int
	status int
	body   string
}

// call is a call as it went to UJP.
type call struct {
	path    string
	header  http.Header
	arrived time.Time
}

// answerNext makes the next count calls of a path ending with suffix answer
// status with body, without reaching the simulator.
func (tr *simTransport) answerNext(suffix string, count, status int, body string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.faults = append(tr.faults, answer{suffix: suffix, count: count, status: status, body: body})
}

// callsTo returns the calls of a path ending with suffix.
func (tr *simTransport) callsTo(suffix string) []call {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []call
	for _, c := range tr.calls {
		if strings.HasSuffix(c.path, suffix) {
			out = append(out, c)
		}
	}
	return out
}

func (tr *simTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.mu.Lock()
	tr.calls = append(tr.calls, call{path: r.URL.Path, header: r.Header.Clone(), arrived: tr.now()})
	var canned *answer
	for i := range tr.faults {
		if f := &tr.faults[i]; f.count > 0 && strings.HasSuffix(r.URL.Path, f.suffix) {
			f.count--
			canned = f
			break
		}
	}
	plain := tr.plainDuplicate
	tr.mu.Unlock()
	if canned == nil {
		resp, err := tr.next.RoundTrip(r)
		if err != nil || !plain || resp.StatusCode < 400 {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(body), `"E1023"`) {
			body = []byte(`{"success":false,"errorStatus":{"errorCode":"E1023","errorMessage":"Invoice already exists for that ID"}}`)
		}
		resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(string(body))), int64(len(body))
		resp.Header.Del("Content-Length")
		return resp, nil
	}
	if r.Body != nil {
		r.Body.Close()
	}
	ct := "application/json"
	if strings.HasPrefix(canned.body, "<") {
		ct = "text/html"
	}
	return &http.Response{StatusCode: canned.status, Header: http.Header{"Content-Type": {ct}}, Request: r,
		Body: io.NopCloser(strings.NewReader(canned.body)), ContentLength: int64(len(canned.body))}, nil
}

// testOperator is the operator's EUJP id in these tests (registry look-ups).
const testOperator = "denar-test-operator"

// simSetup is the sandbox's set-up on the simulator (what cmd/denar wires
// for the simulator backends): a signer's certificate registered, with
// every portal privilege.
type simSetup struct{ sim *ujpsim.Sim }

func (s simSetup) RegisterSigner(ctx context.Context, eujpID, edb string, der []byte) error {
	if _, err := s.sim.RegisterCertificate(ctx, eujpID, edb, der); err != nil {
		return err
	}
	return s.sim.Grant(ctx, eujpID, edb, "DP", "RD", "DA")
}
