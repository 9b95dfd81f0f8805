// Package denar holds the vocabulary shared by every domain package of the
// payroll and e-invoicing services: the error type whose codes the HTTP layer
// turns into RFC 9457 problems, and the field error that points a client at
// the part of its request that was wrong.
//
// Domain packages (payroll, filing, einvoice, …) return *Error values; they
// never choose an HTTP status. The mapping from code to status lives in one
// place, internal/httpx.
package denar

import (
	"errors"
	"fmt"
	"strings"
)

// Stable error codes. Clients branch on these strings, so they never change
// once published; new conditions get new codes.
const (
	ECodeValidation = "validation_failed" // one or more fields are wrong (422)
	ECodeNotFound   = "not_found"         // no such resource for this caller (404)
	ECodeInternal   = "internal"          // a bug or an outage on our side (500)
)

// FieldError names one wrong part of a request. Path uses JSON field names
// with dots and brackets, as a client would write it: "inputs[7].grossSalary",
// "deductions[2].amount". Codebook names the tax authority codebook a rule
// comes from, when it comes from one.
//
// A FieldError recorded with FieldErrors.Add or AddCodebook also keeps the
// format and arguments its Message was made of (Format), so that a user
// interface can word the message in another language; they are not part of
// the JSON form. Compare FieldErrors by Path, Message and Codebook.
type FieldError struct {
	Path     string `json:"path" example:"lines[0].taxIndicator" doc:"The request field at fault, with dots and brackets as you would write it (lines[0].taxIndicator); query.X and header.X for parameters; empty for the body as a whole (malformed JSON)."`
	Message  string `json:"message" example:"\"DDV-X\" is not a tax indicator (allowed values: GET /v1/codebooks/tax-indicators)" doc:"What is wrong with it, in words."`
	Codebook string `json:"codebook,omitempty" example:"tax-indicators" doc:"The code list the value was checked against, when the rule is one (GET /v1/codebooks/{codebook} lists its values; companies is UJP's registry)."`

	format string
	args   []any
}

// Format returns the format and arguments Message was made of
// (Message == fmt.Sprintf(format, args...)), or "" and nil when the error
// was built without FieldErrors.Add or AddCodebook (then Message is the
// whole text).
func (f FieldError) Format() (string, []any) { return f.format, f.args }

// Error is the one error type domain packages return when the caller, not the
// service, is at fault (and for the few service-side conditions with a code
// of their own). Code is one of the ECode* constants or a more specific code
// ("totals_mismatch", "client_reference_conflict", "mpin_validation_failed",
// …); every code is listed in internal/httpx's code table and
// docs/errors.md. A state conflict always has a code naming what
// conflicts: there is no bare "conflict".
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
	// Detail carries structured data specific to the code (for example the
	// blocking МПИН issues); the HTTP layer adds it to the problem body.
	Detail map[string]any
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return e.Code + ": " + e.Message
	}
	var b strings.Builder
	b.WriteString(e.Code)
	b.WriteString(": ")
	b.WriteString(e.Message)
	for i, f := range e.Fields {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Path)
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	b.WriteString(")")
	return b.String()
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a validation_failed error listing every field problem.
func Invalid(fields ...FieldError) *Error {
	msg := "The request has invalid fields."
	if len(fields) == 1 {
		msg = fields[0].Path + ": " + fields[0].Message
	}
	return &Error{Code: ECodeValidation, Message: msg, Fields: fields}
}

// ErrorCode returns the code of the first *Error in err's chain, or
// ECodeInternal when err is not nil and carries no code.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ECodeInternal
}

// FieldErrors collects field problems while a request is checked, so that a
// client learns of every mistake at once instead of one per round trip.
type FieldErrors []FieldError

// Add records a problem at path.
func (fe *FieldErrors) Add(path, format string, args ...any) {
	*fe = append(*fe, FieldError{Path: path, Message: fmt.Sprintf(format, args...), format: format, args: args})
}

// AddCodebook records a problem at path that comes from a tax authority codebook.
func (fe *FieldErrors) AddCodebook(path, codebook, format string, args ...any) {
	*fe = append(*fe, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Codebook: codebook, format: format, args: args})
}

// Err returns nil when nothing was recorded, else a validation_failed *Error.
func (fe FieldErrors) Err() error {
	if len(fe) == 0 {
		return nil
	}
	return Invalid(fe...)
}
