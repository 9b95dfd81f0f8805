package ujpdoc

import (
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
)

// TimestampLayout is requestTimestamp's format: Skopje wall-clock time
// without a zone, "2026-01-05T12:00:00".
const TimestampLayout = "2006-01-02T15:04:05"

// TimestampWindow is how far a requestTimestamp may be from UJP's clock.
const TimestampWindow = 5 * time.Minute

// Skopje is the zone of every UJP timestamp: denar.Skopje.
var Skopje = denar.Skopje

// FormatTimestamp writes t as a requestTimestamp (Skopje local time).
func FormatTimestamp(t time.Time) string { return t.In(Skopje).Format(TimestampLayout) }

// ParseTimestamp reads a requestTimestamp. UJP's API page writes it without a
// zone in Skopje time; its examples PDF writes a trailing Z (research §1.4).
// A trailing Z, or fractional seconds, are accepted and the Z is read as
// UTC, its literal meaning.
func ParseTimestamp(s string) (time.Time, error) {
	if rest, ok := strings.CutSuffix(s, "Z"); ok {
		t, err := time.Parse(TimestampLayout+".999999999", rest)
		if err != nil {
			return time.Time{}, fmt.Errorf("requestTimestamp %q: %w", s, err)
		}
		return t, nil
	}
	t, err := time.ParseInLocation(TimestampLayout+".999999999", s, Skopje)
	if err != nil {
		return time.Time{}, fmt.Errorf("requestTimestamp %q: want %s in Skopje time: %w", s, TimestampLayout, err)
	}
	return t, nil
}
