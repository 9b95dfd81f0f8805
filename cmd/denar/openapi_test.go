package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

var update = flag.Bool("update", false, "rewrite the committed OpenAPI documents under api/")

// TestOpenAPIGolden keeps the committed api/*.openapi.json in step with the
// code: a change to an operation must come with the regenerated document
// (go test ./cmd/denar -run OpenAPI -update, or denar openapi).
func TestOpenAPIGolden(t *testing.T) {
	t.Parallel()
	docs, err := openAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range docs {
		path := filepath.Join("..", "..", "api", openAPIFiles[name])
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run go test ./cmd/denar -run OpenAPI -update)", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the code; regenerate it with: go test ./cmd/denar -run OpenAPI -update", path)
		}
		validateOpenAPI(t, name, got)
	}
}

// validateOpenAPI checks that doc is a valid OpenAPI 3.1 document and that
// every authenticated operation declares the scope it needs.
func validateOpenAPI(t *testing.T, name string, doc []byte) {
	t.Helper()
	loader := openapi3.NewLoader()
	spec, err := loader.LoadFromData(doc)
	if err != nil {
		t.Fatalf("%s: not an OpenAPI document: %v", name, err)
	}
	if spec.OpenAPI != "3.1.0" {
		t.Errorf("%s: openapi = %q, want 3.1.0", name, spec.OpenAPI)
	}
	if err := spec.Validate(context.Background()); err != nil {
		t.Errorf("%s: invalid OpenAPI: %v", name, err)
	}
	var raw struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		t.Fatal(err)
	}
	for path, ops := range raw.Paths {
		for method, op := range ops {
			var o struct {
				Security []map[string][]string `json:"security"`
				Scope    *string               `json:"x-required-scope"`
			}
			_ = json.Unmarshal(op, &o)
			bearer := false
			for _, req := range o.Security {
				if _, ok := req["bearer"]; ok {
					bearer = true
				}
			}
			// Agent credentials carry no scopes; a key always needs one.
			if bearer && o.Scope == nil {
				t.Errorf("%s %s %s: secured operation without x-required-scope", name, method, path)
			}
		}
	}
}
