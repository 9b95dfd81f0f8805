package idempotency

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// treeCanonicalJSON is the canonical form as its definition gives it:
// decode into an any, marshal back.
func treeCanonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	if _, err := dec.Token(); err != io.EOF {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

var canonicalSeeds = []string{
	``, ` `, `null`, `true`, `1.50`, `-0`, `1e400`, `"a<b>&c\u2028"`, `"\xff\xfe"`, `{}`, `[]`, `[[]]`, `{"a":{}}`,
	`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":1,"A":2,"a":3}`, `{"z":[1,{"y":2,"x":[3]}],"m":null}`,
	` {"a" : [ 1 , 2 ] } `, `{"a":1} {}`, `{"a":1}}`, `{"a":1,}`, `[1,]`, `{"a"}`, `{1:2}`, `"\ud800"`,
	`{"records":[{"salaryGross":"30000","employee":{"firstName":"Ана","lastName":"Петрова"}}],"company":{"name":"x"},"batch":{"periodMonth":5}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

// TestCanonicalJSONIsTheTree: the canonical form worked out token by token
// is, byte for byte, the one of decoding into an any and marshalling it,
// including what is not JSON (used as it is).
func TestCanonicalJSONIsTheTree(t *testing.T) {
	t.Parallel()
	for _, s := range canonicalSeeds {
		var got bytes.Buffer
		writeCanonicalJSON(&got, []byte(s))
		if want := treeCanonicalJSON([]byte(s)); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%.60q: %.80q, want %.80q", s, got.Bytes(), want)
		}
	}
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got bytes.Buffer
		writeCanonicalJSON(&got, body)
		if want := treeCanonicalJSON(body); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%q: %q, want %q", body, got.Bytes(), want)
		}
	})
}
