package httpx

import (
	"testing"

	"github.com/danielgtaylor/huma/v2"
)

func TestAcceptable(t *testing.T) {
	t.Parallel()
	json := []string{"application/json"}
	for _, tc := range []struct {
		header string
		types  []string
		want   bool
	}{
		{"", json, true},
		{"application/json", json, true},
		{"Application/JSON", json, true},
		{"application/*", json, true},
		{"*/*", json, true},
		{"text/csv", json, false},
		{"text/csv, application/json;q=0.1", json, true},
		{"text/csv, application/json;q=0", json, false},
		{"application/json;q=0.000", json, false},
		{"text/*", json, false},
		{"application/xml", []string{"application/pdf"}, false},
		{"application/pdf", []string{"application/pdf"}, true},
		{"text/plain", []string{"text/plain"}, true},
		{"application/xml", nil, true}, // no body to negotiate
		{";;;", json, true},            // nothing parsable: not a clear refusal
		{"text/html, ;;;", json, false},
	} {
		if got := acceptable(tc.header, tc.types); got != tc.want {
			t.Errorf("acceptable(%q, %v) = %v, want %v", tc.header, tc.types, got, tc.want)
		}
	}
}

func TestResponseTypes(t *testing.T) {
	t.Parallel()
	op := &huma.Operation{Responses: map[string]*huma.Response{
		"200": {Content: map[string]*huma.MediaType{"text/plain; charset=utf-16le": {}, "application/xml": {}}},
		"201": {Content: map[string]*huma.MediaType{"application/xml": {}}},
		"422": {Content: map[string]*huma.MediaType{"application/problem+json": {}}},
		"204": {},
	}}
	got := responseTypes(op)
	if len(got) != 2 || got[0] != "application/xml" || got[1] != "text/plain" {
		t.Errorf("responseTypes = %v", got)
	}
}

func FuzzAcceptable(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json;q=0.5, text/*", "a/b;q=x", ",,,", "application/json;q=1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		// Any header: no panic, and a */* range added admits.
		_ = acceptable(header, []string{"application/json"})
		if !acceptable(header+",*/*", []string{"application/json"}) {
			t.Errorf("%q with */* refused", header)
		}
	})
}
