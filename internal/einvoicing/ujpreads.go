package einvoicing

// What the rooms share about UJP's signed reads: the link types a signing
// request can belong to (each room handles its own, signedlinks.go), and
// the days of Skopje the change feeds and reconciliation read by.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Signing-link types: what a signing request is for. An e-invoice's
// document is LinkEInvoice (signing.go).
const (
	// The pipeline's signed reads of UJP's sales side.
	LinkChanges = "ujp_changes" // id: companyID + "/" + YYYY-MM-DD
	LinkPDF     = "einvoice_pdf"
	// The look-up's reads; their id is the e-invoice's.
	LinkSalesLookup         = "ujp_sales_lookup"
	LinkSalesLookupPayloads = "ujp_sales_lookup_payloads"
	// The inbox: the decision itself (purpose decision) and the signed
	// reads (purpose query).
	LinkInboxDecision    = "inbox_decision"        // id: the inbox document
	LinkInboxStatus      = "inbox_status"          // id: the inbox document (current-status after E1016)
	LinkInboxPDF         = "inbox_pdf"             // id: the inbox document
	LinkPurchaseIDs      = "ujp_purchase_ids"      // id: the company
	LinkPurchasePayloads = "ujp_purchase_payloads" // id: company/to/started (unix ms)
	LinkPurchaseChanges  = "ujp_purchase_changes"  // id: the company
	// A reconciliation run's reads; the id is "<reconciliation id>/<seq>".
	LinkReconciliation = "ujp_reconciliation"
	// The go-live check's requests: no job follows their signature; the
	// check makes the read itself.
	LinkUJPCheck = "ujp_check"
)

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
