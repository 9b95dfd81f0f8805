package einvoicing

import (
	"context"
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// The submission pipeline is a room of its own (internal/einvoicing/pipeline),
// built on this package. What this package asks of it goes through the
// ports below, which the room fills when it is built (UsePipeline).

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
}

// PipelineCalls are the pipeline's calls that the inbox's and the
// reconciliation's reads still in this package make (through Pipeline).
type PipelineCalls interface {
	QueryFailed(ctx context.Context, co dbq.Company, err error) error
	Stale(sr dbq.SigningRequest) (bool, error)
	SignerOf(ctx context.Context, q *dbq.Queries, sr dbq.SigningRequest, co dbq.Company) (Signer, error)
	AccessOK(ctx context.Context, companyID, privilege string) error
	AccessProblem(ctx context.Context, companyID string, err error) (bool, error)
}

// PipelineTimings are the pipeline's settings the inbox's and the
// reconciliation's reads still in this package follow.
type PipelineTimings struct {
	SignerInterval time.Duration
	CallTimeout    time.Duration
	RetryDelays    []time.Duration
}

// Pipeline is what the inbox's and the reconciliation's UJP reads still
// in this package hang on: the pipeline's calls and timings (set by the
// pipeline room, UsePipeline) and the service's store and gateways.
type Pipeline struct {
	PipelineCalls
	svc      *Service
	db       *store.DB
	gateways map[string]ujp.Gateway
	cfg      PipelineTimings
	log      *slog.Logger
}

// Pipeline is the host of the inbox's and the reconciliation's reads.
func (s *Service) Pipeline() *Pipeline { return s.pipe }

// UsePipeline connects the pipeline room: its pacing, its calls and its
// timings. pipeline.New calls it.
func (s *Service) UsePipeline(pace Pacing, calls PipelineCalls, t PipelineTimings) {
	s.pacing = pace
	s.pipe.PipelineCalls = calls
	s.pipe.cfg = t
}

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

// SyncInbox starts the read of co's purchase side (the inbox), when it is
// due, in the poll's transaction, through the inbox room's port
// (UseInbox); today is UJP's day.
func (s *Service) SyncInbox(ctx context.Context, tx *store.Tx, co dbq.Company, today time.Time) error {
	if s.inbox == nil {
		return nil
	}
	return s.inbox.StartSync(ctx, tx, co, today)
}
