// Package idempotency keeps Idempotency-Key claims and the responses they
// stored, in the store.
//
// A request with a key first claims it (Begin), in a short transaction of
// its own: the key row is inserted as running with a lease and a random
// token. The operation then does its work, and the work's own transaction
// stores the response and marks the key done (Claim.Complete) — in the same
// commit as the effect, so a crash can leave either both or neither. The
// completion is fenced by the token: if the lease ran out and another
// request with the same key took the claim over, the first request's
// completion matches no row, and its transaction rolls back with its
// effect.
//
// Rules (docs/decisions.md, "Idempotency"):
//   - A key is scoped by account, environment and credential.
//   - The fingerprint covers method, path, X-Company-Id and the body in
//     canonical JSON form, so re-serialising the same request is no conflict.
//   - Only 2xx responses are stored and replayed; any other outcome wrote
//     nothing, so the key is released and a corrected retry runs afresh.
//     One exception: an answer that carries a secret shown once is never
//     stored; the operation stores in its place the problem its replays
//     answer (409 secret_already_shown), in the same transaction.
package idempotency

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Scope is whose keys a key lives among.
type Scope struct {
	Account     string
	Environment string
	Credential  string
}

// Response is a stored response, replayed byte for byte.
type Response struct {
	Status      int
	ContentType string
	Location    string
	Body        []byte
}

// Render turns the value an operation answers with into the response the
// client receives. The HTTP layer supplies it with the claim, so the stored
// bytes are exactly the bytes it sends.
type Render func(v any) (Response, error)

// Errors of Begin and Complete, with the problem codes the API answers.
var (
	ErrConflict = denar.Errorf("idempotency_conflict",
		"This Idempotency-Key was used with a different request (method, path, company or body). Use a new key for a new request.")
	ErrInProgress = denar.Errorf("idempotency_in_progress",
		"A request with this Idempotency-Key is still being processed; retry after it completes.")
)

// Keeper claims keys and stores responses.
type Keeper struct {
	db    *store.DB
	lease time.Duration
}

// DefaultRetention is how long a stored response is kept before a purge
// may delete it.
const DefaultRetention = 24 * time.Hour

// DefaultLease is how long a running request holds its key before a retry
// may take it over.
const DefaultLease = time.Minute

// New returns a Keeper on db. lease is how long a running request holds its
// key (DefaultLease when zero); a retry after it takes the key over.
func New(db *store.DB, lease time.Duration) *Keeper {
	if lease <= 0 {
		lease = DefaultLease
	}
	return &Keeper{db: db, lease: lease}
}

// Claim is a running request's hold on its key.
type Claim struct {
	keeper      *Keeper
	scope       Scope
	key, token  string
	render      Render
	done        bool
	response    *Response
	fingerprint string
}

// Begin claims key for a request with the given fingerprint. It returns
// either a claim the request completes or releases, or the response of the
// request that already completed with this key (a replay), or ErrConflict
// or ErrInProgress.
func (k *Keeper) Begin(ctx context.Context, sc Scope, key, fingerprint string, render Render) (*Claim, *Response, error) {
	c := &Claim{keeper: k, scope: sc, key: key, token: newToken(), render: render, fingerprint: fingerprint}
	var claimed bool
	var replay *Response
	var outcome error
	// One short transaction: on SQLite it shares its commit with the other
	// transactions of the moment (store.DB.InTx), and the read and the
	// take-over see the row the insert found.
	err := k.db.InTx(ctx, func(tx *store.Tx) error {
		now := tx.Now
		n, err := tx.InsertIdempotencyKey(ctx, dbq.InsertIdempotencyKeyParams{
			AccountID: sc.Account, Environment: sc.Environment, CredentialID: sc.Credential, IdemKey: key,
			Fingerprint: fingerprint, Token: c.token, LockedUntil: now.Add(k.lease), CreatedAt: now,
		})
		if err != nil {
			return fmt.Errorf("idempotency: claim: %w", err)
		}
		if n == 1 {
			claimed = true
			return nil
		}
		row, err := tx.GetIdempotencyKey(ctx, dbq.GetIdempotencyKeyParams{
			AccountID: sc.Account, Environment: sc.Environment, CredentialID: sc.Credential, IdemKey: key})
		if errors.Is(err, sql.ErrNoRows) {
			// Released between our insert and read: the first request
			// failed and its client may be retrying right now.
			outcome = ErrInProgress
			return nil
		}
		if err != nil {
			return fmt.Errorf("idempotency: read: %w", err)
		}
		if row.Fingerprint != fingerprint {
			outcome = ErrConflict
			return nil
		}
		if row.State == "done" {
			replay = &Response{Status: int(row.StatusCode), ContentType: row.ContentType, Location: row.Location, Body: row.Body}
			return nil
		}
		taken, err := tx.TakeOverIdempotencyKey(ctx, dbq.TakeOverIdempotencyKeyParams{
			AccountID: sc.Account, Environment: sc.Environment, CredentialID: sc.Credential, IdemKey: key,
			LockedUntil: now.Add(k.lease), Token: c.token, Now: now,
		})
		if err != nil {
			return fmt.Errorf("idempotency: take over: %w", err)
		}
		if taken == 0 {
			outcome = ErrInProgress
			return nil
		}
		claimed = true
		return nil
	})
	switch {
	case err != nil:
		return nil, nil, err
	case outcome != nil:
		return nil, nil, outcome
	case replay != nil:
		return nil, replay, nil
	case claimed:
		return c, nil, nil
	}
	return nil, nil, ErrInProgress
}

// Complete stores the response to v as the key's outcome, inside tx, the
// transaction of the work. The claim counts as done once tx commits. If the
// claim was taken over meanwhile, Complete returns ErrInProgress and the
// caller's transaction must roll back.
func (c *Claim) Complete(ctx context.Context, tx *store.Tx, v any) error {
	if c == nil {
		return nil
	}
	resp, err := c.render(v)
	if err != nil {
		return fmt.Errorf("idempotency: render response: %w", err)
	}
	if err := c.store(ctx, tx.Queries, resp); err != nil {
		return err
	}
	tx.AfterCommit(func() { c.done, c.response = true, &resp })
	return nil
}

// Finish stores resp as the outcome of an operation that has no effect of
// its own to commit with (a computation): in its own statement.
func (k *Keeper) Finish(ctx context.Context, c *Claim, resp Response) error {
	if err := c.store(ctx, k.db.Writer(), resp); err != nil {
		return err
	}
	c.done, c.response = true, &resp
	return nil
}

func (c *Claim) store(ctx context.Context, q *dbq.Queries, resp Response) error {
	n, err := q.CompleteIdempotencyKey(ctx, dbq.CompleteIdempotencyKeyParams{
		AccountID: c.scope.Account, Environment: c.scope.Environment, CredentialID: c.scope.Credential, IdemKey: c.key,
		StatusCode: int32(resp.Status), ContentType: resp.ContentType, Location: resp.Location, Body: resp.Body, Token: c.token,
	})
	if err != nil {
		return fmt.Errorf("idempotency: complete: %w", err)
	}
	if n == 0 {
		return ErrInProgress
	}
	return nil
}

// Done reports whether the claim's outcome is stored and committed.
func (c *Claim) Done() bool { return c != nil && c.done }

// StableID is a digest of the claim's scope and key: the same for every
// attempt of one request (a retry after a crash included) and different for
// every other key, so work that reaches outside the store can be named by
// it and done once. "" for a nil claim.
func (c *Claim) StableID() string {
	if c == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(c.scope.Account + "\x00" + c.scope.Environment + "\x00" + c.scope.Credential + "\x00" + c.key))
	return hex.EncodeToString(sum[:16])
}

// Response is the stored response once Done.
func (c *Claim) Response() *Response { return c.response }

// Release gives the key up after an outcome that changed nothing, so a
// corrected retry with the same key runs afresh. Only the claim's own
// token releases it.
func (k *Keeper) Release(ctx context.Context, c *Claim) error {
	err := k.db.Writer().ReleaseIdempotencyKey(ctx, dbq.ReleaseIdempotencyKeyParams{
		AccountID: c.scope.Account, Environment: c.scope.Environment, CredentialID: c.scope.Credential, IdemKey: c.key, Token: c.token,
	})
	if err != nil {
		return fmt.Errorf("idempotency: release: %w", err)
	}
	return nil
}

// Purge deletes keys created before before, whatever their state: a key
// still running after the retention period belongs to a request that died
// long ago.
func (k *Keeper) Purge(ctx context.Context, before time.Time) (int64, error) {
	n, err := k.db.Writer().PurgeIdempotencyKeys(ctx, before)
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge: %w", err)
	}
	return n, nil
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Fingerprint identifies a request: method, path, the company it acts for
// and its body in canonical JSON form.
func Fingerprint(method, path, company string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + "\n" + path + "\n" + company + "\n"))
	writeCanonicalJSON(h, body)
	return hex.EncodeToString(h.Sum(nil))
}

// writeCanonicalJSON writes a JSON body re-encoded with sorted keys and no
// insignificant white space to w; numbers keep their exact text. A body
// that is not JSON is written as it is. The bytes are those of decoding the
// body into an any (numbers as json.Number) and marshalling it back, but
// worked out token by token: a body of 16 MiB decoded into maps would take
// hundreds of megabytes.
func writeCanonicalJSON(w io.Writer, body []byte) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	c := canonicalizer{dec: dec}
	v, ok := c.value()
	if ok {
		if _, err := dec.Token(); err != io.EOF {
			ok = false
		}
	}
	if !ok {
		_, _ = w.Write(body)
		return
	}
	v.writeTo(w)
}

// maxDepth is encoding/json's limit of nested arrays and objects: a body
// deeper than this does not decode, and is used as it is.
const maxDepth = 10000

// canonicalizer reads one JSON value from dec into its canonical form.
type canonicalizer struct {
	dec   *json.Decoder
	depth int
}

// canonical is a value in canonical form: its bytes, or an object's
// members, kept apart so that the largest object (the body itself) is
// written member by member rather than copied once more.
type canonical struct {
	text    []byte
	members []member // an object, when text is nil
}

type member struct {
	name  string
	value canonical
}

func (v canonical) writeTo(w io.Writer) {
	if v.text != nil {
		_, _ = w.Write(v.text)
		return
	}
	_, _ = io.WriteString(w, "{")
	for i, m := range v.members {
		if i > 0 {
			_, _ = io.WriteString(w, ",")
		}
		name, _ := json.Marshal(m.name)
		_, _ = w.Write(name)
		_, _ = io.WriteString(w, ":")
		m.value.writeTo(w)
	}
	_, _ = io.WriteString(w, "}")
}

// value reads the next value; ok is false when the body is not JSON (or
// nests deeper than encoding/json decodes).
func (c *canonicalizer) value() (canonical, bool) {
	tok, err := c.dec.Token()
	if err != nil {
		return canonical{}, false
	}
	switch t := tok.(type) {
	case json.Delim:
		if c.depth++; c.depth > maxDepth {
			return canonical{}, false
		}
		defer func() { c.depth-- }()
		if t == '[' {
			var b bytes.Buffer
			b.WriteByte('[')
			for i := 0; c.dec.More(); i++ {
				e, ok := c.value()
				if !ok {
					return canonical{}, false
				}
				if i > 0 {
					b.WriteByte(',')
				}
				e.writeTo(&b)
			}
			if _, err := c.dec.Token(); err != nil {
				return canonical{}, false
			}
			b.WriteByte(']')
			return canonical{text: b.Bytes()}, true
		}
		members := []member{}
		for c.dec.More() {
			tok, err := c.dec.Token()
			name, isName := tok.(string)
			if err != nil || !isName {
				return canonical{}, false
			}
			v, ok := c.value()
			if !ok {
				return canonical{}, false
			}
			members = append(members, member{name, v})
		}
		if _, err := c.dec.Token(); err != nil {
			return canonical{}, false
		}
		// As a map: keys in order, a key given again keeps its last value.
		slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
		out := members[:0]
		for i, m := range members {
			if i+1 < len(members) && members[i+1].name == m.name {
				continue
			}
			out = append(out, m)
		}
		return canonical{members: out}, true
	case string:
		b, _ := json.Marshal(t)
		return canonical{text: b}, true
	case json.Number:
		return canonical{text: []byte(t.String())}, true
	case bool:
		return canonical{text: []byte(strconv.FormatBool(t))}, true
	case nil:
		return canonical{text: []byte("null")}, true
	}
	return canonical{}, false
}
