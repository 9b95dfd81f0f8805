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
// timeout, a 5xx, or one of its own "try again" codes (E5000, E5001, E4009,
// E5008). Whether a send took effect is unknown; resubmit the same document
// (same docId) later, and E1023 on the retry means the first one landed.
type UnavailableError struct {
	Op         string // the gateway method
	HTTPStatus int    // 0 when no response arrived
	Code       string // UJP's code when the body carried one
	Err        error
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

// CodeRateLimited is UJP's rate-limit code: one request per second per user.
const CodeRateLimited = "E4007"

// RateLimitedError is UJP's E4007. It is retryable after RetryAfter.
type RateLimitedError struct {
	Op         string
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("ujp %s: %s rate limit exceeded, retry after %s", e.Op, CodeRateLimited, e.RetryAfter)
}

// RejectedError is a terminal refusal: UJP answered and said no. Code is
// UJP's own error code (E1023, E4015, E10201, …), never renamed; Items lists
// every problem when UJP (or the simulator) gave more than one.
type RejectedError struct {
	Op         string
	HTTPStatus int
	Code       string
	Message    string
	Properties map[string]string
	Items      []ErrorItem
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("ujp %s: rejected %s: %s", e.Op, e.Code, e.Message)
}

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

// Retryable reports whether err is worth retrying later: unavailable or rate
// limited. A rejection is not.
func Retryable(err error) bool {
	var rl *RateLimitedError
	return errors.Is(err, ErrUnavailable) || errors.As(err, &rl)
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

// IsDuplicate reports UJP's E1023 on a send: a document with this docId
// already exists, so an earlier attempt reached UJP.
func IsDuplicate(err error) bool {
	var r *RejectedError
	return errors.As(err, &r) && r.Code == "E1023"
}

// unavailableCodes are UJP answers that mean "not now" rather than "no".
var unavailableCodes = map[string]bool{"E5000": true, "E5001": true, "E4009": true, "E5008": true}
