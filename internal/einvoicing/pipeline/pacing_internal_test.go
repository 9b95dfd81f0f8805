package pipeline

import (
	"strings"
	"testing"
	"time"
)

// TestTurnOrder: the places freed for a signer's documents go to its
// companies in turn. A company that never had one goes first; then the one
// whose last request is oldest; a company with a month-end backlog takes a
// place only once each other company with documents waiting has had one,
// so a quiet company's single invoice waits for at most one place per
// company.
func TestTurnOrder(t *testing.T) {
	t0 := time.Date(2026, 5, 31, 16, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		waiting map[string]int64
		issued  map[string]time.Time
		n       int
		want    string
	}{
		{"one company", map[string]int64{"big": 5}, nil, 3, "big,big,big"},
		{"fewer waiting than places", map[string]int64{"big": 2}, nil, 5, "big,big"},
		{"a quiet company goes before the backlog's next", map[string]int64{"big": 1000, "quiet": 1},
			map[string]time.Time{"big": t0}, 3, "quiet,big,big"},
		{"the least recently served first, then alternating", map[string]int64{"a": 3, "b": 3, "c": 1},
			map[string]time.Time{"a": t0.Add(2 * time.Second), "b": t0.Add(time.Second), "c": t0.Add(3 * time.Second)}, 7, "b,a,c,b,a,b,a"},
		{"never served, by id", map[string]int64{"y": 2, "x": 2}, nil, 4, "x,y,x,y"},
		{"none waiting", map[string]int64{"a": 0}, nil, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(turnOrder(tc.waiting, tc.issued, tc.n), ","); got != tc.want {
				t.Fatalf("turnOrder = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSignAhead: what the budget sends in SignAheadTime, within bounds.
func TestSignAhead(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want int
	}{
		{Config{SignerInterval: time.Second}, 10},
		{Config{SignerInterval: 100 * time.Millisecond}, 100},
		{Config{SignerInterval: 20 * time.Millisecond}, signAheadMax},
		{Config{SignerInterval: time.Minute}, 2},
		{Config{}, signAheadMax},
		{Config{SignerInterval: time.Second, SignAhead: 7}, 7},
	} {
		if got := tc.cfg.withDefaults().signAhead(); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.cfg, got, tc.want)
		}
	}
}
