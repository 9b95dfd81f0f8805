package httpx

import (
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a token bucket per credential: Rate requests per second on
// average, bursts of up to Burst. A zero Rate disables limiting.
//
// With Shared set (cmd/denar sets it on PostgreSQL, where several processes
// serve one database) a request that its process's bucket lets through is
// also counted in Shared, per credential and calendar second, and refused
// once that second's count passes Rate (rounded up): the combined rate of
// all processes stays within Rate in every second, whatever the number of
// processes. A burst then never exceeds Rate within one second (the
// per-process bucket still smooths bursts). When Shared fails the request
// is let through on the process's bucket alone and the error logged: an
// outage of the counter does not turn into refusals.
type RateLimit struct {
	Rate   float64
	Burst  int
	Shared WindowCounter
	Log    *slog.Logger
}

// WindowCounter counts a key's requests in one-second windows shared by
// every process (auth.RateWindows, a row per key and second).
type WindowCounter interface {
	// Hit counts one request of key in the window starting at the Unix
	// second window and returns that window's count so far.
	Hit(ctx context.Context, key string, window int64) (int64, error)
}

type limiter struct {
	cfg      RateLimit
	mu       sync.Mutex
	buckets  map[string]*bucket
	lastSwep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(cfg RateLimit) *limiter {
	if cfg.Burst <= 0 {
		cfg.Burst = int(cfg.Rate) + 1
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &limiter{cfg: cfg, buckets: map[string]*bucket{}}
}

// allow takes a token for key; when none is left it reports how long
// until one is.
func (l *limiter) allow(ctx context.Context, key string) (time.Duration, bool) {
	if l == nil || l.cfg.Rate <= 0 {
		return 0, true
	}
	now := time.Now()
	if d, ok := l.local(key, now); !ok {
		return d, false
	}
	if l.cfg.Shared == nil {
		return 0, true
	}
	window := now.Unix()
	n, err := l.cfg.Shared.Hit(context.WithoutCancel(ctx), key, window)
	if err != nil {
		l.cfg.Log.WarnContext(ctx, "shared rate limit unavailable; limiting per process", "err", err)
		return 0, true
	}
	if n > int64(math.Ceil(l.cfg.Rate)) {
		return time.Unix(window+1, 0).Sub(now), false
	}
	return 0, true
}

func (l *limiter) local(key string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Forget idle buckets now and then: a full bucket is the same as a new one.
	if now.Sub(l.lastSwep) > time.Minute {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > 10*time.Minute {
				delete(l.buckets, k)
			}
		}
		l.lastSwep = now
	}
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.Burst)}
		l.buckets[key] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// clientAddress is the key of the per-address limit: the peer's IP (a
// proxy in front is one address; see README).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr " + host
}

func rateLimited(w http.ResponseWriter, r *http.Request, wait time.Duration, who string) {
	secs := int(wait/time.Second) + 1
	w.Header().Set("Retry-After", itoa(secs))
	WriteProblem(w, r, NewProblem("rate_limited", "Too many requests for this "+who+"; retry after "+itoa(secs)+" seconds."))
}

func itoa(n int) string { return strconv.Itoa(n) }
