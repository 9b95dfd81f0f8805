package httpx

import (
	"errors"
	"net/http"
	"os"
	"strconv"
)

// DefaultMaxBodyBytes is the body limit of every route that declares none
// (operations through Spec.MaxBodyBytes or huma's Operation.MaxBodyBytes;
// plain handlers such as the OAuth token endpoint always have this one).
const DefaultMaxBodyBytes = 64 << 10

// DefaultHeavyConcurrency is how many requests to heavy operations
// (Spec.Heavy) one service runs at once unless Options says otherwise.
const DefaultHeavyConcurrency = 2

// heavyRetryAfter is the Retry-After, in seconds, of a heavy request turned
// away because the others are still running: about what one takes.
const heavyRetryAfter = 2

// routeLimits are the body limit of each route and the slots for heavy
// work of one service. The maps are filled while operations are registered,
// before the service serves, and only read afterwards.
type routeLimits struct {
	defaultBody int64
	body        map[string]int64 // by ServeMux pattern: "POST /v1/files/mpin/xml"
	heavy       map[string]bool
	slots       chan struct{} // nil: heavy work is not limited
}

func newRouteLimits(defaultBody int64, heavyConcurrency int) *routeLimits {
	l := &routeLimits{defaultBody: defaultBody, body: map[string]int64{}, heavy: map[string]bool{}}
	if heavyConcurrency > 0 {
		l.slots = make(chan struct{}, heavyConcurrency)
	}
	return l
}

func (l *routeLimits) bodyLimit(pattern string) int64 {
	if n, ok := l.body[pattern]; ok {
		return n
	}
	return l.defaultBody
}

// admit applies the body limit of the route to r. A declared Content-Length
// over it is answered 413 payload_too_large at once, before any byte of the
// body is read or the credential is looked at. Any other body is read
// through http.MaxBytesReader, so whoever reads past the limit gets an
// *http.MaxBytesError, which the problem mapping turns into the same 413.
func (l *routeLimits) admit(w http.ResponseWriter, rec *recorder, r *http.Request, pattern string) bool {
	limit := l.bodyLimit(pattern)
	if r.ContentLength > limit {
		rec.Header().Set("Connection", "close")
		WriteProblem(rec, r, payloadTooLarge(limit))
		return false
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	return true
}

// acquireHeavy takes a slot for a request to a heavy route, or answers
// 503 server_busy with Retry-After when every slot is taken; the request
// is not queued, so a burst costs no memory while it waits.
func (l *routeLimits) acquireHeavy(rec *recorder, r *http.Request, pattern string) (release func(), ok bool) {
	if l.slots == nil || !l.heavy[pattern] {
		return nil, true
	}
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, true
	default:
	}
	rec.Header().Set("Retry-After", strconv.Itoa(heavyRetryAfter))
	if r.ContentLength != 0 {
		// The body is not read; do not keep the connection for it.
		rec.Header().Set("Connection", "close")
	}
	WriteProblem(rec, r, NewProblem("server_busy", "The server is running as many file and batch requests as it allows; retry after "+
		strconv.Itoa(heavyRetryAfter)+" seconds."))
	return nil, false
}

func payloadTooLarge(limit int64) *Problem {
	return NewProblem("payload_too_large", "The request body is larger than this operation accepts ("+strconv.FormatInt(limit, 10)+" bytes).")
}

// bodyReadProblem is the problem for an error reading a request body: over
// the limit, too slow, or broken off.
func bodyReadProblem(err error) *Problem {
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return payloadTooLarge(mb.Limit)
	case isTimeout(err):
		return NewProblem("request_timeout", "The request body did not arrive in time.")
	}
	return NewProblem("bad_request", "The request body could not be read.")
}

// isTimeout reports a read past a connection deadline (not a context's).
func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}
