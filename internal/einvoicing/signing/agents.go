package signing

// Signing agents: pairing, agent credentials, certificate registration,
// what an agent is sent, and its connection state.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

const (
	pairingTTL     = 10 * time.Minute
	pairingAlpha   = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ" // no 0/O, 1/I: read aloud and typed
	pairingLen     = 10                                 // 50 bits, single use, 10 minutes
	agentSecretLen = 40
	// touchEvery bounds how often an agent's requests write last_seen_at:
	// well inside einvoicing.AgentOnlineTTL, so signerReady holds, without a write
	// per request.
	touchEvery = 15 * time.Second
)

// PairingCode is a single-use code that attaches an agent to an account.
type PairingCode struct {
	Object     string    `json:"object" enum:"agent_pairing_code" example:"agent_pairing_code" doc:"Always agent_pairing_code."`
	Code       string    `json:"code" example:"K7QM4TXPR2" doc:"Enter in denar-agent pair --code. Single use. Shown once: an Idempotency-Key replay of this answer is 409 secret_already_shown."`
	CompanyIDs []string  `json:"companyIds" doc:"The companies the agent paired with this code may act for: the creating credential's allow-list. Empty: every company of the account in the environment."`
	ExpiresAt  time.Time `json:"expiresAt" example:"2026-05-04T09:10:00Z" doc:"When the code stops working: 10 minutes after it was made."`
}

// CreatePairingCode returns a code valid for 10 minutes that attaches an
// agent to the caller's account and environment, with the caller's reach:
// the agent may act for the companies of the caller's allow-list only
// (every company when it has none).
func (s *Service) CreatePairingCode(ctx context.Context, c einvoicing.Caller) (PairingCode, error) {
	if c.Principal == nil || isAgent(c.Principal) {
		return PairingCode{}, auth.ErrUnauthenticated
	}
	code := newPairingCode()
	scope := agentScope(c.CompanyIDs)
	return usecase.WriteShownOnce(ctx, s.db, c, func(tx *store.Tx) (PairingCode, error) {
		if err := tx.CreatePairingCode(ctx, dbq.CreatePairingCodeParams{CodeHash: auth.Hash(code), AccountID: c.AccountID,
			Environment: c.Environment, CompanyIds: strings.Join(scope, " "), CreatedAt: tx.Now, ExpiresAt: tx.Now.Add(pairingTTL)}); err != nil {
			return PairingCode{}, fmt.Errorf("create pairing code: %w", err)
		}
		return PairingCode{Object: "agent_pairing_code", Code: code, CompanyIDs: scope, ExpiresAt: tx.Now.Add(pairingTTL).UTC()}, nil
	}, func(PairingCode) *denar.Error {
		return usecase.ShownOnce("agent_pairing_code", "", "The pairing code was in the first answer to this request and is not kept; create a new pairing code.")
	})
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

// AgentCredentials are an agent's credentials, shown once.
type AgentCredentials struct {
	Object      string   `json:"object" enum:"signing_agent" example:"signing_agent" doc:"Always signing_agent."`
	AgentID     string   `json:"agentId" example:"agt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"AGENT_ID, prefix agt_."`
	AgentSecret string   `json:"agentSecret" doc:"AGENT_SECRET. Shown once; stored only as a hash. An Idempotency-Key replay of this answer is 409 secret_already_shown: pair again with a new code."`
	Environment string   `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The environment the agent signs in: the pairing code's (sandbox or production)."`
	CompanyIDs  []string `json:"companyIds" doc:"The companies this agent may act for (the pairing code's); empty: every company of the account in the environment."`
}

// PairAgent is the command of POST /v1/agents/pair.
type PairAgent struct {
	Code string
	Name string
}

// PairAgent exchanges a pairing code for an agent's credentials. There is
// no principal: the code is the authority. c carries only the
// idempotency claim (its key scoped by the code). The secret is shown
// once: the same key and code again answer 409 secret_already_shown (the
// code is used up; a lost answer means pairing again with a new code).
// The agent inherits the code's company scope.
func (s *Service) PairAgent(ctx context.Context, c einvoicing.Caller, cmd PairAgent) (AgentCredentials, error) {
	name := strings.TrimSpace(cmd.Name)
	if name == "" {
		return AgentCredentials{}, denar.Invalid(denar.FieldError{Path: "name", Message: "is required"})
	}
	return usecase.WriteShownOnce(ctx, s.db, c, func(tx *store.Tx) (AgentCredentials, error) {
		pc, err := tx.UsePairingCode(ctx, dbq.UsePairingCodeParams{CodeHash: auth.Hash(normalizePairingCode(cmd.Code)), Now: sql.NullTime{Time: tx.Now, Valid: true}})
		if errors.Is(err, sql.ErrNoRows) {
			return AgentCredentials{}, &denar.Error{Code: "pairing_code_invalid", Message: "The pairing code is unknown, used or expired; create a new one.",
				Fields: []denar.FieldError{{Path: "code", Message: "unknown, used or expired"}}}
		}
		if err != nil {
			return AgentCredentials{}, fmt.Errorf("use pairing code: %w", err)
		}
		secret := auth.RandomToken(agentSecretLen)
		a, err := tx.CreateSigningAgent(ctx, dbq.CreateSigningAgentParams{ID: denar.NewID("agt"), AccountID: pc.AccountID,
			Environment: pc.Environment, Name: name, SecretHash: auth.Hash(secret), CompanyIds: pc.CompanyIds, CreatedAt: tx.Now})
		if err != nil {
			return AgentCredentials{}, fmt.Errorf("create agent: %w", err)
		}
		return AgentCredentials{Object: "signing_agent", AgentID: a.ID, AgentSecret: secret, Environment: a.Environment,
			CompanyIDs: strings.Fields(a.CompanyIds)}, nil
	}, func(v AgentCredentials) *denar.Error {
		return usecase.ShownOnce("signing_agent", v.AgentID, "Agent "+v.AgentID+" was paired by an earlier request with this Idempotency-Key and code; "+
			"its secret was shown once, in that answer, and is not kept. The code is used up: create a new pairing code and pair again "+
			"(and revoke "+v.AgentID+" if its credentials are lost).")
	})
}

// ErrAgentUnauthenticated answers a bad agent credential.
var ErrAgentUnauthenticated = denar.Errorf("unauthenticated", "Unknown agent or wrong secret. Send Authorization: Agent <AGENT_ID>.<AGENT_SECRET> as printed by denar-agent pair.")

// ErrAgentRevoked answers the right credentials of a revoked agent: the
// code of every revoked credential (key_revoked).
var ErrAgentRevoked = denar.Errorf("key_revoked", "This signing agent has been revoked. Pair the agent again with a new pairing code.")

// AgentRecheck is how often an agent's open WebSocket or long-poll looks
// at its credential again: a revocation made by any process sharing the
// store closes them within about this long.
const AgentRecheck = time.Second

// AuthenticateAgent checks the secret of agent id and returns its
// principal. It records that the agent is reachable (signerReady, and
// signing_agent.online after a silence).
func (s *Service) AuthenticateAgent(ctx context.Context, id, secret string) (*auth.Principal, error) {
	a, err := s.db.Reader().GetSigningAgent(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		// Hash anyway so unknown ids cost the same as wrong secrets.
		_ = auth.Hash(secret)
		return nil, ErrAgentUnauthenticated
	}
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", id, err)
	}
	if subtle.ConstantTimeCompare([]byte(a.SecretHash), []byte(auth.Hash(secret))) != 1 {
		return nil, ErrAgentUnauthenticated
	}
	if a.RevokedAt.Valid {
		return nil, ErrAgentRevoked
	}
	if !a.LastSeenAt.Valid || s.db.Now().Sub(a.LastSeenAt.Time) > touchEvery {
		if err := s.TouchAgent(context.WithoutCancel(ctx), a.ID); err != nil {
			return nil, err
		}
	}
	return &auth.Principal{AccountID: a.AccountID, CredentialID: a.ID, Kind: auth.KindAgent, Service: auth.ServiceEInvoice,
		Environment: a.Environment, CompanyIDs: strings.Fields(a.CompanyIds)}, nil
}

// TouchAgent records that agent id is reachable now; an agent unseen for
// einvoicing.AgentOnlineTTL went offline then (recorded late, with the time it went
// quiet) and is online again now.
func (s *Service) TouchAgent(ctx context.Context, id string) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetSigningAgent(ctx, id)
		if err != nil {
			return fmt.Errorf("agent %s: %w", id, err)
		}
		if a.RevokedAt.Valid {
			return ErrAgentRevoked
		}
		now := tx.Now
		if !a.LastSeenAt.Valid || now.Sub(a.LastSeenAt.Time) > einvoicing.AgentOnlineTTL {
			if a.LastSeenAt.Valid {
				if err := s.agentEvent(ctx, tx, a, webhooks.EventSigningAgentOff, a.LastSeenAt.Time.Add(einvoicing.AgentOnlineTTL), false); err != nil {
					return err
				}
			}
			if err := s.agentEvent(ctx, tx, a, webhooks.EventSigningAgentOnline, now, true); err != nil {
				return err
			}
		}
		return tx.TouchSigningAgent(ctx, dbq.TouchSigningAgentParams{ID: a.ID, Now: sql.NullTime{Time: now, Valid: true}})
	})
}

// AgentGone records that an agent's socket closed: signing_agent.offline
// now, and last_seen_at cleared so signerReady turns false at once and the
// next connection records online again.
func (s *Service) AgentGone(ctx context.Context, id string) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetSigningAgent(ctx, id)
		if err != nil {
			return fmt.Errorf("agent %s: %w", id, err)
		}
		if !a.LastSeenAt.Valid {
			return nil // already recorded offline
		}
		if err := s.agentEvent(ctx, tx, a, webhooks.EventSigningAgentOff, tx.Now, false); err != nil {
			return err
		}
		return tx.TouchSigningAgent(ctx, dbq.TouchSigningAgentParams{ID: a.ID, Now: sql.NullTime{}})
	})
}

// agentView is the public form of row a.
func agentView(a dbq.SigningAgent, now time.Time) einvoicing.SigningAgent {
	v := einvoicing.SigningAgent{ID: a.ID, Object: "signing_agent", Name: a.Name, Environment: a.Environment, CompanyIDs: strings.Fields(a.CompanyIds),
		LastSeenAt: store.TimeOrNil(a.LastSeenAt), CreatedAt: a.CreatedAt.UTC(), RevokedAt: store.TimeOrNil(a.RevokedAt)}
	v.Online = !a.RevokedAt.Valid && a.LastSeenAt.Valid && now.Sub(a.LastSeenAt.Time) <= einvoicing.AgentOnlineTTL
	return v
}

// CheckAgent reports whether agent id may still act: nil, or
// ErrAgentRevoked once it has been revoked (ErrAgentUnauthenticated for an
// agent that does not exist). The signing WebSocket and the long-poll call
// it every AgentRecheck.
func (s *Service) CheckAgent(ctx context.Context, id string) error {
	a, err := s.db.Reader().GetSigningAgent(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrAgentUnauthenticated
	}
	if err != nil {
		return fmt.Errorf("agent %s: %w", id, err)
	}
	if a.RevokedAt.Valid {
		return ErrAgentRevoked
	}
	return nil
}

// RevokeAgent revokes a signing agent of the caller's account and
// environment (POST /v1/agents/{id}/revoke). In one transaction: the agent
// can no longer authenticate, its certificates stop being used for new
// signing requests, the requests it claimed and did not finish go back to
// pending for another agent, and an agent that was online is recorded
// offline (signing_agent.offline). Its open WebSocket and long-poll end
// within AgentRecheck, in whichever process holds them. Revoking a revoked
// agent answers it as it is.
func (s *Service) RevokeAgent(ctx context.Context, c einvoicing.Caller, id string) (einvoicing.SigningAgent, error) {
	if c.Principal == nil || isAgent(c.Principal) {
		return einvoicing.SigningAgent{}, auth.ErrUnauthenticated
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (einvoicing.SigningAgent, error) {
		a, err := tx.GetSigningAgent(ctx, id)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && a.AccountID != c.AccountID) {
			return einvoicing.SigningAgent{}, denar.Errorf(denar.ECodeNotFound, "No signing agent %s in this account.", id)
		}
		if err != nil {
			return einvoicing.SigningAgent{}, fmt.Errorf("agent %s: %w", id, err)
		}
		// reach, with the allow-list applied to the agent's whole scope.
		if !scopeCovers(c.CompanyIDs, strings.Fields(a.CompanyIds)) {
			return einvoicing.SigningAgent{}, errAgentBeyondReach(a.ID)
		}
		if err := c.Principal.Reach("Agent "+a.ID, a.Environment); err != nil {
			return einvoicing.SigningAgent{}, err
		}
		return s.revokeAgentTx(ctx, tx, a)
	})
}

// errAgentAlreadyRevoked is AdminRevokeAgent's answer for an agent revoked
// before: a typo in an id is never silently accepted.
var errAgentAlreadyRevoked = errors.New("agent is already revoked")

// AdminRevokeAgent revokes agent id whatever its account (denar admin agent
// revoke), with the effects of RevokeAgent.
func (s *Service) AdminRevokeAgent(ctx context.Context, id string) (einvoicing.SigningAgent, error) {
	var out einvoicing.SigningAgent
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetSigningAgent(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no signing agent %q", id)
		}
		if err != nil {
			return fmt.Errorf("agent %s: %w", id, err)
		}
		if a.RevokedAt.Valid {
			return fmt.Errorf("signing agent %q: %w", id, errAgentAlreadyRevoked)
		}
		out, err = s.revokeAgentTx(ctx, tx, a)
		return err
	})
	return out, err
}

// revokeAgentTx is the revocation of agent a in tx.
func (s *Service) revokeAgentTx(ctx context.Context, tx *store.Tx, a dbq.SigningAgent) (einvoicing.SigningAgent, error) {
	if a.RevokedAt.Valid {
		return agentView(a, tx.Now), nil
	}
	if a.LastSeenAt.Valid && tx.Now.Sub(a.LastSeenAt.Time) <= einvoicing.AgentOnlineTTL {
		if err := s.agentEvent(ctx, tx, a, webhooks.EventSigningAgentOff, tx.Now, false); err != nil {
			return einvoicing.SigningAgent{}, err
		}
	}
	// The row as stored: a second answer (a replay, revoking again)
	// shows the same revokedAt as the first, at the store's precision.
	a, err := tx.RevokeSigningAgent(ctx, dbq.RevokeSigningAgentParams{ID: a.ID, Now: sql.NullTime{Time: tx.Now, Valid: true}})
	if err != nil {
		return einvoicing.SigningAgent{}, fmt.Errorf("revoke agent %s: %w", a.ID, err)
	}
	if _, err := tx.ReleaseAgentClaims(ctx, dbq.ReleaseAgentClaimsParams{AgentID: a.ID, Now: tx.Now}); err != nil {
		return einvoicing.SigningAgent{}, fmt.Errorf("release claims of %s: %w", a.ID, err)
	}
	return agentView(a, tx.Now), nil
}

// agentEvent writes an agent event for each company the agent holds a
// certificate for: connection state matters per company (signerReady).
func (s *Service) agentEvent(ctx context.Context, tx *store.Tx, a dbq.SigningAgent, typ string, at time.Time, online bool) error {
	companies, err := tx.AgentCompanies(ctx, a.ID)
	if err != nil {
		return fmt.Errorf("companies of agent %s: %w", a.ID, err)
	}
	view := einvoicing.SigningAgent{ID: a.ID, Object: "signing_agent", Name: a.Name, Environment: a.Environment, CompanyIDs: strings.Fields(a.CompanyIds),
		Online: online, CreatedAt: a.CreatedAt.UTC()}
	if online {
		t := at.UTC()
		view.LastSeenAt = &t
	} else if a.LastSeenAt.Valid {
		t := a.LastSeenAt.Time.UTC()
		view.LastSeenAt = &t
	}
	for _, co := range companies {
		if err := s.core.WriteEventAt(ctx, tx, a.AccountID, co, a.Environment, typ, a.ID, view, at); err != nil {
			return err
		}
	}
	return nil
}

// SigningCertificate is a certificate registered by an agent for a company.
type SigningCertificate struct {
	ID           string    `json:"id" example:"crt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"Prefix crt_."`
	Object       string    `json:"object" enum:"signing_certificate" example:"signing_certificate" doc:"Always signing_certificate."`
	AgentID      string    `json:"agentId" example:"agt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The agent that registered the certificate (agt_…)."`
	CompanyID    string    `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company the certificate signs for (cmp_…)."`
	SerialNumber string    `json:"serialNumber" doc:"The certificate's serial number, in decimal (sent to UJP as X-SERIAL-NUMBER in the format DENAR_UJP_SERIAL_FORMAT names)."`
	EUJPID       string    `json:"eujpId" doc:"The holder's UJP user id (X-EUJP-ID), from their e-UJP registration. A sandbox certificate registered without one, with the sandbox's simulator, gets denar-<certificate id>."`
	Subject      string    `json:"subject" example:"CN=Марија Николовска,O=Тест Продавач ДООЕЛ Скопје,C=MK" doc:"The certificate's subject distinguished name."`
	NotBefore    time.Time `json:"notBefore" example:"2026-01-01T00:00:00Z" doc:"Start of the certificate's validity."`
	NotAfter     time.Time `json:"notAfter" example:"2028-01-01T00:00:00Z" doc:"End of the certificate's validity: after it the company's signer is no longer ready."`
	CreatedAt    time.Time `json:"createdAt" example:"2026-05-04T09:04:00Z" doc:"When the certificate was registered."`
}

// RegisterCertificate is the command of POST /v1/agents/{id}/certificates.
type RegisterCertificate struct {
	CertificateDER string // standard base64
	CompanyID      string
	EUJPID         string
}

// codeSelfSignedCertificate is the code of a self-signed certificate
// registered for a production company.
const codeSelfSignedCertificate = "self_signed_certificate"

// RegisterCertificate checks a certificate (valid now, RSA of at least
// 2048 bits; for a production company, not self-signed) and links it to a
// company of the agent's account; the agent then receives that company's
// signing requests. UJP knows a signer by the EUJP id of their e-UJP
// registration, so it is required, except for a sandbox company whose UJP
// is the simulator: there one is made up, and the certificate is registered
// with the simulator, with every portal privilege, by a job.
func (s *Service) RegisterCertificate(ctx context.Context, c einvoicing.Caller, cmd RegisterCertificate) (SigningCertificate, error) {
	if !isAgent(c.Principal) {
		return SigningCertificate{}, auth.ErrUnauthenticated
	}
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cmd.CertificateDER))
	if err != nil {
		return SigningCertificate{}, denar.Invalid(denar.FieldError{Path: "certificateDer", Message: "not standard base64: " + err.Error()})
	}
	cert, err := jwsverify.CheckCertificate(der, s.db.Now())
	if err != nil {
		return SigningCertificate{}, denar.Invalid(denar.FieldError{Path: "certificateDer", Message: "cannot be used for signing: " + err.Error()})
	}
	if !c.AllowsCompany(cmd.CompanyID) {
		return SigningCertificate{}, errOutsideAgentScope(c.CredentialID, cmd.CompanyID)
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (SigningCertificate, error) {
		co, err := tx.GetAccountCompany(ctx, dbq.GetAccountCompanyParams{ID: cmd.CompanyID, AccountID: c.AccountID})
		if errors.Is(err, sql.ErrNoRows) {
			// A company named in a body answers as one the credential may
			// not act for (the one rule of reach): whether it exists in
			// another account is not told.
			return SigningCertificate{}, &denar.Error{Code: "company_not_allowed", Message: "The credential may not act for company " + cmd.CompanyID + ".",
				Fields: []denar.FieldError{{Path: "companyId", Message: "not a company this credential may act for"}}}
		}
		if err != nil {
			return SigningCertificate{}, fmt.Errorf("company %s: %w", cmd.CompanyID, err)
		}
		if co.Environment != c.Environment {
			return SigningCertificate{}, denar.Errorf("environment_mismatch", "Company %s belongs to %s; this agent was paired in %s.", co.ID, co.Environment, c.Environment)
		}
		if co.Environment == auth.EnvProduction && jwsverify.SelfSigned(cert) {
			return SigningCertificate{}, &denar.Error{Code: codeSelfSignedCertificate,
				Message: "Company " + co.ID + " is a production company: a self-signed certificate (such as the sandbox signer's) cannot sign for it; register the qualified certificate a certification authority issued.",
				Fields:  []denar.FieldError{{Path: "certificateDer", Message: "is self-signed"}}}
		}
		eujpID := strings.TrimSpace(cmd.EUJPID)
		simulated := co.Environment == auth.EnvSandbox && s.simulatedSandbox()
		if eujpID == "" && !simulated {
			return SigningCertificate{}, denar.Invalid(denar.FieldError{Path: "eujpId",
				Message: "is required: UJP identifies the signer by the EUJP id of their e-UJP registration (only the sandbox's simulator makes one up)"})
		}
		_, err = tx.AgentCertificate(ctx, dbq.AgentCertificateParams{AgentID: c.CredentialID, CompanyID: co.ID, Now: tx.Now})
		firstForCompany := errors.Is(err, sql.ErrNoRows)
		if err != nil && !firstForCompany {
			return SigningCertificate{}, err
		}
		row, err := tx.CreateSigningCertificate(ctx, dbq.CreateSigningCertificateParams{ID: denar.NewID("crt"), AgentID: c.CredentialID,
			CompanyID: co.ID, Der: base64.StdEncoding.EncodeToString(der), Serial: cert.SerialNumber.String(),
			Subject: cert.Subject.String(), NotBefore: cert.NotBefore, NotAfter: cert.NotAfter, CreatedAt: tx.Now})
		if err != nil {
			return SigningCertificate{}, fmt.Errorf("store certificate: %w", err)
		}
		if eujpID == "" {
			eujpID = "denar-" + row.ID
		}
		if err := tx.SetCertificateEUJPID(ctx, dbq.SetCertificateEUJPIDParams{ID: row.ID, EujpID: eujpID}); err != nil {
			return SigningCertificate{}, err
		}
		if simulated {
			// What UJP's portal does for a real signer, the sandbox's
			// simulator is told by a job: nothing fallible after commit.
			if err := enqueueSandboxSigner(ctx, tx, row.ID); err != nil {
				return SigningCertificate{}, err
			}
		}
		if firstForCompany {
			// The agent is talking to us now: for this company it has
			// just come online.
			a, err := tx.GetSigningAgent(ctx, c.CredentialID)
			if err != nil {
				return SigningCertificate{}, err
			}
			view := einvoicing.SigningAgent{ID: a.ID, Object: "signing_agent", Name: a.Name, Environment: a.Environment, CompanyIDs: strings.Fields(a.CompanyIds),
				Online: true, LastSeenAt: store.TimeOrNil(a.LastSeenAt), CreatedAt: a.CreatedAt.UTC()}
			if err := s.core.WriteEvent(ctx, tx, a.AccountID, co.ID, a.Environment, webhooks.EventSigningAgentOnline, a.ID, view); err != nil {
				return SigningCertificate{}, err
			}
		}
		// Documents that wait with no request open (none could be issued
		// without a certificate) are asked for now.
		waiting, err := tx.ListEInvoicesWithoutRequest(ctx, co.ID)
		if err != nil {
			return SigningCertificate{}, fmt.Errorf("documents waiting for %s: %w", co.ID, err)
		}
		for _, inv := range waiting {
			payload, err := einvoicing.RefreshedDocument(ctx, tx, inv)
			if err != nil {
				return SigningCertificate{}, err
			}
			if _, err := s.core.AskDocumentSignature(ctx, tx, inv, payload); err != nil {
				return SigningCertificate{}, err
			}
		}
		return SigningCertificate{ID: row.ID, Object: "signing_certificate", AgentID: row.AgentID, CompanyID: row.CompanyID,
			SerialNumber: row.Serial, EUJPID: eujpID, Subject: row.Subject, NotBefore: row.NotBefore.UTC(), NotAfter: row.NotAfter.UTC(),
			CreatedAt: row.CreatedAt.UTC()}, nil
	})
}

// PendingForAgent returns what agent p may sign now, oldest first, at
// most limit (1 to MaxSigningBatch): the pending requests of every company
// it holds a valid certificate for, and those it claimed and has not
// finished.
func (s *Service) PendingForAgent(ctx context.Context, p *auth.Principal, limit int) ([]einvoicing.SigningRequest, error) {
	if !isAgent(p) {
		return nil, auth.ErrUnauthenticated
	}
	limit = min(max(limit, 1), MaxSigningBatch)
	sc := einvoicing.ScopeOf(p)
	rows, err := s.db.Reader().ListAgentPendingRequests(ctx, dbq.ListAgentPendingRequestsParams{AgentID: p.CredentialID, Now: s.db.Now(),
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, Lim: int32(limit)})
	if err != nil {
		return nil, fmt.Errorf("pending requests of %s: %w", p.CredentialID, err)
	}
	out := make([]einvoicing.SigningRequest, 0, len(rows))
	for _, r := range rows {
		out = append(out, einvoicing.SigningRequestFrom(r))
	}
	return out, nil
}
