package pipeline

// UJP's answers and reads as every room that calls UJP handles them: the
// submission pipeline, the inbox and the reconciliation (the last two call
// UJP through this room). The days of Skopje the change feeds and
// reconciliation read by, and the payloads of those reads.

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Busy reports a *ujp.BusyError: the user had no turn soon; nothing was
// sent. The job looks again when a turn may be free.
func Busy(err error) (time.Duration, bool) {
	var b *ujp.BusyError
	if errors.As(err, &b) {
		return b.RetryIn, true
	}
	return 0, false
}

// TimestampCodes are UJP's refusals of a stale or mismatched
// requestTimestamp: the cure is a fresh signature, not a failure.
var TimestampCodes = map[string]bool{"E4012": true, "E40121": true, "E40122": true}

// StaleRead reports UJP refusing a read's requestTimestamp (signed too long
// before it was sent).
func StaleRead(err error) bool {
	var rej *ujp.RejectedError
	return errors.As(err, &rej) && TimestampCodes[rej.Code]
}

// RetryDelay is the wait the ladder gives a document (or read) held since
// heldSince: the step follows how long it has been held, not how many
// attempts were made.
func RetryDelay(ladder []time.Duration, heldSince sql.NullTime, now time.Time) time.Duration {
	var held time.Duration
	if heldSince.Valid {
		held = now.Sub(heldSince.Time)
	}
	var cum time.Duration
	for _, d := range ladder {
		cum += d
		if held < cum {
			return d
		}
	}
	return ladder[len(ladder)-1]
}

// PayloadDocID is header.docId of a document JSON as UJP returns it: the
// signed request ({requestTimestamp, document}) or the document itself.
func PayloadDocID(payload string) string {
	var req ujpdoc.Request
	if json.Unmarshal([]byte(payload), &req) == nil && req.Document.Header.DocID != "" {
		return req.Document.Header.DocID
	}
	var doc ujpdoc.Document
	if json.Unmarshal([]byte(payload), &doc) == nil {
		return doc.Header.DocID
	}
	return ""
}

// MaxPayloadsPerRequest is how many documents one read of payloads asks
// UJP for.
const MaxPayloadsPerRequest = 100

// CompletionMargin is how long after a day ends (in Skopje) a read must
// start for that day to count as read completely. UJP refuses a
// requestTimestamp more than 5 minutes off its clock, so our clock and
// UJP's agree within that.
const CompletionMargin = ujpdoc.TimestampWindow

// SkopjeMidnight is the Skopje calendar day of t, at 00:00 Skopje.
func SkopjeMidnight(t time.Time) time.Time {
	y, m, d := t.In(ujpdoc.Skopje).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, ujpdoc.Skopje)
}

// LastCompleteDay is the last day a read that started at started saw
// completely.
func LastCompleteDay(started time.Time) string {
	return SkopjeMidnight(started.Add(-CompletionMargin)).AddDate(0, 0, -1).Format(time.DateOnly)
}

// ParseDay reads a YYYY-MM-DD day of Skopje.
func ParseDay(s string) (time.Time, error) {
	return time.ParseInLocation(time.DateOnly, s, ujpdoc.Skopje)
}

// DecodeSigned reads the JSON payload a signing request signed.
func DecodeSigned(sr dbq.SigningRequest, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(sr.Payload)
	if err != nil {
		return fmt.Errorf("signed payload of %s: %w", sr.ID, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("signed payload of %s: %w", sr.ID, err)
	}
	return nil
}

// RDRetryEvery is how often the inbox of a company whose signer lacks the
// RD privilege is tried again: the documents cannot be read without it,
// and the next success clears the company's problem.
const RDRetryEvery = time.Hour

// MonthRead is the payload of a signed read of what UJP holds for the days
// from from, at most a month (UJP refuses a longer range, E4014) and never
// past today; a from after today reads today.
func MonthRead(now, from, today time.Time) ([]byte, error) {
	if from.After(today) {
		from = today
	}
	to := from.AddDate(0, 1, -1)
	if to.After(today) {
		to = today
	}
	return json.Marshal(ujp.DateRangeRequest{RequestTimestamp: ujpdoc.FormatTimestamp(now),
		DateFrom: from.Format(time.DateOnly), DateTo: to.Format(time.DateOnly)})
}
