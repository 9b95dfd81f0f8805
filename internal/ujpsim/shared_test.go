package ujpsim_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

var (
	moreOnce    sync.Once
	moreSigners []*ujpsim.SandboxSigner
)

// sellerUsers are four users of the sandbox seller, each with a
// certificate of its own: the seller's signer and three more, so that
// concurrent calls for one company need not share one user's rate window.
func sellerUsers(t testing.TB) []*ujpsim.SandboxSigner {
	t.Helper()
	s, _ := signers(t)
	moreOnce.Do(func() {
		for i := 2; i <= 4; i++ {
			x, err := ujpsim.NewSandboxSigner(fmt.Sprintf("EUJP-SELLER-%d", i), ujpsim.TaxSeller)
			if err != nil {
				return
			}
			moreSigners = append(moreSigners, x)
		}
	})
	if len(moreSigners) != 3 {
		t.Fatal("no signers")
	}
	return append([]*ujpsim.SandboxSigner{s}, moreSigners...)
}

// race runs the calls at once and returns their answers in order.
func race(calls ...func() answer) []answer {
	out := make([]answer, len(calls))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range calls {
		wg.Go(func() {
			<-start
			out[i] = c()
		})
	}
	close(start)
	wg.Wait()
	return out
}

// oneWins checks that exactly one of answers is a 200 and every other
// carries one of codes; it returns the winner's index.
func oneWins(t *testing.T, what string, answers []answer, codes ...string) int {
	t.Helper()
	won := -1
	for i, a := range answers {
		switch {
		case a.status == 200 && won < 0:
			won = i
		case a.status == 200:
			t.Fatalf("%s: two calls won: %s and %s", what, answers[won].body, a.body)
		case !strings.Contains(" "+strings.Join(codes, " ")+" ", " "+a.code()+" "):
			t.Fatalf("%s: %d %s %v; want one of %v", what, a.status, a.body, a.err, codes)
		}
	}
	if won < 0 {
		t.Fatalf("%s: no call won: %v", what, answers)
	}
	return won
}

func countMoves(d ujpsim.Document, to string) int {
	n := 0
	for _, h := range d.History {
		if h.NewStatus.Code == to {
			n++
		}
	}
	return n
}

// TestTwoSimulatorsAreOneUJP runs two simulators on one database through
// two separately opened stores, as two `denar serve` processes do, on both
// engines: the same docId sent to both at once is one document (E1023 for
// every other send, and no EUID in it); stornos and corrections of one
// original raced at both move it once; decisions raced at both are taken
// once; a decision at one is in the other's change feed; faults and the
// clock set at one apply at the other; a deadline passing is recorded once
// however many of them sweep at once.
func TestTwoSimulatorsAreOneUJP(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		tick := ticking(time.Millisecond)
		var jump atomic.Int64 // the base clock's leap, for the sweep below
		now := func() time.Time { return tick().Add(time.Duration(jump.Load())) }
		opts := ujpsim.Options{Now: now, Window: time.Millisecond}
		a := start(t, openAgain(t, url), opts)
		b := serve(t, newSim(t, openAgain(t, url), opts))
		users := sellerUsers(t)
		_, buyer := signers(t)
		for _, u := range users[1:] {
			if _, err := a.sim.RegisterCertificate(ctx, u.EUJPID, u.EDB, u.Cert.Raw); err != nil {
				t.Fatal(err)
			}
		}
		at := func(i int) *env { // users 0 and 2 call A, 1 and 3 call B
			if i%2 == 0 {
				return a
			}
			return b
		}

		// One docId, four sends at once, two at each simulator.
		const docs = 6
		euids := make([]string, docs)
		for i := range docs {
			id := fmt.Sprintf("shared-%d", i)
			calls := make([]func() answer, len(users))
			for j, u := range users {
				calls[j] = func() answer { return at(j).send(u, example(t, "type-100", id)) }
			}
			answers := race(calls...)
			won := oneWins(t, "the same docId at both", answers, "E1023")
			euids[i] = answers[won].m["euid"].(string)
			for _, x := range answers {
				if x.status != 200 && strings.Contains(string(x.body), euids[i]) {
					t.Fatalf("E1023 names the EUID: %s", x.body)
				}
			}
		}
		for _, sim := range []*ujpsim.Sim{a.sim, b.sim} {
			list, err := sim.Documents(ctx, ujpsim.TaxSeller)
			if err != nil || len(list) != docs {
				t.Fatalf("a simulator lists %d documents (%v), want %d", len(list), err, docs)
			}
		}

		// A decision at A is in B's change feed; B cannot take it again.
		if err := a.sim.Decide(ctx, euids[0], true, "", "во ред"); err != nil {
			t.Fatal(err)
		}
		feed := b.signed(api+"/documents/sales-invoice/changes", users[1], map[string]any{"date": time.Now().In(skopje).Format(time.DateOnly)}, nil)
		if feed.status != 200 || !strings.Contains(string(feed.body), euids[0]) || !strings.Contains(string(feed.body), `"code":"03"`) {
			t.Fatalf("B's feed lacks A's decision: %d %s", feed.status, feed.body)
		}
		var coded interface{ UJPCode() string }
		if err := b.sim.Decide(ctx, euids[0], false, "O-2", ""); !errors.As(err, &coded) || coded.UJPCode() != "E1016" {
			t.Fatalf("B decided a document A had decided: %v", err)
		}

		// Four stornos of one original at once: one is stored (in 01,
		// awaiting the buyer), the others refused while it awaits.
		stornoCalls := func(orig string, tag string) []func() answer {
			calls := make([]func() answer, len(users))
			for j, u := range users {
				calls[j] = func() answer { return at(j).send(u, stornoOf(t, at(j), orig, fmt.Sprintf("%s-%d", tag, j))) }
			}
			return calls
		}
		answers := race(stornoCalls(euids[1], "st1")...)
		storno := answers[oneWins(t, "four stornos of one original", answers, "E1022")].m["euid"].(string)
		if st := a.status(euids[1]); st != "01" {
			t.Fatalf("the original of a storno awaiting the buyer is %s", st)
		}
		// The buyer's acceptance at A, an acceptance and a rejection for
		// the buyer at B, at once: one is taken; the original is voided
		// once, or stays as it was when the rejection won.
		decisions := race(
			func() answer {
				return a.signed(api+"/documents/purchase-invoice/accept-reject", buyer, map[string]any{"euid": storno, "isAccepted": true}, nil)
			},
			func() answer { return asAnswer(b.sim.Decide(ctx, storno, true, "", "")) },
			func() answer { return asAnswer(b.sim.Decide(ctx, storno, false, "O-2", "")) },
		)
		won := oneWins(t, "three decisions on one storno", decisions, "E1016")
		orig, err := b.sim.Document(ctx, euids[1])
		if err != nil {
			t.Fatal(err)
		}
		st, err := a.sim.Document(ctx, storno)
		if err != nil {
			t.Fatal(err)
		}
		wantOrig, wantStorno, voids := "07", "03", 1
		if won == 2 {
			wantOrig, wantStorno, voids = "01", "05", 0
		}
		if orig.Status != wantOrig || st.Status != wantStorno || countMoves(orig, "07") != voids || len(st.History) != 2 {
			t.Fatalf("after decision %d: original %s (%d moves to 07), storno %s with %d history rows", won, orig.Status, countMoves(orig, "07"),
				st.Status, len(st.History))
		}

		// Two corrections and two stornos of one original at once: one
		// is stored; a correction moves the original to 09, once.
		mixed := make([]func() answer, len(users))
		for j, u := range users {
			if j < 2 {
				mixed[j] = func() answer {
					c := example(t, "correction", fmt.Sprintf("co-%d", j))
					c["document"].(map[string]any)["docReferences"].([]any)[0].(map[string]any)["docNumberRef"] = euids[2]
					return at(j).send(u, c)
				}
				continue
			}
			mixed[j] = func() answer { return at(j).send(u, stornoOf(t, at(j), euids[2], fmt.Sprintf("st2-%d", j))) }
		}
		answers = race(mixed...)
		won = oneWins(t, "corrections and stornos of one original", answers, "E1022", "E1028")
		orig, err = a.sim.Document(ctx, euids[2])
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "09", false: "01"}[won < 2]; orig.Status != want || countMoves(orig, "09") > 1 {
			t.Fatalf("after replacement %d won: original %s, %d moves to 09", won, orig.Status, countMoves(orig, "09"))
		}

		// Faults set at B apply at A; the clock advanced at A is B's.
		if err := b.sim.SetSellerOutage(ctx, ujpsim.TaxSeller, true); err != nil {
			t.Fatal(err)
		}
		if x := a.raw("GET", api+"/server-time", who(users[0]), nil, 10*time.Second); x.status != 503 {
			t.Fatalf("A during B's outage of the seller: %d %s", x.status, x.body)
		}
		if err := b.sim.SetSellerOutage(ctx, ujpsim.TaxSeller, false); err != nil {
			t.Fatal(err)
		}
		if err := a.sim.AdvanceClock(ctx, time.Hour); err != nil {
			t.Fatal(err)
		}
		if n, err := b.sim.Now(ctx); err != nil || n.Before(time.Now().Add(59*time.Minute)) {
			t.Fatalf("B's clock after A advanced it: %v %v", n, err)
		}

		// Every deadline passes at once, and both sweep at once: each
		// document still in 01 is auto-accepted once.
		before, err := b.sim.Documents(ctx, ujpsim.TaxSeller)
		if err != nil {
			t.Fatal(err)
		}
		open := map[string]bool{}
		for _, d := range before {
			open[d.EUID] = d.Status == "01"
		}
		jump.Store(int64(70 * 24 * time.Hour))
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { _, _ = a.sim.Documents(ctx, ujpsim.TaxSeller) })
			wg.Go(func() { _, _ = b.sim.Documents(ctx, ujpsim.TaxSeller) })
		}
		wg.Wait()
		after, err := a.sim.Documents(ctx, ujpsim.TaxSeller)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range after {
			want := 0
			if open[d.EUID] {
				want = 1
			}
			if got := countMoves(d, "04"); got != want || countMoves(d, "07") > 1 || countMoves(d, "09") > 1 {
				t.Fatalf("%s (docId %s, status %s): %d moves to 04, want %d; history %+v", d.EUID, d.DocID, d.Status, got, want, d.History)
			}
		}
	})
}

// asAnswer turns an error of a Go method into the answer it stands for.
func asAnswer(err error) answer {
	if err == nil {
		return answer{status: 200}
	}
	var coded interface{ UJPCode() string }
	if errors.As(err, &coded) {
		return answer{status: 409, m: map[string]any{"errorStatus": map[string]any{"errorCode": coded.UJPCode()}}, err: err}
	}
	return answer{err: err}
}

// TestRetention: documents stored longer ago than the retention go with
// their history, by the periodic job RegisterPurge schedules and by Purge;
// newer ones stay, and a purged docId is free again.
func TestRetention(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		tick := ticking(time.Millisecond)
		var offset atomic.Int64
		now := func() time.Time { return tick().Add(time.Duration(offset.Load())) }
		e := start(t, db, ujpsim.Options{Now: now, Window: time.Millisecond})
		s, _ := signers(t)
		old := e.mustSend(s, example(t, "type-100", "old-1"))
		if err := e.sim.Decide(ctx, old, true, "", ""); err != nil {
			t.Fatal(err)
		}
		offset.Add(int64(2 * time.Minute)) // within UJP's ±5 minutes for the signatures
		young := e.mustSend(s, example(t, "type-100", "new-1"))

		r := jobs.NewRunner(db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
		e.sim.RegisterPurge(r, time.Minute)
		if err := r.EnsurePeriodic(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := r.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("purge job: %d run, %v", n, err)
		}
		if _, err := e.sim.Document(ctx, old); !errors.Is(err, ujpsim.ErrNotFound) {
			t.Fatalf("a document older than the retention: %v", err)
		}
		var hist int
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM ujpsim_history WHERE euid = $1", old).Scan(&hist); err != nil || hist != 0 {
			t.Fatalf("%d history rows of the purged document (%v)", hist, err)
		}
		if d, err := e.sim.Document(ctx, young); err != nil || d.DocID != "new-1" {
			t.Fatalf("the younger document: %+v %v", d, err)
		}
		e.mustSend(s, example(t, "type-100", "old-1")) // the purged docId again
		p, err := e.sim.Purge(ctx, now().Add(time.Hour))
		if err != nil || p.Documents != 2 {
			t.Fatalf("purge everything: %+v %v", p, err)
		}
		if n, err := e.sim.DocumentCount(ctx); err != nil || n != 0 {
			t.Fatalf("%d documents left (%v)", n, err)
		}
		// Certificates that expired before the cutoff go too; the user stays.
		p, err = e.sim.Purge(ctx, now().AddDate(2, 0, 0))
		if err != nil || p.Certificates != 2 {
			t.Fatalf("purge two years ahead: %+v %v", p, err)
		}
		wantCode(t, "a send after its certificate was purged", e.send(s, example(t, "type-100", "after-1")), 401, "E1012")
	})
}
