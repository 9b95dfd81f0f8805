package ujp

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrUnavailable matches every *UnavailableError with errors.Is.
var ErrUnavailable = errors.New("ujp: unavailable")

// UnavailableError means UJP gave no usable answer: a connection failure, a
// timeout, a 5xx whose body is not UJP's, or one of UJP's own "try again"
// codes (TransientCode). Whether a send took effect is unknown; the caller
// finds out from UJP's own records before sending the same docId again.
type UnavailableError struct {
	Op         string // the gateway method
	HTTPStatus int    // 0 when no response arrived
	Code       string // UJP's code when the body carried one
	// Body is the answer's body, truncated, when it was not UJP's (an HTML
	// page of a proxy, a framework's default error JSON).
	Body string
	Err  error
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ujp %s: unavailable", e.Op)
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.HTTPStatus)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Refused reports whether UJP answered that it did not take the request
// in (a certificate check that could not be made: E5003, E4025, the
// receiver's E5011); otherwise a send's outcome is unknown.
func (e *UnavailableError) Refused() bool {
	return certificateCheckCodes[e.Code]
}

// CodeRateLimited is UJP's rate-limit code: one request per second per user
// (api-specification.txt:111).
const CodeRateLimited = "E4007"

// RateLimitedError is UJP's E4007. It is retryable after RetryAfter.
type RateLimitedError struct {
	Op         string
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("ujp %s: %s rate limit exceeded, retry after %s", e.Op, CodeRateLimited, e.RetryAfter)
}

// BusyError means the caller's UJP user had no turn free soon enough (see
// Turns): nothing was sent. Ask again after RetryIn.
type BusyError struct {
	Op      string
	Key     string // the user's budget key
	RetryIn time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("ujp %s: no turn of %s free soon; retry in %s", e.Op, e.Key, e.RetryIn)
}

// RejectedError is a terminal refusal: UJP answered and said no. Code is
// UJP's own error code (E1023, E4015, E10201, …), never renamed; Items lists
// every problem when UJP gave more than one. An answer whose body is not
// UJP's (a 4xx page of a proxy, a framework's error JSON) has no Code and
// keeps the body, truncated, in Body.
type RejectedError struct {
	Op         string
	HTTPStatus int
	Code       string
	Message    string
	Properties map[string]string
	Items      []ErrorItem
	Body       string
	// Privilege is the portal privilege the call needs (DP, RD, DA), set
	// on UJP's E1011 "Privilege not found" of a privileged call.
	Privilege string
}

func (e *RejectedError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("ujp %s: rejected (HTTP %d, not UJP's error shape): %s", e.Op, e.HTTPStatus, e.Body)
	}
	return fmt.Sprintf("ujp %s: rejected %s: %s", e.Op, e.Code, e.Message)
}

// Unrecognised reports whether the answer was not in UJP's shape, so no
// UJP code is known.
func (e *RejectedError) Unrecognised() bool { return e.Code == "" }

// Codes returns every UJP code of the rejection, the headline one first.
func (e *RejectedError) Codes() []string {
	out := []string{e.Code}
	for _, it := range e.Items {
		if it.ErrorCode != e.Code {
			out = append(out, it.ErrorCode)
		}
	}
	return out
}

// Retryable reports whether err is worth retrying later: unavailable, rate
// limited or busy. A rejection is not.
func Retryable(err error) bool {
	var rl *RateLimitedError
	var busy *BusyError
	return errors.Is(err, ErrUnavailable) || errors.As(err, &rl) || errors.As(err, &busy)
}

// IsNotFound reports whether UJP said the thing asked for does not exist
// (company, tax payer, document).
func IsNotFound(err error) bool {
	var r *RejectedError
	if !errors.As(err, &r) {
		return false
	}
	switch r.Code {
	case "E1000", "E1014", "E4008":
		return true
	}
	return false
}

// IsDuplicate reports UJP's E1023 "Invoice already exists for that ID" on a
// send: a document with this docId is already at UJP, so an earlier attempt
// reached it. Only the JSON Receiver means that by E1023; on the
// einvoice_api it is "Report date range exceeds allowed maximum limit"
// (error-codes.txt).
func IsDuplicate(err error) bool {
	var r *RejectedError
	return errors.As(err, &r) && r.Code == "E1023" && r.Op == opSend
}

// Access codes: UJP refused who calls, not what was sent (error-codes.txt):
// the user (E1010), a portal privilege (E1011), the certificate (E1012), the
// user's right to act for the company (E1013), and the identity headers'
// values (E4021 X-SERIAL-NUMBER, E4022 X-EUJP-ID, E4023 X-EDB). They are
// configuration in UJP's portal or ours, never a fault of a document.
var accessCodes = map[string]bool{"E1010": true, "E1011": true, "E1012": true, "E1013": true,
	"E4021": true, "E4022": true, "E4023": true}

// CodePrivilegeNotFound is UJP's "Privilege not found".
const CodePrivilegeNotFound = "E1011"

// AccessProblem returns the rejection when err is UJP refusing the caller's
// access (an access code), else nil.
func AccessProblem(err error) *RejectedError {
	var r *RejectedError
	if errors.As(err, &r) && accessCodes[r.Code] {
		return r
	}
	return nil
}

// transientCodes are UJP answers that mean "not now" rather than "no", on
// both services (error-codes.txt): internal errors (E5000, E5001), an
// asynchronous timeout (E4009), the timestamp authority (E5008), and the
// certificate checks that could not be made (E5003 OCSP, E4025 CRL).
var transientCodes = map[string]bool{"E5000": true, "E5001": true, "E4009": true, "E5008": true, "E5003": true, "E4025": true}

// certificateCheckCodes are the transient codes of a certificate check UJP
// could not make: it refused the request before taking it in.
var certificateCheckCodes = map[string]bool{"E5003": true, "E4025": true, "E5011": true}

// TransientCode reports whether UJP's code means "try again later" on the
// answer of op. E5011 is "No OCSP responses for certificate" on the JSON
// Receiver (transient) but "Invalid value for field" on the einvoice_api
// (terminal); E4007 is the rate limit (RateLimitedError).
func TransientCode(op, code string) bool {
	if code == CodeRateLimited || transientCodes[code] {
		return true
	}
	return code == "E5011" && op == opSend
}
