package ujpsim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestEveryControlRouteRequiresToken walks every route the control API
// registers (so a route added later is covered without being listed) and
// asks it, with a body that would be accepted, without the token, with a
// wrong one, and at a simulator that has none configured: 401 SIM401 with
// WWW-Authenticate each time, and the handler never runs.
func TestEveryControlRouteRequiresToken(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	withToken, err := New(db, Options{ControlToken: "the-control-token-0123"})
	if err != nil {
		t.Fatal(err)
	}
	without, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	routes := withToken.controlRoutes()
	if len(routes) < 20 {
		t.Fatalf("%d control routes; the walk found too few", len(routes))
	}
	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	for _, r := range routes {
		method, path, ok := strings.Cut(r.pattern, " ")
		if !ok {
			method, path = http.MethodGet, r.pattern
		}
		path = wildcard.ReplaceAllString(path, "4030000000001")
		if strings.HasSuffix(path, "/") {
			path += "anything"
		}
		for _, c := range []struct {
			sim   *Sim
			token string
		}{{withToken, ""}, {withToken, "Bearer wrong"}, {withToken, "Bearer the-control-token-012"}, {withToken, "the-control-token-0123"},
			{without, ""}, {without, "Bearer "}, {without, "Bearer the-control-token-0123"}} {
			req := httptest.NewRequest(method, path, strings.NewReader(`{}`))
			if c.token != "" {
				req.Header.Set("Authorization", c.token)
			}
			rec := httptest.NewRecorder()
			c.sim.Handler().ServeHTTP(rec, req)
			var body struct {
				ErrorStatus struct {
					ErrorCode string `json:"errorCode"`
				} `json:"errorStatus"`
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != http.StatusUnauthorized || body.ErrorStatus.ErrorCode != CodeUnauthorized ||
				!strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %q (token configured: %t): %d %s", method, path, c.token, c.sim.opts.ControlToken != "", rec.Code, rec.Body)
			}
		}
	}
	// With the token an unknown control path is the control API's 404,
	// not a UJP endpoint.
	req := httptest.NewRequest(http.MethodGet, "/_sim/no-such-route", nil)
	req.Header.Set("Authorization", "Bearer the-control-token-0123")
	rec := httptest.NewRecorder()
	withToken.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"E4004"`) {
		t.Fatalf("an unknown control path with the token: %d %s", rec.Code, rec.Body)
	}
}
