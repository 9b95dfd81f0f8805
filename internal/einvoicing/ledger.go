package einvoicing

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// The usage ledger: every document that counts for the account's plan, in
// the transaction of the move that makes it count (usage_documents, one
// row a document), and the counters kept with it (usage_counters) that
// the usage room reports from.

// Directions of a counted document.
const (
	DirectionSent     = "sent"
	DirectionReceived = "received"
)

// skopjeDay returns the calendar day and month in Europe/Skopje of t.
func skopjeDay(t time.Time) (day, month string) {
	l := t.In(ujpdoc.Skopje)
	return l.Format(time.DateOnly), l.Format("2006-01")
}

// LedgerTime is how the ledger stores a moment: UTC at microseconds, so
// SQLite's text timestamps order as PostgreSQL's do (the archive room
// keeps an export's asOf so, to compare it with the ledger's times).
func LedgerTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// CountSent counts a sent document in the month UJP assigned its EUID,
// in the transaction of that move; the JWS that UJP accepted is the
// latest signed request of the document. A document counts once.
func CountSent(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) error {
	at := LedgerTime(tx.Now)
	if inv.DeliveredAt.Valid {
		at = LedgerTime(inv.DeliveredAt.Time)
	}
	sr, err := tx.LatestSignedRequestForLink(ctx, dbq.LatestSignedRequestForLinkParams{LinkType: LinkEInvoice, LinkID: inv.ID})
	var srID sql.NullString
	switch {
	case err == nil:
		srID = sql.NullString{String: sr.ID, Valid: true}
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("count %s: signature: %w", inv.ID, err)
	}
	_, err = countDocument(ctx, tx, dbq.CountUsageDocumentParams{DocumentID: inv.ID, AccountID: inv.AccountID,
		CompanyID: inv.CompanyID, Environment: inv.Environment, Direction: DirectionSent, SigningRequestID: srID, At: at})
	return err
}

// counterSlots spreads a count over this many rows of usage_counters.
const counterSlots = 8

// countDocument writes the ledger row of a document and, when that row is
// new, adds it to its counter — in the caller's transaction, so the two
// never disagree.
func countDocument(ctx context.Context, tx *store.Tx, d dbq.CountUsageDocumentParams) (bool, error) {
	d.Day, d.Period = skopjeDay(d.At)
	n, err := tx.CountUsageDocument(ctx, d)
	if err != nil {
		return false, fmt.Errorf("count %s: %w", d.DocumentID, err)
	}
	if n == 0 {
		return false, nil
	}
	h := fnv.New32a()
	h.Write([]byte(d.DocumentID))
	if err := tx.AddUsageCount(ctx, dbq.AddUsageCountParams{AccountID: d.AccountID, Environment: d.Environment, Period: d.Period,
		CompanyID: d.CompanyID, Direction: d.Direction, Slot: int32(h.Sum32() % counterSlots)}); err != nil {
		return false, fmt.Errorf("count %s: %w", d.DocumentID, err)
	}
	return true, nil
}

// ReceivedDocument is a document that arrived in a company's inbox, as
// the usage ledger needs it.
type ReceivedDocument struct {
	// ID is the inbox document's id (inbd_…).
	ID          string
	AccountID   string
	CompanyID   string
	Environment string
	// ReceivedAt is when it arrived; it counts in that Skopje month.
	ReceivedAt time.Time
}

// CountReceived counts a received document in the usage of the Skopje
// month it arrived in. The inbox calls it in the transaction that inserts
// the document, so the document and its count commit together; calling it
// again for the same document (read twice, by two processes, after a
// crash) changes nothing. It reports whether this call counted it.
func CountReceived(ctx context.Context, tx *store.Tx, d ReceivedDocument) (bool, error) {
	if d.ID == "" || d.AccountID == "" || d.CompanyID == "" || d.ReceivedAt.IsZero() {
		return false, errors.New("count received: id, account, company and arrival time are required")
	}
	if d.Environment != auth.EnvSandbox && d.Environment != auth.EnvProduction {
		return false, fmt.Errorf("count received %s: environment %q", d.ID, d.Environment)
	}
	return countDocument(ctx, tx, dbq.CountUsageDocumentParams{DocumentID: d.ID, AccountID: d.AccountID,
		CompanyID: d.CompanyID, Environment: d.Environment, Direction: DirectionReceived, At: LedgerTime(d.ReceivedAt)})
}
