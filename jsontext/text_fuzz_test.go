package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckJSONText checks the scanner against encoding/json, which the
// services decode with: on well-formed JSON it refuses exactly the bodies
// that encoding/json would not decode to what was sent (a repeated member,
// by encoding/json's own case-insensitive matching; a string it alters:
// invalid UTF-8, an unpaired surrogate escape) and those with NUL, a string
// over the maximum, or nesting too deep; a body it accepts decodes, and
// encodes and decodes again, to the same value. On malformed JSON it never
// reports a clean scan to the end.
func FuzzCheckJSONText(f *testing.F) {
	f.Add([]byte(`{"a":["b",{"c":"\u0000"}]}`), uint8(0))
	f.Add([]byte("{\"a\":\"\xff\"}"), uint8(0))
	f.Add([]byte(`{"a":"X\ud800Y","b":"\ud83d\ude00","c":"\ufffd"}`), uint8(0))
	f.Add([]byte(`{"a":1,"A":2,"b":{"c":[1,{"c":2,"C":3}]}}`), uint8(0))
	f.Add([]byte(`{"kind":1,"\u212Aind":2,"\u017f":3,"S":4}`), uint8(0))
	f.Add([]byte(`["\\ud800","\/","\"",-0.5e+3,true,false,null,{}]`), uint8(3))
	f.Add([]byte("{\"a\":\"x\x00\"}"), uint8(0))
	f.Add([]byte(`[1e700]`), uint8(0))
	if raw, err := os.ReadFile("testdata/einvoice-2k.json"); err == nil {
		f.Add(raw, uint8(60))
	}
	f.Fuzz(func(t *testing.T, raw []byte, max uint8) {
		fe, complete := checkJSONText(raw, "", int(max))
		if fe != nil && complete {
			t.Fatalf("%q: an error %+v and a complete scan", raw, fe)
		}
		if !json.Valid(raw) {
			if fe == nil && complete {
				t.Fatalf("%q: malformed JSON scanned clean to the end", raw)
			}
			return
		}
		want := jsonOracle(t, raw, int(max))
		switch {
		case want != "" && fe == nil:
			t.Fatalf("%q: accepted, but %s", raw, want)
		case want == "" && fe != nil:
			t.Fatalf("%q: refused with %+v, but nothing is wrong", raw, fe)
		case want == "" && !complete:
			t.Fatalf("%q: well-formed JSON not scanned to the end", raw)
		case want == "":
			v, err := decodeNumbers(raw)
			if err != nil {
				t.Fatalf("%q: accepted but does not decode: %v", raw, err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := decodeNumbers(out); err != nil || !reflect.DeepEqual(v, again) {
				t.Fatalf("%q: decoded %#v, then %s (%v)", raw, v, out, err)
			}
		}
	})
}

// decodeNumbers is json.Unmarshal into any, with numbers as json.Number
// (a number too large for float64 is well-formed JSON).
func decodeNumbers(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// jsonOracle says what is wrong with the well-formed JSON raw, found with
// encoding/json's tokenizer: "" when nothing is.
func jsonOracle(t *testing.T, raw []byte, max int) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object, wantKey bool
		keys            []string
	}
	var stack []frame
	var prev int64
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			t.Fatalf("%q: valid, but the tokenizer says %v", raw, err)
		}
		span := raw[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) >= MaxJSONDepth {
					return "nests too deep"
				}
				stack = append(stack, frame{object: v == '{', wantKey: v == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if strings.Count(v, "\uFFFD") != spelledReplacements(span) {
				return "encoding/json altered a string"
			}
			if strings.IndexByte(v, 0) >= 0 {
				return "NUL"
			}
			if n := len(stack); n > 0 && stack[n-1].wantKey {
				for _, k := range stack[n-1].keys {
					if strings.EqualFold(k, v) {
						return "a repeated member"
					}
				}
				stack[n-1].keys = append(stack[n-1].keys, v)
				stack[n-1].wantKey = false
				continue
			}
			if max > 0 && utf8.RuneCountInString(v) > max {
				return "too long"
			}
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
}

// spelledReplacements counts the U+FFFD a JSON string's text spells, as
// UTF-8 or as the escape \ufffd.
func spelledReplacements(span []byte) int {
	n := 0
	for i := 0; i < len(span); {
		if span[i] == '\\' {
			if span[i+1] == 'u' && strings.EqualFold(string(span[i+2:i+6]), "fffd") {
				n++
			}
			if span[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
			continue
		}
		r, size := utf8.DecodeRune(span[i:])
		if r == utf8.RuneError && size == 3 {
			n++
		}
		i += size
	}
	return n
}
