package ujpsim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
)

// InProcessBaseURL is a base URL for a ujp.Client whose transport is
// Transport(): the host is never resolved.
const InProcessBaseURL = "http://ujp-sim.in-process"

// Transport returns an http.RoundTripper that serves requests with the
// simulator's handler in this process, without a listener, so the sandbox
// needs no port:
//
//	ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL,
//		HTTPClient: &http.Client{Transport: sim.Transport(), Timeout: 10 * time.Second}})
//
// The request's context reaches the handler, so client timeouts behave as
// over a network (the never-answering registry number included).
func (s *Sim) Transport() http.RoundTripper { return transport{h: s.Handler()} }

type transport struct{ h http.Handler }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		// The caller gave up while the handler ran; a network transport
		// would report the same.
		return nil, fmt.Errorf("ujpsim in-process: %w", err)
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
