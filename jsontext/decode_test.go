package jsontext_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/jsontext"
)

type decItem struct {
	Name  string  `json:"name"`
	Count int     `json:"count"`
	Note  *string `json:"note"`
}

type decNum struct{ v string }

func (n *decNum) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return errors.New("must be a JSON number, not a string")
	}
	n.v = string(b)
	return nil
}

type decBody struct {
	Title string             `json:"title"`
	Items []decItem          `json:"items"`
	Hours decNum             `json:"hours"`
	Map   map[string]decItem `json:"map"`
	Raw   json.RawMessage    `json:"raw"`
	Flag  bool               `json:"flag"`
}

func TestDecodeJSONPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body  string
		paths []string
	}{
		{`{"title":"a","items":[{"name":"x","count":1}],"hours":7.5,"raw":{"any":[1]}}`, nil},
		{`{"title":"a","items":[{"name":"x"},{"name":"y","colour":1}]}`, []string{"items[1].colour"}},
		{`{"title":1,"items":[{"name":"x","count":"2"},{"count":1.5}],"flag":"yes"}`, []string{"title", "items[0].count", "items[1].count", "flag"}},
		{`{"hours":"7"}`, []string{"hours"}},
		{`{"items":{"name":"x"}}`, []string{"items"}},
		{`{"map":{"k":{"nam":"x"}}}`, []string{"map.k.nam"}},
		{`{"items":[{"name":"x","note":null}],"title":null}`, nil},
		{`{"items":[{"name":"x","count":}]}`, []string{""}}, // malformed JSON: at the root, with the byte
		{`{"title":"a"} {"title":"b"}`, []string{""}},
		{``, []string{""}},
		{`[1]`, []string{""}},
	}
	for _, tt := range tests {
		var v decBody
		err := jsontext.DecodeJSON([]byte(tt.body), &v)
		if tt.paths == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.body, err)
			}
			continue
		}
		var e *denar.Error
		if !errors.As(err, &e) || e.Code != denar.ECodeValidation {
			t.Errorf("%s: %v, want validation_failed", tt.body, err)
			continue
		}
		var got []string
		for _, f := range e.Fields {
			got = append(got, f.Path)
		}
		for _, p := range tt.paths {
			if !slices.Contains(got, p) {
				t.Errorf("%s: no error at %q: %v", tt.body, p, e.Fields)
			}
		}
	}
}

// FuzzDecodeJSON: any input decodes or fails with validation_failed, never
// panics, and a success is what encoding/json with unknown fields
// disallowed would have decoded.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"title":"a","items":[{"name":"x","count":1}]}`, `{"items":[{"count":"x"}]}`, `{"map":{"a":{}}}`, `[`, `{"title":"\u0000"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v decBody
		err := jsontext.DecodeJSON([]byte(body), &v)
		if err != nil {
			var e *denar.Error
			if !errors.As(err, &e) || e.Code != denar.ECodeValidation || len(e.Fields) == 0 {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		var w decBody
		if json.Unmarshal([]byte(body), &w) != nil || fmt.Sprint(v) != fmt.Sprint(w) {
			t.Fatalf("%q: decoded %v, encoding/json %v", body, v, w)
		}
	})
}

// TestDecodeJSONNumberMessages: a number an integer field cannot hold is
// reported at its path in plain words, without Go type names.
func TestDecodeJSONNumberMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, path, msg string }{
		{`{"items":[{"count":100000000000000000000}]}`, "items[0].count", "must be a whole number from -9223372036854775808 to 9223372036854775807"},
		{`{"items":[{},{"count":1.5}]}`, "items[1].count", "must be a whole number from -9223372036854775808 to 9223372036854775807"},
		{`{"items":[{"count":-1e30}]}`, "items[0].count", "must be a whole number from -9223372036854775808 to 9223372036854775807"},
		{`{"items":[{"count":"2"}]}`, "items[0].count", "must be a JSON integer, not a string"},
	} {
		var v decBody
		err := jsontext.DecodeJSON([]byte(tc.body), &v)
		var e *denar.Error
		if !errors.As(err, &e) || len(e.Fields) != 1 || e.Fields[0].Path != tc.path || e.Fields[0].Message != tc.msg {
			t.Errorf("%s: %v; want %q at %s", tc.body, err, tc.msg, tc.path)
		}
	}
}
