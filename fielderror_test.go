package denar

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestFieldErrorFormat: Add and AddCodebook keep the message's format and
// arguments; the JSON form is the path, message and codebook only.
func TestFieldErrorFormat(t *testing.T) {
	t.Parallel()
	var fe FieldErrors
	fe.Add("lines[0].description", "is longer than %d characters", 400)
	fe.AddCodebook("reason", "correction reasons", "%q is not a correction reason", "C99")
	lit := FieldError{Path: "inputs", Message: "is required"}
	for _, tt := range []struct {
		f      FieldError
		format string
		args   []any
		json   string
	}{
		{fe[0], "is longer than %d characters", []any{400}, `{"path":"lines[0].description","message":"is longer than 400 characters"}`},
		{fe[1], "%q is not a correction reason", []any{"C99"}, `{"path":"reason","message":"\"C99\" is not a correction reason","codebook":"correction reasons"}`},
		{lit, "", nil, `{"path":"inputs","message":"is required"}`},
	} {
		format, args := tt.f.Format()
		if format != tt.format || !slices.Equal(args, tt.args) {
			t.Errorf("%s: format %q %v, want %q %v", tt.f.Path, format, args, tt.format, tt.args)
		}
		if b, err := json.Marshal(tt.f); err != nil || string(b) != tt.json {
			t.Errorf("%s: JSON %s (%v), want %s", tt.f.Path, b, err, tt.json)
		}
	}
}
