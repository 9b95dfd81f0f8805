package jsontext

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/denar-mk/denar"
)

// DecodeJSON decodes a request body strictly into v (a pointer to a
// struct): unknown fields, values of the wrong JSON type, values a field's
// own UnmarshalJSON refuses, malformed JSON and trailing data are a
// validation_failed *denar.Error listing every problem with its path as a client
// writes it ("records[3].salaryGross", "deductions[0].description"). The
// well-formed case costs one encoding/json decode; the paths are worked
// out only when it fails.
func DecodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr == io.EOF {
			return nil
		}
		return denar.Invalid(denar.FieldError{Path: "", Message: "trailing data after the JSON value"})
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return denar.Invalid(syntaxError(data))
	}
	var tree any
	tdec := json.NewDecoder(bytes.NewReader(data))
	tdec.UseNumber()
	if terr := tdec.Decode(&tree); terr != nil {
		return denar.Invalid(syntaxError(data))
	}
	var fe denar.FieldErrors
	walk(&fe, "", tree, reflect.TypeOf(v).Elem())
	if len(fe) == 0 {
		// Not found by the walk (a case it does not model): report what
		// encoding/json said, at the root.
		fe.Add("", "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return fe.Err()
}

// syntaxError locates malformed JSON (MalformedJSON).
func syntaxError(data []byte) denar.FieldError { return MalformedJSON(data) }

// MalformedJSON is the field error of a body that is not JSON, as every
// operation of both services reports it: at the root (path "": the text
// is not fields yet) with the byte offset where reading it failed, for
// example "malformed JSON at byte 25: invalid character '}' looking for
// beginning of value", or "malformed JSON: the body is empty".
func MalformedJSON(data []byte) denar.FieldError { return MalformedJSONAt(data, 0) }

// MalformedJSONAt is MalformedJSON for data that begins at byte base of the
// body (a streaming decoder's unread bytes, from the value that failed).
func MalformedJSONAt(data []byte, base int64) denar.FieldError {
	at := func(off int64, msg string) denar.FieldError {
		return denar.FieldError{Path: "", Message: fmt.Sprintf("malformed JSON at byte %d: %s", base+off, msg)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	depth, read := 0, false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if !read && base == 0 {
				return denar.FieldError{Path: "", Message: "malformed JSON: the body is empty"}
			}
			return at(dec.InputOffset(), "unexpected end of the body")
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "json: ")
			if errors.Is(err, io.ErrUnexpectedEOF) {
				msg = "unexpected end of the body"
			}
			return at(dec.InputOffset(), msg)
		}
		read = true
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			if _, err := dec.Token(); err != io.EOF {
				return at(dec.InputOffset(), "trailing data after the JSON value")
			}
			return denar.FieldError{Path: "", Message: "malformed JSON"}
		}
	}
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walk compares the generic JSON value v with the Go type t and records
// every mismatch under path.
func walk(fe *denar.FieldErrors, path string, v any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		if v == nil {
			return // null into a pointer: nil
		}
		t = t.Elem()
	}
	if t == rawMessageType {
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		raw, _ := json.Marshal(v)
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			fe.Add(path, "%s", leafMessage(err, t))
		}
		return
	}
	if v == nil {
		return // null leaves the zero value
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			fe.Add(path, "must be a JSON object, not %s", jsonKind(v))
			return
		}
		fields := structFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := fields[k]
			if !ok {
				fe.Add(join(path, k), "unknown field")
				continue
			}
			walk(fe, join(path, k), obj[k], f)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			fe.Add(path, "must be a JSON array, not %s", jsonKind(v))
			return
		}
		for i, e := range arr {
			walk(fe, path+"["+strconv.Itoa(i)+"]", e, t.Elem())
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			fe.Add(path, "must be a JSON object, not %s", jsonKind(v))
			return
		}
		for k, e := range obj {
			walk(fe, join(path, k), e, t.Elem())
		}
	case reflect.Interface:
	default:
		raw, _ := json.Marshal(v)
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			fe.Add(path, "%s", leafMessage(err, t))
		}
	}
}

// leafMessage words a leaf's decoding error without Go type names.
func leafMessage(err error, t reflect.Type) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "a JSON " + goKind(t)
		if goKind(t) == "integer" && (te.Value == "number" || strings.HasPrefix(te.Value, "number ")) {
			// A fraction, or a whole number the field cannot hold.
			lo, hi := intRange(t)
			return "must be a whole number from " + lo + " to " + hi
		}
		return "must be " + want + ", not " + article(te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// intRange gives the bounds of an integer kind, as text.
func intRange(t reflect.Type) (string, string) {
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "0", strconv.FormatUint(1<<bits-1, 10)
	}
	return strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
}

func article(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	case "null":
		return "null"
	}
	if strings.HasPrefix(kind, "number ") {
		return "the number " + strings.TrimPrefix(kind, "number ")
	}
	return "a " + kind
}

func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// structFields maps the JSON names of t's fields (as encoding/json sees
// them, embedded structs flattened) to their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := out[name]; !dup {
				out[name] = f.Type
			}
		}
	}
	add(t)
	return out
}
