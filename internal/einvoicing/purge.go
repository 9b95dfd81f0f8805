package einvoicing

import (
	"context"
	"time"

	"github.com/denar-mk/denar/internal/jobs"
)

// KindPurgeSignedReads deletes finished requests of UJP reads (a periodic
// job; the expiry of signing requests is the signing room's).
const KindPurgeSignedReads = "signing.purge_reads"

// SignedReadRetention is how long finished read requests are kept: long
// enough to trace a recent status move to the read that brought it.
const SignedReadRetention = 7 * 24 * time.Hour

// purgeSignedReads deletes what the change-feed poller and the PDF fetch
// leave behind (one request per company and day polled, one per PDF);
// document signatures are never deleted.
func (s *Service) purgeSignedReads(ctx context.Context, _ *jobs.Job, _ purgeSignedReadsArgs) error {
	_, err := s.db.Writer().PurgeSignedReads(ctx, s.db.Now().Add(-SignedReadRetention))
	return err
}
