package denar_test

import (
	"strings"
	"testing"

	"github.com/denar-mk/denar"
)

func TestCheckJSONText(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", denar.MaxJSONDepth+1) + strings.Repeat("]", denar.MaxJSONDepth+1)
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
		{"too deep", deep, "", 0, strings.Repeat("[0]", denar.MaxJSONDepth), "nests deeper than 32 levels"},
		{"malformed is the decoder's", `{"a":`, "", 0, "", ""},
		{"valid Cyrillic", `{"име":"Ана"}`, "", 3, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fe := denar.CheckJSONText([]byte(tt.raw), tt.base, tt.max)
			switch {
			case tt.msg == "" && fe != nil:
				t.Fatalf("unexpected %+v", fe)
			case tt.msg != "" && (fe == nil || fe.Path != tt.path || fe.Message != tt.msg):
				t.Fatalf("got %+v, want %s: %s", fe, tt.path, tt.msg)
			}
		})
	}
}

func FuzzCheckJSONText(f *testing.F) {
	f.Add([]byte(`{"a":["b",{"c":"\u0000"}]}`))
	f.Add([]byte("{\"a\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		_ = denar.CheckJSONText(raw, "", 5)
	})
}
