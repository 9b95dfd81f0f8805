package einvoiceapi

// Signing agents and signing requests over HTTP: pairing, certificates,
// the long-poll, and the claim → signature | refusal operations. The
// state machine is the application layer's; this decodes and renders.

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/httpx"
)

const (
	maxWait      = 55
	longPollTick = 250 * time.Millisecond
)

type pairingCodeOutput struct {
	Body signing.PairingCode
}

type pairInput struct {
	Body struct {
		Code string `json:"code" minLength:"1" maxLength:"40" doc:"The pairing code, as typed (any case, dashes and spaces allowed)."`
		Name string `json:"name" minLength:"1" maxLength:"100" doc:"Shown in the dashboard, e.g. the host name."`
	}
}

type pairOutput struct {
	Body signing.AgentCredentials
}

// AgentPath is the path id of an agent operation.
type AgentPath struct {
	ID string `path:"id" maxLength:"100" doc:"The agent's id; must be the authenticated agent."`
}

type revokeAgentInput struct {
	ID string `path:"id" maxLength:"100" doc:"The agent's id (agt_…)."`
}

type agentOutput struct{ Body einvoicing.SigningAgent }

type certificateInput struct {
	AgentPath
	Body struct {
		CertificateDer string `json:"certificateDer" minLength:"1" maxLength:"65536" doc:"The X.509 certificate, DER, standard base64."`
		CompanyID      string `json:"companyId" minLength:"1" maxLength:"100" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company (cmp_…) the certificate signs for: one the agent may act for."`
		EUJPID         string `json:"eujpId,omitempty" maxLength:"64" doc:"The certificate holder's UJP user id (X-EUJP-ID on every call signed with it). Required for production companies; in the sandbox the service uses one of its own when omitted."`
	}
}

type certificateOutput struct{ Body signing.SigningCertificate }

type agentRequestsInput struct {
	AgentPath
	Wait  int `query:"wait" minimum:"0" maximum:"55" default:"25" doc:"Seconds to wait for a request when none is pending (long-poll)."`
	Limit int `query:"limit" minimum:"1" maximum:"100" default:"100" example:"100" doc:"The most requests answered at once (a batch: claim, sign and answer them with the batch operations)."`
}

type signingRequestList struct {
	Body struct {
		Data []einvoicing.SigningRequest `json:"data" doc:"The pending signing requests for this agent's companies (and those it claimed and has not finished), oldest first, at most limit; empty when the wait ended without one."`
	}
}

// agentOf checks that the authenticated agent is the one in the path;
// another agent's path is 404.
func agentOf(ctx context.Context, id string) (*auth.Principal, error) {
	p := httpx.PrincipalFrom(ctx)
	if p == nil || p.Kind != auth.KindAgent || p.CredentialID != id {
		return nil, denar.Errorf(denar.ECodeNotFound, "Agent %s not found.", id)
	}
	return p, nil
}

func (h *handlers) registerAgents(s *httpx.Service) {
	tags := []string{"Signing"}
	httpx.Register(s, huma.Operation{
		OperationID: "createAgentPairingCode", Method: http.MethodPost, Path: "/v1/agents/pairing-codes",
		Summary: "Create a pairing code for a signing agent", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Returns a single-use code valid for 10 minutes. Entered in `denar-agent pair`, it attaches the agent " +
			"to this credential's account and environment, with this credential's reach: an agent paired with a code of a " +
			"credential limited to some companies (an allow-listed key or OAuth client) may act for those companies only " +
			"(companyIds), for ever; a code of an unrestricted credential pairs an agent for every company of the account in " +
			"the environment. Nothing else can attach an agent. The code is shown once: an Idempotency-Key replay of this " +
			"answer is 409 secret_already_shown (create another code).",
	}, httpx.Spec{Scope: "companies:write"}, func(ctx context.Context, _ *struct{}) (*pairingCodeOutput, error) {
		pc, err := h.signing.CreatePairingCode(ctx, caller(ctx))
		if err != nil {
			return nil, err
		}
		return &pairingCodeOutput{Body: pc}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "pairAgent", Method: http.MethodPost, Path: "/v1/agents/pair",
		Summary: "Pair a signing agent", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Exchanges a pairing code for the agent's credentials and its companyIds (the code's reach). The code is " +
			"the authority: no credential is sent. An unknown, used or expired code is 422 pairing_code_invalid. The secret is " +
			"shown once and stored only as a hash: the Idempotency-Key is scoped to the body, and the same key and code again " +
			"answer 409 secret_already_shown (objectId names the agent paired) rather than the secret. An answer lost on the " +
			"way therefore means pairing again with a new code (and revoking the agent it created).",
	}, httpx.Spec{Auth: httpx.AuthNone}, func(ctx context.Context, in *pairInput) (*pairOutput, error) {
		c := einvoicing.Caller{Claim: httpx.ClaimFrom(ctx)}
		a, err := h.signing.PairAgent(ctx, c, signing.PairAgent{Code: in.Body.Code, Name: in.Body.Name})
		if err != nil {
			return nil, err
		}
		return &pairOutput{Body: a}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "revokeAgent", Method: http.MethodPost, Path: "/v1/agents/{id}/revoke",
		Summary: "Revoke a signing agent", Tags: tags,
		Description: "Revokes an agent of this credential's account and environment at once: its credentials answer 401 " +
			"key_revoked from then on, its certificates are no longer used for new signing requests, the requests it claimed " +
			"and did not finish go back to pending for another agent of the company, and its open WebSocket (closed with " +
			"1008 policy violation, reason \"agent revoked\") and long-poll (401 key_revoked) end within about a second, in " +
			"whichever server process holds them. An agent of another account is 404; of the other environment 403 " +
			"environment_mismatch. A credential limited to some companies may revoke only agents limited to companies of " +
			"its own list (403 company_not_allowed otherwise): an account-wide agent is revoked by an unrestricted key or " +
			"OAuth client. Revoking a revoked agent answers it unchanged. Pairing again needs a new pairing code.",
	}, httpx.Spec{Scope: "companies:write"}, func(ctx context.Context, in *revokeAgentInput) (*agentOutput, error) {
		a, err := h.signing.RevokeAgent(ctx, caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &agentOutput{Body: a}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "registerAgentCertificate", Method: http.MethodPost, Path: "/v1/agents/{id}/certificates",
		Summary: "Register the agent's signing certificate for a company", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Checks the certificate (valid now, RSA of at least 2048 bits; for a production company not self-signed, " +
			"else `422 self_signed_certificate`) and links it to a company of the agent's " +
			"account and environment within the agent's companyIds (a company outside them is 403 company_not_allowed at " +
			"companyId). From then on the agent receives the company's signing requests; several agents " +
			"of one company all receive them, and the first to claim a request signs it with its own certificate.",
	}, httpx.Spec{Auth: httpx.AuthAgent}, func(ctx context.Context, in *certificateInput) (*certificateOutput, error) {
		if _, err := agentOf(ctx, in.ID); err != nil {
			return nil, err
		}
		c, err := h.signing.RegisterCertificate(ctx, caller(ctx), signing.RegisterCertificate{CertificateDER: in.Body.CertificateDer,
			CompanyID: in.Body.CompanyID, EUJPID: in.Body.EUJPID})
		if err != nil {
			return nil, err
		}
		return &certificateOutput{Body: c}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "listAgentSigningRequests", Method: http.MethodGet, Path: "/v1/agents/{id}/signing-requests",
		Summary: "Signing requests for this agent (long-poll)", Tags: tags,
		Description: "Returns the pending requests of every company of the agent's companyIds it holds a valid certificate " +
			"for, and those it claimed and has not finished. With none, waits up to `wait` seconds for one. The same path with " +
			"`Upgrade: websocket` is the normal delivery: a WebSocket on which the server sends JSON text messages " +
			"`{\"type\":\"hello\",\"agentId\",\"serverTime\"}` first and then `{\"type\":\"signing_request\",\"request\":{SigningRequest}}` " +
			"for each pending request, once per connection, as they appear; claims and signatures stay on the REST " +
			"operations. Unknown message types are to be ignored. See docs/signing.md.",
	}, httpx.Spec{Auth: httpx.AuthAgent}, func(ctx context.Context, in *agentRequestsInput) (*signingRequestList, error) {
		p, err := agentOf(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		wait := min(max(in.Wait, 0), maxWait)
		deadline := time.Now().Add(time.Duration(wait) * time.Second)
		stopping := httpx.LongWait(ctx, time.Duration(wait)*time.Second)
		// A request committed for the agent's account, by this process or
		// (PostgreSQL) another, wakes the wait at once; the tick is the
		// fallback for a wake-up lost.
		wake, stopWake := h.svc.WatchSigningRequests(p.AccountID)
		defer stopWake()
		checked := time.Now()
		for {
			// A revocation, made by this process or another, ends the
			// wait within AgentRecheck.
			if time.Since(checked) >= signing.AgentRecheck {
				if err := h.signing.CheckAgent(ctx, p.CredentialID); err != nil {
					return nil, err
				}
				checked = time.Now()
			}
			rows, err := h.signing.PendingForAgent(ctx, p, in.Limit)
			if err != nil {
				return nil, err
			}
			if len(rows) > 0 || !time.Now().Before(deadline) {
				out := &signingRequestList{}
				out.Body.Data = rows
				return out, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-stopping: // the server is shutting down: answer with what there is
				deadline = time.Now()
			case <-wake:
			case <-time.After(longPollTick):
			}
		}
	})
}

// signing-request operations

type SigningRequestPath struct {
	ID string `path:"id" maxLength:"100" doc:"Signing request id (sgr_…)."`
}

type signingRequestOutput struct{ Body einvoicing.SigningRequest }

type signingRequestPage struct {
	Body httpx.Page[einvoicing.SigningRequest]
}

type listSigningInput struct {
	State     string `query:"state" enum:"pending,claimed,signed,refused,expired" doc:"Only requests in this state."`
	CompanyID string `query:"companyId" maxLength:"100" doc:"Only requests of this company."`
	Limit     int    `query:"limit" minimum:"1" maximum:"100" default:"20" example:"20" doc:"Page size, 1 to 100."`
	Cursor    string `query:"cursor" maxLength:"200" doc:"nextCursor of the previous page (with the same filters); absent for the first page."`
}

type signatureInput struct {
	SigningRequestPath
	Body struct {
		JWS string `json:"jws" minLength:"1" maxLength:"1000000" doc:"Compact JWS: protectedHeader.payload.signature, header and payload exactly as issued."`
	}
}

type refuseInput struct {
	SigningRequestPath
	Body struct {
		Reason  string  `json:"reason" enum:"user_declined,policy,token_missing,pin_locked,payload_invalid,unattended" doc:"token_missing, pin_locked and unattended (nobody was there to ask): the document keeps waiting and is asked for again after a while; the others fail it (signature_refused)."`
		Message *string `json:"message,omitempty" maxLength:"1000" nullable:"true" example:"Износот не одговара на нарачката" doc:"The signer's own words, shown to the issuer with the refusal."`
	}
}

func (h *handlers) registerSigningRequests(s *httpx.Service) {
	tags := []string{"Signing"}
	httpx.Register(s, huma.Operation{
		OperationID: "listSigningRequests", Method: http.MethodGet, Path: "/v1/signing-requests",
		Summary: "List signing requests", Tags: tags,
		Description: "Requests of the credential's account and environment within its allow-list, oldest first: for inline " +
			"signing (a key with signing:agent then submits the signature) and for following what waits for a signer. Needs " +
			"einvoices:read or signing:agent. companyId (or X-Company-Id) of a company of the other environment is 403 " +
			"environment_mismatch, outside the allow-list 403 company_not_allowed.",
	}, httpx.Spec{Scope: "einvoices:read", OrScope: "signing:agent", CompanyFilter: true}, func(ctx context.Context, in *listSigningInput) (*signingRequestPage, error) {
		companyID := in.CompanyID
		if h := httpx.CompanyFrom(ctx); h != "" {
			if companyID != "" && companyID != h {
				return nil, denar.Invalid(denar.FieldError{Path: "query.companyId", Message: "differs from X-Company-Id " + h})
			}
			companyID = h
		}
		filter := in.State + "|" + companyID
		after, err := httpx.DecodeCursor(in.Cursor, filter)
		if err != nil {
			return nil, err
		}
		out, err := h.signing.SigningRequests(ctx, httpx.PrincipalFrom(ctx), signing.SigningRequestFilter{State: in.State, CompanyID: companyID}, after, in.Limit)
		if err != nil {
			return nil, err
		}
		return &signingRequestPage{Body: httpx.NewPage(out, in.Limit, func(r einvoicing.SigningRequest) string { return r.ID }, filter)}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "getSigningRequest", Method: http.MethodGet, Path: "/v1/signing-requests/{id}",
		Summary: "Get a signing request", Tags: tags,
		Description: "One signing request: what to sign (docs/signing.md) and its state. A request of a company outside the " +
			"caller's reach (an agent's companyIds and certificates, a key's environment and allow-list) is 404, here and on " +
			"claim, signature and refusal.",
	}, httpx.Spec{Auth: httpx.AuthSigner, Scope: "signing:agent"}, func(ctx context.Context, in *SigningRequestPath) (*signingRequestOutput, error) {
		r, err := h.signing.SigningRequest(ctx, httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &signingRequestOutput{Body: r}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "claimSigningRequest", Method: http.MethodPost, Path: "/v1/signing-requests/{id}/claim",
		Summary: "Claim a signing request", Tags: tags,
		Description: "Marks the request as being signed by the caller and answers with it: sign the protectedHeader of this " +
			"answer, which carries the claimer's own certificate. Claiming again by the same caller returns 200; by anyone " +
			"else 409 already_claimed. After expiresAt: 410 signature_expired with replacedBy.",
	}, httpx.Spec{Auth: httpx.AuthSigner, Scope: "signing:agent"}, func(ctx context.Context, in *SigningRequestPath) (*signingRequestOutput, error) {
		r, err := h.signing.ClaimSigningRequest(ctx, caller(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &signingRequestOutput{Body: r}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "submitSignature", Method: http.MethodPost, Path: "/v1/signing-requests/{id}/signature",
		Summary: "Submit the JWS of a signing request", Tags: tags, MaxBodyBytes: maxDocumentBody,
		Description: "Verifies RS256 over protectedHeader.payload with the request's certificate. 422 signature_invalid, " +
			"payload_mismatch or certificate_mismatch; 410 signature_expired after expiresAt, whoever expired it (replacedBy " +
			"names the request issued in its place, or null when none was). Resubmitting the identical JWS of a signed request " +
			"returns 200; another is 409 signing_request_finished.",
	}, httpx.Spec{Auth: httpx.AuthSigner, Scope: "signing:agent"}, func(ctx context.Context, in *signatureInput) (*signingRequestOutput, error) {
		r, err := h.signing.SubmitSignature(ctx, caller(ctx), in.ID, in.Body.JWS)
		if err != nil {
			return nil, err
		}
		return &signingRequestOutput{Body: r}, nil
	})

	httpx.Register(s, huma.Operation{
		OperationID: "refuseSigningRequest", Method: http.MethodPost, Path: "/v1/signing-requests/{id}/refuse",
		Summary: "Refuse a signing request", Tags: tags,
		Description: "Records the refusal. For an e-invoice: token_missing, pin_locked and unattended keep it in awaiting_signature with the " +
			"refusal in problems and ask again after a backoff (einvoice.signature_required); user_declined, policy and " +
			"payload_invalid move it to failed with problem signature_refused (einvoice.failed).",
	}, httpx.Spec{Auth: httpx.AuthSigner, Scope: "signing:agent"}, func(ctx context.Context, in *refuseInput) (*signingRequestOutput, error) {
		msg := ""
		if in.Body.Message != nil {
			msg = *in.Body.Message
		}
		r, err := h.signing.RefuseSigningRequest(ctx, caller(ctx), in.ID, in.Body.Reason, msg)
		if err != nil {
			return nil, err
		}
		return &signingRequestOutput{Body: r}, nil
	})
}
