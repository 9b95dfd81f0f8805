package httpx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Idempotency rules (docs/decisions.md, "Idempotency"):
//   - Keys are scoped to the account: two credentials of one account share them.
//   - The fingerprint covers method, path, X-Company-Id and the body in
//     canonical JSON form (object keys sorted, insignificant white space
//     dropped), so re-serialising the same request is not a conflict.
//   - Only a 2xx response is stored and replayed. Any other outcome wrote
//     nothing (every handler commits in one transaction), so the key is
//     released and a corrected retry with the same key runs afresh.
//   - A running request holds its key for a lease; a key whose holder died
//     is taken over by the next request with the same fingerprint.

func (s *Service) idempotent(ctx huma.Context, r *http.Request, w http.ResponseWriter, p *auth.Principal, op *huma.Operation, next func(huma.Context)) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		if s.opts.IdempotencyRequired {
			WriteProblem(w, r, NewProblem("idempotency_key_required", "POST requests to this service need an Idempotency-Key header (any unique string up to 255 characters, such as a UUID)."))
			return
		}
		next(ctx)
		return
	}
	if len(key) > 255 {
		WriteProblem(w, r, NewProblem("invalid_idempotency_key", "The Idempotency-Key header is longer than 255 characters."))
		return
	}
	limit := op.MaxBodyBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		WriteProblem(w, r, bodyReadProblem(err))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if int64(len(body)) > limit {
		// Let huma answer 413; nothing to remember.
		next(ctx)
		return
	}
	fp := fingerprint(r, body)
	db := s.opts.DB
	c := r.Context()
	now := db.Now()
	n, err := db.Writer().InsertIdempotencyKey(c, dbq.InsertIdempotencyKeyParams{
		AccountID: p.AccountID, IdemKey: key, Fingerprint: fp,
		LockedUntil: now.Add(s.opts.IdempotencyLease), CreatedAt: now,
	})
	if err != nil {
		WriteProblem(w, r, FromError(err))
		return
	}
	if n == 0 {
		row, err := db.Writer().GetIdempotencyKey(c, dbq.GetIdempotencyKeyParams{AccountID: p.AccountID, IdemKey: key})
		if errors.Is(err, sql.ErrNoRows) {
			// Released between our insert and read: the first request failed.
			WriteProblem(w, r, NewProblem("idempotency_in_progress", "A request with this Idempotency-Key was still being processed; retry."))
			return
		}
		if err != nil {
			WriteProblem(w, r, FromError(err))
			return
		}
		if row.Fingerprint != fp {
			WriteProblem(w, r, NewProblem("idempotency_conflict", "This Idempotency-Key was used with a different request (method, path, company or body). Use a new key for a new request."))
			return
		}
		if row.State == "done" {
			if row.ContentType != "" {
				w.Header().Set("Content-Type", row.ContentType)
			}
			if row.Location != "" {
				w.Header().Set("Location", row.Location)
			}
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Content-Length", strconv.Itoa(len(row.Body)))
			w.WriteHeader(int(row.StatusCode))
			_, _ = w.Write(row.Body)
			return
		}
		taken, err := db.Writer().TakeOverIdempotencyKey(c, dbq.TakeOverIdempotencyKeyParams{
			AccountID: p.AccountID, IdemKey: key, LockedUntil: now.Add(s.opts.IdempotencyLease), Now: now,
		})
		if err != nil {
			WriteProblem(w, r, FromError(err))
			return
		}
		if taken == 0 {
			WriteProblem(w, r, NewProblem("idempotency_in_progress", "A request with this Idempotency-Key is still being processed; retry after it completes."))
			return
		}
	}
	rec := captured(c)
	finished := false
	defer func() {
		if !finished {
			// The handler panicked: free the key so a retry can run.
			_ = db.Writer().ReleaseIdempotencyKey(c, dbq.ReleaseIdempotencyKeyParams{AccountID: p.AccountID, IdemKey: key})
		}
	}()
	next(ctx)
	finished = true
	status := 0
	var out []byte
	if rec != nil {
		status = rec.status
		if rec.capture != nil {
			out = rec.capture.Bytes()
		}
	}
	if status >= 200 && status < 300 && rec != nil {
		err = db.Writer().CompleteIdempotencyKey(c, dbq.CompleteIdempotencyKeyParams{
			AccountID: p.AccountID, IdemKey: key, StatusCode: int32(status),
			ContentType: w.Header().Get("Content-Type"), Location: w.Header().Get("Location"), Body: out,
		})
	} else {
		err = db.Writer().ReleaseIdempotencyKey(c, dbq.ReleaseIdempotencyKeyParams{AccountID: p.AccountID, IdemKey: key})
	}
	if err != nil {
		s.opts.Log.Error("idempotency: record outcome", "err", err, "request_id", RequestID(c))
	}
}

func fingerprint(r *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(r.Method + "\n" + r.URL.Path + "\n" + r.Header.Get("X-Company-Id") + "\n"))
	h.Write(canonicalJSON(body))
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON re-encodes a JSON body with sorted keys and no insignificant
// white space; numbers keep their exact text. A body that is not JSON is
// used as it is.
func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	if _, err := dec.Token(); err != io.EOF {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// PurgeIdempotencyKeys deletes keys created before before, whatever their
// state: a key still running after the retention period belongs to a
// request that died long ago.
func PurgeIdempotencyKeys(ctx context.Context, db *store.DB, before time.Time) (int64, error) {
	n, err := db.Writer().PurgeIdempotencyKeys(ctx, before)
	if err != nil {
		return 0, fmt.Errorf("idempotency: purge: %w", err)
	}
	return n, nil
}
