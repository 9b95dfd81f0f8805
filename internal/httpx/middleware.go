package httpx

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/crashpoint"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	captureKey
	principalKey
	companyKey
	claimKey
	docsKey
	serverKey
	codebookKey
)

// RequestID returns the id given to the request in ctx ("req_…").
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "req_" + idEncoding.EncodeToString(b)
}

// Metrics are the Prometheus collectors of one service.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

// NewMetrics registers the HTTP collectors of service on a private registry
// (never the global one: two services live in one process).
func NewMetrics(service string) *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	labels := prometheus.Labels{"service": service}
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "denar_http_requests_total", Help: "HTTP requests by route, method and status.", ConstLabels: labels,
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "denar_http_request_duration_seconds", Help: "HTTP request latency by route.", ConstLabels: labels,
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "denar_http_requests_in_flight", Help: "Requests being served.", ConstLabels: labels,
		}),
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight)
	return m
}

// recorder remembers the status and size of a response, and for requests
// that asked for it (idempotent POSTs) a copy of the body.
type recorder struct {
	http.ResponseWriter
	status  int
	size    int
	capture *bytes.Buffer
	// overCapture: the response outgrew maxStoredResponse, so it is not
	// copied (and not stored under its Idempotency-Key).
	overCapture bool
}

// maxStoredResponse is the largest response of an operation without an
// effect that is stored under its Idempotency-Key: a payroll file can be
// a hundred megabytes, which would be held in memory twice and kept in the
// database for a day; running such a request again gives the same bytes.
const maxStoredResponse = 4 << 20

func (rw *recorder) WriteHeader(code int) {
	if rw.status == 0 {
		crashpoint.Hit(crashpoint.HTTPBeforeResponse)
		rw.status = code
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	if rw.capture != nil {
		if rw.capture.Len()+len(b) > maxStoredResponse {
			rw.capture, rw.overCapture = nil, true
		} else {
			rw.capture.Write(b)
		}
	}
	n, err := rw.ResponseWriter.Write(b)
	rw.size += n
	return n, err
}

func (rw *recorder) Flush() {
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack lets WebSocket upgrades through the recorder.
func (rw *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := rw.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("httpx: response writer cannot hijack")
	}
	rw.status = http.StatusSwitchingProtocols
	return h.Hijack()
}

func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// SetReadDeadline keeps one rule for request bodies: the server's read
// timeout (Timeouts.Read, from the request's first byte). huma sets a
// deadline of its own before it reads a body (5 s from then, by default);
// that call ends here and changes nothing. LongWait moves the write
// deadline on the connection itself.
func (rw *recorder) SetReadDeadline(time.Time) error { return nil }

// captured returns the recorder of the request in ctx, for the idempotency
// layer to read what the handler wrote.
func captured(ctx context.Context) *recorder {
	rw, _ := ctx.Value(captureKey).(*recorder)
	return rw
}

// Outer wraps a service's mux with what every request gets: a request id,
// X-Content-Type-Options, panic recovery, metrics, a structured access log,
// the default body limit, and problem bodies for routes and methods the mux
// does not know.
func Outer(service, docsURL string, mux *http.ServeMux, m *Metrics, log *slog.Logger) http.Handler {
	return outer(service, docsURL, mux, nil, m, log, newRouteLimits(DefaultMaxBodyBytes, 0))
}

// isWebSocket reports whether r asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func outer(service, docsURL string, mux, upgrades *http.ServeMux, m *Metrics, log *slog.Logger, lim *routeLimits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID()
		w.Header().Set("X-Request-Id", id)
		setSecurityHeaders(w.Header())
		rec := &recorder{ResponseWriter: w}
		// Only a response that may be stored under an Idempotency-Key is
		// copied; the others are written once, straight to the client.
		if (r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut || r.Method == http.MethodDelete) &&
			r.Header.Get("Idempotency-Key") != "" {
			rec.capture = &bytes.Buffer{}
		}
		ctx := context.WithValue(r.Context(), requestIDKey, id)
		ctx = context.WithValue(ctx, captureKey, rec)
		ctx = context.WithValue(ctx, docsKey, docsURL)
		r = r.WithContext(ctx)
		m.inFlight.Inc()
		route := "unmatched"
		defer func() {
			m.inFlight.Dec()
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.Error("panic", "request_id", id, "panic", p, "stack", string(debug.Stack()))
				if rec.status == 0 {
					WriteProblem(rec, r, NewProblem(denar.ECodeInternal, "An internal error occurred. It has been logged; quote the request id to support."))
				}
			}
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			elapsed := time.Since(start)
			m.requests.WithLabelValues(route, r.Method, strconv.Itoa(status)).Inc()
			m.duration.WithLabelValues(route, r.Method).Observe(elapsed.Seconds())
			level := slog.LevelInfo
			switch {
			case status == http.StatusServiceUnavailable:
				// Turned away (server_busy) or a dependency down: worth
				// seeing, not a fault of ours to page about.
				level = slog.LevelWarn
			case status >= 500:
				level = slog.LevelError
			}
			log.LogAttrs(r.Context(), level, "request",
				slog.String("service", service), slog.String("request_id", id),
				slog.String("method", r.Method), slog.String("path", logPath(r.URL.Path)),
				slog.String("route", route), slog.Int("status", status),
				slog.Int("bytes", rec.size), slog.Duration("duration", elapsed),
				slog.String("remote", r.RemoteAddr))
		}()
		if upgrades != nil && isWebSocket(r) {
			if _, p := upgrades.Handler(r); p != "" {
				// The same path as a REST operation, upgraded: served by
				// its own handler, still logged and measured here. The
				// handler lives as long as the socket; a server shutting
				// down tells it through Draining and waits for it.
				route = p + " (websocket)"
				if !lim.admit(w, rec, r, p) {
					return
				}
				if st := serverFrom(r.Context()); st != nil {
					st.enterUpgraded()
					defer st.leaveUpgraded()
				}
				upgrades.ServeHTTP(rec, r)
				return
			}
		}
		_, pattern := mux.Handler(r)
		if !lim.admit(w, rec, r, pattern) {
			return
		}
		if pattern == "" {
			notRouted(mux, rec, r)
			return
		}
		route = pattern
		if !lim.admitAddress(rec, r, pattern) {
			return
		}
		if release, ok := lim.acquireHeavy(rec, r, pattern); !ok {
			return
		} else if release != nil {
			defer release()
		}
		// Through the mux, not the handler it returned: only ServeHTTP
		// sets the request's path values ({id}) that handlers read.
		mux.ServeHTTP(rec, r)
	})
}

// logPath is a request path as the access log shows it. The segment after
// "mandates" is a mandate token, a credential (the link itself accepts the
// mandate), so it is replaced; so is the rest of such a path, and the match
// ignores case and empty segments so that no spelling of the path that
// still reaches a handler or a redirect logs the token.
func logPath(p string) string {
	segs := strings.Split(p, "/")
	for i := 0; i+1 < len(segs); i++ {
		if strings.EqualFold(segs[i], "mandates") {
			for j := i + 1; j < len(segs); j++ {
				if segs[j] != "" {
					return strings.Join(segs[:j], "/") + "/" + redacted
				}
			}
			return p
		}
	}
	return p
}

const redacted = "[redacted]"

// notRouted answers 405 with Allow when the path exists for other methods,
// else 404, both as problems (ServeMux would answer in plain text).
func notRouted(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := mux.Handler(probe); p != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		WriteProblem(w, r, NewProblem("method_not_allowed", "This path does not accept "+r.Method+"; it accepts "+strings.Join(allowed, ", ")+"."))
		return
	}
	WriteProblem(w, r, NewProblem(denar.ECodeNotFound, "There is no endpoint at "+r.URL.Path+"."))
}
