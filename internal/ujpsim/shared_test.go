package ujpsim_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// TestTwoSimulatorsAreOneUJP runs two simulators on one database through
// two separately opened stores, as two `denar serve` processes do: the same
// docId sent to both at once is one document (E1023 for every other send),
// a decision taken at one is in the other's change feed, faults and the
// clock set at one apply at the other, and a deadline passing is recorded
// once however many of them sweep.
func TestTwoSimulatorsAreOneUJP(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		s := signer(t)
		simA, _, a := start(t, openAgain(t, url), ujpsim.Options{})
		simB, _, b := start(t, openAgain(t, url), ujpsim.Options{})
		if _, err := simA.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
			t.Fatal(err)
		}

		const docs, tries = 8, 4
		var accepted, dups atomic.Int32
		euids := make([]atomic.Value, docs)
		var wg sync.WaitGroup
		for i := range docs {
			for j := range tries {
				c := a
				if j%2 == 1 {
					c = b
				}
				jws, err := s.Sign(doc(t, fmt.Sprintf("shared-%d", i)))
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					res, err := c.Send(ctx, s.Identity(), "100", jws)
					switch {
					case err == nil:
						accepted.Add(1)
						euids[i].Store(res.EUID)
					case ujp.IsDuplicate(err):
						dups.Add(1)
					default:
						t.Error(err)
					}
				})
			}
		}
		wg.Wait()
		if accepted.Load() != docs || dups.Load() != docs*(tries-1) {
			t.Fatalf("%d sends accepted, %d duplicates; want %d and %d", accepted.Load(), dups.Load(), docs, docs*(tries-1))
		}
		for _, sim := range []*ujpsim.Sim{simA, simB} {
			list, err := sim.Documents(ctx, ujpsim.TaxSeller)
			if err != nil || len(list) != docs {
				t.Fatalf("a simulator lists %d documents (%v), want %d", len(list), err, docs)
			}
			seen := map[string]bool{}
			for _, d := range list {
				if seen[d.DocID] {
					t.Fatalf("docId %s stored twice", d.DocID)
				}
				seen[d.DocID] = true
			}
		}

		// A decision at A is in B's change feed.
		first := euids[0].Load().(string)
		if err := simA.Decide(ctx, first, true, "", "во ред"); err != nil {
			t.Fatal(err)
		}
		feed := ujp.ChangesRequest{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), Date: time.Now().In(ujpdoc.Skopje).Format(time.DateOnly)}
		jws, _ := s.Sign(feed)
		changes, err := b.SalesChanges(ctx, s.Identity(), jws)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ch := range changes {
			if ch.EUID == first && ch.NewStatus.Code == ujp.StatusAccepted {
				found = true
			}
		}
		if !found {
			t.Fatalf("B's feed lacks A's decision on %s: %+v", first, changes)
		}
		if err := simB.Decide(ctx, first, false, "O-2", ""); !errors.As(err, new(interface{ UJPCode() string })) {
			t.Fatalf("B decided a document A had decided: %v", err)
		}

		// Two stornos of one original, one at each simulator at once: one
		// voids it, the other is refused with E1026, and the original moved
		// once. The decision at A races them and loses or wins cleanly.
		second := euids[1].Load().(string)
		orig := doc(t, "shared-1").Document
		var voids, refused atomic.Int32
		for k, c := range []*ujp.Client{a, b} {
			st, err := ujpdoc.Storno(&orig, second, fmt.Sprintf("storno-%d", k), fmt.Sprintf("S-%d", k), "S-2", nil, orig.Header.DocDate, ujpdoc.Snapshot())
			if err != nil {
				t.Fatal(err)
			}
			jws, err := s.Sign(ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), Document: *st})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				_, err := c.Send(ctx, s.Identity(), "", jws)
				var rej *ujp.RejectedError
				switch {
				case err == nil:
					voids.Add(1)
				case errors.As(err, &rej) && rej.Code == "E1026":
					refused.Add(1)
				default:
					t.Errorf("storno: %v", err)
				}
			})
		}
		wg.Go(func() { _ = simA.Decide(ctx, second, true, "", "") })
		wg.Wait()
		if voids.Load() != 1 || refused.Load() != 1 {
			t.Fatalf("two stornos of one original: %d accepted, %d refused with E1026", voids.Load(), refused.Load())
		}
		d, err := simB.Document(ctx, second)
		if err != nil || d.Status != ujp.StatusVoided {
			t.Fatalf("the original after the stornos: %+v %v", d.Status, err)
		}
		voidedMoves := 0
		for _, h := range d.History {
			if h.NewStatus.Code == ujp.StatusVoided {
				voidedMoves++
			}
		}
		if voidedMoves != 1 {
			t.Fatalf("the original was voided %d times", voidedMoves)
		}

		// Faults set at B apply at A; the clock advanced at A is B's.
		if err := simB.SetSellerOutage(ctx, ujpsim.TaxSeller, true); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Company(ctx, ujp.Identity{EUJPID: "X", EDB: ujpsim.TaxSeller}, ujpsim.TaxBuyer); !errors.Is(err, ujp.ErrUnavailable) {
			t.Fatalf("A during B's outage of the seller: %v", err)
		}
		if err := simB.SetSellerOutage(ctx, ujpsim.TaxSeller, false); err != nil {
			t.Fatal(err)
		}
		if err := simA.AdvanceClock(ctx, 70*24*time.Hour); err != nil {
			t.Fatal(err)
		}
		if now, err := simB.Now(ctx); err != nil || now.Before(time.Now().Add(69*24*time.Hour)) {
			t.Fatalf("B's clock after A advanced it: %v %v", now, err)
		}
		// Both sweep at once: every undecided document is auto-accepted,
		// once.
		wg.Go(func() { _, _ = simA.Documents(ctx, ujpsim.TaxSeller) })
		wg.Go(func() { _, _ = simB.Documents(ctx, ujpsim.TaxSeller) })
		wg.Wait()
		list, err := simB.Documents(ctx, ujpsim.TaxSeller)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range list {
			autos := 0
			for _, h := range d.History {
				if h.NewStatus.Code == ujp.StatusAutoAccepted {
					autos++
				}
			}
			want := 1
			if d.EUID == first || d.EUID == second || d.DocStorno == ujpdoc.StornoVoid { // decided, voided, or a storno (never decided)
				want = 0
			}
			if autos != want {
				t.Fatalf("%s auto-accepted %d times (status %s)", d.EUID, autos, d.Status)
			}
		}
	})
}

// TestRateLimitAcrossSimulators: UJP's one request per second per user
// holds for the calls of one user however they are spread over
// simulators sharing the store.
func TestRateLimitAcrossSimulators(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		var clock atomic.Int64
		base := time.Now()
		now := func() time.Time { return base.Add(time.Duration(clock.Load())) }
		simA, _, a := start(t, openAgain(t, url), ujpsim.Options{Now: now})
		_, _, b := start(t, openAgain(t, url), ujpsim.Options{Now: now})
		if err := simA.SetRateLimit(ctx, true); err != nil {
			t.Fatal(err)
		}
		user := ujp.Identity{EUJPID: "EUJP-RATE", EDB: ujpsim.TaxSeller}
		other := ujp.Identity{EUJPID: "EUJP-OTHER", EDB: ujpsim.TaxSeller}
		if _, err := a.Company(ctx, user, ujpsim.TaxBuyer); err != nil {
			t.Fatalf("first call: %v", err)
		}
		var rl *ujp.RateLimitedError
		if _, err := b.Company(ctx, user, ujpsim.TaxBuyer); !errors.As(err, &rl) {
			t.Fatalf("the same user at the other simulator in the same second: %v, want E4007", err)
		}
		if _, err := b.Company(ctx, other, ujpsim.TaxBuyer); err != nil {
			t.Fatalf("another user: %v", err)
		}
		clock.Add(int64(time.Second))
		if _, err := b.Company(ctx, user, ujpsim.TaxBuyer); err != nil {
			t.Fatalf("a second later: %v", err)
		}
		if _, err := a.Company(ctx, user, ujpsim.TaxBuyer); !errors.As(err, &rl) {
			t.Fatalf("again at the first simulator in that second: %v, want E4007", err)
		}
	})
}

// TestRetention: documents stored longer ago than the retention go with
// their history, by the periodic job RegisterPurge schedules and by Purge;
// newer ones stay, and a purged docId is free again.
func TestRetention(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := signer(t)
		var clock atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }
		sim, _, c := start(t, db, ujpsim.Options{Now: now})
		if _, err := sim.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		old, err := send(t, c, s, "old-1")
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.Decide(ctx, old.EUID, true, "", ""); err != nil {
			t.Fatal(err)
		}
		clock.Add(int64(2 * time.Minute)) // within UJP's ±5 minutes for the signatures
		young, err := send(t, c, s, "new-1")
		if err != nil {
			t.Fatal(err)
		}

		r := jobs.NewRunner(db, jobs.Config{Logger: slog.New(slog.DiscardHandler)})
		sim.RegisterPurge(r, time.Minute)
		if err := r.EnsurePeriodic(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := r.RunOnce(ctx); err != nil || n != 1 {
			t.Fatalf("purge job: %d run, %v", n, err)
		}
		if _, err := sim.Document(ctx, old.EUID); !errors.Is(err, ujpsim.ErrNotFound) {
			t.Fatalf("a document older than the retention: %v", err)
		}
		var hist int
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM ujpsim_history WHERE euid = $1", old.EUID).Scan(&hist); err != nil || hist != 0 {
			t.Fatalf("%d history rows of the purged document (%v)", hist, err)
		}
		if d, err := sim.Document(ctx, young.EUID); err != nil || d.DocID != "new-1" {
			t.Fatalf("the younger document: %+v %v", d, err)
		}
		if _, err := send(t, c, s, "old-1"); err != nil {
			t.Fatalf("the purged docId again: %v", err)
		}
		p, err := sim.Purge(ctx, now().Add(time.Hour))
		if err != nil || p.Documents != 2 {
			t.Fatalf("purge everything: %+v %v", p, err)
		}
		if n, err := sim.DocumentCount(ctx); err != nil || n != 0 {
			t.Fatalf("%d documents left (%v)", n, err)
		}
		if _, err := send(t, c, s, "after-1"); err != nil {
			t.Fatal(err)
		}
	})
}
