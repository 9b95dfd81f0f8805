package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/denar-mk/denar/internal/cli"
)

// OpenAPI file names under api/, one per service.
var openAPIFiles = map[string]string{
	"payroll":  "payroll.openapi.json",
	"einvoice": "einvoice.openapi.json",
}

const openAPIUsage = `Usage: denar openapi [-dir DIR]

Writes each service's OpenAPI 3.1 document (payroll.openapi.json and
einvoice.openapi.json) to DIR; no store or server is needed.
`

func runOpenAPI(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("denar openapi", flag.ContinueOnError)
	dir := fs.String("dir", "api", "directory to write the documents to")
	if err := cli.Parse(fs, args, 0, 0, openAPIUsage, stdout, stderr); err != nil {
		return err
	}
	docs, err := openAPIDocuments()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	for name, b := range docs {
		path := filepath.Join(*dir, openAPIFiles[name])
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wrote", path)
	}
	return nil
}

// openAPIDocuments renders both services' documents without a store.
func openAPIDocuments() (map[string][]byte, error) {
	cfg := Config{DocsURL: "https://docs.denar.mk/errors"}
	payroll, einvoice, _ := services(nil, cfg, slog.New(slog.DiscardHandler), nil, nil, nil)
	out := map[string][]byte{}
	for name, s := range map[string]interface{ OpenAPIJSON() ([]byte, error) }{"payroll": payroll, "einvoice": einvoice} {
		b, err := s.OpenAPIJSON()
		if err != nil {
			return nil, fmt.Errorf("openapi %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}
