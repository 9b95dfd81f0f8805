package signing

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/denar-mk/denar"
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
