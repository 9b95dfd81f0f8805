package jsontext

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/denar-mk/denar"
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

// CheckJSONText scans the JSON text raw once and returns the first thing in
// it, in the order of the text, that the services refuse before decoding,
// as a field error whose path is the field's (base prefixed:
// "records[3].employee.firstName"; "" is the body itself):
//
//   - a string, key or value, that is not valid UTF-8 or holds an escaped
//     half of a UTF-16 surrogate pair (\ud800 to \udfff not forming a
//     pair): "is not valid UTF-8" ("has a member name that …" for a key);
//   - a string holding NUL, raw or escaped as \u0000: "contains a NUL
//     character";
//   - a string holding another control character than tab, line feed and
//     carriage return (escaped: \b, \f, \u0001 …), or U+FFFE or U+FFFF,
//     none of which XML can carry: ControlCharMessage;
//   - a member name given twice in one object, compared as encoding/json
//     matches names to fields, regardless of case: "is given more than
//     once", at the path of the repeated member;
//   - a string value longer than maxString characters (when maxString > 0);
//   - an object or array nested deeper than MaxJSONDepth.
//
// encoding/json would quietly replace invalid UTF-8 and unpaired surrogate
// escapes with U+FFFD and let the last of repeated members win, so the
// value decoded would not be the one sent (docs/decisions.md, "Request
// bodies are decoded as sent, or refused"). Malformed JSON is left to the
// decoder, which reports it: CheckJSONText stops at the first syntax error
// and returns what it found before it (nil if nothing). The scan allocates
// nothing for a body without escaped member names and without objects of
// more than manyMembers members.
func CheckJSONText(raw []byte, base string, maxString int) *denar.FieldError {
	fe, _ := checkJSONText(raw, base, maxString)
	return fe
}

// checkJSONText is CheckJSONText that also reports whether the scan reached
// the end of the text without an error of either kind.
func checkJSONText(raw []byte, base string, maxString int) (*denar.FieldError, bool) {
	var frames [8]jsonFrame
	var names [32][]byte
	s := jsonScanner{raw: raw, base: base, max: maxString, stack: frames[:0], names: names[:0]}
	if !s.value() {
		return s.err, false
	}
	s.space()
	return nil, s.pos == len(raw)
}

// RepeatedMember is the message of a member name given again in an object:
// first as given before, name as given now.
func RepeatedMember(first, name string) string {
	if first == name {
		return "is given more than once"
	}
	return `is given more than once (also as "` + first + `": member names are matched regardless of case)`
}

// manyMembers is how many members an object may have before its names
// are kept in a map rather than compared one by one.
const manyMembers = 32

// jsonScanner is CheckJSONText's state: a recursive descent over raw that
// keeps, for the path of an error, the object member or array element
// being read at each level, and, for the duplicate check, the names of the
// members of every object still open.
type jsonScanner struct {
	raw   []byte
	pos   int
	base  string
	max   int
	stack []jsonFrame
	names [][]byte // decoded member names of the open objects, innermost last
	err   *denar.FieldError
}

type jsonFrame struct {
	object bool
	index  int    // array: the element being read
	key    []byte // object: the decoded name of the member being read
	from   int    // object: its names are names[from:]
	folded map[string]struct{}
}

// jsonString is what the scan of one string found.
type jsonString struct {
	end     int // raw[start:end] is the string, quotes included
	runes   int // characters of the decoded string
	escaped bool
	bad     string // "is not valid UTF-8", "contains a NUL character" or ""
}

func (s *jsonScanner) space() {
	for s.pos < len(s.raw) {
		switch s.raw[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// fail records a field error; the scan stops.
func (s *jsonScanner) fail(path, msg string) bool {
	s.err = &denar.FieldError{Path: path, Message: msg}
	return false
}

// value scans the value at s.pos (after white space). It returns false
// when the scan stops: s.err is then the error found, or nil for malformed
// JSON.
func (s *jsonScanner) value() bool {
	s.space()
	if s.pos >= len(s.raw) {
		return false
	}
	switch c := s.raw[s.pos]; {
	case c == '{' || c == '[':
		if len(s.stack) >= MaxJSONDepth {
			return s.fail(s.path(), "nests deeper than "+strconv.Itoa(MaxJSONDepth)+" levels")
		}
		if c == '{' {
			return s.object()
		}
		return s.array()
	case c == '"':
		str, ok := s.str()
		if !ok {
			return false
		}
		if str.bad != "" {
			return s.fail(s.path(), str.bad)
		}
		if s.max > 0 && str.runes > s.max {
			return s.fail(s.path(), "is longer than "+strconv.Itoa(s.max)+" characters")
		}
		s.pos = str.end
		return true
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

func (s *jsonScanner) literal(lit string) bool {
	if len(s.raw)-s.pos < len(lit) || string(s.raw[s.pos:s.pos+len(lit)]) != lit {
		return false
	}
	s.pos += len(lit)
	return true
}

// number scans a number as RFC 8259 writes it.
func (s *jsonScanner) number() bool {
	raw, i := s.raw, s.pos
	if raw[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(raw) && '0' <= raw[i] && raw[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(raw) && raw[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	s.pos = i
	return true
}

func (s *jsonScanner) array() bool {
	s.stack = append(s.stack, jsonFrame{})
	s.pos++ // [
	s.space()
	if s.pos < len(s.raw) && s.raw[s.pos] == ']' {
		s.pos++
		s.stack = s.stack[:len(s.stack)-1]
		return true
	}
	for {
		if !s.value() {
			return false
		}
		s.space()
		if s.pos >= len(s.raw) {
			return false
		}
		switch s.raw[s.pos] {
		case ',':
			s.pos++
			s.stack[len(s.stack)-1].index++
		case ']':
			s.pos++
			s.stack = s.stack[:len(s.stack)-1]
			return true
		default:
			return false
		}
	}
}

func (s *jsonScanner) object() bool {
	s.stack = append(s.stack, jsonFrame{object: true, from: len(s.names)})
	s.pos++ // {
	s.space()
	if s.pos < len(s.raw) && s.raw[s.pos] == '}' {
		s.pos++
		s.stack = s.stack[:len(s.stack)-1]
		return true
	}
	for {
		s.space()
		if s.pos >= len(s.raw) || s.raw[s.pos] != '"' {
			return false
		}
		if !s.member() {
			return false
		}
		s.space()
		if s.pos >= len(s.raw) || s.raw[s.pos] != ':' {
			return false
		}
		s.pos++
		if !s.value() {
			return false
		}
		s.space()
		if s.pos >= len(s.raw) {
			return false
		}
		switch s.raw[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			f := &s.stack[len(s.stack)-1]
			clear(s.names[f.from:]) // drop the references to escaped names' copies
			s.names = s.names[:f.from]
			s.stack = s.stack[:len(s.stack)-1]
			return true
		default:
			return false
		}
	}
}

// member scans the member name at s.pos and checks it against the names
// before it in the same object.
func (s *jsonScanner) member() bool {
	str, ok := s.str()
	if !ok {
		return false
	}
	f := &s.stack[len(s.stack)-1]
	if str.bad != "" {
		return s.fail(s.containerPath(), "has a member name that "+str.bad)
	}
	name := s.raw[s.pos+1 : str.end-1]
	if str.escaped {
		name = unescapeJSON(name)
	}
	s.pos = str.end
	f.key = name
	prior := s.names[f.from:]
	var first []byte
	switch {
	case f.folded != nil:
		fold := appendFolded(make([]byte, 0, 64), name)
		if _, dup := f.folded[string(fold)]; dup {
			for _, p := range prior {
				if bytes.EqualFold(p, name) {
					first = p
					break
				}
			}
		} else {
			f.folded[string(fold)] = struct{}{}
		}
	default:
		for _, p := range prior {
			if bytes.EqualFold(p, name) {
				first = p
				break
			}
		}
		if first == nil && len(prior)+1 > manyMembers {
			// Past manyMembers, one lookup per name instead of a
			// comparison with every name before it.
			f.folded = make(map[string]struct{}, 2*manyMembers)
			for _, p := range prior {
				f.folded[string(appendFolded(nil, p))] = struct{}{}
			}
			f.folded[string(appendFolded(nil, name))] = struct{}{}
		}
	}
	if first != nil {
		return s.fail(s.path(), RepeatedMember(string(first), string(name)))
	}
	s.names = append(s.names, name)
	return true
}

// str scans the string at s.pos without decoding it: its end, its length
// in characters, and whether it holds invalid UTF-8 (an unpaired surrogate
// escape included) or NUL. ok is false for malformed JSON: an unterminated
// string, a control character other than NUL, a bad escape.
func (s *jsonScanner) str() (str jsonString, ok bool) {
	raw := s.raw
	utf8OK, nul, ctrl, ascii := true, false, false, true
	i := s.pos + 1
	for {
		if i >= len(raw) {
			return str, false
		}
		c := raw[i]
		switch {
		case c == '"':
			str.end = i + 1
			if !ascii {
				seg := raw[s.pos:str.end]
				utf8OK = utf8OK && utf8.Valid(seg)
				ctrl = ctrl || bytes.Contains(seg, nonCharFFFE) || bytes.Contains(seg, nonCharFFFF)
			}
			switch {
			case !utf8OK:
				str.bad = "is not valid UTF-8"
			case nul:
				str.bad = "contains a NUL character"
			case ctrl:
				str.bad = ControlCharMessage
			}
			return str, true
		case c == '\\':
			str.escaped = true
			str.runes++
			if i+1 >= len(raw) {
				return str, false
			}
			switch raw[i+1] {
			case 'b', 'f':
				ctrl = true
				i += 2
				continue
			case '"', '\\', '/', 'n', 'r', 't':
				i += 2
				continue
			case 'u':
			default:
				return str, false
			}
			r := hex4(raw, i+2)
			if r < 0 {
				return str, false
			}
			i += 6
			switch {
			case r == 0:
				nul = true
			case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0xfffe, r == 0xffff:
				ctrl = true
			case utf16.IsSurrogate(rune(r)):
				// A high half followed by an escaped low half is one
				// character; anything else is what encoding/json turns
				// into U+FFFD.
				if r < 0xdc00 && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := hex4(raw, i+2); 0xdc00 <= r2 && r2 < 0xe000 {
						i += 6
						continue
					}
				}
				utf8OK = false
			}
		case c < 0x20:
			if c != 0 {
				return str, false
			}
			// Raw NUL is malformed JSON, but refused as the escaped one is.
			nul = true
			str.runes++
			i++
		case c < utf8.RuneSelf:
			str.runes++
			i++
		default:
			ascii = false
			if c&0xc0 != 0x80 {
				str.runes++ // a leading byte; the encoding is checked at the end
			}
			i++
		}
	}
}

// ControlCharMessage is the field error of a string holding a character
// XML 1.0 cannot carry, which the files for UJP and UJP's own documents are
// made of: a control character other than tab, line feed and carriage
// return (JSON can only send them escaped), or U+FFFE or U+FFFF.
const ControlCharMessage = "contains a control character other than tab, line feed or carriage return"

// The UTF-8 of U+FFFE and U+FFFF.
var nonCharFFFE, nonCharFFFF = []byte{0xef, 0xbf, 0xbe}, []byte{0xef, 0xbf, 0xbf}

// hex4 is the value of the four hex digits at raw[i:], or -1.
func hex4(raw []byte, i int) int {
	if len(raw)-i < 4 {
		return -1
	}
	v := 0
	for _, c := range raw[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		v = v<<4 | int(c)
	}
	return v
}

// unescapeJSON decodes the text of a well-formed JSON string (without its
// quotes) that scanned clean: no NUL, no unpaired surrogate.
func unescapeJSON(in []byte) []byte {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch in[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(in, i+2))
			if utf16.IsSurrogate(r) {
				r = utf16.DecodeRune(r, rune(hex4(in, i+8)))
				i += 6
			}
			out = utf8.AppendRune(out, r)
			i += 6
			continue
		default: // " \ /
			out = append(out, in[i+1])
		}
		i += 2
	}
	return out
}

// appendFolded appends name folded as encoding/json folds the names it
// matches to fields (its foldName): two names fold alike exactly when
// bytes.EqualFold reports them equal.
func appendFolded(out, name []byte) []byte {
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// path is the path of the value being read ("" is the body itself).
func (s *jsonScanner) path() string { return s.pathOf(s.stack) }

// containerPath is the path of the object or array being read.
func (s *jsonScanner) containerPath() string { return s.pathOf(s.stack[:len(s.stack)-1]) }

func (s *jsonScanner) pathOf(frames []jsonFrame) string {
	var b strings.Builder
	b.WriteString(s.base)
	for _, f := range frames {
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(f.key)
		} else {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}
