package einvoicing

// UJP's answers as every room that calls UJP reads them: the submission
// pipeline, the inbox and the reconciliation.

import (
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
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
