package einvoice

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

func civil(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecideBy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, tx, want string }{
		{"mid-month", "2026-01-15", "2026-02-10"},
		{"first of the month", "2026-03-01", "2026-04-10"},
		{"the 31st of January", "2026-01-31", "2026-02-10"},
		{"the 31st of March (April has 30 days)", "2026-03-31", "2026-04-10"},
		{"the 31st of October", "2026-10-31", "2026-11-10"},
		{"the 30th of November", "2026-11-30", "2026-12-10"},
		{"December to January of the next year", "2026-12-01", "2027-01-10"},
		{"31 December to January of the next year", "2026-12-31", "2027-01-10"},
		{"28 February, common year", "2026-02-28", "2026-03-10"},
		{"29 February, leap year", "2028-02-29", "2028-03-10"},
		{"January of a leap year", "2028-01-31", "2028-02-10"},
		{"on the 10th itself", "2026-02-10", "2026-03-10"},
		{"on the 11th", "2026-02-11", "2026-03-10"},
		{"deadline on a Saturday is not moved", "2026-09-20", "2026-10-10"},
		{"deadline on a Sunday is not moved", "2026-04-30", "2026-05-10"},
		{"deadline on a public holiday (none falls on a 10th; still never moved)", "2025-12-05", "2026-01-10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DecideBy(civil(t, tc.tx)).Format(time.DateOnly); got != tc.want {
				t.Errorf("DecideBy(%s) = %s; want %s", tc.tx, got, tc.want)
			}
			if got, err := DecideByDate(tc.tx); err != nil || got != tc.want {
				t.Errorf("DecideByDate(%s) = %s, %v; want %s", tc.tx, got, err, tc.want)
			}
		})
	}
	// The zone of a transaction date does not move its calendar day.
	late := time.Date(2026, 1, 31, 23, 30, 0, 0, ujpdoc.Skopje)
	if got := DecideBy(late).Format(time.DateOnly); got != "2026-02-10" {
		t.Errorf("DecideBy(31 January 23:30 Skopje) = %s", got)
	}
	if _, err := DecideByDate("31.01.2026"); err == nil {
		t.Error("a date not YYYY-MM-DD was accepted")
	}
}

func TestDaysLeftInSkopje(t *testing.T) {
	t.Parallel()
	by := civil(t, "2026-02-10")
	sk := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, ujpdoc.Skopje)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		now    time.Time
		want   int
		passed bool
	}{
		{sk("2026-02-10 00:00"), 0, false},
		{sk("2026-02-10 23:59"), 0, false},
		{sk("2026-02-11 00:00"), -1, true},
		{sk("2026-02-09 12:00"), 1, false},
		{sk("2026-02-05 08:00"), 5, false},
		{sk("2026-01-31 10:00"), 10, false},
		// 23:30 UTC on the 9th is already the 10th in Skopje (UTC+1).
		{time.Date(2026, 2, 9, 23, 30, 0, 0, time.UTC), 0, false},
		// 23:30 UTC on the 10th is the 11th in Skopje: passed.
		{time.Date(2026, 2, 10, 23, 30, 0, 0, time.UTC), -1, true},
	} {
		if got := DaysLeft(tc.now, by); got != tc.want {
			t.Errorf("DaysLeft(%s) = %d; want %d", tc.now, got, tc.want)
		}
		if got := DeadlinePassed(tc.now, by); got != tc.passed {
			t.Errorf("DeadlinePassed(%s) = %v; want %v", tc.now, got, tc.passed)
		}
	}
	// Across the change to summer time (29 March 2026) days stay whole.
	if got := DaysLeft(sk("2026-03-28 12:00"), civil(t, "2026-04-10")); got != 13 {
		t.Errorf("across DST: %d days; want 13", got)
	}
	end := DeadlineEnd(by)
	if want := sk("2026-02-11 00:00"); !end.Equal(want) {
		t.Errorf("DeadlineEnd = %s; want %s", end, want)
	}
	if DeadlinePassed(end.Add(-time.Second), by) || !DeadlinePassed(end, by) {
		t.Error("DeadlineEnd is not the first instant DeadlinePassed reports")
	}
	if got := DeadlineEnd(civil(t, "2026-12-31")); !got.Equal(sk("2027-01-01 00:00")) {
		t.Errorf("DeadlineEnd at the year's end = %s", got)
	}
}

func TestReminderDue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		daysLeft, want int
		ok             bool
	}{
		{10, 0, false}, {6, 0, false}, {5, 5, true}, {4, 5, true}, {3, 5, true},
		{2, 2, true}, {1, 1, true}, {0, 0, false}, {-1, 0, false},
	} {
		got, ok := ReminderDue(tc.daysLeft)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ReminderDue(%d) = %d, %v; want %d, %v", tc.daysLeft, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDecisionFromUJPAndRank(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{"03": DecisionAccepted, "04": DecisionAutoAccepted, "05": DecisionRejected, "01": "", "07": "", "09": "", "99": ""} {
		got, ok := DecisionFromUJP(code)
		if got != want || ok != (want != "") {
			t.Errorf("DecisionFromUJP(%s) = %q, %v", code, got, ok)
		}
	}
	for _, tc := range []struct {
		from, to string
		forward  bool
	}{
		{"01", "03", true}, {"01", "04", true}, {"01", "05", true}, {"01", "07", true},
		{"05", "07", true}, {"03", "09", true}, {"04", "07", true},
		{"03", "01", false}, {"07", "05", false}, {"03", "04", false}, {"01", "01", false}, {"01", "42", false},
	} {
		if got := UJPStatusRank(tc.to) > UJPStatusRank(tc.from); got != tc.forward {
			t.Errorf("%s → %s forward = %v; want %v", tc.from, tc.to, got, tc.forward)
		}
	}
}

func TestRejection(t *testing.T) {
	t.Parallel()
	cb := ujpdoc.Snapshot()
	str := func(s string) *string { return &s }
	long := str(fmt.Sprintf("%0501d", 0))
	for _, tc := range []struct {
		name     string
		code     string
		comment  *string
		wantCode string
		paths    []string
	}{
		{"Latin O-2", "O-2", nil, "O-2", nil},
		{"Cyrillic О-2 is UJP's O-2", "\u041e-2", nil, "O-2", nil},
		{"Latin O-6 is sent as UJP's Cyrillic О-6", "O-6", nil, "\u041e-6", nil},
		{"Cyrillic О-6", "\u041e-6", nil, "\u041e-6", nil},
		{"O-7 with a comment", "O-7", str("друго"), "\u041e-7", nil},
		{"O-7 needs a comment", "O-7", nil, "", []string{"comment"}},
		{"О-7 with a blank comment", "\u041e-7", str("  "), "", []string{"comment"}},
		{"unknown reason", "O-9", nil, "", []string{"reasonCode"}},
		{"a void reason is not a reject reason", "S-1", nil, "", []string{"reasonCode"}},
		{"missing reason", "", nil, "", []string{"reasonCode"}},
		{"comment too long", "O-1", long, "", []string{"comment"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Rejection(tc.code, tc.comment, cb)
			if tc.paths == nil {
				if err != nil || got != tc.wantCode {
					t.Fatalf("Rejection(%q) = %q, %v; want %q", tc.code, got, err, tc.wantCode)
				}
				return
			}
			var de *denar.Error
			if !errors.As(err, &de) || de.Code != denar.ECodeValidation {
				t.Fatalf("Rejection(%q) = %v; want validation_failed", tc.code, err)
			}
			if len(de.Fields) != len(tc.paths) {
				t.Fatalf("fields %v; want %v", de.Fields, tc.paths)
			}
			for i, p := range tc.paths {
				if de.Fields[i].Path != p {
					t.Errorf("field %d path %q; want %q", i, de.Fields[i].Path, p)
				}
			}
			if tc.paths[0] == "reasonCode" && de.Fields[0].Codebook != ujpdoc.CBRejectReasons {
				t.Errorf("codebook %q", de.Fields[0].Codebook)
			}
		})
	}
	if err := Acceptance(long); err == nil {
		t.Error("a 501-character acceptance comment was accepted")
	}
	if err := Acceptance(nil); err != nil {
		t.Error(err)
	}
}
