package ujpsim

import (
	"context"
	"fmt"
	"time"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// KindPurge is the periodic job that applies the retention rule.
const KindPurge = "ujpsim.purge"

// purgeArgs are the (empty) arguments of the retention job.
type purgeArgs struct{}

func (purgeArgs) Kind() string { return KindPurge }

// DefaultRetention is how long stored documents are kept when the
// configuration says nothing (DENAR_UJP_SIM_RETENTION): 90 days, longer
// than any buyer's deadline (at most the 10th of the second month) and any
// change-feed reader's look-back.
const DefaultRetention = 90 * 24 * time.Hour

// purgeBatch bounds one delete, so a large backlog never holds a long
// transaction (SQLite has one writer).
const purgeBatch = 500

// Purged counts what one Purge removed.
type Purged struct {
	Documents    int64 // with their status history
	Certificates int64 // expired before the cutoff
	RateSlots    int64
}

// Purge applies the retention rule: documents stored before before go,
// with their history (the feeds then no longer show them, and their docId
// is free again, as it would be for a document UJP no longer knows);
// certificates that expired before it, and rate-limit slots last used
// before it, too. Registry entries and faults are kept: they are few and
// set by hand.
func (s *Sim) Purge(ctx context.Context, before time.Time) (Purged, error) {
	var p Purged
	q := s.db.Writer()
	for {
		n, err := q.DeleteUJPSimDocumentsBefore(ctx, dbq.DeleteUJPSimDocumentsBeforeParams{Before: dbTime(before), MaxRows: purgeBatch})
		if err != nil {
			return p, fmt.Errorf("ujpsim: purge documents: %w", err)
		}
		p.Documents += n
		if n < purgeBatch {
			break
		}
	}
	n, err := q.DeleteUJPSimCertificatesExpiredBefore(ctx, dbTime(before))
	if err != nil {
		return p, fmt.Errorf("ujpsim: purge certificates: %w", err)
	}
	p.Certificates = n
	if n, err = q.DeleteUJPSimRateBefore(ctx, dbTime(before)); err != nil {
		return p, fmt.Errorf("ujpsim: purge rate slots: %w", err)
	}
	p.RateSlots = n
	return p, nil
}

// PurgeEvery is how often the retention job runs.
const PurgeEvery = time.Hour

// RegisterPurge registers the retention rule as a periodic job (KindPurge,
// every PurgeEvery) on r: documents stored longer than retention ago are
// removed. The jobs table keeps one instance scheduled across every
// process sharing the store, so it runs once however many simulators
// there are.
func (s *Sim) RegisterPurge(r *jobs.Runner, retention time.Duration) {
	jobs.Register(r, func(ctx context.Context, _ *jobs.Job, _ purgeArgs) error {
		p, err := s.Purge(ctx, s.opts.Now().Add(-retention))
		if err != nil {
			return err
		}
		if p.Documents+p.Certificates > 0 {
			s.log.Info("ujpsim: retention", "documents", p.Documents, "certificates", p.Certificates, "rateSlots", p.RateSlots,
				"retention", retention)
		}
		return nil
	}, jobs.Options{Every: PurgeEvery})
}
