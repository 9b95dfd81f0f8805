package denar_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/denar-mk/denar/sdk/denar"
	"github.com/denar-mk/denar/sdk/denar/payrollapi"
)

// TestSDKRetries: 503 and 429 are retried (Retry-After honoured), with the
// same Idempotency-Key on every attempt of one POST and another key for
// the next POST; the final answer's problem is a *denar.Problem.
func TestSDKRetries(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		switch n {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		case 3:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"netPaid":"1"}`))
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"status":409,"code":"idempotency_in_progress","title":"t"}`))
		}
	}))
	defer srv.Close()
	c, err := denar.NewPayroll(srv.URL, denar.Options{APIKey: "k", Retry: denar.Retry{Attempts: 3, Base: 1}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Calculate(context.Background(), payrollapi.Input{})
	if err != nil || res.NetPaid != "1" {
		t.Fatalf("calculate after two retries: %v, %+v", err, res)
	}
	_, err = c.Calculate(context.Background(), payrollapi.Input{})
	if !errors.Is(err, &denar.Problem{Code: denar.CodeIdempotencyInProgress}) {
		t.Fatalf("want the 409 problem, got %v", err)
	}
	if len(keys) != 4 || keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] || keys[3] == keys[0] || keys[3] == "" {
		t.Fatalf("idempotency keys per attempt: %q", keys)
	}
}
