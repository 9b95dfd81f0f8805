package httpx

import (
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// responseTypes are the media types op answers with on success, as its
// OpenAPI document declares them; nil when it answers without a body.
func responseTypes(op *huma.Operation) []string {
	var out []string
	for status, resp := range op.Responses {
		if !strings.HasPrefix(status, "2") || resp == nil {
			continue
		}
		for ct := range resp.Content {
			if t, _, err := mime.ParseMediaType(ct); err == nil && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

// acceptable reports whether the Accept header value admits one of types
// (RFC 9110 §12.5.1): a media range that names it, its type with "/*", or
// "*/*", with a q-value above zero. An empty header, an operation without
// a response body, and a header that cannot be parsed at all admit
// anything: only a client that said clearly what it takes is refused.
func acceptable(header string, types []string) bool {
	if strings.TrimSpace(header) == "" || len(types) == 0 {
		return true
	}
	parsed := false
	for _, part := range strings.Split(header, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		rng, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		parsed = true
		if q, ok := params["q"]; ok {
			if v, err := strconv.ParseFloat(q, 64); err != nil || v <= 0 {
				continue
			}
		}
		for _, t := range types {
			if rng == "*/*" || rng == t || (strings.HasSuffix(rng, "/*") && strings.HasPrefix(t, strings.TrimSuffix(rng, "*"))) {
				return true
			}
		}
	}
	return !parsed
}
