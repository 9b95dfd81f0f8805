package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"

	"github.com/denar-mk/denar"
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
	return &cp
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

// statusOf is the one table that turns a code into an HTTP status. Codes
// missing here are 400 if they come from the caller's side.
var statusOf = map[string]int{
	"unauthenticated":           http.StatusUnauthorized,
	"key_revoked":               http.StatusUnauthorized,
	"insufficient_scope":        http.StatusForbidden,
	"company_not_allowed":       http.StatusForbidden,
	"environment_mismatch":      http.StatusForbidden,
	"production_not_enabled":    http.StatusForbidden,
	"forbidden":                 http.StatusForbidden,
	"company_required":          http.StatusBadRequest,
	"idempotency_key_required":  http.StatusBadRequest,
	"invalid_idempotency_key":   http.StatusBadRequest,
	"bad_request":               http.StatusBadRequest,
	"idempotency_conflict":      http.StatusConflict,
	"idempotency_in_progress":   http.StatusConflict,
	"client_reference_conflict": http.StatusConflict,
	"period_closed":             http.StatusConflict,
	"decision_deadline_passed":  http.StatusConflict,
	"already_claimed":           http.StatusConflict,
	"pdf_not_ready":             http.StatusConflict,
	"einvoice_state_conflict":   http.StatusConflict,
	"inbox_state_conflict":      http.StatusConflict,
	"supersede_pending":         http.StatusConflict,
	"sandbox_only":              http.StatusForbidden,
	"signer_not_ready":          http.StatusConflict,
	"company_exists":            http.StatusConflict,
	"signing_request_finished":  http.StatusConflict,
	denar.ECodeConflict:         http.StatusConflict,
	"signature_expired":         http.StatusGone,
	"signature_invalid":         http.StatusUnprocessableEntity,
	"payload_mismatch":          http.StatusUnprocessableEntity,
	"certificate_mismatch":      http.StatusUnprocessableEntity,
	denar.ECodeValidation:       http.StatusUnprocessableEntity,
	"totals_mismatch":           http.StatusUnprocessableEntity,
	"mpin_validation_failed":    http.StatusUnprocessableEntity,
	"rate_limited":              http.StatusTooManyRequests,
	denar.ECodeNotFound:         http.StatusNotFound,
	"method_not_allowed":        http.StatusMethodNotAllowed,
	"request_too_large":         http.StatusRequestEntityTooLarge,
	"unsupported_media_type":    http.StatusUnsupportedMediaType,
	"not_acceptable":            http.StatusNotAcceptable,
	"ujp_unavailable":           http.StatusServiceUnavailable,
	denar.ECodeUnavailable:      http.StatusServiceUnavailable,
	denar.ECodeInternal:         http.StatusInternalServerError,
}

// StatusFor returns the HTTP status of a problem code.
func StatusFor(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
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
	if t, ok := titles[code]; ok {
		return t
	}
	return http.StatusText(status)
}

var titles = map[string]string{
	"unauthenticated":          "Authentication required",
	"key_revoked":              "API key revoked",
	"insufficient_scope":       "Insufficient scope",
	"company_not_allowed":      "Company not allowed",
	"company_required":         "Company required",
	"idempotency_key_required": "Idempotency-Key required",
	"idempotency_conflict":     "Idempotency key reused with another request",
	"idempotency_in_progress":  "Request with this idempotency key still in progress",
	denar.ECodeValidation:      "Validation failed",
	"rate_limited":             "Too many requests",
	"environment_mismatch":     "Environment mismatch",
	"ujp_unavailable":          "UJP unavailable",
	"company_exists":           "Company already onboarded",
	"signing_request_finished": "Signing request already finished",
	"einvoice_state_conflict":  "E-invoice not in a state that allows this",
	"inbox_state_conflict":     "Inbox document not in a state that allows this",
	"decision_deadline_passed": "Decision deadline passed",
	"supersede_pending":        "Storno or correction already on its way",
	"signature_expired":        "Signing request expired",
	"already_claimed":          "Signing request claimed by another signer",
	denar.ECodeNotFound:        "Not found",
	denar.ECodeInternal:        "Internal error",
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
	if p.Status == http.StatusUnauthorized {
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
			p = NewProblem("request_too_large", "The request body is larger than this operation accepts.")
		case status == http.StatusUnsupportedMediaType:
			p = NewProblem("unsupported_media_type", msg)
		case status == http.StatusNotAcceptable:
			p = NewProblem("not_acceptable", msg)
		case status == http.StatusNotFound:
			p = NewProblem(denar.ECodeNotFound, msg)
		default:
			// Schema violations (422) and unreadable bodies (400) are both
			// the client's field errors.
			p = NewProblem(denar.ECodeValidation, "The request has invalid fields.", fieldErrors(msg, errs)...)
		}
	}
	var c context.Context
	if ctx != nil {
		c = ctx.Context()
	}
	return sentProblem{finish(c, p)}
}

func fieldErrors(msg string, errs []error) []denar.FieldError {
	var out []denar.FieldError
	for _, e := range errs {
		if e == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(e, &d) {
			det := d.ErrorDetail()
			loc, msg := det.Location, det.Message
			if name, ok := missingProperty(msg); ok {
				// huma reports a missing property at its parent; the
				// client needs the property's own path.
				loc, msg = loc+"."+name, "is required"
			}
			out = append(out, denar.FieldError{Path: fieldPath(loc), Message: msg})
			continue
		}
		out = append(out, denar.FieldError{Path: "body", Message: e.Error()})
	}
	if len(out) == 0 {
		out = append(out, denar.FieldError{Path: "body", Message: msg})
	}
	return out
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
// "inputs[7].grossSalary"; query and header locations keep their prefix so
// the client knows where to look ("query.limit", "header.X-Company-Id").
func fieldPath(loc string) string {
	switch {
	case loc == "body" || loc == "":
		return "body"
	case strings.HasPrefix(loc, "body."):
		return strings.TrimPrefix(loc, "body.")
	case strings.HasPrefix(loc, "body["):
		return strings.TrimPrefix(loc, "body")
	}
	return loc
}
