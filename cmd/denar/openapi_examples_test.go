package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIExamples: every example of both committed documents is a
// valid instance of its schema (kin-openapi's JSON Schema validation, as a
// client's tooling would check it): the examples of request bodies as
// requests, those of responses and webhooks as answers, each schema's own
// examples and each property's. The reference shows nothing a request
// could not carry or an answer could not be. (TestExamplesAnswered in
// internal/payrollapi and TestDocumentedIssueBody in internal/einvoiceapi
// send the request examples to the services.)
func TestOpenAPIExamples(t *testing.T) {
	t.Parallel()
	for name, file := range openAPIFiles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc, err := os.ReadFile(filepath.Join("..", "..", "api", file))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range checkExamples(doc) {
				t.Errorf("%s: %s", file, v)
			}
		})
	}
}

// TestOpenAPIExamplesChecked shows that checkExamples finds a wrong
// example of each kind.
func TestOpenAPIExamplesChecked(t *testing.T) {
	t.Parallel()
	doc := func(thingExample, bodyExample, propExample string) []byte {
		return []byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/t":{"post":{
"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"}` + bodyExample + `}}},
"responses":{"200":{"description":"ok"}}}}},
"components":{"schemas":{"Thing":{"type":"object","additionalProperties":false,"required":["n"],"examples":[` + thingExample + `],
"properties":{"n":{"type":"integer","maximum":5` + propExample + `}}}}}}`)
	}
	if got := checkExamples(doc(`{"n":1}`, "", "")); len(got) != 0 {
		t.Errorf("valid examples: %v", got)
	}
	for _, bad := range [][]byte{
		doc(`{"n":9}`, "", ""),
		doc(`{"n":1,"m":2}`, "", ""),
		doc(`{"n":1}`, `,"example":{}`, ""),
		doc(`{"n":1}`, "", `,"examples":[7]`),
	} {
		if got := checkExamples(bad); len(got) == 0 {
			t.Errorf("no violation found in %s", bad)
		}
	}
}

// checkExamples returns every example of doc that its schema refuses.
func checkExamples(doc []byte) []string {
	var out []string
	spec, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		return []string{"document: " + err.Error()}
	}
	var raw map[string]any
	if err := json.Unmarshal(doc, &raw); err != nil {
		return []string{"document: " + err.Error()}
	}
	rawSchemas, _ := dig(raw, "components", "schemas").(map[string]any)
	check := func(where string, sc *openapi3.Schema, example any, opts ...openapi3.SchemaValidationOption) {
		if sc == nil {
			out = append(out, where+": no schema")
			return
		}
		if err := sc.VisitJSON(example, append(opts, openapi3.MultiErrors())...); err != nil {
			out = append(out, where+": example is invalid: "+strings.Join(strings.Fields(err.Error()), " "))
		}
	}
	// The example a body shows: its media type's, else its schema's.
	bodyExample := func(media map[string]any) (any, bool) {
		if ex, ok := media["example"]; ok {
			return ex, true
		}
		s, _ := media["schema"].(map[string]any)
		if ref, ok := s["$ref"].(string); ok {
			s, _ = rawSchemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
			return ex[0], true
		}
		return nil, false
	}
	schemaOf := func(media map[string]any) *openapi3.Schema {
		s, _ := media["schema"].(map[string]any)
		if ref, ok := s["$ref"].(string); ok {
			if c := spec.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]; c != nil {
				return c.Value
			}
			return nil
		}
		b, _ := json.Marshal(s)
		var sc openapi3.Schema
		if err := json.Unmarshal(b, &sc); err != nil {
			return nil
		}
		return &sc
	}
	for _, section := range []string{"paths", "webhooks"} {
		items, _ := raw[section].(map[string]any)
		for key, item := range items {
			item, _ := item.(map[string]any)
			for method, op := range item {
				op, ok := op.(map[string]any)
				if !ok {
					continue
				}
				where := section + " " + strings.ToUpper(method) + " " + key
				// A webhook's body is the service's, sent to the caller.
				request := openapi3.VisitAsRequest()
				if section == "webhooks" {
					request = openapi3.VisitAsResponse()
				}
				content, _ := dig(op, "requestBody", "content").(map[string]any)
				for mediaType, m := range content {
					m, _ := m.(map[string]any)
					if ex, ok := bodyExample(m); ok {
						check(where+" request "+mediaType, schemaOf(m), ex, request)
					}
				}
				responses, _ := op["responses"].(map[string]any)
				for code, r := range responses {
					content, _ := dig(r, "content").(map[string]any)
					for mediaType, m := range content {
						m, _ := m.(map[string]any)
						if ex, ok := bodyExample(m); ok {
							check(where+" "+code+" "+mediaType, schemaOf(m), ex, openapi3.VisitAsResponse())
						}
					}
				}
				params, _ := op["parameters"].([]any)
				for _, p := range params {
					p, _ := p.(map[string]any)
					s, _ := p["schema"].(map[string]any)
					exs, _ := s["examples"].([]any)
					for _, ex := range exs {
						check(fmt.Sprintf("%s parameter %v", where, p["name"]), schemaOf(p), ex)
					}
				}
			}
		}
	}
	// Every schema's own examples, and its properties', at any depth.
	var walk func(where string, rawSchema map[string]any, sc *openapi3.Schema, depth int)
	walk = func(where string, rawSchema map[string]any, sc *openapi3.Schema, depth int) {
		if rawSchema == nil || sc == nil || depth > 8 {
			return
		}
		exs, _ := rawSchema["examples"].([]any)
		for _, ex := range exs {
			check(where, sc, ex)
		}
		props, _ := rawSchema["properties"].(map[string]any)
		for n, p := range props {
			p, _ := p.(map[string]any)
			if ps := sc.Properties[n]; ps != nil {
				walk(where+"."+n, p, ps.Value, depth+1)
			}
		}
		if items, ok := rawSchema["items"].(map[string]any); ok && sc.Items != nil {
			walk(where+"[]", items, sc.Items.Value, depth+1)
		}
	}
	for n, s := range rawSchemas {
		s, _ := s.(map[string]any)
		if c := spec.Components.Schemas[n]; c != nil {
			walk("components.schemas."+n, s, c.Value, 0)
		}
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIExampleEventTypes: the event types the examples name are
// types of the catalogue (GET /v1/event-types), so a caller who copies an
// endpoint's events subscribes to events that exist.
func TestOpenAPIExampleEventTypes(t *testing.T) {
	t.Parallel()
	docs, err := openAPIDocuments()
	if err != nil {
		t.Fatal(err)
	}
	var known []string
	for _, k := range webhooks.EventKinds() {
		known = append(known, k.Type)
	}
	var raw any
	if err := json.Unmarshal(docs["einvoice"], &raw); err != nil {
		t.Fatal(err)
	}
	found := 0
	var walk func(where string, v any, inExample bool)
	walk = func(where string, v any, inExample bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				ex := inExample || k == "example" || k == "examples"
				if ex && (k == "events" || k == "eventType" || k == "type") {
					for _, typ := range eventTypes(x) {
						// A problem's type is a URI, not an event type.
						if strings.Contains(typ, ".") && typ != "*" && !strings.Contains(typ, "://") {
							found++
							if !slices.Contains(known, typ) {
								t.Errorf("%s.%s: example names the event type %q, which the catalogue does not have", where, k, typ)
							}
						}
					}
				}
				walk(where+"."+k, x, ex)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", where, i), x, inExample)
			}
		}
	}
	walk("", raw, false)
	if found == 0 {
		t.Error("no example names an event type")
	}
}

func eventTypes(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
