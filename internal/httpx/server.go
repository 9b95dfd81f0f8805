package httpx

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Timeouts bound how long a client may hold a connection at each stage of
// an exchange, so that slow or stalled clients cannot pile up connections.
// cmd/denar reads them from DENAR_HTTP_* (README, "Configuration").
type Timeouts struct {
	// ReadHeader bounds the request line and headers, from the first byte.
	ReadHeader time.Duration
	// Read bounds the whole request, headers and body, from its first
	// byte. A body that has not arrived by then is cut off. (Once the body
	// has been read to its end, net/http lifts the read deadline itself:
	// it only watches for the client going away while the handler works.)
	Read time.Duration
	// Write bounds the rest of the exchange, from the end of the headers
	// to the last byte of the response: a client that stops reading its
	// response loses the connection then.
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive
	// connection.
	Idle time.Duration
}

// The defaults of Timeouts, also the documented defaults of DENAR_HTTP_*.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

func (t Timeouts) withDefaults() Timeouts {
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.ReadHeader, DefaultReadHeaderTimeout}, {&t.Read, DefaultReadTimeout}, {&t.Write, DefaultWriteTimeout}, {&t.Idle, DefaultIdleTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	return t
}

// Server is an http.Server with denar's timeouts, X-Content-Type-Options on
// every response, and a Shutdown that also ends the requests whose contract
// is to wait (the agent long-poll and WebSocket).
type Server struct {
	*http.Server
	st *serverState
}

// serverState is what handlers learn about the server serving them, through
// the request context.
type serverState struct {
	timeouts Timeouts
	// drain is cancelled when shutdown begins.
	drain      context.Context
	startDrain context.CancelFunc

	mu       sync.Mutex
	upgraded int           // handlers of upgraded (hijacked) connections still running
	idle     chan struct{} // closed when upgraded drops to 0, while someone waits
}

func serverFrom(ctx context.Context) *serverState {
	st, _ := ctx.Value(serverKey).(*serverState)
	return st
}

// NewServer returns a server for h with the given timeouts (a zero field
// takes its default). Errors of the server itself (TLS handshakes, broken
// connections) go to log at debug level.
func NewServer(h http.Handler, t Timeouts, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	t = t.withDefaults()
	st := &serverState{timeouts: t}
	st.drain, st.startDrain = context.WithCancel(context.Background())
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			setSecurityHeaders(w.Header())
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		BaseContext:       func(net.Listener) context.Context { return context.WithValue(context.Background(), serverKey, st) },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return &Server{Server: srv, st: st}
}

// Shutdown stops the server gracefully within ctx: it stops accepting,
// tells the long waits to end through Draining (a long-poll answers with
// what it has, a WebSocket closes with 1001 going away), waits for the
// requests in flight and for the handlers of upgraded connections, which
// http.Server.Shutdown alone does not track.
func (s *Server) Shutdown(ctx context.Context) error {
	s.st.startDrain()
	err := s.Server.Shutdown(ctx)
	if werr := s.st.waitUpgraded(ctx); err == nil {
		err = werr
	}
	return err
}

func (st *serverState) enterUpgraded() {
	st.mu.Lock()
	st.upgraded++
	st.mu.Unlock()
}

func (st *serverState) leaveUpgraded() {
	st.mu.Lock()
	st.upgraded--
	if st.upgraded == 0 && st.idle != nil {
		close(st.idle)
		st.idle = nil
	}
	st.mu.Unlock()
}

func (st *serverState) waitUpgraded(ctx context.Context) error {
	st.mu.Lock()
	if st.upgraded == 0 {
		st.mu.Unlock()
		return nil
	}
	if st.idle == nil {
		st.idle = make(chan struct{})
	}
	idle := st.idle
	st.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Draining returns a channel that is closed when the server serving the
// request of ctx begins to shut down (nil, which never fires, outside a
// Server).
func Draining(ctx context.Context) <-chan struct{} {
	if st := serverFrom(ctx); st != nil {
		return st.drain.Done()
	}
	return nil
}

// LongWait is for a handler whose contract is to wait before it answers
// (the agent long-poll). Through http.ResponseController it moves the
// connection's write deadline to the end of the wait plus the server's
// write timeout, so the wait is not cut off. (The read deadline needs no
// change: net/http lifts it once the request's body has been read, at once
// for a request without one.) It returns Draining(ctx): when that fires the
// handler should answer at once with what it has.
func LongWait(ctx context.Context, wait time.Duration) <-chan struct{} {
	st, rec := serverFrom(ctx), captured(ctx)
	if st == nil || rec == nil {
		return nil
	}
	_ = http.NewResponseController(rec.ResponseWriter).SetWriteDeadline(time.Now().Add(wait + st.timeouts.Write))
	return st.drain.Done()
}

// setSecurityHeaders sets what every response of every denar server
// carries: browsers must not guess a content type other than the one sent.
func setSecurityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
}
