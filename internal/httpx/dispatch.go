package httpx

import (
	"bytes"
	"net/http"
)

// Dispatch serves r in-process, through everything a request from the
// network goes through (request id, access log and metrics, body limits,
// authentication, rate limit, idempotency, the operation), and returns
// the response: how another transport — the signing WebSocket — carries
// the API's operations with their semantics unchanged. r carries the
// credentials and the Idempotency-Key as headers, as on the wire.
func (s *Service) Dispatch(r *http.Request) (status int, header http.Header, body []byte) {
	s.dispatchOnce.Do(func() { s.dispatchTo = s.Handler() })
	w := &memoryResponse{header: http.Header{}}
	s.dispatchTo.ServeHTTP(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.status, w.header, w.body.Bytes()
}

// memoryResponse is the ResponseWriter of a dispatched request.
type memoryResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *memoryResponse) Header() http.Header { return w.header }

func (w *memoryResponse) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *memoryResponse) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
