package einvoicing

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// KindExpireSigning is the periodic job that expires signing requests
// nobody answered in time.
const KindExpireSigning = "signing.expire"

// expireSigning marks expired every request past expiresAt. An e-invoice's
// document request gets its replacement at once (its e-invoice still waits
// for a signature); signed reads do not, since the poller and the PDF
// request ask afresh when they need one.
func expireSigning(db *store.DB) jobs.WorkerFunc {
	return func(ctx context.Context, _ *jobs.Job) error {
		rows, err := db.Reader().ListExpiredSigningRequests(ctx, db.Now())
		if err != nil {
			return err
		}
		for _, r := range rows {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if r.LinkType != LinkEInvoice {
					_, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: StateExpired, Now: tx.Now})
					return err
				}
				cur, err := tx.CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: r.CompanyID, Now: tx.Now})
				if errors.Is(err, sql.ErrNoRows) {
					// No valid certificate left: expire without a
					// replacement; registering one asks again on issue.
					_, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: StateExpired, Now: tx.Now})
					return err
				}
				if err != nil {
					return err
				}
				next, err := CreateRequest(ctx, tx, r.AccountID, cur, r.Purpose, r.Payload, SigningLink{Type: r.LinkType, ID: r.LinkID})
				if err != nil {
					return err
				}
				n, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: StateExpired, ReplacedBy: next.ID, Now: tx.Now})
				if err == nil && n == 0 {
					return errSignedMeanwhile // roll the replacement back
				}
				return err
			})
			if err != nil && !errors.Is(err, errSignedMeanwhile) {
				return fmt.Errorf("expire %s: %w", r.ID, err)
			}
		}
		return nil
	}
}

var errSignedMeanwhile = errors.New("signed meanwhile")

// KindPurgeSignedReads is the periodic job that deletes finished signing
// requests of UJP reads after SignedReadRetention.
const KindPurgeSignedReads = "signing.purge_reads"

// SignedReadRetention is how long finished read requests are kept: long
// enough to trace a recent status move to the read that brought it.
const SignedReadRetention = 7 * 24 * time.Hour

// purgeSignedReads deletes what the change-feed poller and the PDF fetch
// leave behind (one request per company and day polled, one per PDF);
// document signatures are never deleted.
func purgeSignedReads(db *store.DB) jobs.WorkerFunc {
	return func(ctx context.Context, _ *jobs.Job) error {
		_, err := db.Writer().PurgeSignedReads(ctx, db.Now().Add(-SignedReadRetention))
		return err
	}
}
