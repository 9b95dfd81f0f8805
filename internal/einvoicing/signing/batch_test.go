package signing

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing"
)

// TestCheckBatchIDs: an empty batch, one over MaxSigningBatch and an id
// named twice are refused at the path of the item at fault; anything
// else passes.
func TestCheckBatchIDs(t *testing.T) {
	t.Parallel()
	many := make([]string, MaxSigningBatch+1)
	for i := range many {
		many[i] = "sgr_" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name  string
		ids   []string
		paths []string // nil: accepted
	}{
		{"empty", nil, []string{"ids[0]"}},
		{"one", []string{"sgr_a"}, nil},
		{"the most", many[:MaxSigningBatch], nil},
		{"one too many", many, []string{"ids[" + strconv.Itoa(MaxSigningBatch) + "]"}},
		{"twice", []string{"sgr_a", "sgr_b", "sgr_a", "sgr_b"}, []string{"ids[2]", "ids[3]"}},
	} {
		err := checkBatchIDs(tc.ids, func(i int) string { return "ids[" + strconv.Itoa(i) + "]" })
		if tc.paths == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var e *denar.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v, want a *denar.Error", tc.name, err)
		}
		var got []string
		for _, f := range e.Fields {
			got = append(got, f.Path)
		}
		if e.Code != denar.ECodeValidation || !slices.Equal(got, tc.paths) {
			t.Errorf("%s: %s at %v, want %s at %v", tc.name, e.Code, got, denar.ECodeValidation, tc.paths)
		}
	}
}

// TestItemSteps: a batch of refusals is checked as the API answers it —
// its ids first (items[i].id), then each item in order at the field at
// fault, with the message the dashboard translates — and its steps keep
// the items' order.
func TestItemSteps(t *testing.T) {
	t.Parallel()
	reasons := "must be one of " + strings.Join(einvoicing.RefusalReasons, ", ")
	for _, tc := range []struct {
		name    string
		items   []RefusalItem
		path    string // "": accepted
		message string
	}{
		{"empty", nil, "items[0].id", "a batch names at least one request"},
		{"valid", []RefusalItem{{ID: "sgr_b", Reason: "policy"}, {ID: "sgr_a", Reason: "unattended"}}, "", ""},
		{"bad reason", []RefusalItem{{ID: "sgr_a", Reason: "policy"}, {ID: "sgr_b", Reason: "bored"}}, "items[1].reason", reasons},
		{"id twice before a bad reason", []RefusalItem{{ID: "sgr_a", Reason: "bored"}, {ID: "sgr_a", Reason: "policy"}}, "items[1].id", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			steps, err := itemSteps(tc.items, func(it RefusalItem) *denar.FieldError {
				return badRefusalReason(it.Reason)
			}, func(RefusalItem) signerStep { return nil })
			if tc.path == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				var ids []string
				for _, st := range steps {
					ids = append(ids, st.id)
				}
				if want := []string{"sgr_b", "sgr_a"}; !slices.Equal(ids, want) {
					t.Fatalf("steps %v, want %v", ids, want)
				}
				return
			}
			var de *denar.Error
			if !errors.As(err, &de) || len(de.Fields) != 1 || de.Fields[0].Path != tc.path {
				t.Fatalf("got %v, want a problem at %s", err, tc.path)
			}
			if tc.message != "" && de.Fields[0].Message != tc.message {
				t.Fatalf("message %q, want %q", de.Fields[0].Message, tc.message)
			}
		})
	}
}
