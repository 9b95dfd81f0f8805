package apidocs

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPinnedBundle(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256(redocJS)
	if got := hex.EncodeToString(sum[:]); got != RedocSHA256 {
		t.Fatalf("embedded redoc.standalone.js has SHA-256 %s, want the pinned %s (Redoc %s)", got, RedocSHA256, RedocVersion)
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	Register(mux, "denar payroll")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, tc := range []struct {
		path, ctype, contains string
	}{
		{"/docs", "text/html; charset=utf-8", `<script src="/docs/redoc.standalone.js">`},
		{"/docs/redoc.standalone.js", "text/javascript; charset=utf-8", "Redoc"},
		{"/docs/init.js", "text/javascript; charset=utf-8", `Redoc.init("/v1/openapi.json"`},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.ctype || !strings.Contains(string(b), tc.contains) {
			t.Errorf("%s: %d %q, body lacks %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.contains)
		}
	}
}
