// Package usecase is what every use case of the e-invoicing application
// layers (internal/einvoicing and its rooms) shares: who asks (Caller), and
// the one transaction a use case runs, which completes the caller's
// Idempotency-Key claim and writes its audit entry with the work itself.
package usecase

import (
	"context"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store"
)

// Caller is who asks for a use case: the credential's principal and, for
// a request with an Idempotency-Key, its claim, which the use case's
// transaction completes with the answer.
type Caller struct {
	*auth.Principal
	Claim *idempotency.Claim
	// Audit, when set (a person acting through the dashboard), is written
	// to the audit log in the use case's transaction.
	Audit *auth.AuditEntry
}

// Write runs fn in one transaction of db and, when the caller holds an
// idempotency claim, stores fn's answer as the key's response in that same
// transaction (and the caller's audit entry, if any). The transaction does
// not inherit the request's cancellation: once the work starts, a client
// that hangs up does not decide its outcome.
func Write[T any](ctx context.Context, db *store.DB, c Caller, fn func(tx *store.Tx) (T, error)) (T, error) {
	return writeStoring(ctx, db, c, fn, nil)
}

// WriteShownOnce is Write for answers that carry a secret shown once (a
// pairing code, an agent's secret, a webhook endpoint's secret): the
// caller gets fn's answer, but what the key keeps for a replay is the
// problem shown(v) (secret_already_shown) — never v, so the secret is in
// clear nowhere but in that one answer.
func WriteShownOnce[T any](ctx context.Context, db *store.DB, c Caller, fn func(tx *store.Tx) (T, error), shown func(T) *denar.Error) (T, error) {
	return writeStoring(ctx, db, c, fn, func(v T) any { return shown(v) })
}

// ECodeSecretAlreadyShown answers the replay of an answer that carried a
// secret shown once.
const ECodeSecretAlreadyShown = "secret_already_shown"

// ShownOnce is the problem an Idempotency-Key replay of an answer with a
// secret gets: which object it was (objectId, when it has an id) and what
// to do instead.
func ShownOnce(object, id, msg string) *denar.Error {
	detail := map[string]any{"object": object}
	if id != "" {
		detail["objectId"] = id
	}
	return &denar.Error{Code: ECodeSecretAlreadyShown, Message: msg, Detail: detail}
}

// writeStoring is Write whose stored response is stored(v) rather than v
// itself (nil stored: v): an answer of another shape, or an error value,
// which the HTTP layer keeps as the problem a replay answers.
func writeStoring[T any](ctx context.Context, db *store.DB, c Caller, fn func(tx *store.Tx) (T, error), stored func(T) any) (T, error) {
	var out T
	ctx = context.WithoutCancel(ctx)
	err := db.InTx(ctx, func(tx *store.Tx) error {
		v, err := fn(tx)
		if err != nil {
			return err
		}
		var kept any = v
		if stored != nil {
			kept = stored(v)
		}
		if err := c.Claim.Complete(ctx, tx, kept); err != nil {
			return err
		}
		if err := auth.RecordAuditTx(ctx, tx, c.Principal, c.Audit); err != nil {
			return err
		}
		out = v
		return nil
	})
	return out, err
}

// Optional is a field of a partial update: Set when the request named it,
// Value nil when it named it as null.
type Optional[T any] struct {
	Set   bool
	Value *T
}
