package httpx

import (
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a token bucket per credential: Rate requests per second on
// average, bursts of up to Burst. A zero Rate disables limiting.
type RateLimit struct {
	Rate  float64
	Burst int
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
	return &limiter{cfg: cfg, buckets: map[string]*bucket{}}
}

// allow takes a token for credential; when none is left it reports how long
// until one is.
func (l *limiter) allow(credential string) (time.Duration, bool) {
	if l.cfg.Rate <= 0 {
		return 0, true
	}
	now := time.Now()
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
	b, ok := l.buckets[credential]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.Burst)}
		l.buckets[credential] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

func itoa(n int) string { return strconv.Itoa(n) }
