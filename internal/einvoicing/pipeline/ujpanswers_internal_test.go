package pipeline

import (
	"database/sql"
	"testing"
	"time"
)

// TestRetryDelayFollowsHeldTime: the ladder advances with the time held,
// so a long outage (probes only, no sends) is looked at less and less often.
func TestRetryDelayFollowsHeldTime(t *testing.T) {
	t.Parallel()
	ladder := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute}
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		held time.Duration
		want time.Duration
	}{
		{0, 10 * time.Second},
		{9 * time.Second, 10 * time.Second},
		{10 * time.Second, 30 * time.Second},
		{39 * time.Second, 30 * time.Second},
		{40 * time.Second, time.Minute},
		{5 * time.Hour, time.Minute},
	} {
		got := RetryDelay(ladder, sql.NullTime{Time: start, Valid: true}, start.Add(tc.held))
		if got != tc.want {
			t.Errorf("held %s: wait %s, want %s", tc.held, got, tc.want)
		}
	}
	if got := RetryDelay(ladder, sql.NullTime{}, start); got != 10*time.Second {
		t.Errorf("never held: %s", got)
	}
}
