package einvoiceapi_test

import (
	"context"
	"net/http"
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
// per simWindow per X-EUJP-ID) and returns it with a client whose every call
// takes its turn from the store, as cmd/denar wires it.
func newSimGateway(t testing.TB, db *store.DB, opts ujpsim.Options) (*ujpsim.Sim, *ujp.Client) {
	t.Helper()
	opts.Window = simWindow
	sim, err := ujpsim.New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The simulator of today enforces the limit as a fault; the strict
	// simulator always does, and this call goes.
	if err := sim.SetRateLimit(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	// The operator's user, as UJP's portal would know it.
	if err := sim.AddUser(context.Background(), testOperator); err != nil {
		t.Fatal(err)
	}
	turns := ujpturns.New(db, ujpturns.Config{Interval: simWindow, Margin: 10 * time.Millisecond, Now: opts.Now})
	client, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL, HTTPClient: &http.Client{Transport: sim.Transport()},
		Now: opts.Now, Turns: turns, Scope: "sandbox", TurnWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return sim, client
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
