package denar

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Retry tunes the retries of a client.
type Retry struct {
	// Attempts is the most tries of one request (the first included);
	// 1 disables retries. Default 4.
	Attempts int
	// Base is the first backoff; each next one doubles, up to Max. The
	// wait is drawn uniformly from [0, backoff] (full jitter). Defaults
	// 200 ms and 10 s.
	Base, Max time.Duration
	// MaxRetryAfter caps a server's Retry-After; a longer one is not
	// waited for and the answer is returned. Default 60 s.
	MaxRetryAfter time.Duration
}

// DefaultRetry is the retry policy of a zero Retry.
func DefaultRetry() Retry {
	return Retry{Attempts: 4, Base: 200 * time.Millisecond, Max: 10 * time.Second, MaxRetryAfter: time.Minute}
}

func (r Retry) orDefault() Retry {
	d := DefaultRetry()
	if r.Attempts <= 0 {
		r.Attempts = d.Attempts
	}
	if r.Base <= 0 {
		r.Base = d.Base
	}
	if r.Max <= 0 {
		r.Max = d.Max
	}
	if r.MaxRetryAfter <= 0 {
		r.MaxRetryAfter = d.MaxRetryAfter
	}
	return r
}

// backoff is the wait before retry n (1, 2, …): full jitter over an
// exponentially growing ceiling.
func (r Retry) backoff(n int) time.Duration {
	ceiling := r.Base << min(n-1, 30)
	if ceiling > r.Max || ceiling <= 0 {
		ceiling = r.Max
	}
	return rand.N(ceiling + 1)
}

// IdempotencyKeyHeader is the header that makes a POST safe to retry.
const IdempotencyKeyHeader = "Idempotency-Key"

// NewIdempotencyKey returns a fresh random key (128 bits, hex).
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// retrying gives each POST an Idempotency-Key (unless the caller set one),
// then sends the request, again after a network error, 429 or 503 while
// attempts remain. A request without an Idempotency-Key that is not
// idempotent by its method (PATCH) is retried only on 429 and 503, which
// the server answers before doing anything.
type retrying struct {
	base  http.RoundTripper
	retry Retry
}

func (t *retrying) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if r.Method == http.MethodPost && r.Header.Get(IdempotencyKeyHeader) == "" {
		r.Header.Set(IdempotencyKeyHeader, NewIdempotencyKey())
	}
	// The body, to send again.
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodPut ||
		r.Method == http.MethodDelete || r.Header.Get(IdempotencyKeyHeader) != ""
	for attempt := 1; ; attempt++ {
		try := r.Clone(r.Context())
		if body != nil {
			try.Body = io.NopCloser(bytes.NewReader(body))
			try.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
			try.ContentLength = int64(len(body))
		}
		resp, err := t.base.RoundTrip(try)
		last := attempt >= t.retry.Attempts
		var wait time.Duration
		switch {
		case err != nil:
			if last || !safe || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			wait = t.retry.backoff(attempt)
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
			if last {
				return resp, nil
			}
			wait = t.retry.backoff(attempt)
			if ra, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				if ra > t.retry.MaxRetryAfter {
					return resp, nil
				}
				wait = max(ra, wait)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		default:
			return resp, nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-r.Context().Done():
			timer.Stop()
			return nil, r.Context().Err()
		case <-timer.C:
		}
	}
}

// retryAfter reads Retry-After as seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
