package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/jsontext"
)

// DefaultDocsURL is the base of every problem's type URI (type = base +
// "#" + code) unless a service is configured with another (DENAR_DOCS_URL).
const DefaultDocsURL = "https://docs.denar.mk/errors"

// Problem is an RFC 9457 problem detail with the two extension members both
// services share: a stable machine-readable code and the field errors.
type Problem struct {
	Type     string             `json:"type" doc:"A URI naming the problem type: the errors page anchored at the code."`
	Title    string             `json:"title" doc:"A short summary of the problem type."`
	Status   int                `json:"status" doc:"The HTTP status code."`
	Detail   string             `json:"detail" doc:"What went wrong with this request."`
	Instance string             `json:"instance" doc:"The request id, also sent in the X-Request-Id header."`
	Code     string             `json:"code" doc:"A stable machine-readable code; clients branch on it."`
	Errors   []denar.FieldError `json:"errors" doc:"Field errors: the path in the request, a message, and the tax authority codebook when the rule comes from one."`
	// Extra members for specific codes (for example the blocking МПИН issues).
	Extra map[string]any `json:"-"`
}

// Error implements error.
func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

// A Problem is deliberately not a huma.StatusError: whatever a handler
// returns goes through humaProblem, which fills in the request's id and the
// service's documentation link before huma writes it as sent.
type sentProblem struct{ *Problem }

// GetStatus implements huma.StatusError.
func (p sentProblem) GetStatus() int { return p.Status }

// ContentType makes huma send problems as application/problem+json.
func (p sentProblem) ContentType(ct string) string {
	if ct == "application/json" || ct == "" {
		return "application/problem+json"
	}
	return ct
}

// finish returns a copy of p with the request's id and the type URI
// under the service's documentation base.
func finish(ctx context.Context, p *Problem) *Problem {
	cp := *p
	if ctx != nil {
		cp.Instance = RequestID(ctx)
		if base, _ := ctx.Value(docsKey).(string); base != "" {
			cp.Type = base + "#" + cp.Code
		}
	}
	if cp.Type == "" {
		cp.Type = DefaultDocsURL + "#" + cp.Code
	}
	if cp.Errors == nil {
		cp.Errors = []denar.FieldError{}
	}
	if ctx != nil {
		if url, _ := ctx.Value(codebookKey).(func(string) string); url != nil {
			cp.Errors = withCodebookURLs(cp.Errors, url)
		}
	}
	return &cp
}

// withCodebookURLs adds to the message of each field error that names a
// code list the service serves where its values are listed.
func withCodebookURLs(fields []denar.FieldError, url func(string) string) []denar.FieldError {
	var out []denar.FieldError
	for i, f := range fields {
		u := ""
		if f.Codebook != "" {
			u = url(f.Codebook)
		}
		if u == "" || strings.Contains(f.Message, u) {
			continue
		}
		if out == nil {
			out = append([]denar.FieldError{}, fields...)
		}
		out[i].Message += " (allowed values: " + u + ")"
	}
	if out == nil {
		return fields
	}
	return out
}

// MarshalJSON writes the standard members followed by any extra members.
func (p *Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	base, err := marshalNoEscape((*plain)(p))
	if err != nil || len(p.Extra) == 0 {
		return base, err
	}
	extra, err := marshalNoEscape(p.Extra)
	if err != nil {
		return nil, err
	}
	// Join {"type":…} and {"issues":…} into one object.
	out := make([]byte, 0, len(base)+len(extra))
	out = append(out, base[:len(base)-1]...)
	out = append(out, ',')
	out = append(out, extra[1:]...)
	return out, nil
}

// marshalNoEscape is json.Marshal without HTML escaping: problem details
// quote header syntax such as "Bearer <API key>".
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// StatusFor returns the HTTP status of a problem code (Codes). A code
// missing there is answered 400, as the caller's fault; TestCodesDocumented
// fails on any code the source uses that Codes and docs/errors.md lack.
func StatusFor(code string) int {
	if c, ok := problemCodes()[code]; ok {
		return c.Status
	}
	return http.StatusBadRequest
}

// NewProblem builds a problem for code with the given detail.
func NewProblem(code, detail string, fields ...denar.FieldError) *Problem {
	status := StatusFor(code)
	if fields == nil {
		fields = []denar.FieldError{}
	}
	return &Problem{
		Title:  titleOf(code, status),
		Status: status,
		Detail: detail,
		Code:   code,
		Errors: fields,
	}
}

func titleOf(code string, status int) string {
	if c, ok := problemCodes()[code]; ok && c.Title != "" {
		return c.Title
	}
	return http.StatusText(status)
}

// FromError turns any error a handler returns into a problem. A *denar.Error
// keeps its code, message and fields; a *Problem passes through; anything
// else is an internal error whose text is logged, never sent.
func FromError(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var de *denar.Error
	if errors.As(err, &de) {
		pr := NewProblem(de.Code, de.Message, de.Fields...)
		if len(de.Detail) > 0 {
			pr.Extra = de.Detail
		}
		return pr
	}
	if p := readProblem(err, false); p != nil {
		return p
	}
	slog.Error("internal error", "err", err)
	return NewProblem(denar.ECodeInternal, "An internal error occurred. It has been logged; retry later or quote the request id to support.")
}

// WriteProblem writes p as application/problem+json, with the request id of r.
func WriteProblem(w http.ResponseWriter, r *http.Request, p *Problem) {
	p = finish(r.Context(), p)
	body, err := json.Marshal(p)
	if err != nil {
		body = []byte(`{"code":"internal"}`)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	if p.Status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="denar"`)
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}

// hugmaProblem is installed as huma.NewErrorWithContext: it turns the errors
// huma produces itself (schema validation, malformed bodies, size limits)
// and the errors handlers return into our problems.
func humaProblem(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
	var p *Problem
	for _, e := range errs {
		if e == nil {
			continue
		}
		var de *denar.Error
		var pr *Problem
		if errors.As(e, &pr) || errors.As(e, &de) {
			p = FromError(e)
			break
		}
	}
	if p == nil && status >= 500 {
		// huma reports a body it could not read as a 500; over the limit,
		// too slow or broken off, it is the client's.
		for _, e := range errs {
			if p = readProblem(e, true); p != nil {
				break
			}
		}
	}
	if p == nil {
		switch {
		case status >= 500:
			for _, e := range errs {
				if e != nil {
					slog.Error("internal error", "err", e, "detail", msg)
				}
			}
			p = NewProblem(denar.ECodeInternal, "An internal error occurred. It has been logged; retry later or quote the request id to support.")
		case status == http.StatusRequestEntityTooLarge:
			p = NewProblem("payload_too_large", "The request body is larger than this operation accepts.")
		case status == http.StatusRequestTimeout:
			p = NewProblem("request_timeout", "The request body did not arrive in time.")
		case status == http.StatusUnsupportedMediaType:
			// huma's own message here is a bare "validation failed".
			p = NewProblem("unsupported_media_type", "The body's Content-Type is not one this operation reads (application/json unless its OpenAPI requestBody says otherwise).")
		case status == http.StatusNotAcceptable:
			p = NewProblem("not_acceptable", msg)
		case status == http.StatusNotFound:
			p = NewProblem(denar.ECodeNotFound, msg)
		default:
			// Schema violations (422) and unreadable bodies (400) are both
			// the client's field errors.
			p = NewProblem(denar.ECodeValidation, "The request has invalid fields.", fieldErrors(ctx, msg, errs)...)
		}
	}
	var c context.Context
	if ctx != nil {
		c = ctx.Context()
	}
	return sentProblem{finish(c, p)}
}

// readProblem recognises the errors of reading a request body past its
// limit (MaxBytesReader) or its deadline, and, when reading is all that
// failed (huma's body reader), also a body cut short; nil for any other
// error.
func readProblem(err error, reading bool) *Problem {
	var mb *http.MaxBytesError
	if err == nil || !(errors.As(err, &mb) || isTimeout(err) || (reading && errors.Is(err, io.ErrUnexpectedEOF))) {
		return nil
	}
	return bodyReadProblem(err)
}

func fieldErrors(ctx huma.Context, msg string, errs []error) []denar.FieldError {
	var out []denar.FieldError
	for _, e := range errs {
		if e == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(e, &d) {
			det := d.ErrorDetail()
			if fe := decodeErrors(ctx, det); fe != nil {
				out = append(out, fe...)
				continue
			}
			loc, msg := det.Location, det.Message
			if name, ok := missingProperty(msg); ok {
				// huma reports a missing property at its parent; the
				// client needs the property's own path.
				loc, msg = loc+"."+name, "is required"
			}
			out = append(out, denar.FieldError{Path: fieldPath(loc), Message: msg})
			continue
		}
		out = append(out, denar.FieldError{Path: "", Message: e.Error()})
	}
	if len(out) == 0 {
		out = append(out, denar.FieldError{Path: "", Message: msg})
	}
	return out
}

// decodeErrors gives the field errors of a body that passed the schema but
// that encoding/json could not decode into the operation's input (a number
// an integer field cannot hold, a value its own UnmarshalJSON refuses):
// huma reports those at the body's root with encoding/json's text, which
// names Go types. The body is decoded again by jsontext.DecodeJSON, which
// finds each such value's path and words it for the client. nil when det is
// not such an error.
func decodeErrors(ctx huma.Context, det *huma.ErrorDetail) []denar.FieldError {
	body, ok := det.Value.(string)
	if ctx == nil || det.Location != "body" || !ok || ctx.Operation() == nil {
		return nil
	}
	// huma puts the whole body text in Value only for a decoding failure;
	// a schema violation at the root carries the parsed value.
	b := bytes.TrimSpace([]byte(body))
	if len(b) > 0 && !json.Valid(b) {
		// Malformed JSON, reported as every operation reports it: at the
		// root, with the byte offset.
		return []denar.FieldError{jsontext.MalformedJSON([]byte(body))}
	}
	if len(b) == 0 || (b[0] != '{' && b[0] != '[') {
		return nil
	}
	t, _ := ctx.Operation().Metadata[metaBodyType].(reflect.Type)
	if t == nil {
		return nil
	}
	var de *denar.Error
	if err := jsontext.DecodeJSON([]byte(body), reflect.New(t).Interface()); !errors.As(err, &de) || len(de.Fields) == 0 {
		return nil
	}
	return de.Fields
}

// missingProperty reads the property name out of huma's "expected
// required property X to be present".
func missingProperty(msg string) (string, bool) {
	prefix, suffix, ok := strings.Cut(validation.MsgExpectedRequiredProperty, "%s")
	if !ok {
		return "", false
	}
	name, ok := strings.CutPrefix(msg, prefix)
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, suffix)
	return name, ok && name != ""
}

// fieldPath turns huma's "body.inputs[7].grossSalary" into the client's
// "inputs[7].grossSalary", and the body itself into "" (the root of the
// JSON document, as for a malformed or missing body); query and header
// locations keep their prefix so the client knows where to look
// ("query.limit", "header.X-Company-Id").
func fieldPath(loc string) string {
	switch {
	case loc == "body" || loc == "":
		return ""
	case strings.HasPrefix(loc, "body."):
		return strings.TrimPrefix(loc, "body.")
	case strings.HasPrefix(loc, "body["):
		return strings.TrimPrefix(loc, "body")
	}
	return loc
}

// ProblemOf is the problem err is answered with, as WriteProblem would
// send it (the request's id in instance, the type under the service's
// documentation): the problem of one item of a batch, which answers 200
// with each item's outcome.
func ProblemOf(ctx context.Context, err error) *Problem {
	return finish(ctx, FromError(err))
}
