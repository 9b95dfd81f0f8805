package einvoice

// The buyer's side: incoming e-invoices (the inbox), the decision deadline,
// its reminders, and the accept/reject decision. Pure rules; the
// application layer (internal/einvoicing) stores and moves documents.

import (
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// DecideBy is the one rule for the buyer's decision deadline of an incoming
// e-invoice: the 10th day of the month after the month of the transaction
// date (docTurnoverDate), inclusive — the buyer may still decide on that
// day, in Europe/Skopje's calendar. The day is never moved: not for a
// weekend, not for a public holiday (the spec: whether UJP moves it is
// unconfirmed, and the service does not). A transaction on the 31st, or in
// a leap February, has the same deadline as any other day of its month;
// December's deadline is the 10th of January of the next year.
//
// txDate is a calendar date: its year, month and day are read as written,
// whatever its Location. The result is a calendar date at 00:00 UTC (dates
// carry no zone; format it with time.DateOnly).
func DecideBy(txDate time.Time) time.Time {
	y, m, _ := txDate.Date()
	return time.Date(y, m+1, 10, 0, 0, 0, 0, time.UTC)
}

// DecideByDate is DecideBy on dates written YYYY-MM-DD.
func DecideByDate(txDate string) (string, error) {
	t, err := time.Parse(time.DateOnly, txDate)
	if err != nil {
		return "", fmt.Errorf("transaction date %q: %w", txDate, err)
	}
	return DecideBy(t).Format(time.DateOnly), nil
}

// Today is the calendar date (00:00 UTC) that the instant now falls on in
// Europe/Skopje: the day every deadline is counted in.
func Today(now time.Time) time.Time {
	y, m, d := now.In(ujpdoc.Skopje).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// DaysLeft is the number of days from the Skopje day of now to decideBy (a
// calendar date): 0 on decideBy itself (the last day to decide), 1 the day
// before, negative once the deadline has passed.
func DaysLeft(now, decideBy time.Time) int {
	y, m, d := decideBy.Date()
	by := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return int(by.Sub(Today(now)) / (24 * time.Hour))
}

// DeadlinePassed reports whether at now the deadline decideBy is over: the
// Skopje day of now is after decideBy.
func DeadlinePassed(now, decideBy time.Time) bool { return DaysLeft(now, decideBy) < 0 }

// DeadlineEnd is the instant a deadline ends: 00:00 in Skopje of the day
// after decideBy. UJP's auto-acceptance takes effect then.
func DeadlineEnd(decideBy time.Time) time.Time {
	y, m, d := decideBy.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, ujpdoc.Skopje)
}

// ReminderDays are the days left at which inbox.deadline_approaching is
// sent, largest first (spec, Limits).
var ReminderDays = []int{5, 2, 1}

// ReminderDue says which reminder a pending document with daysLeft days to
// its deadline is due: the reminder of t days covers the days from t down
// to (but not including) the next smaller reminder, so a reminder whose own
// day was missed (the service was down all day, or the document arrived
// inside that window) is still sent, late, until the next one's day comes.
// With 5, 2 and 1: 5, 4 and 3 days left → the 5-day reminder; 2 → 2; 1 →
// 1; 0 (the last day), negative or above 5 → none. Each reminder is sent
// once per document; the caller records which.
func ReminderDue(daysLeft int) (int, bool) {
	for i, t := range ReminderDays {
		next := 0
		if i+1 < len(ReminderDays) {
			next = ReminderDays[i+1]
		}
		if daysLeft <= t && daysLeft > next {
			return t, true
		}
	}
	return 0, false
}

// Decision states of an incoming e-invoice (spec, InboxDocument.decision).
const (
	DecisionPending      = "pending"
	DecisionAccepted     = "accepted"
	DecisionAutoAccepted = "auto_accepted"
	DecisionRejected     = "rejected"
)

// DecisionStates lists them in the spec's order.
var DecisionStates = []string{DecisionPending, DecisionAccepted, DecisionAutoAccepted, DecisionRejected}

// DecisionFromUJP maps a UJP status of an incoming document to the
// decision it records: 03 accepted, 04 auto_accepted, 05 rejected; other
// statuses (01, 07, 09, …) record no decision (ok false).
func DecisionFromUJP(code string) (string, bool) {
	switch code {
	case "03":
		return DecisionAccepted, true
	case "04":
		return DecisionAutoAccepted, true
	case "05":
		return DecisionRejected, true
	}
	return "", false
}

// UJPStatusRank orders the statuses of an incoming document as UJP moves
// it: 01 (sent, awaiting the buyer) before a decision (03, 04, 05) before a
// replacement by the seller (07 storno, 09 correction). A reported change
// is applied only when it moves the document forward, so reading a change
// feed again, or two feeds out of order, never moves it back. Unknown codes
// rank 0 and are never applied over a known one.
func UJPStatusRank(code string) int {
	switch code {
	case "00":
		return 1
	case "01", "10":
		return 2
	case "03", "04", "05":
		return 3
	case "07", "09":
		return 4
	}
	return 0
}

// MaxDecisionComment bounds the free text sent with a decision.
const MaxDecisionComment = 500

// Rejection checks a reject reason against UJP's reject-reasons codebook and
// returns the code as UJP lists it. UJP's list spells О-6 and О-7 with a
// Cyrillic О; a Latin O-6 or O-7 is accepted and sent in UJP's own
// spelling, and the Cyrillic spelling of O-1…O-5 likewise. The reason
// meaning "other" (О-7, "Друго (задолжителен коментар)") needs a comment.
// Field errors name reasonCode and comment.
func Rejection(reasonCode string, comment *string, cb *ujpdoc.Codebooks) (string, error) {
	var fe denar.FieldErrors
	code := strings.TrimSpace(reasonCode)
	var ujpCode string
	switch c, ok := cb.RejectReason(code); {
	case code == "":
		fe.AddCodebook("reasonCode", ujpdoc.CBRejectReasons, "is required")
	case !ok:
		fe.AddCodebook("reasonCode", ujpdoc.CBRejectReasons, "%q is not one of UJP's reject reasons", reasonCode)
	default:
		ujpCode = c.Code
		if needsComment(c) && (comment == nil || strings.TrimSpace(*comment) == "") {
			fe.AddCodebook("comment", ujpdoc.CBRejectReasons, "is required with reason %s (%s)", c.Code, c.Name)
		}
	}
	checkComment(&fe, comment)
	return ujpCode, fe.Err()
}

// Acceptance checks the comment of an acceptance.
func Acceptance(comment *string) error {
	var fe denar.FieldErrors
	checkComment(&fe, comment)
	return fe.Err()
}

func checkComment(fe *denar.FieldErrors, comment *string) {
	if comment != nil && len([]rune(*comment)) > MaxDecisionComment {
		fe.Add("comment", "is longer than %d characters", MaxDecisionComment)
	}
}

// needsComment reports whether a reject reason requires free text: UJP's
// "other" (О-7), or any reason whose name says a comment is mandatory.
func needsComment(c ujpdoc.Code) bool {
	return strings.HasSuffix(c.Code, "-7") || strings.Contains(strings.ToLower(c.Name), "задолжителен коментар")
}
