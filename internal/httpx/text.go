package httpx

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/jsontext"
)

// maxCredentialLength bounds what the credential parsers accept: every
// secret denar issues is well under it.
const maxCredentialLength = 256

// credentialText reports whether s can be a credential denar issued: 1 to
// maxCredentialLength printable ASCII characters. Anything else (NUL,
// invalid UTF-8, control characters, a megabyte of header) is answered
// unauthenticated before any store is asked.
func credentialText(s string) bool {
	if s == "" || len(s) > maxCredentialLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// CredentialText is credentialText for the handlers that parse a credential
// themselves (the signing WebSocket, the OAuth token endpoint, mandate
// links).
func CredentialText(s string) bool { return credentialText(s) }

// checkRequestText applies the text rules to everything of r the operation
// reads: query parameters (every one sent, known or not), its path and
// header parameters (against their maxLength too), and a JSON body (every
// key and string, at any depth; see jsontext.CheckJSONText). Idempotency-Key
// has its own code (invalid_idempotency_key) and is checked where it is
// read. The body is read here, within the route's limit, and put back for
// huma; operations that stream their body (Spec.StreamedBody) check it as
// they decode it. maxString is the service's MaxStringLength.
func checkRequestText(r *http.Request, op *huma.Operation, maxString int) *Problem {
	invalid := func(path, msg string) *Problem {
		return NewProblem(denar.ECodeValidation, "The request has invalid fields.", denar.FieldError{Path: path, Message: msg})
	}
	for k, vs := range r.URL.Query() {
		if bad := jsontext.BadText(k); bad != "" {
			return invalid("query", "has a parameter name that "+bad)
		}
		for _, v := range vs {
			if bad := jsontext.BadText(v); bad != "" {
				return invalid("query."+k, bad)
			}
		}
	}
	for _, p := range op.Parameters {
		var v string
		switch p.In {
		case "path":
			v = r.PathValue(p.Name)
		case "header":
			if strings.EqualFold(p.Name, "Idempotency-Key") {
				continue
			}
			v = r.Header.Get(p.Name)
		case "query":
			v = r.URL.Query().Get(p.Name)
		default:
			continue
		}
		if bad := jsontext.BadText(v); bad != "" {
			return invalid(p.In+"."+p.Name, bad)
		}
		if p.Schema != nil && p.Schema.MaxLength != nil && utf8.RuneCountInString(v) > *p.Schema.MaxLength {
			return invalid(p.In+"."+p.Name, "is longer than "+strconv.Itoa(*p.Schema.MaxLength)+" characters")
		}
	}
	if streamed, _ := op.Metadata[metaStream].(bool); streamed || op.RequestBody == nil || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
			return nil // huma answers 415
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return bodyReadProblem(err)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	// huma checks each field's maxLength against the schema; a body the
	// handler decodes from its bytes gets the service's MaxStringLength
	// (jsontext.DefaultMaxStringLength when the service sets none) here.
	limit := 0
	if rawBody, _ := op.Metadata[metaRaw].(bool); rawBody {
		limit = maxString
		if limit <= 0 {
			limit = jsontext.DefaultMaxStringLength
		}
	}
	if fe := jsontext.CheckJSONText(raw, "", limit); fe != nil {
		return invalid(fe.Path, fe.Message)
	}
	return nil
}
