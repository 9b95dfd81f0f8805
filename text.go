package denar

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on the text of a request, the same whatever store is behind it:
// PostgreSQL refuses NUL and invalid UTF-8 in text columns while SQLite
// stores them, so both are refused before either sees them.
const (
	// DefaultMaxStringLength is the length, in characters, of a request
	// string whose field declares no maxLength of its own; the OpenAPI
	// documents show it on every such field.
	DefaultMaxStringLength = 1000
	// MaxJSONDepth is how deeply a JSON request body may nest objects and
	// arrays (no request of either service needs more than 6).
	MaxJSONDepth = 32
)

// BadText says what is wrong with s as request text: "contains a NUL
// character", "is not valid UTF-8", or "" when nothing is.
func BadText(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL character"
	}
	return ""
}

// CheckJSONText walks the JSON text raw and returns the first string (key or
// value) that is not valid UTF-8 or contains NUL (escaped as \u0000), the
// first string value longer than maxString characters (when maxString > 0),
// or the first object or array nested deeper than MaxJSONDepth, as a field
// error whose path is the field's (base prefixed: "records[3].employee.firstName").
// encoding/json would silently replace invalid UTF-8 with U+FFFD, so the
// check reads the raw bytes of each string. Malformed JSON is left to the
// decoder, which reports it: CheckJSONText returns nil at the first syntax
// error.
func CheckJSONText(raw []byte, base string, maxString int) *FieldError {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object  bool
		key     string
		index   int
		wantKey bool
	}
	var stack []frame
	// path is the path of the value at the top of the stack; with
	// container, of the object or array that holds it.
	path := func(container bool) string {
		frames := stack
		if container && len(frames) > 0 {
			frames = frames[:len(frames)-1]
		}
		var b strings.Builder
		b.WriteString(base)
		for _, f := range frames {
			if f.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		return b.String() // "" is the body itself
	}
	// advance moves the enclosing container past a value.
	advance := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	var prev int64
	for {
		tok, err := dec.Token()
		if err != nil {
			// io.EOF at the end; a syntax error is the decoder's to report.
			return nil
		}
		end := dec.InputOffset()
		span := raw[prev:end]
		prev = end
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) >= MaxJSONDepth {
					return &FieldError{Path: path(false), Message: "nests deeper than " + strconv.Itoa(MaxJSONDepth) + " levels"}
				}
				stack = append(stack, frame{object: v == '{', wantKey: v == '{'})
			default:
				stack = stack[:len(stack)-1]
				advance()
			}
		case string:
			isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey
			bad := ""
			if !utf8.Valid(span) {
				bad = "is not valid UTF-8"
			} else if strings.IndexByte(v, 0) >= 0 {
				bad = "contains a NUL character"
			}
			if isKey {
				if bad != "" {
					return &FieldError{Path: path(true), Message: "has a member name that " + bad}
				}
				stack[len(stack)-1].key = v
				stack[len(stack)-1].wantKey = false
				continue
			}
			if bad != "" {
				return &FieldError{Path: path(false), Message: bad}
			}
			if maxString > 0 && utf8.RuneCountInString(v) > maxString {
				return &FieldError{Path: path(false), Message: "is longer than " + strconv.Itoa(maxString) + " characters"}
			}
			advance()
		default:
			advance()
		}
	}
}
