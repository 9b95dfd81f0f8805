package einvoicing

import (
	"context"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// The submission pipeline is a room of its own (internal/einvoicing/pipeline),
// built on this package. What this package asks of it goes through the
// port below, which the room fills when it is built (UsePacing).

// Pacing is the pipeline's pacing of a UJP user's documents (its sends
// and their just-in-time signatures), as an issue and the e-invoice's view
// ask it.
type Pacing interface {
	// MustWait reports whether a new document of pace key from companyID
	// waits for its turn to be signed, in the transaction; wake
	// is true when places are free all the same, so a top-up should run.
	MustWait(ctx context.Context, tx *store.Tx, key, companyID string) (wait, wake bool, err error)
	// Queue tells where inv stands among its user's documents; nil when
	// it is not waiting to be sent.
	Queue(ctx context.Context, q *dbq.Queries, inv dbq.Einvoice) (*Queue, error)
	// SendDue is when the submit job of inv, queued in tx, should come
	// due: near its turn among its user's sends, so that a signer's batch
	// of signatures does not make every send due (and claimed) at once.
	SendDue(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) (time.Time, error)
}

// UsePacing connects the pipeline room's pacing; pipeline.New calls it.
func (s *Service) UsePacing(pace Pacing) { s.pacing = pace }

// mustWait is Pacing.MustWait; without a pipeline nothing is paced.
func (s *Service) mustWait(ctx context.Context, tx *store.Tx, key, companyID string) (wait, wake bool, err error) {
	if s.pacing == nil || key == "" {
		return false, false, nil
	}
	return s.pacing.MustWait(ctx, tx, key, companyID)
}

// queueOf is Pacing.Queue; without a pipeline there is no queue.
func (s *Service) queueOf(ctx context.Context, q *dbq.Queries, inv dbq.Einvoice) (*Queue, error) {
	if s.pacing == nil {
		return nil, nil
	}
	return s.pacing.Queue(ctx, q, inv)
}

// sendDue is Pacing.SendDue; without a pipeline, now.
func (s *Service) sendDue(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) (time.Time, error) {
	if s.pacing == nil || inv.PaceKey == "" {
		return tx.Now, nil
	}
	return s.pacing.SendDue(ctx, tx, inv)
}

// SyncInbox starts the read of co's purchase side (the inbox), when it is
// due, in the poll's transaction, through the inbox room's port
// (UseInbox); today is UJP's day.
func (s *Service) SyncInbox(ctx context.Context, tx *store.Tx, co dbq.Company, today time.Time) error {
	if s.inbox == nil {
		return nil
	}
	return s.inbox.StartSync(ctx, tx, co, today)
}
