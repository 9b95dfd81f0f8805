package ujpsim

import (
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
		// would report the same.
		return nil, fmt.Errorf("ujpsim in-process: %w", err)
	}
	resp = rec.Result()
	resp.Request = req
	return resp, nil
}
