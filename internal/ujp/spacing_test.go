package ujp_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpturns"
)

// stallTransport holds every third request back for stall before it goes
// out: a caller whose turn came, delayed on its way to the wire (a
// goroutine not scheduled, a pause of the process, a connection dialled).
type stallTransport struct {
	next  http.RoundTripper
	n     atomic.Int64
	stall time.Duration
}

func (s *stallTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.n.Add(1)%3 == 1 {
		time.Sleep(s.stall)
	}
	return s.next.RoundTrip(r)
}

// TestCallsSpacedFromTheirArrival: calls of one user reach UJP at least
// its window apart even when a call goes out later than its turn. UJP
// stamps a call when it arrives; a call held back for more than the margin
// used to arrive within the window of the next, whose start was counted
// from the held call's turn, not from when it went out (E4007).
func TestCallsSpacedFromTheirArrival(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// A margin as wide as the window: what a loaded -race run adds between
		// our write and the handler is not what this test is about.
		const window, margin = 30 * time.Millisecond, 30 * time.Millisecond
		url, arrivals := stampServer(t, nil)
		turns := ujpturns.New(db, ujpturns.Config{Interval: window, Margin: margin})
		// Held back longer than the margin, shorter than the spacing.
		tr := &stallTransport{next: http.DefaultTransport.(*http.Transport).Clone(), stall: margin + 3*window/4}
		c, err := ujp.NewClient(ujp.Config{BaseURL: url, HTTPClient: &http.Client{Transport: tr}, Turns: turns,
			Scope: "sandbox", TurnWait: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		const calls = 12
		callAtOnce(t, c, calls)
		checkSpaced(t, arrivals(), calls, window, 0)
	})
}

// stallConn holds back the write of every third request it carries: the
// transport's writer, having buffered the request, is not scheduled
// before it flushes (a loaded machine).
type stallConn struct {
	net.Conn
	n     *atomic.Int64
	stall time.Duration
}

func (c stallConn) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("GET ")) && c.n.Add(1)%3 == 1 {
		time.Sleep(c.stall)
	}
	return c.Conn.Write(b)
}

// TestCallsSpacedFromTheirWrite: the next call of a user is spaced from
// when the request reached the connection, not from when the transport
// said it wrote it. The request waits in the connection's buffer until it
// is flushed, and UJP stamps the call when it reads the headers: counted
// from the transport's word (WroteHeaders, WroteRequest), a call whose
// flush was held up arrived within the window of the next.
func TestCallsSpacedFromTheirWrite(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const window, margin = 30 * time.Millisecond, 10 * time.Millisecond
		url, arrivals := stampServer(t, nil)
		turns := ujpturns.New(db, ujpturns.Config{Interval: window, Margin: margin})
		var writes atomic.Int64
		tr := http.DefaultTransport.(*http.Transport).Clone()
		dial := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// Held up longer than the margin and most of the window.
			return stallConn{Conn: conn, n: &writes, stall: margin + 3*window/4}, nil
		}
		c, err := ujp.NewClient(ujp.Config{BaseURL: url, HTTPClient: &http.Client{Transport: tr}, Turns: turns,
			Scope: "sandbox", TurnWait: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		const calls = 9
		callAtOnce(t, c, calls)
		checkSpaced(t, arrivals(), calls, window, 0)
	})
}

// TestCallAnsweredLateSpacesTheNext: a call UJP stamps later than it was
// written by more than the margin (held up on its way in: UJP's front, a
// process not scheduled) is answered late by as much, and the next call
// of the user waits the difference (up to the margin again), so that it
// does not arrive within the window of the late one. The wait makes up
// for the lateness it measured against the least round trip of the calls
// before, no more: the gap is the window, less what a loaded machine
// added to the least of those (tolerance), where without the wait the
// next call arrives held − margin (15 ms) within the window.
func TestCallAnsweredLateSpacesTheNext(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const window, margin, held = 40 * time.Millisecond, 20 * time.Millisecond, 35 * time.Millisecond
		// The first calls tell the client the usual round trip; then
		// every third is held up.
		const warm, calls = 5, 11
		url, arrivals := stampServer(t, func(k int64) time.Duration {
			if k > warm && k%3 == 0 {
				return held // read late: stamped late
			}
			return 0
		})
		turns := ujpturns.New(db, ujpturns.Config{Interval: window, Margin: margin})
		c, err := ujp.NewClient(ujp.Config{BaseURL: url, Turns: turns, Scope: "sandbox", TurnWait: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		for range calls {
			if _, err := c.ServerTime(context.Background(), signer); err != nil {
				t.Fatal(err)
			}
		}
		checkSpaced(t, arrivals(), calls, window, 5*time.Millisecond)
	})
}

// stampServer is UJP as far as these tests need it: it stamps each call
// first thing, as UJP does, after hold(k) for the k-th call (from 1; nil:
// none), a call read late, and answers with the server time. arrivals
// gives the stamps so far.
func stampServer(t *testing.T, hold func(k int64) time.Duration) (url string, arrivals func() []time.Time) {
	t.Helper()
	var mu sync.Mutex
	var arrived []time.Time
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := n.Add(1); hold != nil {
			time.Sleep(hold(k))
		}
		at := time.Now()
		mu.Lock()
		arrived = append(arrived, at)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"timestamp":"2026-01-05T12:00:00"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(arrived)
	}
}

// checkSpaced fails unless calls calls arrived, each at least window (less
// tolerance) after the one before.
func checkSpaced(t *testing.T, arrived []time.Time, calls int, window, tolerance time.Duration) {
	t.Helper()
	if len(arrived) != calls {
		t.Fatalf("%d calls arrived, want %d", len(arrived), calls)
	}
	slices.SortFunc(arrived, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(arrived); i++ {
		if gap := arrived[i].Sub(arrived[i-1]); gap < window-tolerance {
			t.Errorf("calls %d and %d of one user arrived %s apart, within UJP's window of %s", i, i+1, gap, window)
		}
	}
}

// handlerTransport serves requests with a handler in the process, as the
// simulator's in-process transport does: it never says when it wrote.
type handlerTransport struct{ h http.Handler }

func (h handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// TestSlowCallsOfATransportThatDoesNotTrace: with a transport that does
// not say when it wrote a request (a simulator in the process), calls
// longer than the spacing still overlap: once the transport has answered
// without saying, a call counts as gone when it is handed over, and the
// next waits a spacing from then, not for the answer.
func TestSlowCallsOfATransportThatDoesNotTrace(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const window, margin, slow = 30 * time.Millisecond, 10 * time.Millisecond, time.Second
		var mu sync.Mutex
		var arrived []time.Time
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrived = append(arrived, time.Now())
			mu.Unlock()
			time.Sleep(slow)
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"timestamp":"2026-01-05T12:00:00"}`))
		})
		turns := ujpturns.New(db, ujpturns.Config{Interval: window, Margin: margin})
		c, err := ujp.NewClient(ujp.Config{BaseURL: "http://ujp.in-process", HTTPClient: &http.Client{Transport: handlerTransport{h}},
			Turns: turns, Scope: "sandbox", TurnWait: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		// The first call teaches the client that its transport does not
		// say.
		if _, err := c.ServerTime(context.Background(), signer); err != nil {
			t.Fatal(err)
		}
		const calls = 6
		callAtOnce(t, c, calls)
		mu.Lock()
		defer mu.Unlock()
		times := arrived[1:]
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < window {
				t.Errorf("calls %d and %d arrived %s apart, within the window of %s", i, i+1, gap, window)
			}
		}
		// One after the other's answer, they would span (n-1) × slow.
		if span := times[len(times)-1].Sub(times[0]); span >= (calls-1)*slow {
			t.Errorf("%d calls of %s each arrived over %s: each waited for the answer to the one before", calls, slow, span)
		}
	})
}

// callAtOnce makes n calls of signer with c at once and waits for them.
func callAtOnce(t *testing.T, c *ujp.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.ServerTime(context.Background(), signer); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
