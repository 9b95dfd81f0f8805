package einvoiceapi

// Batches of signer answers over HTTP: claim, sign or refuse up to 100
// signing requests in one call, each item answered as the single
// operation would have answered it. The signing WebSocket carries the same
// three operations as messages (signing_ws.go).

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/httpx"
)

// maxSigningBatchBody is the body limit of a batch of signatures: 100
// JWS of documents, typically a few KiB each (one JWS may be up to
// 1,000,000 characters; a batch of such is sent in several calls).
const maxSigningBatchBody = 16 << 20

// Paths of the batch operations, which the WebSocket's messages name too.
const (
	pathClaims     = "/v1/signing-requests/claims"
	pathSignatures = "/v1/signing-requests/signatures"
	pathRefusals   = "/v1/signing-requests/refusals"
)

// SigningBatch is the answer of a batch operation.
type SigningBatch struct {
	Object string             `json:"object" enum:"list" example:"list" doc:"Always list."`
	Data   []SigningBatchItem `json:"data" doc:"One item per request of the batch, in the order the batch named them; for a claim by max, the requests claimed, oldest first."`
}

// SigningBatchItem is the outcome of one request of a batch.
type SigningBatchItem struct {
	Object  string                     `json:"object" enum:"signing_request_result" example:"signing_request_result" doc:"Always signing_request_result."`
	ID      string                     `json:"id" example:"sgr_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The signing request (sgr_…) this item answers."`
	Status  int                        `json:"status" example:"200" doc:"The HTTP status the single operation on this request would have answered: 200, or the status of error."`
	Request *einvoicing.SigningRequest `json:"request" doc:"The request as the single operation would have answered with it (for a claim: with the claimer's certificate in its protectedHeader); null when the item failed."`
	Error   *BatchItemProblem          `json:"error" doc:"The problem the single operation would have answered, null when the item succeeded: already_claimed (409), signing_request_finished (409), signature_invalid, payload_mismatch or certificate_mismatch (422), signature_expired (410, with replacedBy: the request to sign now, or null), not_found (404: outside the caller's reach, or no such request)."`
}

// BatchItemProblem is an RFC 9457 problem inside a batch's answer, with
// its extension members (replacedBy of signature_expired).
type BatchItemProblem struct {
	httpx.Problem
	_ struct{} `json:"-" additionalProperties:"true"`
}

// batchPresent turns a batch's outcomes into its answer, with each failed
// item's problem as the single operation would have sent it.
func batchPresent(ctx context.Context) signing.Present {
	return func(outs []signing.BatchOutcome) any {
		b := SigningBatch{Object: "list", Data: make([]SigningBatchItem, len(outs))}
		for i, o := range outs {
			item := SigningBatchItem{Object: "signing_request_result", ID: o.ID, Status: http.StatusOK}
			if o.Err != nil {
				p := httpx.ProblemOf(ctx, o.Err)
				item.Status, item.Error = p.Status, &BatchItemProblem{Problem: *p}
			} else {
				r := o.Request
				item.Request = &r
			}
			b.Data[i] = item
		}
		return b
	}
}

type signingBatchOutput struct{ Body SigningBatch }

// ClaimBatchBody is the body of a batch claim.
type ClaimBatchBody struct {
	IDs []string `json:"ids,omitempty" minItems:"1" maxItems:"100" doc:"The requests to claim (sgr_…), each answered in this order. Give ids or max."`
	Max *int     `json:"max,omitempty" minimum:"1" maximum:"100" example:"100" doc:"Claim up to this many of the requests waiting for the caller, oldest first: for an agent, what its long-poll and WebSocket deliver (including what it claimed and has not finished); for an API key, the pending requests of its account and environment within its allow-list. Give ids or max."`
}

type claimBatchInput struct{ Body ClaimBatchBody }

// SignatureBatchEntry is one signature of a batch.
type SignatureBatchEntry struct {
	ID  string `json:"id" minLength:"1" maxLength:"100" example:"sgr_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The signing request (sgr_…)."`
	JWS string `json:"jws" minLength:"1" maxLength:"1000000" doc:"Compact JWS of the request: protectedHeader.payload.signature, header and payload exactly as issued (as the claim answered them)."`
}

// SignatureBatchBody is the body of a batch of signatures.
type SignatureBatchBody struct {
	Items []SignatureBatchEntry `json:"items" minItems:"1" maxItems:"100" doc:"The signatures, one per request; a request named twice is refused (validation_failed)."`
}

type signatureBatchInput struct{ Body SignatureBatchBody }

// RefusalBatchEntry is one refusal of a batch.
type RefusalBatchEntry struct {
	ID      string  `json:"id" minLength:"1" maxLength:"100" example:"sgr_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The signing request (sgr_…)."`
	Reason  string  `json:"reason" enum:"user_declined,policy,token_missing,pin_locked,payload_invalid,unattended" example:"user_declined" doc:"As for a single refusal: token_missing, pin_locked and unattended keep the document waiting and ask again after a while; the others fail it (signature_refused)."`
	Message *string `json:"message,omitempty" maxLength:"1000" nullable:"true" example:"Износот не одговара на нарачката" doc:"The signer's own words, shown to the issuer with the refusal."`
}

// RefusalBatchBody is the body of a batch of refusals.
type RefusalBatchBody struct {
	Items []RefusalBatchEntry `json:"items" minItems:"1" maxItems:"100" doc:"The refusals, one per request; a request named twice is refused (validation_failed)."`
}

type refusalBatchInput struct{ Body RefusalBatchBody }

const batchSemantics = " Each item is answered as the single operation on that request would have been, in `data[]` with " +
	"its status and either the request or the problem: the batch answers 200 whatever its items' outcomes, and an item " +
	"that fails changes nothing while the others take effect. All items are applied in one transaction that also keeps " +
	"the answer for the Idempotency-Key, so a retry with the same key and body is answered item for item as the first " +
	"attempt. A body that is not a valid batch (no items, more than 100, a request named twice, an unknown reason) is " +
	"422 validation_failed and changes nothing. An agent acts only for its companies: a request of another company is " +
	"an item answered 404. See docs/signing.md, \"Batches\"."

func (h *handlers) registerSigningBatches(s *httpx.Service) {
	tags := []string{"Signing"}
	httpx.Register(s, huma.Operation{
		OperationID: "claimSigningRequests", Method: http.MethodPost, Path: pathClaims,
		Summary: "Claim signing requests (batch)", Tags: tags,
		Description: "Claims up to 100 signing requests for the caller in one call: those named in `ids`, or, with `max`, the " +
			"oldest of those waiting for it. Each claimed item's request carries the claimer's certificate in its " +
			"protectedHeader, as a single claim's answer does: sign that." + batchSemantics,
	}, httpx.Spec{Auth: httpx.AuthSigner, Scope: "signing:agent"}, func(ctx context.Context, in *claimBatchInput) (*signingBatchOutput, error) {
		var out any
		var err error
		switch {
		case len(in.Body.IDs) > 0 && in.Body.Max != nil:
			return nil, denar.Invalid(denar.FieldError{Path: "max", Message: "give ids (the requests to claim) or max (the most to claim of those waiting), not both"})
		case in.Body.Max != nil:
			out, err = h.signing.ClaimNextSigningRequests(ctx, caller(ctx), *in.Body.Max, batchPresent(ctx))
		case len(in.Body.IDs) > 0:
			out, err = h.signing.ClaimSigningRequests(ctx, caller(ctx), in.Body.IDs, batchPresent(ctx))
		default:
			return nil, denar.Invalid(denar.FieldError{Path: "ids", Message: "give ids (the requests to claim) or max (the most to claim of those waiting)"})
		}
		if err != nil {
			return nil, err
		}
		return &signingBatchOutput{Body: out.(SigningBatch)}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "submitSignatures", Method: http.MethodPost, Path: pathSignatures,
		Summary: "Submit the JWS of several signing requests (batch)", Tags: tags, MaxBodyBytes: maxSigningBatchBody,
		Description: "Verifies and records up to 100 signatures in one call, each as POST /v1/signing-requests/{id}/signature " +
			"would: a signature that fails verification (signature_invalid, payload_mismatch, certificate_mismatch) is that " +
			"item's problem, and the other documents are signed and move on." + batchSemantics,
	}, httpx.Spec{Auth: httpx.AuthSigner, Scope: "signing:agent"}, func(ctx context.Context, in *signatureBatchInput) (*signingBatchOutput, error) {
		items := make([]signing.SignatureItem, len(in.Body.Items))
		for i, it := range in.Body.Items {
			items[i] = signing.SignatureItem{ID: it.ID, JWS: it.JWS}
		}
		out, err := h.signing.SubmitSignatures(ctx, caller(ctx), items, batchPresent(ctx))
		if err != nil {
			return nil, err
		}
		return &signingBatchOutput{Body: out.(SigningBatch)}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "refuseSigningRequests", Method: http.MethodPost, Path: pathRefusals,
		Summary: "Refuse several signing requests (batch)", Tags: tags,
		Description: "Records up to 100 refusals in one call, each as POST /v1/signing-requests/{id}/refuse would (one reason " +
			"per item: a token that went missing halfway through a batch refuses only what it did not sign)." + batchSemantics,
	}, httpx.Spec{Auth: httpx.AuthSigner, Scope: "signing:agent"}, func(ctx context.Context, in *refusalBatchInput) (*signingBatchOutput, error) {
		items := make([]signing.RefusalItem, len(in.Body.Items))
		for i, it := range in.Body.Items {
			items[i] = signing.RefusalItem{ID: it.ID, Reason: it.Reason}
			if it.Message != nil {
				items[i].Message = *it.Message
			}
		}
		out, err := h.signing.RefuseSigningRequests(ctx, caller(ctx), items, batchPresent(ctx))
		if err != nil {
			return nil, err
		}
		return &signingBatchOutput{Body: out.(SigningBatch)}, nil
	})
}
