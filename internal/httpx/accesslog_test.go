package httpx_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/httpx"
)

// TestAccessLogRedactsMandateTokens: a mandate link's token is the
// credential that accepts the mandate, so the access log never shows it,
// however the path is spelled; other paths are logged as they are.
func TestAccessLogRedactsMandateTokens(t *testing.T) {
	t.Parallel()
	const secret = "mdt_s3cretS3cretS3cret"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /mandates/{token}", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("page")) })
	mux.HandleFunc("GET /v1/companies/{id}", func(w http.ResponseWriter, r *http.Request) {})
	var buf bytes.Buffer
	h := httpx.Outer("einvoice", "", mux, httpx.NewMetrics("einvoice"), slog.New(slog.NewJSONHandler(&buf, nil)))
	for _, tc := range []struct {
		method, path, logged string
		status               int
	}{
		{"GET", "/mandates/" + secret, "/mandates/[redacted]", 200},
		{"POST", "/mandates/" + secret, "/mandates/[redacted]", 405},
		{"GET", "/mandates/" + secret + "/more", "/mandates/[redacted]", 404},
		{"GET", "/MANDATES/" + secret, "/MANDATES/[redacted]", 404},
		{"GET", "//mandates//" + secret, "//mandates//[redacted]", http.StatusTemporaryRedirect},
		{"GET", "/mandates/", "/mandates/", 404},
		{"GET", "/v1/companies/cmp_1", "/v1/companies/cmp_1", 200},
	} {
		buf.Reset()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
		if strings.Contains(buf.String(), secret) {
			t.Errorf("%s %s: token in the log: %s", tc.method, tc.path, buf.String())
		}
		var line struct {
			Msg  string `json:"msg"`
			Path string `json:"path"`
		}
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line.Msg != "request" || line.Path != tc.logged {
			t.Errorf("%s %s: logged %q (%v), want path %q", tc.method, tc.path, buf.String(), err, tc.logged)
		}
	}
}
