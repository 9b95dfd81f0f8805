package main

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestRateLimitSharedByTwoServes runs two `denar serve` processes on one
// PostgreSQL database with a limit of 5 requests a second and sends one
// credential's requests to both for about two and a half seconds. The
// requests admitted by both together stay within 5 in each second the run
// touched; with a count per process, each would admit its burst and its
// rate, about twice that. The test counts; it does not time the server.
func TestRateLimitSharedByTwoServes(t *testing.T) {
	t.Parallel()
	const rps = 5
	env := append(baseEnv(t, storetest.MigratedPostgresURL(t)), "DENAR_RATE_LIMIT_RPS=5", "DENAR_RATE_LIMIT_BURST=5")
	a := startServer(t, env)
	b := startServer(t, env)
	key := a.einvoiceKey

	var ok, limited, other atomic.Int64
	start := time.Now()
	stop := start.Add(2500 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range 4 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			// Paced, about 50 requests a second per worker: well over the
			// limit without spinning the machine.
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for ; time.Now().Before(stop); <-tick.C {
				r := call(t, "GET", s.einvoice+"/v1/companies", key, nil, "")
				switch {
				case r.status == http.StatusTooManyRequests && r.code(t) == "rate_limited" && r.header.Get("Retry-After") != "":
					limited.Add(1)
				case r.status < 300:
					ok.Add(1)
				default:
					other.Add(1)
					t.Errorf("unexpected %d %s", r.status, r.body)
				}
			}
		})
	}
	wg.Wait()
	end := time.Now()
	windows := end.Unix() - start.Unix() + 1
	t.Logf("%d admitted, %d refused 429 over %d one-second windows (limit %d a second for both processes together)",
		ok.Load(), limited.Load(), windows, rps)
	if ok.Load() > rps*windows {
		t.Errorf("%d requests admitted in %d windows, more than %d a second", ok.Load(), windows, rps)
	}
	if limited.Load() == 0 {
		t.Error("nothing was refused")
	}
}

// TestUnauthenticatedRateLimitPerAddress: the OAuth token endpoint, agent
// pairing and mandate pages are limited per client address (here 1 a second,
// bursts of 3): a client that sends many gets 429 rate_limited problems
// with Retry-After, before any credential or body is looked at.
func TestUnauthenticatedRateLimitPerAddress(t *testing.T) {
	t.Parallel()
	env := append(baseEnv(t, storetest.MigratedSQLiteURL(t)), "DENAR_RATE_LIMIT_ADDR_RPS=1", "DENAR_RATE_LIMIT_ADDR_BURST=3")
	s := startServer(t, env)
	for _, tt := range []struct{ method, path, body, ct string }{
		{"POST", "/v1/oauth/token", "grant_type=client_credentials&client_id=cli_x&client_secret=x", "application/x-www-form-urlencoded"},
		{"POST", "/v1/agents/pair", `{"code":"AAAA","name":"x"}`, "application/json"},
		{"GET", "/mandates/mnd_nothing", "", ""},
	} {
		limited := 0
		for i := range 10 {
			h := map[string]string{"Idempotency-Key": "addr-" + tt.path + "-" + string(rune('a'+i))}
			if tt.ct != "" {
				h["Content-Type"] = tt.ct
			}
			r := call(t, tt.method, s.einvoice+tt.path, "", h, tt.body)
			if r.status == http.StatusTooManyRequests {
				if r.code(t) != "rate_limited" || r.header.Get("Retry-After") == "" {
					t.Fatalf("%s: 429 %s", tt.path, r.body)
				}
				limited++
			} else if r.status >= 500 {
				t.Fatalf("%s: %d %s", tt.path, r.status, r.body)
			}
		}
		// 10 requests in well under the 7 s it would take to earn
		// enough tokens: at least some are refused.
		if limited == 0 {
			t.Errorf("%s: none of 10 requests from one address was limited", tt.path)
		}
	}
	// An authenticated request from the same address is not limited by it.
	if r := call(t, "GET", s.einvoice+"/v1/companies", s.einvoiceKey, nil, ""); r.status != 200 {
		t.Fatalf("authenticated request: %d %s", r.status, r.body)
	}
}
