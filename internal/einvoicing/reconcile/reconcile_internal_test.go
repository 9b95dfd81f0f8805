package reconcile

import (
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// TestLastReconcilableDay: the daily job reconciles yesterday from the
// configured hour (Skopje) on, the day before until then, and never a day
// whose lists UJP may still extend (5 minutes past midnight).
func TestLastReconcilableDay(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, ujpdoc.Skopje)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		now  string
		hour int
		want string
	}{
		{"2026-05-05 00:03", 0, "2026-05-03"},
		{"2026-05-05 00:06", 0, "2026-05-04"},
		{"2026-05-05 01:59", 2, "2026-05-03"},
		{"2026-05-05 02:00", 2, "2026-05-04"},
		{"2026-05-05 22:59", 23, "2026-05-03"},
		{"2026-05-05 23:00", 23, "2026-05-04"},
		{"2026-01-01 03:00", 2, "2025-12-31"},
		{"2026-03-29 03:00", 2, "2026-03-28"}, // the night clocks go forward
	} {
		if got := lastReconcilableDay(at(c.now).UTC(), c.hour); got != c.want {
			t.Errorf("%s, hour %d: %s, want %s", c.now, c.hour, got, c.want)
		}
	}
}
