package denar

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedInStep: the generated clients were made from the committed
// documents (go generate ./sdk/denar/... writes spec.sha256 beside them).
func TestGeneratedInStep(t *testing.T) {
	t.Parallel()
	for _, svc := range []string{"payroll", "einvoice"} {
		doc, err := os.ReadFile(filepath.Join("..", "..", "api", svc+".openapi.json"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(svc+"api", "spec.sha256"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(doc)
		if hex.EncodeToString(sum[:]) != strings.TrimSpace(string(want)) {
			t.Errorf("sdk/denar/%sapi was generated from another api/%s.openapi.json: go generate ./sdk/denar/...", svc, svc)
		}
	}
}
