package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPILint lints the committed documents under api/ (what clients
// and generators read, so the files, not the code): kin-openapi's
// validation of the 3.1 document, then the rules below, named after the
// Spectral/vacuum "recommended" rules they follow where one exists. .ci/run
// runs it as its own step (go test ./cmd/denar -run OpenAPILint); a fix goes
// into the generators and the documents are regenerated (-update).
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	for name, file := range openAPIFiles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("..", "..", "api", file))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range lintOpenAPI(b) {
				t.Errorf("%s: %s", file, v)
			}
		})
	}
}

// TestOpenAPILintRules shows that each rule reports what it is about: a
// minimal valid document passes, and each breakage is reported by its rule.
func TestOpenAPILintRules(t *testing.T) {
	t.Parallel()
	base := func() map[string]any {
		return map[string]any{
			"openapi": "3.1.0",
			"info": map[string]any{"title": "t", "version": "1", "description": "d",
				"contact": map[string]any{"name": "n", "url": "https://example.com"}},
			"servers": []any{map[string]any{"url": "http://127.0.0.1:8080"}},
			"tags":    []any{map[string]any{"name": "Things", "description": "things"}},
			"paths": map[string]any{
				"/v1/things/{id}": map[string]any{
					"post": map[string]any{
						"operationId": "makeThing", "summary": "Make a thing", "description": "Makes one.",
						"tags": []any{"Things"},
						"parameters": []any{map[string]any{"name": "id", "in": "path", "required": true, "description": "The thing.",
							"schema": map[string]any{"type": "string", "maxLength": 10}}},
						"requestBody": map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{
							"schema": map[string]any{"$ref": "#/components/schemas/Thing"}}}},
						"responses": map[string]any{
							"200": map[string]any{"description": "ok", "content": map[string]any{"application/json": map[string]any{
								"schema": map[string]any{"$ref": "#/components/schemas/Thing"}}}},
							"422": map[string]any{"description": "bad", "content": map[string]any{"application/problem+json": map[string]any{
								"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}}},
						},
					},
				},
			},
			"components": map[string]any{"schemas": map[string]any{
				"Thing": map[string]any{"type": "object", "additionalProperties": false,
					"examples": []any{map[string]any{"name": "box", "tags": []any{"red"}}},
					"properties": map[string]any{
						"name": map[string]any{"type": "string", "maxLength": 5, "description": "Its name."},
						"tags": map[string]any{"type": []any{"array", "null"}, "maxItems": 3, "description": "Its tags.",
							"items": map[string]any{"type": "string", "maxLength": 5}},
					}},
				"Problem": map[string]any{"type": "object", "properties": map[string]any{
					"code": map[string]any{"type": "string", "description": "What went wrong."},
				}},
			}},
		}
	}
	op := func(d map[string]any) map[string]any {
		return d["paths"].(map[string]any)["/v1/things/{id}"].(map[string]any)["post"].(map[string]any)
	}
	thing := func(d map[string]any) map[string]any {
		return d["components"].(map[string]any)["schemas"].(map[string]any)["Thing"].(map[string]any)["properties"].(map[string]any)
	}
	tests := []struct {
		rule   string
		break_ func(map[string]any)
	}{
		{"", func(map[string]any) {}},
		{"info-contact", func(d map[string]any) { delete(d["info"].(map[string]any), "contact") }},
		{"info-description", func(d map[string]any) { delete(d["info"].(map[string]any), "description") }},
		{"oas3-api-servers", func(d map[string]any) { delete(d, "servers") }},
		{"operation-operationId", func(d map[string]any) { delete(op(d), "operationId") }},
		{"operation-operationId-valid", func(d map[string]any) { op(d)["operationId"] = "make thing" }},
		{"operation-summary", func(d map[string]any) { delete(op(d), "summary") }},
		{"operation-description", func(d map[string]any) { delete(op(d), "description") }},
		{"operation-tags", func(d map[string]any) { delete(op(d), "tags") }},
		{"operation-tag-defined", func(d map[string]any) { op(d)["tags"] = []any{"Other"} }},
		{"tag-description", func(d map[string]any) { d["tags"] = []any{map[string]any{"name": "Things"}} }},
		{"operation-success-response", func(d map[string]any) { delete(op(d)["responses"].(map[string]any), "200") }},
		{"operation-4xx-problem", func(d map[string]any) { delete(op(d)["responses"].(map[string]any), "422") }},
		{"path-params", func(d map[string]any) { op(d)["parameters"] = []any{} }},
		{"parameter-string-bounded", func(d map[string]any) {
			delete(op(d)["parameters"].([]any)[0].(map[string]any)["schema"].(map[string]any), "maxLength")
		}},
		{"request-string-maxLength", func(d map[string]any) { delete(thing(d)["name"].(map[string]any), "maxLength") }},
		{"request-string-maxLength", func(d map[string]any) {
			delete(thing(d)["tags"].(map[string]any)["items"].(map[string]any), "maxLength")
		}},
		{"request-array-maxItems", func(d map[string]any) { delete(thing(d)["tags"].(map[string]any), "maxItems") }},
		{"oas3-unused-component", func(d map[string]any) {
			d["components"].(map[string]any)["schemas"].(map[string]any)["Spare"] = map[string]any{"type": "object"}
		}},
		{"no-script-tags-in-markdown", func(d map[string]any) { op(d)["description"] = "<script>x</script>" }},
		{"parameter-description", func(d map[string]any) {
			delete(op(d)["parameters"].([]any)[0].(map[string]any), "description")
		}},
		{"property-description", func(d map[string]any) { delete(thing(d)["name"].(map[string]any), "description") }},
		{"property-description", func(d map[string]any) {
			problem := d["components"].(map[string]any)["schemas"].(map[string]any)["Problem"].(map[string]any)
			delete(problem["properties"].(map[string]any)["code"].(map[string]any), "description")
		}},
		// An inline schema's properties too.
		{"property-description", func(d map[string]any) {
			op(d)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"] =
				map[string]any{"example": map[string]any{"n": 1}, "schema": map[string]any{"type": "object",
					"properties": map[string]any{"n": map[string]any{"type": "integer"}}}}
		}},
		{"body-example", func(d map[string]any) {
			delete(d["components"].(map[string]any)["schemas"].(map[string]any)["Thing"].(map[string]any), "examples")
		}},
		// A response body of its own needs one as much as a request body.
		{"body-example", func(d map[string]any) {
			op(d)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"] =
				map[string]any{"schema": map[string]any{"type": "object",
					"properties": map[string]any{"n": map[string]any{"type": "integer", "description": "n"}}}}
		}},
	}
	for _, tc := range tests {
		d := base()
		tc.break_(d)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		got := lintOpenAPI(b)
		if tc.rule == "" {
			if len(got) != 0 {
				t.Errorf("valid document: %v", got)
			}
			continue
		}
		found := false
		for _, v := range got {
			if strings.HasPrefix(v, tc.rule+":") {
				found = true
			}
		}
		if !found {
			t.Errorf("rule %s not reported; got %v", tc.rule, got)
		}
	}
}

var (
	operationIDPattern = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
	pathParamPattern   = regexp.MustCompile(`\{([^}]+)\}`)
)

// lintOpenAPI returns every violation in doc, each "rule: where: what".
func lintOpenAPI(doc []byte) []string {
	var out []string
	report := func(rule, where, format string, args ...any) {
		out = append(out, rule+": "+where+": "+fmt.Sprintf(format, args...))
	}

	spec, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		return []string{"oas-valid: document: " + err.Error()}
	}
	if err := spec.Validate(context.Background()); err != nil {
		report("oas-valid", "document", "%v", err)
	}

	if spec.Info.Description == "" {
		report("info-description", "info", "no description")
	}
	if c := spec.Info.Contact; c == nil || (c.URL == "" && c.Email == "") {
		report("info-contact", "info", "no contact with a url or email")
	}
	if len(spec.Servers) == 0 {
		report("oas3-api-servers", "servers", "no server")
	}
	for _, s := range spec.Servers {
		if u, err := url.Parse(s.URL); err != nil || u.Scheme == "" || u.Host == "" {
			report("oas3-api-servers", "servers", "%q is not an absolute URL", s.URL)
		}
	}
	tags := map[string]bool{}
	for _, tag := range spec.Tags {
		tags[tag.Name] = true
		if tag.Description == "" {
			report("tag-description", "tags."+tag.Name, "no description")
		}
	}

	// The raw document, for what kin-openapi's 3.0 model does not keep of
	// 3.1 (type arrays) and for walking $refs by name.
	var raw map[string]any
	if err := json.Unmarshal(doc, &raw); err != nil {
		return append(out, "oas-valid: document: "+err.Error())
	}
	schemas, _ := dig(raw, "components", "schemas").(map[string]any)
	used := map[string]bool{}
	refs := regexp.MustCompile(`"\$ref":"#/components/schemas/([^"]+)"`)
	rawPaths, _ := raw["paths"].(map[string]any)
	// References from anywhere but the schemas themselves (paths,
	// webhooks, other components), then what those schemas reach.
	outside := map[string]any{}
	for k, v := range raw {
		outside[k] = v
	}
	if comps, ok := raw["components"].(map[string]any); ok {
		rest := map[string]any{}
		for k, v := range comps {
			if k != "schemas" {
				rest[k] = v
			}
		}
		outside["components"] = rest
	}
	outsideJSON, _ := json.Marshal(outside)
	for _, m := range refs.FindAllSubmatch(outsideJSON, -1) {
		used[string(m[1])] = true
	}
	// Schemas reached from other schemas count as used too.
	for changed := true; changed; {
		changed = false
		for name := range used {
			b, _ := json.Marshal(schemas[name])
			for _, m := range refs.FindAllSubmatch(b, -1) {
				if !used[string(m[1])] {
					used[string(m[1])] = true
					changed = true
				}
			}
		}
	}
	for name := range schemas {
		if !used[name] {
			report("oas3-unused-component", "components.schemas."+name, "not referenced")
		}
	}
	if lower := strings.ToLower(string(doc)); strings.Contains(lower, "<script") || strings.Contains(lower, `\u003cscript`) {
		report("no-script-tags-in-markdown", "document", "a description contains <script")
	}

	ids := map[string]string{}
	paths := make([]string, 0, len(rawPaths))
	for p := range rawPaths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		if strings.HasSuffix(path, "/") && path != "/" {
			report("path-keys-no-trailing-slash", path, "ends with /")
		}
		if strings.Contains(path, "?") {
			report("path-not-include-query", path, "contains a query")
		}
		item := spec.Paths.Find(path)
		if item == nil {
			continue
		}
		for method, o := range item.Operations() {
			where := method + " " + path
			if o.OperationID == "" {
				report("operation-operationId", where, "no operationId")
			} else {
				if !operationIDPattern.MatchString(o.OperationID) {
					report("operation-operationId-valid", where, "operationId %q is not lowerCamelCase", o.OperationID)
				}
				if prev, ok := ids[o.OperationID]; ok {
					report("operation-operationId-unique", where, "operationId %q also on %s", o.OperationID, prev)
				}
				ids[o.OperationID] = where
			}
			if o.Summary == "" {
				report("operation-summary", where, "no summary")
			}
			if o.Description == "" {
				report("operation-description", where, "no description")
			}
			if len(o.Tags) == 0 {
				report("operation-tags", where, "no tags")
			}
			for _, tag := range o.Tags {
				if !tags[tag] {
					report("operation-tag-defined", where, "tag %q is not in the document's tags", tag)
				}
			}
			success, problem := false, false
			for code, r := range o.Responses.Map() {
				if strings.HasPrefix(code, "2") || strings.HasPrefix(code, "3") || code == "101" {
					success = true
				}
				if strings.HasPrefix(code, "4") && r.Value != nil && r.Value.Content.Get("application/problem+json") != nil {
					problem = true
				}
			}
			if !success {
				report("operation-success-response", where, "no 1xx/2xx/3xx response")
			}
			if !problem {
				report("operation-4xx-problem", where, "no 4xx response of type application/problem+json")
			}

			// Path parameters: each {name} declared, nothing else declared.
			declared := map[string]bool{}
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, o.Parameters...)
			for _, p := range params {
				if p.Value == nil {
					continue
				}
				if p.Value.Description == "" {
					report("parameter-description", where, "%s parameter %s: no description", p.Value.In, p.Value.Name)
				}
				if p.Value.In == "path" {
					declared[p.Value.Name] = true
				}
				if s := p.Value.Schema; s != nil && s.Value != nil && s.Value.Type.Is("string") &&
					s.Value.MaxLength == nil && len(s.Value.Enum) == 0 && s.Value.Format == "" && s.Value.Pattern == "" {
					report("parameter-string-bounded", where, "%s parameter %s: string without maxLength, enum, format or pattern",
						p.Value.In, p.Value.Name)
				}
			}
			for _, m := range pathParamPattern.FindAllStringSubmatch(path, -1) {
				if !declared[m[1]] {
					report("path-params", where, "{%s} not declared as a path parameter", m[1])
				}
				delete(declared, m[1])
			}
			for name := range declared {
				report("path-params", where, "path parameter %s is not in the path", name)
			}

			// Request bodies: every string bounded, every array bounded.
			rawOp, _ := dig(rawPaths, path, strings.ToLower(method)).(map[string]any)
			content, _ := dig(rawOp, "requestBody", "content").(map[string]any)
			for media, c := range content {
				s, _ := dig(c, "schema").(map[string]any)
				lintRequestSchema(s, schemas, where+" body "+media, map[string]bool{}, report)
			}
		}
	}
	lintDescriptionsAndExamples(raw, schemas, report)
	slices.Sort(out)
	return slices.Compact(out)
}

// binaryMedia are the body types an example cannot usefully show.
var binaryMedia = map[string]bool{"application/pdf": true, "application/zip": true, "application/octet-stream": true}

// lintDescriptionsAndExamples checks what a reader of the reference needs
// to call an operation without guessing: every property of every schema
// (components and inline ones, of operations and webhooks) says what it is,
// every parameter of a webhook too, and every request body and success
// response body carries an example, on its media type or on its schema, so
// the /docs pages show a real body instead of one made of "string".
func lintDescriptionsAndExamples(raw map[string]any, schemas map[string]any, report func(rule, where, format string, args ...any)) {
	names := make([]string, 0, len(schemas))
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s, _ := schemas[n].(map[string]any)
		lintPropertyDescriptions(s, "components.schemas."+n, report)
	}
	hasExample := func(media map[string]any) bool {
		if media["example"] != nil || media["examples"] != nil {
			return true
		}
		s, _ := media["schema"].(map[string]any)
		for range 10 {
			if s == nil {
				return false
			}
			if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
				return true
			}
			ref, ok := s["$ref"].(string)
			if !ok {
				return false
			}
			s, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return false
	}
	for _, section := range []string{"paths", "webhooks"} {
		items, _ := raw[section].(map[string]any)
		keys := make([]string, 0, len(items))
		for k := range items {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, key := range keys {
			item, _ := items[key].(map[string]any)
			for method, o := range item {
				op, ok := o.(map[string]any)
				if !ok || method == "parameters" {
					continue
				}
				where := strings.ToUpper(method) + " " + key
				if section == "webhooks" {
					where = "webhook " + key
					params, _ := op["parameters"].([]any)
					for _, p := range params {
						if p, _ := p.(map[string]any); p != nil && p["description"] == nil {
							report("parameter-description", where, "%s parameter %s: no description", p["in"], p["name"])
						}
					}
				}
				content, _ := dig(op, "requestBody", "content").(map[string]any)
				for media, c := range content {
					c, _ := c.(map[string]any)
					lintPropertyDescriptions(dig(c, "schema").(map[string]any), where+" body "+media, report)
					if !binaryMedia[media] && !hasExample(c) {
						report("body-example", where, "request body %s: no example on the media type or its schema", media)
					}
				}
				responses, _ := op["responses"].(map[string]any)
				for code, r := range responses {
					content, _ := dig(r, "content").(map[string]any)
					for media, c := range content {
						c, _ := c.(map[string]any)
						s, _ := dig(c, "schema").(map[string]any)
						lintPropertyDescriptions(s, where+" "+code+" "+media, report)
						if (strings.HasPrefix(code, "2") || strings.HasPrefix(code, "3")) && !binaryMedia[media] && !hasExample(c) {
							report("body-example", where, "%s response %s: no example on the media type or its schema", code, media)
						}
					}
				}
			}
		}
	}
}

// lintPropertyDescriptions reports each property of s, and of the schemas
// it holds inline, without a description ($refs are checked where they
// point).
func lintPropertyDescriptions(s map[string]any, where string, report func(rule, where, format string, args ...any)) {
	if s == nil {
		return
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
			report("property-description", where+"."+n, "no description")
		}
		lintPropertyDescriptions(p, where+"."+n, report)
	}
	if items, ok := s["items"].(map[string]any); ok {
		lintPropertyDescriptions(items, where+"[]", report)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		lintPropertyDescriptions(ap, where+".*", report)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		list, _ := s[k].([]any)
		for i, x := range list {
			x, _ := x.(map[string]any)
			lintPropertyDescriptions(x, fmt.Sprintf("%s.%s[%d]", where, k, i), report)
		}
	}
}

// lintRequestSchema checks that a request body cannot carry an unbounded
// string or array: an API that answers 413 for a large body still should
// say in its contract how long each field may be.
func lintRequestSchema(s map[string]any, schemas map[string]any, where string, seen map[string]bool,
	report func(rule, where, format string, args ...any)) {
	if s == nil {
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		if seen[name] {
			return
		}
		seen[name] = true
		target, _ := schemas[name].(map[string]any)
		lintRequestSchema(target, schemas, name, seen, report)
		return
	}
	types := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		types[t] = true
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok {
				types[x] = true
			}
		}
	}
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	// A date or time format bounds a string as well (huma checks formats).
	format, _ := s["format"].(string)
	timeFormat := format == "date" || format == "date-time" || format == "time"
	if types["string"] && !hasEnum && !hasConst && !timeFormat && s["maxLength"] == nil {
		report("request-string-maxLength", where, "string without maxLength")
	}
	if types["array"] && s["maxItems"] == nil {
		report("request-array-maxItems", where, "array without maxItems")
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		lintRequestSchema(p, schemas, where+"."+n, seen, report)
	}
	if items, ok := s["items"].(map[string]any); ok {
		lintRequestSchema(items, schemas, where+"[]", seen, report)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		lintRequestSchema(ap, schemas, where+".*", seen, report)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		list, _ := s[k].([]any)
		for i, x := range list {
			x, _ := x.(map[string]any)
			lintRequestSchema(x, schemas, fmt.Sprintf("%s.%s[%d]", where, k, i), seen, report)
		}
	}
}

// dig walks nested JSON objects by key.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
