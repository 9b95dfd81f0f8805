package signing

// Batches of signer answers: claim, sign or refuse up to MaxSigningBatch
// requests in one call, each item with the outcome the single operation
// would have had. The batch is one transaction with a savepoint per item
// (store.Tx.Savepoint): an item that fails (already_claimed, a bad
// signature, 404 outside the caller's reach, …) is rolled back alone and
// answered with its problem, the others commit together, and the answer —
// every item's outcome — is kept for the Idempotency-Key in that same
// transaction, so a retry of the batch is answered item for item as the
// first attempt was. An error that is no problem of the item (the store
// failing) ends the whole batch, which then changed nothing.

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// MaxSigningBatch is the most requests one batch names, and the most an
// agent is sent at once.
const MaxSigningBatch = 100

// BatchOutcome is one item of a batch: the request as the single
// operation would have answered it, or the problem (a *denar.Error) it
// would have answered.
type BatchOutcome struct {
	ID      string
	Request einvoicing.SigningRequest // when Err is nil
	Err     error
}

// Present turns the outcomes of a batch, in the order of its items, into
// the batch's answer: what the caller gets and what its Idempotency-Key
// keeps, written in the batch's transaction.
type Present func([]BatchOutcome) any

// SignatureItem is one signature of a batch.
type SignatureItem struct{ ID, JWS string }

// RefusalItem is one refusal of a batch.
type RefusalItem struct{ ID, Reason, Message string }

func (it SignatureItem) itemID() string { return it.ID }
func (it RefusalItem) itemID() string   { return it.ID }

// ClaimSigningRequests claims each of ids for the caller, as
// ClaimSigningRequest would, in one transaction.
func (s *Service) ClaimSigningRequests(ctx context.Context, c einvoicing.Caller, ids []string, present Present) (any, error) {
	if err := checkBatchIDs(ids, func(i int) string { return "ids[" + strconv.Itoa(i) + "]" }); err != nil {
		return nil, err
	}
	steps := make([]batchStep, len(ids))
	for i, id := range ids {
		steps[i] = batchStep{id: id, step: s.claimStep(ctx, c)}
	}
	return s.signerBatch(ctx, c, steps, present, false)
}

// ClaimNextSigningRequests claims for the caller up to max of the
// requests it may sign, oldest first: for an agent what its long-poll
// delivers (pending requests of its companies, and those it claimed and
// has not finished), for a key the pending requests of its account and
// environment within its allow-list. Only the requests claimed are
// answered; one another signer took meanwhile is left out.
func (s *Service) ClaimNextSigningRequests(ctx context.Context, c einvoicing.Caller, max int, present Present) (any, error) {
	if max < 1 || max > MaxSigningBatch {
		return nil, denar.Invalid(denar.FieldError{Path: "max", Message: "must be 1 to " + strconv.Itoa(MaxSigningBatch)})
	}
	var candidates []einvoicing.SigningRequest
	var err error
	if isAgent(c.Principal) {
		candidates, err = s.PendingForAgent(ctx, c.Principal, max)
	} else {
		candidates, err = s.SigningRequests(ctx, c.Principal, SigningRequestFilter{State: einvoicing.StatePending}, "", max)
	}
	if err != nil {
		return nil, err
	}
	steps := make([]batchStep, 0, max)
	for _, r := range candidates[:min(len(candidates), max)] {
		steps = append(steps, batchStep{id: r.ID, step: s.claimStep(ctx, c)})
	}
	return s.signerBatch(ctx, c, steps, present, true)
}

// SubmitSignatures verifies and records each signature as SubmitSignature
// would, in one transaction: a signature that fails verification is
// answered with its problem and the others are recorded.
func (s *Service) SubmitSignatures(ctx context.Context, c einvoicing.Caller, items []SignatureItem, present Present) (any, error) {
	steps, err := itemSteps(items, func(it SignatureItem) *denar.FieldError {
		if it.JWS == "" {
			return &denar.FieldError{Path: "jws", Message: "is required"}
		}
		return nil
	}, func(it SignatureItem) signerStep { return s.signatureStep(ctx, c, it.JWS) })
	if err != nil {
		return nil, err
	}
	return s.signerBatch(ctx, c, steps, present, false)
}

// RefuseSigningRequests records each refusal as RefuseSigningRequest
// would, in one transaction.
func (s *Service) RefuseSigningRequests(ctx context.Context, c einvoicing.Caller, items []RefusalItem, present Present) (any, error) {
	steps, err := itemSteps(items, func(it RefusalItem) *denar.FieldError {
		return badRefusalReason(it.Reason)
	}, func(it RefusalItem) signerStep { return s.refusalStep(ctx, c, it.Reason, it.Message) })
	if err != nil {
		return nil, err
	}
	return s.signerBatch(ctx, c, steps, present, false)
}

// itemSteps checks the items of a batch and makes each its step: first
// their ids as checkBatchIDs does (at items[i].id), then each item in
// order, whose check gives the item's problem (nil when it is valid) at
// its field, which becomes items[i].<field>.
func itemSteps[T interface{ itemID() string }](items []T, check func(T) *denar.FieldError, step func(T) signerStep) ([]batchStep, error) {
	path := func(i int, field string) string { return "items[" + strconv.Itoa(i) + "]." + field }
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.itemID()
	}
	if err := checkBatchIDs(ids, func(i int) string { return path(i, "id") }); err != nil {
		return nil, err
	}
	steps := make([]batchStep, len(items))
	for i, it := range items {
		if fe := check(it); fe != nil {
			fe.Path = path(i, fe.Path)
			return nil, denar.Invalid(*fe)
		}
		steps[i] = batchStep{id: ids[i], step: step(it)}
	}
	return steps, nil
}

// checkBatchIDs refuses an empty batch, one over MaxSigningBatch, and an
// id named twice (its second place is the field at fault).
func checkBatchIDs(ids []string, path func(int) string) error {
	switch {
	case len(ids) == 0:
		return denar.Invalid(denar.FieldError{Path: path(0), Message: "a batch names at least one request"})
	case len(ids) > MaxSigningBatch:
		return denar.Invalid(denar.FieldError{Path: path(MaxSigningBatch), Message: "a batch names at most " + strconv.Itoa(MaxSigningBatch) + " requests"})
	}
	seen := make(map[string]int, len(ids))
	var fields denar.FieldErrors
	for i, id := range ids {
		if j, ok := seen[id]; ok {
			fields.Add(path(i), "names %s again (as item %d); a batch answers each request once", id, j)
			continue
		}
		seen[id] = i
	}
	if len(fields) > 0 {
		return denar.Invalid(fields...)
	}
	return nil
}

type batchStep struct {
	id   string
	step signerStep
}

// signerBatch applies each step to its request in one transaction, one
// savepoint per item, and keeps present's answer for the Idempotency-Key
// in the same commit. Items are applied in the order of their ids, so
// that two batches naming the same requests lock them in the same order;
// outcomes keep the order of the items. onlyDone leaves out the items
// that failed (a claim of what was waiting, where a request another
// signer took meanwhile is no answer).
func (s *Service) signerBatch(ctx context.Context, c einvoicing.Caller, steps []batchStep, present Present, onlyDone bool) (any, error) {
	order := make([]int, len(steps))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(steps[a].id, steps[b].id) })
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (any, error) {
		out := make([]BatchOutcome, len(steps))
		for _, i := range order {
			o, err := s.batchItem(ctx, tx, c, steps[i])
			if errors.Is(err, errSignedMeanwhile) {
				o, err = s.batchItem(ctx, tx, c, steps[i]) // answered concurrently: read it again
			}
			if err != nil {
				return nil, err
			}
			out[i] = o
		}
		if onlyDone {
			out = slices.DeleteFunc(out, func(o BatchOutcome) bool { return o.Err != nil })
		}
		return present(out), nil
	})
}

// batchItem applies st inside a savepoint of tx. Its problem is the
// item's outcome, and what it wrote is rolled back; a request found past
// its time is expired (its replacement issued) and answered 410
// signature_expired, and that expiry stays, as it does for a single
// answer. Any other error is returned: the batch ends.
func (s *Service) batchItem(ctx context.Context, tx *store.Tx, c einvoicing.Caller, st batchStep) (BatchOutcome, error) {
	o := BatchOutcome{ID: st.id}
	var expired error
	err := tx.Savepoint(ctx, func() error {
		r, cert, err := s.requestForSigner(ctx, tx.Queries, c.Principal, st.id, tx.Now)
		if err != nil {
			return err
		}
		if (r.State == einvoicing.StatePending || r.State == einvoicing.StateClaimed) && !tx.Now.Before(r.ExpiresAt) {
			if r, err = s.expire(ctx, tx, r); err != nil {
				return err
			}
		}
		if r.State == einvoicing.StateExpired {
			expired, err = s.expiredIn(ctx, tx, r)
			return err
		}
		if err := st.step(tx, r, cert); err != nil {
			return err
		}
		row, err := tx.GetSigningRequest(ctx, r.ID)
		if err != nil {
			return err
		}
		o.Request = einvoicing.SigningRequestFrom(row)
		return nil
	})
	var problem *denar.Error
	switch {
	case err == nil:
		o.Err = expired
	case errors.As(err, &problem):
		o.Err = err
	default:
		return o, err
	}
	return o, nil
}

// expiredIn is expiredError inside tx: the 410 of expired request r,
// whose replacedBy follows the chain of replacements, expiring on the way
// one found past its time.
func (s *Service) expiredIn(ctx context.Context, tx *store.Tx, r dbq.SigningRequest) (error, error) {
	current := r.ReplacedBy
	for hops := 0; current != "" && hops < 50; hops++ {
		next, err := tx.GetSigningRequest(ctx, current)
		if err != nil {
			return nil, err
		}
		if (next.State == einvoicing.StatePending || next.State == einvoicing.StateClaimed) && !tx.Now.Before(next.ExpiresAt) {
			if next, err = s.expire(ctx, tx, next); err != nil {
				return nil, err
			}
		}
		if next.State != einvoicing.StateExpired || next.ReplacedBy == "" {
			break
		}
		current = next.ReplacedBy
	}
	return expiredProblem(r, current), nil
}
