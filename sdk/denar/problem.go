package denar

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Problem is an RFC 9457 problem answered by the API: every 4xx and 5xx.
// Code is stable (the Code… constants; docs/errors.md says what each
// means); Errors name the fields at fault by their path in the request.
type Problem struct {
	Type     string       `json:"type"`
	Title    string       `json:"title"`
	Status   int          `json:"status"`
	Detail   string       `json:"detail"`
	Instance string       `json:"instance"`
	Code     string       `json:"code"`
	Errors   []FieldError `json:"errors"`
	// Extra holds the members some codes add (company_exists: companyId;
	// mpin_validation_failed: issues; secret_already_shown: object and
	// objectId; docs/errors.md names them), each as JSON.
	Extra map[string]json.RawMessage `json:"-"`
}

// Member decodes the extra member name into v; false when the problem has
// no such member or it does not decode into v.
func (p *Problem) Member(name string, v any) bool {
	raw, ok := p.Extra[name]
	return ok && json.Unmarshal(raw, v) == nil
}

// FieldError is one wrong field of a validation_failed problem.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	// Codebook names the code list the value was checked against
	// ("tax-indicators", "reject-reasons", …); EInvoice.Codebook lists
	// its values.
	Codebook string `json:"codebook,omitempty"`
}

func (p *Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "denar: %d %s", p.Status, p.Code)
	if p.Detail != "" {
		b.WriteString(": " + p.Detail)
	}
	for _, e := range p.Errors {
		fmt.Fprintf(&b, "; %s: %s", e.Path, e.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, &denar.Problem{Code: denar.CodeNotFound}) match
// a problem by its code.
func (p *Problem) Is(target error) bool {
	t, ok := target.(*Problem)
	return ok && t.Code != "" && t.Code == p.Code
}

// problemFrom reads a problem from an answer that is not the expected
// success. An answer that is not a problem (a proxy's HTML page, say)
// becomes a Problem with the status, code "" and the start of the body.
func problemFrom(status int, body []byte) error {
	p := &Problem{}
	if err := json.Unmarshal(body, p); err != nil || p.Code == "" {
		detail := string(body)
		if len(detail) > 200 {
			detail = detail[:200]
		}
		return &Problem{Status: status, Title: http.StatusText(status), Detail: strings.TrimSpace(detail)}
	}
	if p.Status == 0 {
		p.Status = status
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) == nil {
		for _, k := range []string{"type", "title", "status", "detail", "instance", "code", "errors"} {
			delete(members, k)
		}
		if len(members) > 0 {
			p.Extra = members
		}
	}
	return p
}
