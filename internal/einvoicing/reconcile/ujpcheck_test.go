package reconcile

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
)

// clockGateway is a UJP whose clock is off by skew and whose lists are
// lists.
type clockGateway struct {
	ujp.Gateway
	skew  time.Duration
	lists *ujpdoc.Codebooks
}

func (g clockGateway) ServerTime(context.Context, ujp.Identity) (time.Time, error) {
	return time.Now().Add(g.skew).Truncate(time.Second), nil
}

func (g clockGateway) Codebooks(context.Context, ujp.Identity) (*ujpdoc.Codebooks, error) {
	cb := *g.lists
	return &cb, nil
}

// TestCheckUJPClockAndLists: the server-time line holds within 30 s of
// UJP's clock, warns above (and the check fails: exit status 1), fails
// above 5 minutes; the code-list line fails with the difference to the
// snapshot; the queue of each UJP user is counted by kind; each run is
// stored.
func TestCheckUJPClockAndLists(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		run := func(g clockGateway) UJPCheckReport {
			t.Helper()
			s := newRoom(db, Deps{Gateways: map[string]ujp.Gateway{auth.EnvSandbox: g},
				Operators: map[string]ujp.Identity{auth.EnvSandbox: {EUJPID: "OPERATOR", EDB: "4030000000001"}}}, Config{})
			rep, err := s.CheckUJP(ctx, UJPCheck{Environment: auth.EnvSandbox})
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		for _, c := range []struct {
			skew  time.Duration
			state string
		}{{0, CheckOK}, {-10 * time.Second, CheckOK}, {45 * time.Second, CheckWarn}, {-2 * time.Minute, CheckWarn}, {6 * time.Minute, CheckFail}} {
			rep := run(clockGateway{skew: c.skew, lists: ujpdoc.Snapshot()})
			l := rep.Line(LineServerTime)
			if l.State != c.state || rep.OK != (c.state == CheckOK) || (c.state != CheckOK) != (l.Action != "") {
				t.Fatalf("skew %s: %+v (ok %v)", c.skew, l, rep.OK)
			}
			for _, name := range []string{LineRegistry, LineCertificate, LinePrivileges} {
				if rep.Line(name).State != CheckSkipped {
					t.Fatalf("skew %s, no company: line %s %+v", c.skew, name, rep.Line(name))
				}
			}
		}

		rep := run(clockGateway{lists: einvoicingtest.ChangedLists()})
		l := rep.Line(LineCodeLists)
		for _, want := range []string{"tax-indicators +DDV-14-3-10", "payment-types -P13", "document-types ~100"} {
			if l.State != CheckFail || !strings.Contains(l.Detail, want) {
				t.Fatalf("changed lists: %+v, want %q", l, want)
			}
		}

		// A call of the operator waiting for a send's turn.
		now := db.Now().UTC().Truncate(time.Microsecond)
		if err := db.Writer().PutUJPWaiter(ctx, dbq.PutUJPWaiterParams{Key: "sandbox/OPERATOR", Waiter: "job-1",
			Priority: int32(ujp.PrioritySend), Since: now, SeenAt: now}); err != nil {
			t.Fatal(err)
		}
		rep = run(clockGateway{lists: ujpdoc.Snapshot()})
		if d := rep.Line(LineRateBudget).Detail; !strings.Contains(d, "OPERATOR: 1 waiting (1 send)") {
			t.Fatalf("rate line: %s", d)
		}
		// A company whose certificate names no EUJP user: its identity
		// fails, the operator's is still checked.
		co, err := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvSandbox, einvoicingtest.TaxNumber("40300003", 1))
		if err != nil {
			t.Fatal(err)
		}
		g := clockGateway{lists: ujpdoc.Snapshot()}
		s := newRoom(db, Deps{Gateways: map[string]ujp.Gateway{auth.EnvSandbox: g, auth.EnvProduction: g},
			Operators: map[string]ujp.Identity{auth.EnvSandbox: {EUJPID: "OPERATOR", EDB: "4030000000001"}}}, Config{})
		corep, err := s.CheckUJP(ctx, UJPCheck{Environment: auth.EnvSandbox, CompanyID: co.CompanyID})
		if err != nil {
			t.Fatal(err)
		}
		if l := corep.Line(LineIdentity); l.State != CheckFail || !strings.Contains(l.Detail, "names no EUJP user") ||
			!strings.Contains(l.Detail, "accepted: the operator (X-EUJP-ID OPERATOR, X-EDB "+einvoicingtest.TaxNumber("40300003", 1)) || !strings.Contains(l.Action, "EUJP id") {
			t.Fatalf("identity of a company without an EUJP user: %+v", l)
		}
		if _, err := s.CheckUJP(ctx, UJPCheck{Environment: auth.EnvProduction, CompanyID: co.CompanyID}); err == nil || !strings.Contains(err.Error(), "is in sandbox") {
			t.Fatal("a sandbox company checked in production")
		}

		last, err := db.Reader().LastUJPCheck(ctx, dbq.LastUJPCheckParams{CompanyID: "", Environment: auth.EnvSandbox})
		if err != nil || last.ID != rep.ID || !last.Ok {
			t.Fatalf("last stored check: %+v %v, want %s", last, err, rep.ID)
		}
	})
}
