package filing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/jsontext"
)

// DecodeMpinFrom is DecodeMpin reading the request from r as it arrives: the
// records are decoded one at a time, so a request of thousands of records is
// never held whole in memory next to its decoded form. The result and the
// field errors are DecodeMpin's, except that a type error inside a record
// names the record ("records[3].hireDay", where DecodeMpin can only say
// "records.hireDay"). An error of r itself (a body over its limit, a read
// deadline) is returned wrapped, not as a validation error.
func DecodeMpinFrom(r io.Reader) (*MpinRequest, error) {
	rd := &mpinReader{keep: true}
	if err := rd.read(r); err != nil {
		return nil, err
	}
	return &MpinRequest{Company: rd.h.Company, Batch: rd.h.Batch, Force: rd.h.Force, Records: rd.kept}, nil
}

// DecodeCombinedFrom is DecodeCombined reading the request from r as it
// arrives, record by record (see DecodeMpinFrom).
func DecodeCombinedFrom(r io.Reader) (*CombinedRequest, error) {
	rd := &mpinReader{keep: true, o: buildOptions{combined: true}}
	if err := rd.read(r); err != nil {
		return nil, err
	}
	req := &CombinedRequest{Company: rd.h.Company, Batch: rd.h.Batch, Force: rd.h.Force, Batches: rd.keptB}
	if rd.records && req.Batches == nil {
		req.Batches = []BatchRecords{}
	}
	return req, nil
}

// DecodeJSONFrom is DecodeJSON reading from r. The value is read whole
// (these requests are decoded as one value), and the reading decoder, whose
// buffer grows to twice the body, is let go before the value is decoded.
func DecodeJSONFrom(r io.Reader, v any) error {
	dec := newStreamDecoder(r)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err == io.EOF && dec.InputOffset() == 0 {
		return denar.Invalid(jsontext.MalformedJSON(nil)) // the body is empty
	} else if err != nil {
		return dec.fail("", err)
	}
	trailing := dec.end()
	dec = streamDecoder{}
	if err := decodeValue("", raw, v); err != nil {
		return err
	}
	return trailing
}

// streamDecoder walks a JSON request token by token, decoding the values it
// does not walk into with encoding/json, and turns errors into the field
// errors decodeStrict gives.
type streamDecoder struct {
	*json.Decoder
}

func newStreamDecoder(r io.Reader) streamDecoder {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	return streamDecoder{dec}
}

// object reads an object, calling member for each key with the decoder
// before its value. A null leaves the target as it is, as json.Unmarshal
// does. A member given twice (names compared regardless of case, as
// encoding/json matches them) is refused as jsontext.CheckJSONText refuses it
// in the values below.
func (d streamDecoder) object(path string, member func(key string) error) error {
	tok, err := d.Token()
	if err == io.EOF && path == "" && d.InputOffset() == 0 {
		return denar.Invalid(jsontext.MalformedJSON(nil)) // the body is empty
	}
	if err != nil {
		return d.fail(path, err)
	}
	if tok == nil {
		return nil
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return typeError(path, "must be a JSON object")
	}
	var seen []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return d.fail(path, err)
		}
		key, _ := tok.(string)
		for _, k := range seen {
			if strings.EqualFold(k, key) {
				return denar.Invalid(denar.FieldError{Path: join(path, key), Message: jsontext.RepeatedMember(k, key)})
			}
		}
		seen = append(seen, key)
		if err := member(key); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return d.fail(path, err)
	}
	return nil
}

// array reads an array, calling elem for each element with its index; a
// null array is reported as nil, an empty one as not nil.
func (d streamDecoder) array(path string, elem func(i int) error) (isNull bool, err error) {
	tok, err := d.Token()
	if err != nil {
		return false, d.fail(path, err)
	}
	if tok == nil {
		return true, nil
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '[' {
		return false, typeError(path, "must be a JSON array")
	}
	for i := 0; d.More(); i++ {
		if err := elem(i); err != nil {
			return false, err
		}
	}
	if _, err := d.Token(); err != nil {
		return false, d.fail(path, err)
	}
	return false, nil
}

// value decodes the next value into v. The value is taken whole (one
// record, the company, the batch: small) and its text checked first (see
// jsontext.CheckJSONText): a string with NUL or invalid UTF-8 (which
// encoding/json would quietly replace), longer than
// jsontext.DefaultMaxStringLength, or nesting too deep is a field error with
// its path. It is then decoded as DecodeJSON decodes a body, so that every
// wrong field in it is reported with its full path.
func (d streamDecoder) value(path string, v any) error {
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		return d.fail(path, err)
	}
	return decodeValue(path, raw, v)
}

// decodeValue is value for the value's text, raw.
func decodeValue(path string, raw []byte, v any) error {
	if fe := jsontext.CheckJSONText(raw, path, jsontext.DefaultMaxStringLength); fe != nil {
		return denar.Invalid(*fe)
	}
	err := jsontext.DecodeJSON(raw, v)
	var de *denar.Error
	if errors.As(err, &de) {
		for i := range de.Fields {
			de.Fields[i].Path = join(path, de.Fields[i].Path)
		}
	}
	return err
}

// end checks that nothing but white space follows the request.
func (d streamDecoder) end() error {
	if d.More() {
		return denar.Invalid(denar.FieldError{Path: "", Message: "trailing data after the JSON value"})
	}
	return nil
}

func (d streamDecoder) unknown(path, key string) error {
	return denar.Invalid(denar.FieldError{Path: join(path, key), Message: "unknown field"})
}

func typeError(path, msg string) error {
	return denar.Invalid(denar.FieldError{Path: path, Message: msg})
}

// fail turns an error of the decoder at path into a validation error with
// the path of the field, the way decodeStrict does; an error of the reader
// under it is returned as it is, wrapped.
func (d streamDecoder) fail(path string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return denar.Invalid(denar.FieldError{Path: join(path, te.Field), Message: "malformed JSON: " + err.Error()})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return denar.Invalid(denar.FieldError{Path: join(path, key), Message: "unknown field"})
	case errors.As(err, &se), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.HasPrefix(err.Error(), "json: "):
		// Malformed JSON is reported as every operation reports it: at the
		// root, with the byte offset of the token that failed (found in
		// the unread bytes, from the value being read).
		rest, _ := io.ReadAll(d.Buffered())
		return denar.Invalid(jsontext.MalformedJSONAt(rest, d.InputOffset()))
	}
	return fmt.Errorf("filing: reading the request: %w", err)
}

func join(path, field string) string {
	switch {
	case path == "":
		return field
	case field == "":
		return path
	case strings.HasPrefix(field, "["):
		return path + field
	}
	return path + "." + field
}
