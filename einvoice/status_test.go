package einvoice

import (
	"errors"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

func TestFromUJP(t *testing.T) {
	for _, tc := range []struct {
		code string
		want Status
		ok   bool
	}{
		{"00", DraftAtUJP, true}, {"01", Delivered, true}, {"03", Accepted, true},
		{"04", AutoAccepted, true}, {"05", Rejected, true}, {"07", CancelledByStorno, true},
		{"09", Corrected, true}, {"10", Registered, true}, {"02", "", false}, {"", "", false},
	} {
		got, ok := FromUJP(tc.code)
		if got != tc.want || ok != tc.ok {
			t.Errorf("FromUJP(%q) = %q, %v; want %q, %v", tc.code, got, ok, tc.want, tc.ok)
		}
		if ok && !got.Valid() {
			t.Errorf("FromUJP(%q) = %q, not a public status", tc.code, got)
		}
	}
}

// The status codes the snapshot codebook lists that we map must be there:
// a renamed code at UJP would otherwise silently stop matching.
func TestFromUJPCodesInCodebook(t *testing.T) {
	cb := ujpdoc.Snapshot()
	known := map[string]bool{}
	for _, c := range cb.DocumentStatuses {
		known[c.Code] = true
	}
	for _, code := range []string{"00", "01", "03", "04", "05", "07", "09", "10"} {
		if !known[code] {
			t.Errorf("status %s not in the document-statuses snapshot", code)
		}
	}
}

func TestMoves(t *testing.T) {
	for _, tc := range []struct {
		from, to Status
		ok       bool
	}{
		{AwaitingSignature, Queued, true},
		{Queued, Submitting, true},
		{Submitting, Delivered, true},
		{Submitting, Held, true},
		{Held, Queued, true},
		{Submitting, Failed, true},
		{Delivered, Accepted, true},
		{Delivered, AutoAccepted, true},
		{Delivered, Rejected, true},
		{Accepted, CancelledByStorno, true},
		{AutoAccepted, Corrected, true},
		{Rejected, CancelledByStorno, false},
		{Failed, Queued, false},
		{AwaitingSignature, Delivered, false},
		{Accepted, Rejected, false},
		{CancelledByStorno, Delivered, false},
	} {
		err := Move(tc.from, tc.to)
		if (err == nil) != tc.ok {
			t.Errorf("Move(%s, %s) = %v; want ok=%v", tc.from, tc.to, err, tc.ok)
		}
		var de *denar.Error
		if err != nil && (!errors.As(err, &de) || de.Code != CodeStateConflict) {
			t.Errorf("Move(%s, %s) error %v is not a conflict", tc.from, tc.to, err)
		}
	}
	for from, tos := range moves {
		if !from.Valid() {
			t.Errorf("moves has unknown from-state %q", from)
		}
		if from.Terminal() {
			t.Errorf("terminal state %s has moves", from)
		}
		for _, to := range tos {
			if !to.Valid() {
				t.Errorf("moves %s → unknown %q", from, to)
			}
		}
	}
}

func TestStornoAllowed(t *testing.T) {
	for _, s := range Statuses {
		want := s == Delivered || s == Accepted || s == AutoAccepted
		if StornoAllowed(s) != want || CorrectionAllowed(s) != want {
			t.Errorf("StornoAllowed(%s) = %v; want %v", s, StornoAllowed(s), want)
		}
	}
}

func TestStornoValidate(t *testing.T) {
	cb := ujpdoc.Snapshot()
	long := string(make([]rune, 501))
	for _, tc := range []struct {
		name string
		in   Storno
		path string // "" means valid
	}{
		{"valid", Storno{Reason: "S-1"}, ""},
		{"missing", Storno{}, "reason"},
		{"unknown", Storno{Reason: "S-99"}, "reason"},
		{"correction code", Storno{Reason: "C01"}, "reason"},
		{"long comment", Storno{Reason: "S-2", Comment: &long}, "comment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.in.Validate(cb)
			if tc.path == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var de *denar.Error
			if !errors.As(err, &de) || de.Code != denar.ECodeValidation || len(de.Fields) == 0 || de.Fields[0].Path != tc.path {
				t.Fatalf("Validate = %v; want a field error at %s", err, tc.path)
			}
			if tc.path == "reason" && de.Fields[0].Codebook != ujpdoc.CBVoidReasons {
				t.Errorf("codebook = %q", de.Fields[0].Codebook)
			}
		})
	}
}

func TestCheckCorrectionReason(t *testing.T) {
	cb := ujpdoc.Snapshot()
	if fe := CheckCorrectionReason("correction.reason", "C01", cb); fe != nil {
		t.Errorf("C01: %v", fe)
	}
	for _, r := range []string{"", "S-1", "C99"} {
		fe := CheckCorrectionReason("correction.reason", r, cb)
		if fe == nil || fe.Codebook != ujpdoc.CBCorrectionReasons || fe.Path != "correction.reason" {
			t.Errorf("%q: %+v", r, fe)
		}
	}
}

func TestPeriodClosed(t *testing.T) {
	for _, tc := range []struct {
		date   string
		filed  *int
		closed bool
	}{
		{"2025-12-31", ptr(2025), true},
		{"2026-01-01", ptr(2025), false},
		{"2026-03-01", nil, false},
		{"2023-06-30", ptr(2024), true},
	} {
		err := PeriodClosed(tc.date, tc.filed)
		var de *denar.Error
		got := errors.As(err, &de) && de.Code == "period_closed"
		if got != tc.closed {
			t.Errorf("PeriodClosed(%s, %v) = %v; want closed=%v", tc.date, tc.filed, err, tc.closed)
		}
	}
	if err := PeriodClosed("31.12.2025", nil); err == nil {
		t.Error("bad date accepted")
	}
}

// TestReconcile: a document UJP holds that we show queued, submitting,
// held or failed takes UJP's status, whatever it is; one we show at UJP
// moves only as the change feed would; nothing moves to a status of ours.
func TestReconcile(t *testing.T) {
	for _, tc := range []struct {
		from, to Status
		ok       bool
	}{
		{Queued, Delivered, true},
		{Queued, Accepted, true},
		{Held, AutoAccepted, true},
		{Submitting, Rejected, true},
		{Failed, Delivered, true},
		{Failed, CancelledByStorno, true},
		{Failed, DraftAtUJP, true},
		{Delivered, Accepted, true},
		{Delivered, Registered, true},
		{Accepted, CancelledByStorno, true},
		{Failed, Queued, false},
		{Queued, Failed, false},
		{Delivered, Delivered, false},
		{Accepted, Delivered, false},
		{Rejected, Accepted, false},
		{CancelledByStorno, Delivered, false},
		{AwaitingSignature, Delivered, false},
		{Invalid, Delivered, false},
		{Validating, Delivered, false},
	} {
		err := Reconcile(tc.from, tc.to)
		if (err == nil) != tc.ok || CanReconcile(tc.from, tc.to) != tc.ok {
			t.Errorf("Reconcile(%s, %s) = %v; want ok=%v", tc.from, tc.to, err, tc.ok)
		}
		var de *denar.Error
		if err != nil && (!errors.As(err, &de) || de.Code != CodeStateConflict) {
			t.Errorf("Reconcile(%s, %s) error %v is not a conflict", tc.from, tc.to, err)
		}
	}
	for _, s := range Statuses {
		_, mirrored := FromUJP(map[Status]string{DraftAtUJP: "00", Delivered: "01", Accepted: "03", AutoAccepted: "04", Rejected: "05",
			CancelledByStorno: "07", Corrected: "09", Registered: "10"}[s])
		if s.AtUJP() != mirrored {
			t.Errorf("%s.AtUJP() = %v", s, s.AtUJP())
		}
	}
}
