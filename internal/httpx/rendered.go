package httpx

import (
	"io"

	"github.com/danielgtaylor/huma/v2"
)

// Rendered is implemented by a response value that carries its own JSON
// already, exactly as jsonFormat would write it (encoding/json, HTML
// characters unescaped, no trailing newline); nil means it does not.
// An operation that rendered its answer once (for an event made from the
// same bytes, say) is then not rendered again for the stored idempotent
// response and for the wire.
type Rendered interface{ RenderedJSON() []byte }

// jsonFormat is huma's JSON format, with the bytes of a Rendered value
// written as they are.
func jsonFormat() huma.Format {
	return huma.Format{Marshal: marshalJSON, Unmarshal: huma.DefaultJSONFormat.Unmarshal}
}

func marshalJSON(w io.Writer, v any) error {
	if r, ok := v.(Rendered); ok {
		if b := r.RenderedJSON(); b != nil {
			if _, err := w.Write(b); err != nil {
				return err
			}
			_, err := w.Write([]byte{'\n'}) // as json.Encoder ends a value
			return err
		}
	}
	return huma.DefaultJSONFormat.Marshal(w, v)
}
