package ujpsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesCorpus reads the service's examples corpus (the payloads
// einvoice/examples/out holds, as a company signs them) and judges each
// with the simulator's own reading of UJP: decoded strictly as a send is,
// then every rule of validate, the totals recomputed by totals.go among
// them, with the sandbox registry. The service and the simulator share no
// code, so an output both accept is read alike by two hands.
func TestExamplesCorpus(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../einvoice/examples/out/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no outputs of the examples corpus: %v", err)
	}
	cl := testLists(t)
	reg := seedRegistry()
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			r, err := decodeSend(out.Payload)
			if err != nil {
				t.Fatalf("the simulator does not read the payload (E4013): %v", err)
			}
			for _, e := range validate(&r.Document, cl, reg) {
				t.Errorf("%s %s: %s", e.ErrorCode, e.Property, e.ErrorMessage)
			}
		})
	}
}
