package httpx

import (
	"bytes"
	"testing"

	"github.com/danielgtaylor/huma/v2"
)

type renderedThing struct {
	Name string `json:"name"`
	raw  []byte
}

func (r renderedThing) RenderedJSON() []byte { return r.raw }

// TestJSONFormatRendered: a value that carries its JSON is written as those
// bytes, ended as huma's JSON format ends a value; one that does not is
// encoded as huma encodes it.
func TestJSONFormatRendered(t *testing.T) {
	t.Parallel()
	v := renderedThing{Name: "a<b>&c"}
	var want bytes.Buffer
	if err := huma.DefaultJSONFormat.Marshal(&want, v); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := jsonFormat().Marshal(&got, v); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("not rendered: %q, want %q", got.String(), want.String())
	}
	v.raw = bytes.TrimSuffix(want.Bytes(), []byte("\n"))
	v.Name = "ignored: the carried bytes are written"
	got.Reset()
	if err := jsonFormat().Marshal(&got, v); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("rendered: %q, want %q", got.String(), want.String())
	}
}
