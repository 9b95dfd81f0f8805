package httpx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/jsontext"
)

// Idempotency (docs/decisions.md, "Idempotency"): the guard claims the
// key before the operation runs and hands the claim to the handler
// (ClaimFrom). An operation with an effect completes the claim inside the
// transaction of its effect, storing the response it answers with; the
// guard then has nothing left to do. An operation without an effect (a
// computation) leaves it to the guard, which stores the bytes it wrote. Any
// outcome other than 2xx changed nothing, so the key is released.

// Locator is implemented by resources that know their own path; a 201 or
// 202 answering with one carries it as Location, first time and on replay.
type Locator interface{ Path() string }

// ClaimFrom returns the Idempotency-Key claim of the request in ctx, nil
// when the request carries no key.
func ClaimFrom(ctx context.Context) *idempotency.Claim {
	c, _ := ctx.Value(claimKey).(*idempotency.Claim)
	return c
}

func (s *Service) idempotent(ctx huma.Context, r *http.Request, w http.ResponseWriter, p *auth.Principal, op *huma.Operation, next func(huma.Context)) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" || s.opts.Idempotency == nil {
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
	if bad := jsontext.BadText(key); bad != "" {
		WriteProblem(w, r, NewProblem("invalid_idempotency_key", "The Idempotency-Key header "+bad+"."))
		return
	}
	limit := op.MaxBodyBytes
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= limit {
		buf.Grow(int(r.ContentLength) + bytes.MinRead) // read in one allocation, not grown by doubling
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	body := buf.Bytes()
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
	// What is stored must not depend on the client staying connected.
	c := context.WithoutCancel(r.Context())
	keeper := s.opts.Idempotency
	fp := idempotency.Fingerprint(r.Method, r.URL.Path, r.Header.Get("X-Company-Id"), body)
	status := op.DefaultStatus
	if status == 0 {
		status = http.StatusOK
	}
	render := func(v any) (idempotency.Response, error) {
		if e, ok := v.(error); ok {
			// An answer that must not be kept (it carried a secret shown
			// once) is kept as the problem its replay answers.
			return storedProblem(r.Context(), e)
		}
		var buf bytes.Buffer
		if r, ok := v.(Rendered); ok {
			buf.Grow(len(r.RenderedJSON()) + 1)
		}
		if err := s.API.Marshal(&buf, "application/json", v); err != nil {
			return idempotency.Response{}, err
		}
		resp := idempotency.Response{Status: status, ContentType: "application/json", Body: buf.Bytes()}
		if l, ok := v.(Locator); ok && (status == http.StatusCreated || status == http.StatusAccepted) {
			resp.Location = l.Path()
		}
		return resp, nil
	}
	var scope idempotency.Scope
	if p != nil {
		scope = idempotency.Scope{Account: p.AccountID, Environment: p.Environment, Credential: p.CredentialID}
	} else {
		// A public operation (agent pairing) has no credential: its keys
		// live among requests with the same body, whose secret (a pairing
		// code) is the authority. The key is kept as its digest: clients
		// name it after that secret (pair:<CODE>).
		sum := sha256.Sum256(body)
		scope = idempotency.Scope{Credential: "public:" + op.OperationID + ":" + hex.EncodeToString(sum[:16])}
		ks := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(ks[:])
	}
	claim, replay, err := keeper.Begin(c, scope, key, fp, render)
	if err != nil {
		WriteProblem(w, r, FromError(err))
		return
	}
	if replay != nil {
		if p, ok := replayedProblem(replay); ok {
			w.Header().Set("Idempotent-Replayed", "true")
			WriteProblem(w, r, p)
			return
		}
		if replay.ContentType != "" {
			w.Header().Set("Content-Type", replay.ContentType)
		}
		if replay.Location != "" {
			w.Header().Set("Location", replay.Location)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		w.Header().Set("Content-Length", strconv.Itoa(len(replay.Body)))
		w.WriteHeader(replay.Status)
		_, _ = w.Write(replay.Body)
		return
	}
	rec := captured(r.Context())
	finished := false
	defer func() {
		if !finished && !claim.Done() {
			// The handler panicked: free the key so a retry can run.
			_ = keeper.Release(c, claim)
		}
	}()
	next(huma.WithValue(ctx, claimKey, claim))
	finished = true
	if claim.Done() {
		return // stored with the effect, in its transaction
	}
	got := 0
	var out []byte
	if rec != nil {
		got = rec.status
		if rec.capture != nil {
			out = rec.capture.Bytes()
		}
	}
	if got >= 200 && got < 300 && rec != nil && rec.overCapture {
		// Too large to keep (maxStoredResponse): released, so that a retry
		// with the key runs again, which gives the same bytes.
		s.opts.Log.Info("idempotency: response too large to store; key released",
			"operation", op.OperationID, "bytes", rec.size, "request_id", RequestID(r.Context()))
		err = keeper.Release(c, claim)
	} else if got >= 200 && got < 300 && rec != nil {
		if s.opts.EffectsInTx {
			s.opts.Log.Error("idempotency: operation answered 2xx without storing its response with its effect",
				"operation", op.OperationID, "request_id", RequestID(r.Context()))
		}
		err = keeper.Finish(c, claim, idempotency.Response{Status: got, ContentType: w.Header().Get("Content-Type"),
			Location: w.Header().Get("Location"), Body: out})
	} else {
		err = keeper.Release(c, claim)
	}
	if err != nil {
		s.opts.Log.Error("idempotency: record outcome", "err", err, "request_id", RequestID(r.Context()))
	}
}

// problemType is the media type of a stored problem.
const problemType = "application/problem+json"

// storedProblem renders err as the problem kept for a key's replays.
func storedProblem(ctx context.Context, err error) (idempotency.Response, error) {
	p := finish(ctx, FromError(err))
	body, merr := json.Marshal(p)
	if merr != nil {
		return idempotency.Response{}, merr
	}
	return idempotency.Response{Status: p.Status, ContentType: problemType, Body: body}, nil
}

// replayedProblem reads a stored problem back, to be answered again with
// the replaying request's own id (instance).
func replayedProblem(resp *idempotency.Response) (*Problem, bool) {
	if resp.ContentType != problemType {
		return nil, false
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(resp.Body, &members); err != nil {
		return nil, false
	}
	var code, detail string
	var fields []denar.FieldError
	if json.Unmarshal(members["code"], &code) != nil || json.Unmarshal(members["detail"], &detail) != nil {
		return nil, false
	}
	_ = json.Unmarshal(members["errors"], &fields)
	p := NewProblem(code, detail, fields...)
	for _, std := range []string{"type", "title", "status", "detail", "instance", "code", "errors"} {
		delete(members, std)
	}
	if len(members) > 0 {
		p.Extra = map[string]any{}
		for k, v := range members {
			p.Extra[k] = v
		}
	}
	return p, true
}
