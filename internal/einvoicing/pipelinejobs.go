package einvoicing

import (
	"context"
	"time"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// The submission pipeline's jobs (internal/einvoicing/pipeline runs them).
// Their arguments live here, so that the use cases of this package enqueue
// a submission, a poll, a signed read or a top-up in their transactions.
const (
	KindSubmit      = "einvoice.submit"
	KindPollChanges = "einvoice.poll_changes"
	KindPollCompany = "einvoice.poll_company"
	KindUJPQuery    = "einvoice.ujp_query"
	// kindPace tops up a UJP user's signing requests; its args name the
	// user (pace key). KindPaceSweep runs it for every user with
	// documents waiting, in case a top-up was missed.
	kindPace      = "einvoice.pace"
	KindPaceSweep = "einvoice.pace_sweep"
)

// SubmitArgs are the arguments of KindSubmit.
type SubmitArgs struct {
	EInvoiceID string `json:"einvoiceId"`
	// First: the document is its company's only one of its UJP user in
	// flight (FirstOfCompany), and its send goes before the user's others.
	First bool `json:"first,omitempty"`
}

// QueryArgs are the arguments of KindUJPQuery.
type QueryArgs struct {
	SigningRequestID string `json:"signingRequestId"`
}

// PollArgs are the arguments of KindPollCompany.
type PollArgs struct {
	CompanyID string `json:"companyId"`
}

// PaceArgs are the arguments of kindPace.
type PaceArgs struct {
	Key string `json:"key"`
}

// submitAttempts is how many times a submit job runs.
const submitAttempts = 20

// EnqueueSubmit asks for a submission of id in tx. Duplicates are
// harmless: the worker starts from the row's status and the signer's turns
// keep calls apart, so no unique key is needed (and one would race a
// finishing job).
func EnqueueSubmit(ctx context.Context, tx *store.Tx, id string) error {
	_, err := jobs.Insert(ctx, tx, SubmitArgs{EInvoiceID: id}, jobs.InsertOpts{MaxAttempts: submitAttempts})
	return err
}

// EnqueueQuery runs a signed read once its signature is recorded.
func EnqueueQuery(ctx context.Context, tx *store.Tx, r SigningRequest) error {
	_, err := jobs.Insert(ctx, tx, QueryArgs{SigningRequestID: r.ID}, jobs.InsertOpts{MaxAttempts: 5})
	return err
}

// EnqueuePoll asks, in tx, for a read of UJP for companyID (once: a poll
// already waiting for it is the same).
func EnqueuePoll(ctx context.Context, tx *store.Tx, companyID string) error {
	_, err := jobs.Insert(ctx, tx, PollArgs{CompanyID: companyID}, jobs.InsertOpts{MaxAttempts: 3,
		UniqueKey: KindPollCompany + ":" + companyID})
	return err
}

// sendFirst is how long ago the submit job of a company's only document
// of its user in flight is due, so that the job queue hands it to a
// worker before the user's other sends, due since they were signed
// (FirstOfCompany).
const sendFirst = time.Minute

// EnqueuePace asks for a top-up of key's signing requests. The job is due
// as the sends of a company's only document are (sendFirst): a worker
// takes it before the user's sends waiting in the queue, which the top-up
// is there to keep supplied.
func EnqueuePace(ctx context.Context, tx *store.Tx, key string) error {
	_, err := jobs.Insert(ctx, tx, PaceArgs{Key: key}, jobs.InsertOpts{UniqueKey: "pace:" + key, RunAt: tx.Now.Add(-sendFirst)})
	return err
}
