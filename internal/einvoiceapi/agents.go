package einvoiceapi

// Signing agents: pairing, agent authentication, certificate registration
// and delivery of signing requests by long-poll.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

const (
	pairingTTL     = 10 * time.Minute
	pairingAlpha   = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ" // no 0/O, 1/I: read aloud and typed
	pairingLen     = 10                                 // 50 bits, single use, 10 minutes
	defaultWait    = 25
	maxWait        = 55
	longPollTick   = 250 * time.Millisecond
	maxAgentName   = 100
	agentSecretLen = 40
)

// signerIdentity is who submits to a signing request: an agent, or an API
// key with scope signing:agent (inline signing).
type signerIdentity struct {
	AccountID   string
	Environment string
	AgentID     string // "" for an API key
	KeyID       string // "" for an agent
	companies   func(string) bool
}

func (s signerIdentity) id() string {
	if s.AgentID != "" {
		return s.AgentID
	}
	return s.KeyID
}

func unauthenticated(detail string) *httpx.Problem {
	return httpx.NewProblem("unauthenticated", detail)
}

func notFound(what string) *httpx.Problem {
	return httpx.NewProblem(denar.ECodeNotFound, what+" not found.")
}

// authSigner authenticates "Authorization: Agent <id>.<secret>" and, when
// allowKey, also "Bearer <API key>" carrying signing:agent.
func (h *handlers) authSigner(ctx context.Context, authz string, allowKey bool) (signerIdentity, error) {
	scheme, rest, _ := strings.Cut(authz, " ")
	if allowKey && strings.EqualFold(scheme, "Bearer") {
		p, err := h.deps.Auth.Authenticate(ctx, auth.ServiceEInvoice, strings.TrimSpace(rest))
		if err != nil {
			return signerIdentity{}, err
		}
		if !p.HasScope("signing:agent") {
			return signerIdentity{}, httpx.NewProblem("insufficient_scope", "Inline signing needs the scope signing:agent, which the credential does not carry.")
		}
		return signerIdentity{AccountID: p.AccountID, Environment: p.Environment, KeyID: p.CredentialID, companies: p.AllowsCompany}, nil
	}
	id, secret, err := jwsverify.ParseAgentAuthorization(authz)
	if err != nil {
		return signerIdentity{}, unauthenticated("Send Authorization: Agent <AGENT_ID>.<AGENT_SECRET> as printed by denar-agent pair.")
	}
	var out signerIdentity
	err = h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetSigningAgent(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			// Hash anyway so unknown ids cost the same as wrong secrets.
			_ = auth.Hash(secret)
			return unauthenticated("Unknown agent or wrong secret.")
		}
		if err != nil {
			return err
		}
		if subtle.ConstantTimeCompare([]byte(a.SecretHash), []byte(auth.Hash(secret))) != 1 || a.RevokedAt.Valid {
			return unauthenticated("Unknown agent or wrong secret.")
		}
		if err := h.markSeen(ctx, tx, a); err != nil {
			return err
		}
		out = signerIdentity{AccountID: a.AccountID, Environment: a.Environment, AgentID: a.ID, companies: func(string) bool { return true }}
		return nil
	})
	return out, err
}

// markSeen refreshes the agent's last_seen_at and records the transitions:
// an agent unseen for einvoicing.AgentOnlineTTL went offline then (recorded late, with
// the time it went quiet) and is online again now.
func (h *handlers) markSeen(ctx context.Context, tx *store.Tx, a dbq.SigningAgent) error {
	now := tx.Now
	if !a.LastSeenAt.Valid || now.Sub(a.LastSeenAt.Time) > einvoicing.AgentOnlineTTL {
		if a.LastSeenAt.Valid {
			if err := tx.CreateSigningEvent(ctx, dbq.CreateSigningEventParams{ID: denar.NewID("evt"), AccountID: a.AccountID,
				Type: "signing_agent.offline", ObjectID: a.ID, CreatedAt: a.LastSeenAt.Time.Add(einvoicing.AgentOnlineTTL)}); err != nil {
				return fmt.Errorf("record offline: %w", err)
			}
		}
		if err := tx.CreateSigningEvent(ctx, dbq.CreateSigningEventParams{ID: denar.NewID("evt"), AccountID: a.AccountID,
			Type: "signing_agent.online", ObjectID: a.ID, CreatedAt: now}); err != nil {
			return fmt.Errorf("record online: %w", err)
		}
	}
	return tx.TouchSigningAgent(ctx, dbq.TouchSigningAgentParams{ID: a.ID, Now: sql.NullTime{Time: now, Valid: true}})
}

func newPairingCode() string {
	var b strings.Builder
	max := big.NewInt(int64(len(pairingAlpha)))
	for range pairingLen {
		i, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("agents: random source failed: " + err.Error())
		}
		b.WriteByte(pairingAlpha[i.Int64()])
	}
	return b.String()
}

// normalizePairingCode accepts what a person types: any case, dashes, spaces.
func normalizePairingCode(s string) string {
	return strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(s))
}

type pairingCodeOutput struct {
	Body struct {
		Object    string    `json:"object" enum:"agent_pairing_code"`
		Code      string    `json:"code" doc:"Enter in denar-agent pair --code. Single use."`
		ExpiresAt time.Time `json:"expiresAt"`
	}
}

type pairInput struct {
	Body struct {
		Code string `json:"code" minLength:"1" maxLength:"40"`
		Name string `json:"name" minLength:"1" maxLength:"100" doc:"Shown in the dashboard, e.g. the host name."`
	}
}

type pairOutput struct {
	Body struct {
		Object      string `json:"object" enum:"signing_agent"`
		AgentID     string `json:"agentId" doc:"AGENT_ID, prefix agt_."`
		AgentSecret string `json:"agentSecret" doc:"AGENT_SECRET. Shown once; stored only as a hash."`
		Environment string `json:"environment" enum:"sandbox,production"`
	}
}

// AgentAuth is the credential and path id of an agent operation.
type AgentAuth struct {
	Authorization string `header:"Authorization" doc:"Agent <AGENT_ID>.<AGENT_SECRET>"`
	ID            string `path:"id" doc:"The agent's id; must be the authenticated agent."`
}

type certificateInput struct {
	AgentAuth
	Body struct {
		CertificateDer string `json:"certificateDer" doc:"The X.509 certificate, DER, standard base64."`
		CompanyID      string `json:"companyId"`
		EUJPID         string `json:"eujpId,omitempty" maxLength:"64" doc:"The certificate holder's UJP user id (X-EUJP-ID on every call signed with it). Required for production companies; in the sandbox the service uses one of its own when omitted."`
	}
}

// SigningCertificate is a certificate registered by an agent for a company.
type SigningCertificate struct {
	ID           string    `json:"id" doc:"Prefix crt_."`
	Object       string    `json:"object" enum:"signing_certificate"`
	AgentID      string    `json:"agentId"`
	CompanyID    string    `json:"companyId"`
	SerialNumber string    `json:"serialNumber" doc:"Decimal, as UJP's X-SERIAL-NUMBER."`
	EUJPID       string    `json:"eujpId" doc:"UJP user id of the holder; empty means the sandbox default."`
	Subject      string    `json:"subject"`
	NotBefore    time.Time `json:"notBefore"`
	NotAfter     time.Time `json:"notAfter"`
	CreatedAt    time.Time `json:"createdAt"`
}

type certificateOutput struct{ Body SigningCertificate }

type agentRequestsInput struct {
	AgentAuth
	Wait int `query:"wait" minimum:"0" maximum:"55" default:"25" doc:"Seconds to wait for a request when none is pending (long-poll)."`
}

type signingRequestList struct {
	Body struct {
		Data []einvoicing.SigningRequest `json:"data"`
	}
}

// registerSigning adds the agent and signing-request operations.
func (h *handlers) registerSigning(s *httpx.Service) {
	httpx.Register(s, huma.Operation{
		OperationID: "createAgentPairingCode", Method: http.MethodPost, Path: "/v1/agents/pairing-codes",
		Summary: "Create a pairing code for a signing agent", Tags: []string{"Signing"}, DefaultStatus: 201,
		Description: "Returns a single-use code valid for 10 minutes. Entered in `denar-agent pair`, it attaches the agent " +
			"to this key's account and environment; nothing else can attach an agent.",
	}, httpx.Spec{Scope: "companies:write"}, func(ctx context.Context, _ *struct{}) (*pairingCodeOutput, error) {
		p := httpx.PrincipalFrom(ctx)
		code := newPairingCode()
		out := &pairingCodeOutput{}
		err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
			out.Body.Object, out.Body.Code, out.Body.ExpiresAt = "agent_pairing_code", code, tx.Now.Add(pairingTTL).UTC()
			return tx.CreatePairingCode(ctx, dbq.CreatePairingCodeParams{CodeHash: auth.Hash(code), AccountID: p.AccountID,
				Environment: p.Environment, CreatedAt: tx.Now, ExpiresAt: tx.Now.Add(pairingTTL)})
		})
		return out, err
	})

	httpx.Register(s, huma.Operation{
		OperationID: "pairAgent", Method: http.MethodPost, Path: "/v1/agents/pair",
		Summary: "Pair a signing agent", Tags: []string{"Signing"}, DefaultStatus: 201,
		Description: "Exchanges a pairing code for the agent's credentials, returned once. The code is single use, " +
			"so the call is idempotent by nature and takes no Idempotency-Key.",
	}, httpx.Spec{Auth: httpx.AuthNone, NoIdempotency: true}, func(ctx context.Context, in *pairInput) (*pairOutput, error) {
		out := &pairOutput{}
		err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
			pc, err := tx.UsePairingCode(ctx, dbq.UsePairingCodeParams{CodeHash: auth.Hash(normalizePairingCode(in.Body.Code)), Now: sql.NullTime{Time: tx.Now, Valid: true}})
			if errors.Is(err, sql.ErrNoRows) {
				return httpx.NewProblem("pairing_code_invalid", "The pairing code is unknown, used or expired; create a new one.")
			}
			if err != nil {
				return err
			}
			secret := auth.RandomToken(agentSecretLen)
			a, err := tx.CreateSigningAgent(ctx, dbq.CreateSigningAgentParams{ID: denar.NewID("agt"), AccountID: pc.AccountID,
				Environment: pc.Environment, Name: strings.TrimSpace(in.Body.Name), SecretHash: auth.Hash(secret), CreatedAt: tx.Now})
			if err != nil {
				return err
			}
			out.Body.Object, out.Body.AgentID, out.Body.AgentSecret, out.Body.Environment = "signing_agent", a.ID, secret, a.Environment
			return nil
		})
		return out, err
	})

	httpx.Register(s, huma.Operation{
		OperationID: "registerAgentCertificate", Method: http.MethodPost, Path: "/v1/agents/{id}/certificates",
		Summary: "Register the agent's signing certificate for a company", Tags: []string{"Signing"}, DefaultStatus: 201,
		Description: "Checks the certificate (valid now, RSA of at least 2048 bits) and links it to a company of the agent's " +
			"account. New signing requests of that company carry it in x5c.",
	}, httpx.Spec{Auth: httpx.AuthAgent, NoIdempotency: true}, func(ctx context.Context, in *certificateInput) (*certificateOutput, error) {
		who, err := h.authAgentPath(ctx, in.AgentAuth)
		if err != nil {
			return nil, err
		}
		der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(in.Body.CertificateDer))
		if err != nil {
			return nil, denar.Invalid(denar.FieldError{Path: "certificateDer", Message: "not standard base64: " + err.Error()})
		}
		cert, err := jwsverify.CheckCertificate(der, h.deps.DB.Now())
		if err != nil {
			return nil, denar.Invalid(denar.FieldError{Path: "certificateDer", Message: "cannot be used for signing: " + err.Error()})
		}
		out := &certificateOutput{}
		err = h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
			c, err := tx.GetCompany(ctx, in.Body.CompanyID)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && c.AccountID != who.AccountID) {
				return notFound("Company " + in.Body.CompanyID)
			}
			if err != nil {
				return err
			}
			eujpID := strings.TrimSpace(in.Body.EUJPID)
			if eujpID == "" && c.Environment == auth.EnvProduction {
				return denar.Invalid(denar.FieldError{Path: "eujpId", Message: "is required for a production company: UJP identifies the signer by it"})
			}
			row, err := tx.CreateSigningCertificate(ctx, dbq.CreateSigningCertificateParams{ID: denar.NewID("crt"), AgentID: who.AgentID,
				CompanyID: c.ID, Der: base64.StdEncoding.EncodeToString(der), Serial: cert.SerialNumber.String(),
				Subject: cert.Subject.String(), NotBefore: cert.NotBefore, NotAfter: cert.NotAfter, CreatedAt: tx.Now})
			if err != nil {
				return err
			}
			if eujpID != "" {
				if err := tx.SetCertificateEUJPID(ctx, dbq.SetCertificateEUJPIDParams{ID: row.ID, EujpID: eujpID}); err != nil {
					return err
				}
			}
			out.Body = SigningCertificate{ID: row.ID, Object: "signing_certificate", AgentID: row.AgentID, CompanyID: row.CompanyID,
				SerialNumber: row.Serial, EUJPID: eujpID, Subject: row.Subject, NotBefore: row.NotBefore.UTC(), NotAfter: row.NotAfter.UTC(), CreatedAt: row.CreatedAt.UTC()}
			return nil
		})
		return out, err
	})

	httpx.Register(s, huma.Operation{
		OperationID: "listAgentSigningRequests", Method: http.MethodGet, Path: "/v1/agents/{id}/signing-requests",
		Summary: "Signing requests for this agent (long-poll)", Tags: []string{"Signing"},
		Description: "Returns the pending requests of companies whose certificate this agent registered, and those it " +
			"claimed and has not finished. With none, waits up to `wait` seconds for one. The same path with " +
			"`Upgrade: websocket` is the normal delivery: a WebSocket on which the server sends JSON text messages " +
			"`{\"type\":\"hello\",\"agentId\",\"serverTime\"}` first and then `{\"type\":\"signing_request\",\"request\":{SigningRequest}}` " +
			"for each pending request, once per connection, as they appear; claims and signatures stay on the REST " +
			"operations. Unknown message types are to be ignored. See docs/signing.md.",
	}, httpx.Spec{Auth: httpx.AuthAgent}, func(ctx context.Context, in *agentRequestsInput) (*signingRequestList, error) {
		who, err := h.authAgentPath(ctx, in.AgentAuth)
		if err != nil {
			return nil, err
		}
		wait := min(max(in.Wait, 0), maxWait)
		deadline := time.Now().Add(time.Duration(wait) * time.Second)
		stopping := httpx.LongWait(ctx, time.Duration(wait)*time.Second)
		for {
			rows, err := h.deps.DB.Reader().ListAgentPendingRequests(ctx, dbq.ListAgentPendingRequestsParams{AgentID: who.AgentID, Now: h.deps.DB.Now()})
			if err != nil {
				return nil, err
			}
			if len(rows) > 0 || !time.Now().Before(deadline) {
				out := &signingRequestList{}
				out.Body.Data = make([]einvoicing.SigningRequest, 0, len(rows))
				for _, r := range rows {
					out.Body.Data = append(out.Body.Data, einvoicing.SigningRequestFrom(r))
				}
				return out, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-stopping: // the server is shutting down: answer with what there is
				deadline = time.Now()
			case <-time.After(longPollTick):
			}
		}
	})

	h.registerSigningRequests(s)
}

// authAgentPath authenticates an agent and checks it is the one in the path.
func (h *handlers) authAgentPath(ctx context.Context, in AgentAuth) (signerIdentity, error) {
	who, err := h.authSigner(ctx, in.Authorization, false)
	if err != nil {
		return who, err
	}
	if who.AgentID != in.ID {
		return who, notFound("Agent " + in.ID)
	}
	return who, nil
}
