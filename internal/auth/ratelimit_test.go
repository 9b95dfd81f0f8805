package auth_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestRateWindowsCountExactly: concurrent hits on one credential and second
// each get a different count, 1 to n, and other windows and credentials
// count apart; Purge removes windows before its bound only.
func TestRateWindowsCountExactly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := auth.RateWindows{DB: db}
		const n = 20
		got := make([]int64, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				c, err := w.Hit(t.Context(), "key_a", 1000)
				if err != nil {
					errs <- err
				}
				got[i] = c
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		slices.Sort(got)
		for i, c := range got {
			if c != int64(i+1) {
				t.Fatalf("counts %v, want 1..%d", got, n)
			}
		}
		for _, tt := range []struct {
			key    string
			window int64
		}{{"key_a", 1001}, {"key_b", 1000}} {
			if c, err := w.Hit(t.Context(), tt.key, tt.window); err != nil || c != 1 {
				t.Fatalf("%s@%d: %d %v, want a window of its own", tt.key, tt.window, c, err)
			}
		}
		if n, err := w.Purge(t.Context(), 1001); err != nil || n != 2 {
			t.Fatalf("purge: %d %v, want the two windows of second 1000", n, err)
		}
		if c, err := w.Hit(t.Context(), "key_a", 1001); err != nil || c != 2 {
			t.Fatalf("the kept window: %d %v", c, err)
		}
	})
}
