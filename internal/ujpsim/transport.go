package ujpsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
)

// InProcessBaseURL is a base URL for a client whose transport is
// Transport(): the host is never resolved.
const InProcessBaseURL = "http://ujp-sim.in-process"

// Transport returns an http.RoundTripper that serves requests with the
// simulator's handler in this process, without a listener, so the sandbox
// needs no port: a client with BaseURL InProcessBaseURL and
// &http.Client{Transport: sim.Transport()}.
//
// The request's context reaches the handler, so client timeouts behave as
// over a network (the never-answering registry number included).
func (s *Sim) Transport() http.RoundTripper { return transport{h: s.Handler()} }

type transport struct{ h http.Handler }

func (t transport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	// A handler that drops the connection (the lost-response fault)
	// panics with http.ErrAbortHandler, as net/http expects; in process
	// the caller sees a broken connection.
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			resp, err = nil, fmt.Errorf("ujpsim in-process: %w", io.ErrUnexpectedEOF)
		}
	}()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		// The caller gave up while the handler ran; a network transport
		// would report the same, a deadline as a timeout (net.Error).
		return nil, inProcessError{err}
	}
	resp = rec.Result()
	resp.Request = req
	return resp, nil
}

// inProcessError is the caller's context ending while the handler ran. Like
// a network transport's error it says Timeout() for a deadline, so that
// url.Error and http.Client report a timeout as one.
type inProcessError struct{ err error }

func (e inProcessError) Error() string { return "ujpsim in-process: " + e.err.Error() }
func (e inProcessError) Unwrap() error { return e.err }
func (e inProcessError) Timeout() bool { return errors.Is(e.err, context.DeadlineExceeded) }
