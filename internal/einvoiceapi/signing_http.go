package einvoiceapi

// HTTP operations on signing requests: listing for inline signing, and the
// claim → signature | refuse state machine. Each transition is a guarded
// UPDATE (state IN pending, claimed), so no request is ever signed twice,
// whatever the retries or concurrent agents.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// RefusalReasons an agent may give.
var RefusalReasons = []string{"user_declined", "policy", "token_missing", "pin_locked", "payload_invalid"}

// SignerAuth is the credential and request id of a signer operation.
type SignerAuth struct {
	Authorization string `header:"Authorization" doc:"Agent <AGENT_ID>.<AGENT_SECRET>, or Bearer <API key> with scope signing:agent (inline signing)."`
	ID            string `path:"id" doc:"Signing request id (sgr_…)."`
}

type signingRequestOutput struct{ Body einvoicing.SigningRequest }

type signingRequestPage struct {
	Body httpx.Page[einvoicing.SigningRequest]
}

type listSigningInput struct {
	State     string `query:"state" enum:"pending,claimed,signed,refused,expired," doc:"Only requests in this state."`
	CompanyID string `query:"companyId" doc:"Only requests of this company."`
	Limit     int    `query:"limit" minimum:"1" maximum:"100" default:"20"`
	Cursor    string `query:"cursor"`
}

type signatureInput struct {
	SignerAuth
	Body struct {
		JWS string `json:"jws" minLength:"1" maxLength:"1000000" doc:"Compact JWS: protectedHeader.payload.signature, header and payload exactly as issued."`
	}
}

type refuseInput struct {
	SignerAuth
	Body struct {
		Reason  string `json:"reason" enum:"user_declined,policy,token_missing,pin_locked,payload_invalid"`
		Message string `json:"message,omitempty" maxLength:"1000"`
	}
}

// conflict builds a 409 with its own code; already_claimed is not in the
// shared status table, so the status is set here.
func conflict(code, detail string) *httpx.Problem {
	p := httpx.NewProblem(code, detail)
	p.Status, p.Title = http.StatusConflict, "Conflict"
	return p
}

func (h *handlers) registerSigningRequests(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "listSigningRequests", Method: http.MethodGet, Path: "/v1/signing-requests",
		Summary: "List signing requests (inline signing)", Tags: []string{"Signing"},
	}, httpx.Spec{Scope: "signing:agent"}, func(ctx context.Context, in *listSigningInput) (*signingRequestPage, error) {
		p := httpx.PrincipalFrom(ctx)
		filter := in.State + "|" + in.CompanyID
		after, err := httpx.DecodeCursor(in.Cursor, filter)
		if err != nil {
			return nil, err
		}
		if in.CompanyID != "" && !p.AllowsCompany(in.CompanyID) {
			return nil, httpx.NewProblem("company_not_allowed", "The credential may not act for company "+in.CompanyID+".")
		}
		rows, err := h.deps.DB.Reader().ListSigningRequests(ctx, dbq.ListSigningRequestsParams{AccountID: p.AccountID,
			State: in.State, CompanyID: in.CompanyID, AfterID: after, Lim: int32(in.Limit + 1)})
		if err != nil {
			return nil, err
		}
		out := make([]einvoicing.SigningRequest, 0, len(rows))
		for _, r := range rows {
			if p.AllowsCompany(r.CompanyID) {
				out = append(out, h.render(r))
			}
		}
		page := httpx.NewPage(out, in.Limit, func(r einvoicing.SigningRequest) string { return r.ID }, filter)
		return &signingRequestPage{Body: page}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "getSigningRequest", Method: http.MethodGet, Path: "/v1/signing-requests/{id}",
		Summary: "Get a signing request", Tags: []string{"Signing"},
	}, httpx.Spec{Auth: httpx.AuthAgent}, func(ctx context.Context, in *SignerAuth) (*signingRequestOutput, error) {
		who, err := h.authSigner(ctx, in.Authorization, true)
		if err != nil {
			return nil, err
		}
		r, _, err := h.loadForSigner(ctx, h.deps.DB.Reader(), who, in.ID)
		if err != nil {
			return nil, err
		}
		return &signingRequestOutput{Body: h.render(r)}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "claimSigningRequest", Method: http.MethodPost, Path: "/v1/signing-requests/{id}/claim",
		Summary: "Claim a signing request", Tags: []string{"Signing"},
		Description: "Marks the request as being signed by the caller. Claiming again by the same caller returns 200; " +
			"by anyone else 409 already_claimed. Idempotent by state, so no Idempotency-Key.",
	}, httpx.Spec{Auth: httpx.AuthAgent, NoIdempotency: true}, func(ctx context.Context, in *SignerAuth) (*signingRequestOutput, error) {
		return h.transition(ctx, in, func(ctx context.Context, tx *store.Tx, who signerIdentity, r dbq.SigningRequest, _ dbq.SigningCertificate) error {
			switch {
			case r.State == einvoicing.StateClaimed && r.ClaimedBy == who.id():
				return nil
			case r.State == einvoicing.StateClaimed:
				return conflict("already_claimed", "Another signer claimed this request.")
			case r.State != einvoicing.StatePending:
				return conflict(denar.ECodeConflict, "The request is "+r.State+".")
			}
			n, err := tx.ClaimSigningRequest(ctx, dbq.ClaimSigningRequestParams{ID: r.ID, ClaimedBy: who.id(), Now: tx.Now})
			if err == nil && n == 0 {
				return conflict("already_claimed", "Another signer claimed this request.")
			}
			return err
		})
	})

	httpx.Register(s, huma.Operation{
		OperationID: "submitSignature", Method: http.MethodPost, Path: "/v1/signing-requests/{id}/signature",
		Summary: "Submit the JWS of a signing request", Tags: []string{"Signing"},
		MaxBodyBytes: maxDocumentBody,
		Description: "Verifies RS256 over protectedHeader.payload with the registered certificate. 422 signature_invalid, " +
			"payload_mismatch or certificate_mismatch; 410 signature_expired after expiresAt (a new request is issued, " +
			"see replacedBy). Resubmitting the identical JWS of a signed request returns 200; any other is 409.",
	}, httpx.Spec{Auth: httpx.AuthAgent, NoIdempotency: true}, func(ctx context.Context, in *signatureInput) (*signingRequestOutput, error) {
		return h.transition(ctx, &in.SignerAuth, func(ctx context.Context, tx *store.Tx, who signerIdentity, r dbq.SigningRequest, c dbq.SigningCertificate) error {
			switch {
			case r.State == einvoicing.StateSigned && r.Jws == in.Body.JWS:
				return nil
			case r.State == einvoicing.StateClaimed && r.ClaimedBy != who.id():
				return conflict("already_claimed", "Another signer claimed this request.")
			case r.State != einvoicing.StatePending && r.State != einvoicing.StateClaimed:
				return conflict(denar.ECodeConflict, "The request is "+r.State+"; a request is signed at most once.")
			}
			cert, err := einvoicing.ParseStoredCert(c)
			if err != nil {
				return err
			}
			header, err1 := base64.RawURLEncoding.DecodeString(r.ProtectedHeader)
			payload, err2 := base64.RawURLEncoding.DecodeString(r.Payload)
			if err := errors.Join(err1, err2); err != nil {
				return err
			}
			if err := jwsverify.Verify(in.Body.JWS, header, payload, cert); err != nil {
				for _, sentinel := range []error{jwsverify.ErrPayloadMismatch, jwsverify.ErrCertificateMismatch, jwsverify.ErrSignatureInvalid} {
					if errors.Is(err, sentinel) {
						return httpx.NewProblem(sentinel.Error(), err.Error())
					}
				}
				return err
			}
			n, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: einvoicing.StateSigned, Jws: in.Body.JWS, Now: tx.Now})
			if err != nil {
				return err
			}
			if n == 0 {
				return conflict(denar.ECodeConflict, "The request was finished concurrently.")
			}
			if err := tx.CreateSigningEvent(ctx, dbq.CreateSigningEventParams{ID: denar.NewID("evt"), AccountID: r.AccountID,
				Type: "signing_request.signed", ObjectID: r.ID, CreatedAt: tx.Now}); err != nil {
				return err
			}
			if fn := einvoicing.SignedHandler(r.LinkType); fn != nil {
				r.State, r.Jws, r.UpdatedAt = einvoicing.StateSigned, in.Body.JWS, tx.Now
				return fn(ctx, tx, einvoicing.SigningRequestFrom(r))
			}
			return nil
		})
	})

	httpx.Register(s, huma.Operation{
		OperationID: "refuseSigningRequest", Method: http.MethodPost, Path: "/v1/signing-requests/{id}/refuse",
		Summary: "Refuse a signing request", Tags: []string{"Signing"},
	}, httpx.Spec{Auth: httpx.AuthAgent, NoIdempotency: true}, func(ctx context.Context, in *refuseInput) (*signingRequestOutput, error) {
		return h.transition(ctx, &in.SignerAuth, func(ctx context.Context, tx *store.Tx, who signerIdentity, r dbq.SigningRequest, _ dbq.SigningCertificate) error {
			switch {
			case r.State == einvoicing.StateRefused && r.RefusalReason == in.Body.Reason:
				return nil
			case r.State == einvoicing.StateClaimed && r.ClaimedBy != who.id():
				return conflict("already_claimed", "Another signer claimed this request.")
			case r.State != einvoicing.StatePending && r.State != einvoicing.StateClaimed:
				return conflict(denar.ECodeConflict, "The request is "+r.State+".")
			}
			_, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: einvoicing.StateRefused,
				RefusalReason: in.Body.Reason, RefusalMessage: in.Body.Message, Now: tx.Now})
			if err != nil {
				return err
			}
			return tx.CreateSigningEvent(ctx, dbq.CreateSigningEventParams{ID: denar.NewID("evt"), AccountID: r.AccountID,
				Type: "signing_request.refused", ObjectID: r.ID, CreatedAt: tx.Now})
		})
	})
}

// render shows a pending or claimed request past its expiry as expired even
// before anyone touched it.
func (h *handlers) render(r dbq.SigningRequest) einvoicing.SigningRequest {
	out := einvoicing.SigningRequestFrom(r)
	if (r.State == einvoicing.StatePending || r.State == einvoicing.StateClaimed) && !h.deps.DB.Now().Before(r.ExpiresAt) {
		out.State = einvoicing.StateExpired
	}
	return out
}

// loadForSigner returns the request and its certificate if who may see it:
// same account; an agent only for certificates it registered; a key only
// for companies it may act for. Anything else is 404, not 403, so ids do
// not leak across accounts.
func (h *handlers) loadForSigner(ctx context.Context, q *dbq.Queries, who signerIdentity, id string) (dbq.SigningRequest, dbq.SigningCertificate, error) {
	r, err := q.GetSigningRequest(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return r, dbq.SigningCertificate{}, notFound("Signing request " + id)
	}
	if err != nil {
		return r, dbq.SigningCertificate{}, err
	}
	c, err := q.GetSigningCertificate(ctx, r.CertificateID)
	if err != nil {
		return r, c, err
	}
	if r.AccountID != who.AccountID || (who.AgentID != "" && c.AgentID != who.AgentID) || !who.companies(r.CompanyID) {
		return r, c, notFound("Signing request " + id)
	}
	return r, c, nil
}

// transition authenticates, locks in a transaction, handles expiry (mark
// expired, issue a replacement, 410) and runs step; the answer is the
// request as it is afterwards.
func (h *handlers) transition(ctx context.Context, in *SignerAuth, step func(context.Context, *store.Tx, signerIdentity, dbq.SigningRequest, dbq.SigningCertificate) error) (*signingRequestOutput, error) {
	who, err := h.authSigner(ctx, in.Authorization, true)
	if err != nil {
		return nil, err
	}
	var out einvoicing.SigningRequest
	var gone *httpx.Problem
	err = h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		r, c, err := h.loadForSigner(ctx, tx.Queries, who, in.ID)
		if err != nil {
			return err
		}
		if (r.State == einvoicing.StatePending || r.State == einvoicing.StateClaimed) && !tx.Now.Before(r.ExpiresAt) {
			gone, err = h.expire(ctx, tx, r, c)
			return err
		}
		if err := step(ctx, tx, who, r, c); err != nil {
			return err
		}
		r, err = tx.GetSigningRequest(ctx, r.ID)
		out = einvoicing.SigningRequestFrom(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if gone != nil {
		return nil, gone
	}
	return &signingRequestOutput{Body: out}, nil
}

// expire marks r expired and issues its replacement with the company's
// current certificate (the old one if none is current).
func (h *handlers) expire(ctx context.Context, tx *store.Tx, r dbq.SigningRequest, c dbq.SigningCertificate) (*httpx.Problem, error) {
	cur, err := tx.CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: r.CompanyID, Now: tx.Now})
	if errors.Is(err, sql.ErrNoRows) {
		cur = c
	} else if err != nil {
		return nil, err
	}
	next, err := einvoicing.CreateRequest(ctx, tx, r.AccountID, cur, r.Purpose, r.Payload, einvoicing.SigningLink{Type: r.LinkType, ID: r.LinkID})
	if err != nil {
		return nil, err
	}
	if _, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: einvoicing.StateExpired, ReplacedBy: next.ID, Now: tx.Now}); err != nil {
		return nil, err
	}
	p := httpx.NewProblem("signature_expired", "The request expired at "+r.ExpiresAt.UTC().Format(time.RFC3339)+"; sign "+next.ID+" instead.")
	p.Extra = map[string]any{"replacedBy": next.ID}
	return p, nil
}
