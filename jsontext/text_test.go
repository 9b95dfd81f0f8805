package jsontext_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/denar-mk/denar/jsontext"
)

func TestCheckJSONText(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", jsontext.MaxJSONDepth+1) + strings.Repeat("]", jsontext.MaxJSONDepth+1)
	for _, tt := range []struct {
		name, raw, base string
		max             int
		path, msg       string // "" msg: no error; "" path: the body itself
	}{
		{"clean", `{"a":"x","b":[1,"y",{"c":null}]}`, "", 0, "", ""},
		{"escaped NUL", `{"a":{"b":["x","y\u0000"]}}`, "", 0, "a.b[1]", "contains a NUL character"},
		{"invalid UTF-8", "{\"records\":[{},{\"name\":\"\xff\"}]}", "", 0, "records[1].name", "is not valid UTF-8"},
		{"invalid UTF-8 in a key", "{\"a\":1,\"\xfe\":2}", "", 0, "", "has a member name that is not valid UTF-8"},
		{"base", `{"x":"\u0000"}`, "records[3]", 0, "records[3].x", "contains a NUL character"},
		{"top-level string", `"\u0000"`, "", 0, "", "contains a NUL character"},
		{"too long", `{"a":"` + strings.Repeat("ж", 11) + `"}`, "", 10, "a", "is longer than 10 characters"},
		{"long is fine without a maximum", `{"a":"` + strings.Repeat("ж", 11) + `"}`, "", 0, "", ""},
		{"exactly the maximum", `{"a":"` + strings.Repeat("ж", 10) + `"}`, "", 10, "", ""},
		{"too deep", deep, "", 0, strings.Repeat("[0]", jsontext.MaxJSONDepth), "nests deeper than 32 levels"},
		{"malformed is the decoder's", `{"a":`, "", 0, "", ""},
		{"valid Cyrillic", `{"име":"Ана"}`, "", 3, "", ""},
		{"raw NUL is the escaped one", "{\"a\":[\"x\x00\"]}", "", 0, "a[0]", "contains a NUL character"},
		{"escaped NUL in a key", `{"a":{"b\u0000":1}}`, "", 0, "a", "has a member name that contains a NUL character"},
		{"escaped control character", `{"issuer":{"name":"a\u0001b"}}`, "", 0, "issuer.name", jsontext.ControlCharMessage},
		{"vertical tab", `{"company":{"contactPerson":"a\u000Bb"}}`, "", 0, "company.contactPerson", jsontext.ControlCharMessage},
		{"backspace escape", `{"a":["\b"]}`, "", 0, "a[0]", jsontext.ControlCharMessage},
		{"form feed escape", `{"a":"x\f"}`, "", 0, "a", jsontext.ControlCharMessage},
		{"U+FFFE escaped", `{"a":"\ufffe"}`, "", 0, "a", jsontext.ControlCharMessage},
		{"U+FFFF raw", "{\"a\":\"x\uffff\"}", "", 0, "a", jsontext.ControlCharMessage},
		{"control character in a key", `{"a":{"b\u001f":1}}`, "", 0, "a", "has a member name that " + jsontext.ControlCharMessage},
		{"tab, line feed and carriage return are text", `{"a":"x\ty\nz\r\u0009\u000a\u000D"}`, "", 0, "", ""},
		{"U+FFFD is text", `{"a":"\ufffd�"}`, "", 0, "", ""},
		{"lone high surrogate", `{"lines":[{"description":"X\ud800Y"}]}`, "", 0, "lines[0].description", "is not valid UTF-8"},
		{"lone low surrogate", `{"a":"\uDC00"}`, "", 0, "a", "is not valid UTF-8"},
		{"high surrogate at the end", `{"a":"x\ud83d"}`, "", 0, "a", "is not valid UTF-8"},
		{"two high surrogates", `{"a":"\ud83d\ud83d\ude00"}`, "", 0, "a", "is not valid UTF-8"},
		{"reversed pair", `{"a":"\ude00\ud83d"}`, "", 0, "a", "is not valid UTF-8"},
		{"high surrogate before another escape", `{"a":"\ud83d\n"}`, "", 0, "a", "is not valid UTF-8"},
		{"lone surrogate in a key", `{"a":{"\udfff":1}}`, "", 0, "a", "has a member name that is not valid UTF-8"},
		{"lone surrogate at the top", `"\ud800"`, "", 0, "", "is not valid UTF-8"},
		{"surrogate encoded in UTF-8", "{\"a\":\"\xed\xa0\x80\"}", "", 0, "a", "is not valid UTF-8"},
		{"a pair is one character", `{"a":"\ud83d\ude00\uD83D\uDE00"}`, "", 2, "", ""},
		{"escapes count as characters", `{"a":"\n\u0416\"x"}`, "", 3, "a", "is longer than 3 characters"},
		{"escaped backslash before u", `{"a":"\\ud800"}`, "", 0, "", ""},
		{"duplicate", `{"taxNumber":"4030000000028","taxNumber":"4030000000036","representative":{}}`, "", 0, "taxNumber", "is given more than once"},
		{"duplicate deep", `{"lines":[{"quantity":"1"},{"quantity":"1","unitPrice":"2","quantity":"3"}]}`, "", 0, "lines[1].quantity", "is given more than once"},
		{"duplicate escaped", `{"taxNumber":1,"tax\u004eumber":2}`, "", 0, "taxNumber", "is given more than once"},
		{"duplicate by case", `{"taxNumber":1,"TaxNumber":2}`, "", 0, "TaxNumber", `is given more than once (also as "taxNumber": member names are matched regardless of case)`},
		{"duplicate by Kelvin sign", `{"kind":1,"\u212Aind":2}`, "", 0, "\u212aind", `is given more than once (also as "kind": member names are matched regardless of case)`},
		{"duplicate with base", `{"a":1,"a":2}`, "records[3]", 0, "records[3].a", "is given more than once"},
		{"duplicate in a big object", bigObject(100, "k7"), "", 0, "k7", "is given more than once"},
		{"duplicate by case in a big object", bigObject(100, "K99"), "", 0, "K99", `is given more than once (also as "k99": member names are matched regardless of case)`},
		{"big object", bigObject(100, ""), "", 0, "", ""},
		{"same name in sibling objects", `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`, "", 0, "", ""},
		{"same name at two depths", `{"x":{"x":{"x":1}}}`, "", 0, "", ""},
		{"after a nested object", `{"x":{"y":1,"z":2},"y":1,"x":3}`, "", 0, "x", "is given more than once"},
		{"the first error wins", `{"a":"\ud800","a":1}`, "", 0, "a", "is not valid UTF-8"},
		{"malformed before the duplicate", `{"a":1,,"a":2}`, "", 0, "", ""},
		{"a bad escape is the decoder's", `{"a":"\x"}`, "", 0, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fe := jsontext.CheckJSONText([]byte(tt.raw), tt.base, tt.max)
			switch {
			case tt.msg == "" && fe != nil:
				t.Fatalf("unexpected %+v", fe)
			case tt.msg != "" && (fe == nil || fe.Path != tt.path || fe.Message != tt.msg):
				t.Fatalf("got %+v, want %s: %s", fe, tt.path, tt.msg)
			}
		})
	}
}

// bigObject is an object of n members k0 … k(n-1), then extra when it is
// not "".
func bigObject(n int, extra string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	if extra != "" {
		fmt.Fprintf(&b, `%q:0,`, extra)
	}
	b.WriteString(`"end":null}`)
	return b.String()
}

// BenchmarkCheckJSONText is the edge's scan of a typical e-invoice body
// (2 KB, seven lines, Cyrillic text): what every JSON request pays before
// it is decoded.
func BenchmarkCheckJSONText(b *testing.B) {
	raw, err := os.ReadFile("testdata/einvoice-2k.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if fe := jsontext.CheckJSONText(raw, "", jsontext.DefaultMaxStringLength); fe != nil {
			b.Fatal(fe)
		}
	}
}
