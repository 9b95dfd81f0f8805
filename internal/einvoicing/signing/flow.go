package signing

// A signer's answers to a signing request — claim, signature, refusal —
// each a guarded UPDATE (state IN pending, claimed) in one transaction
// with its idempotent response, the expiry of requests nobody answered in
// time (with an e-invoice's replacement), and the ask-again of a document
// whose signer refused for a passing reason. What a signature or a
// refusal sets off is the e-invoicing service's (AfterSigned, and the
// link's Failed of the signed-links registry).

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// isAgent reports whether p is a signing agent's credential.
func isAgent(p *auth.Principal) bool { return p.Kind == auth.KindAgent }

// SigningRequestFilter selects signing requests.
type SigningRequestFilter struct {
	State     string
	CompanyID string
}

// SigningRequests lists requests of the caller's account and environment
// (inline signing, or following what waits), oldest first after the id
// after, up to limit+1.
func (s *Service) SigningRequests(ctx context.Context, p *auth.Principal, f SigningRequestFilter, after string, limit int) ([]einvoicing.SigningRequest, error) {
	if f.CompanyID != "" {
		// 403 outside the account, the allow-list or the credential's
		// environment: never an empty list.
		if _, err := einvoicing.CompanyRef(ctx, s.db.Reader(), p, f.CompanyID); err != nil {
			return nil, err
		}
	}
	now := s.db.Now()
	sc := einvoicing.ScopeOf(p)
	rows, err := s.db.Reader().ListSigningRequests(ctx, dbq.ListSigningRequestsParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, State: f.State, CompanyID: f.CompanyID, AfterID: after, Lim: int32(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list signing requests: %w", err)
	}
	out := make([]einvoicing.SigningRequest, 0, len(rows))
	for _, r := range rows {
		out = append(out, signingRequestView(r, now))
	}
	return out, nil
}

// signingRequestView shows a pending or claimed request past its expiry as
// expired even before anyone touched it.
func signingRequestView(r dbq.SigningRequest, now time.Time) einvoicing.SigningRequest {
	out := einvoicing.SigningRequestFrom(r)
	if (r.State == einvoicing.StatePending || r.State == einvoicing.StateClaimed) && !now.Before(r.ExpiresAt) {
		out.State = einvoicing.StateExpired
	}
	return out
}

// SigningRequest returns one request the caller may sign.
func (s *Service) SigningRequest(ctx context.Context, p *auth.Principal, id string) (einvoicing.SigningRequest, error) {
	r, _, err := s.requestForSigner(ctx, s.db.Reader(), p, id, s.db.Now())
	if err != nil {
		return einvoicing.SigningRequest{}, err
	}
	return signingRequestView(r, s.db.Now()), nil
}

// requestForSigner returns the request and the certificate the caller
// signs it with, if the request is within the caller's reach (its
// account, environment and allow-list, in the query) and, for an agent,
// it holds a valid certificate of its own for the company. Anything else
// is 404 for every caller, not reach's 403: a signing request is the
// signer's resource, answered only to those who may sign it (its GET,
// claim, signature and refusal say so in the API's reference), and ids do
// not leak across accounts or scopes.
func (s *Service) requestForSigner(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string, now time.Time) (dbq.SigningRequest, dbq.SigningCertificate, error) {
	notFound := denar.Errorf(denar.ECodeNotFound, "Signing request %s not found.", id)
	sc := einvoicing.ScopeOf(p)
	r, err := q.GetSigningRequestInReach(ctx, dbq.GetSigningRequestInReachParams{ID: id, AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed})
	if errors.Is(err, sql.ErrNoRows) {
		return r, dbq.SigningCertificate{}, notFound
	}
	if err != nil {
		return r, dbq.SigningCertificate{}, fmt.Errorf("signing request %s: %w", id, err)
	}
	if isAgent(p) {
		c, err := q.AgentCertificate(ctx, dbq.AgentCertificateParams{AgentID: p.CredentialID, CompanyID: r.CompanyID, Now: now})
		if errors.Is(err, sql.ErrNoRows) {
			return r, c, notFound
		}
		if err != nil {
			return r, c, fmt.Errorf("certificate of agent %s: %w", p.CredentialID, err)
		}
		return r, c, nil
	}
	c, err := q.GetSigningCertificate(ctx, r.CertificateID)
	if err != nil {
		return r, c, fmt.Errorf("certificate of %s: %w", id, err)
	}
	return r, c, nil
}

// signerTransition runs step on request id for the caller, in one
// transaction that also stores the answer as the idempotent response. A
// request that is expired, however it came to be (its time ran out, or the
// expiry job ran), is answered 410 signature_expired with replacedBy; a
// request found past its time is expired first, in its own commit, so the
// replacement exists whoever arrives late.
func (s *Service) signerTransition(ctx context.Context, c einvoicing.Caller, id string, step signerStep) (einvoicing.SigningRequest, error) {
	ctx = context.WithoutCancel(ctx)
	for attempt := 0; ; attempt++ {
		r, _, err := s.requestForSigner(ctx, s.db.Reader(), c.Principal, id, s.db.Now())
		if err != nil {
			return einvoicing.SigningRequest{}, err
		}
		if r.State == einvoicing.StateExpired {
			return einvoicing.SigningRequest{}, s.expiredError(ctx, r)
		}
		if (r.State == einvoicing.StatePending || r.State == einvoicing.StateClaimed) && !s.db.Now().Before(r.ExpiresAt) {
			err := s.db.InTx(ctx, func(tx *store.Tx) error {
				cur, err := tx.GetSigningRequest(ctx, id)
				if err != nil {
					return err
				}
				if cur.State == einvoicing.StatePending || cur.State == einvoicing.StateClaimed {
					cur, err = s.expire(ctx, tx, cur)
				}
				r = cur
				return err
			})
			if errors.Is(err, errSignedMeanwhile) && attempt == 0 {
				continue
			}
			if err != nil {
				return einvoicing.SigningRequest{}, err
			}
			if r.State == einvoicing.StateExpired {
				return einvoicing.SigningRequest{}, s.expiredError(ctx, r)
			}
		}
		out, err := usecase.Write(ctx, s.db, c, func(tx *store.Tx) (einvoicing.SigningRequest, error) {
			r, cert, err := s.requestForSigner(ctx, tx.Queries, c.Principal, id, tx.Now)
			if err != nil {
				return einvoicing.SigningRequest{}, err
			}
			if r.State == einvoicing.StateExpired || ((r.State == einvoicing.StatePending || r.State == einvoicing.StateClaimed) && !tx.Now.Before(r.ExpiresAt)) {
				return einvoicing.SigningRequest{}, errExpiredMeanwhile
			}
			if err := step(tx, r, cert); err != nil {
				return einvoicing.SigningRequest{}, err
			}
			r, err = tx.GetSigningRequest(ctx, r.ID)
			if err != nil {
				return einvoicing.SigningRequest{}, err
			}
			return einvoicing.SigningRequestFrom(r), nil
		})
		if errors.Is(err, errExpiredMeanwhile) && attempt == 0 {
			continue
		}
		if errors.Is(err, errExpiredMeanwhile) {
			if cur, rerr := s.db.Reader().GetSigningRequest(ctx, id); rerr == nil {
				return einvoicing.SigningRequest{}, s.expiredError(ctx, cur)
			}
			return einvoicing.SigningRequest{}, denar.Errorf("signature_expired", "The request expired while it was being answered.")
		}
		return out, err
	}
}

var errExpiredMeanwhile = errors.New("expired meanwhile")

// expiredError is the 410 of a request that expired. replacedBy names the
// request to sign now: the chain of replacements is followed past those
// that expired in turn, and one found past its time is expired on the way
// (its replacement issued), as a late signature on it would, so the answer
// stays signable however late the signer comes.
func (s *Service) expiredError(ctx context.Context, r dbq.SigningRequest) error {
	current := r.ReplacedBy
	for hops := 0; current != "" && hops < 50; hops++ {
		next, err := s.db.Reader().GetSigningRequest(ctx, current)
		if err != nil {
			break
		}
		if (next.State == einvoicing.StatePending || next.State == einvoicing.StateClaimed) && !s.db.Now().Before(next.ExpiresAt) {
			err := s.db.InTx(ctx, func(tx *store.Tx) error {
				cur, err := tx.GetSigningRequest(ctx, next.ID)
				if err == nil && (cur.State == einvoicing.StatePending || cur.State == einvoicing.StateClaimed) {
					cur, err = s.expire(ctx, tx, cur)
				}
				next = cur
				return err
			})
			if err != nil && !errors.Is(err, errSignedMeanwhile) {
				s.log.WarnContext(ctx, "expire a replacement on the way", "request", current, "err", err)
				break
			}
		}
		if next.State != einvoicing.StateExpired || next.ReplacedBy == "" {
			break
		}
		current = next.ReplacedBy
	}
	return expiredProblem(r, current)
}

// expiredProblem is the 410 signature_expired of expired request r whose
// newest replacement is current ("" for none).
func expiredProblem(r dbq.SigningRequest, current string) error {
	detail := map[string]any{"replacedBy": nil}
	at := r.ExpiresAt.UTC().Format(time.RFC3339)
	msg := fmt.Sprintf("The request expired at %s; nothing was signed.", at)
	if current != "" {
		detail["replacedBy"] = current
		msg = fmt.Sprintf("The request expired at %s; sign %s instead.", at, current)
	}
	return &denar.Error{Code: "signature_expired", Message: msg, Detail: detail}
}

// ClaimSigningRequest marks the request as being signed by the caller.
// Claiming again by the same caller returns it; by anyone else 409
// already_claimed. An agent claims with its own certificate: the request's
// protected header is issued again for it, so whichever of a company's
// agents claims first signs.
func (s *Service) ClaimSigningRequest(ctx context.Context, c einvoicing.Caller, id string) (einvoicing.SigningRequest, error) {
	return s.signerTransition(ctx, c, id, s.claimStep(ctx, c))
}

// signerStep is one signer's answer to a request, applied inside the
// transaction that records it: r as read there, cert the certificate the
// caller signs it with.
type signerStep func(tx *store.Tx, r dbq.SigningRequest, cert dbq.SigningCertificate) error

// claimStep claims a request for c.
func (s *Service) claimStep(ctx context.Context, c einvoicing.Caller) signerStep {
	return func(tx *store.Tx, r dbq.SigningRequest, cert dbq.SigningCertificate) error {
		who := c.CredentialID
		switch {
		case r.State == einvoicing.StateClaimed && r.ClaimedBy == who:
			return nil
		case r.State == einvoicing.StateClaimed:
			return denar.Errorf("already_claimed", "Another signer claimed this request.")
		case r.State != einvoicing.StatePending:
			return denar.Errorf("signing_request_finished", "The request is %s.", r.State)
		}
		header := r.ProtectedHeader
		if cert.ID != r.CertificateID {
			parsed, err := einvoicing.ParseStoredCert(cert)
			if err != nil {
				return err
			}
			h, err := jwsverify.ProtectedHeader(parsed)
			if err != nil {
				return err
			}
			header = jwsverify.B64(h)
		}
		n, err := tx.ClaimSigningRequest(ctx, dbq.ClaimSigningRequestParams{ID: r.ID, ClaimedBy: who, CertificateID: cert.ID,
			ProtectedHeader: header, Now: tx.Now})
		if err == nil && n == 0 {
			return denar.Errorf("already_claimed", "Another signer claimed this request.")
		}
		return err
	}
}

// SubmitSignature verifies jws (RS256 over protectedHeader.payload with
// the request's certificate) and records it; what it was for moves on in
// the same transaction. Resubmitting the identical JWS of a signed request
// returns it.
func (s *Service) SubmitSignature(ctx context.Context, c einvoicing.Caller, id, jws string) (einvoicing.SigningRequest, error) {
	return s.signerTransition(ctx, c, id, s.signatureStep(ctx, c, jws))
}

// signatureStep verifies and records jws as c's signature of a request.
func (s *Service) signatureStep(ctx context.Context, c einvoicing.Caller, jws string) signerStep {
	return func(tx *store.Tx, r dbq.SigningRequest, _ dbq.SigningCertificate) error {
		if r.State == einvoicing.StateSigned && r.Jws == jws {
			return nil
		}
		if err := mayFinish(r, c, "; a request is signed at most once"); err != nil {
			return err
		}
		// The request's own certificate: the claimer's, or the company's
		// current one for a request signed without a claim.
		cert, err := tx.GetSigningCertificate(ctx, r.CertificateID)
		if err != nil {
			return fmt.Errorf("certificate of %s: %w", r.ID, err)
		}
		parsed, err := einvoicing.ParseStoredCert(cert)
		if err != nil {
			return err
		}
		header, err1 := base64.RawURLEncoding.DecodeString(r.ProtectedHeader)
		payload, err2 := base64.RawURLEncoding.DecodeString(r.Payload)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("stored request %s: %w", r.ID, err)
		}
		if err := jwsverify.Verify(jws, header, payload, parsed); err != nil {
			for _, sentinel := range []error{jwsverify.ErrPayloadMismatch, jwsverify.ErrCertificateMismatch, jwsverify.ErrSignatureInvalid} {
				if errors.Is(err, sentinel) {
					return &denar.Error{Code: sentinel.Error(), Message: err.Error(), Fields: []denar.FieldError{{Path: "jws", Message: err.Error()}}}
				}
			}
			return denar.Invalid(denar.FieldError{Path: "jws", Message: err.Error()})
		}
		if err := finish(ctx, tx, dbq.FinishSigningRequestParams{ID: r.ID, State: einvoicing.StateSigned, Jws: jws, Now: tx.Now}); err != nil {
			return err
		}
		r.State, r.Jws, r.UpdatedAt = einvoicing.StateSigned, jws, tx.Now
		return s.core.AfterSigned(ctx, tx, einvoicing.SigningRequestFrom(r))
	}
}

// RefuseSigningRequest records the agent's refusal. For an e-invoice's
// document: token_missing, pin_locked and unattended keep it in awaiting_signature with
// the refusal in problems, and a new request follows after the refusal
// backoff (with einvoice.signature_required); user_declined, policy and
// payload_invalid fail it with problem signature_refused
// (einvoice.failed).
func (s *Service) RefuseSigningRequest(ctx context.Context, c einvoicing.Caller, id, reason, message string) (einvoicing.SigningRequest, error) {
	if fe := badRefusalReason(reason); fe != nil {
		return einvoicing.SigningRequest{}, denar.Invalid(*fe)
	}
	return s.signerTransition(ctx, c, id, s.refusalStep(ctx, c, reason, message))
}

// mayFinish refuses c's answer to r unless r is pending or claimed by c:
// another signer's claim is already_claimed, a finished request
// signing_request_finished (its message ends with more).
func mayFinish(r dbq.SigningRequest, c einvoicing.Caller, more string) error {
	switch {
	case r.State == einvoicing.StateClaimed && r.ClaimedBy != c.CredentialID:
		return denar.Errorf("already_claimed", "Another signer claimed this request.")
	case r.State != einvoicing.StatePending && r.State != einvoicing.StateClaimed:
		return denar.Errorf("signing_request_finished", "The request is %s%s.", r.State, more)
	}
	return nil
}

// finish moves a request to its final state (p); one another answer
// finished first is signing_request_finished.
func finish(ctx context.Context, tx *store.Tx, p dbq.FinishSigningRequestParams) error {
	n, err := tx.FinishSigningRequest(ctx, p)
	if err == nil && n == 0 {
		return denar.Errorf("signing_request_finished", "The request was finished concurrently.")
	}
	return err
}

// badRefusalReason is the problem of reason at the field reason, nil when
// it is one of einvoicing.RefusalReasons. The message is a constant, as
// the dashboard's translations need (TestItemSteps checks it names the
// list).
func badRefusalReason(reason string) *denar.FieldError {
	if slices.Contains(einvoicing.RefusalReasons, reason) {
		return nil
	}
	return &denar.FieldError{Path: "reason", Message: "must be one of user_declined, policy, token_missing, pin_locked, payload_invalid, unattended"}
}

// refusalStep records c's refusal of a request and what it means for the
// object the request was for.
func (s *Service) refusalStep(ctx context.Context, c einvoicing.Caller, reason, message string) signerStep {
	return func(tx *store.Tx, r dbq.SigningRequest, _ dbq.SigningCertificate) error {
		if r.State == einvoicing.StateRefused && r.RefusalReason == reason {
			return nil
		}
		if err := mayFinish(r, c, ""); err != nil {
			return err
		}
		if err := finish(ctx, tx, dbq.FinishSigningRequestParams{ID: r.ID, State: einvoicing.StateRefused,
			RefusalReason: reason, RefusalMessage: message, Now: tx.Now}); err != nil {
			return err
		}
		if h, ok := s.core.Link(r.LinkType); ok && h.Failed != nil {
			return h.Failed(ctx, tx, r, false, reason, message)
		}
		return nil
	}
}

// askSignatureAgain is the worker of KindAskSignature.
func (s *Service) askSignatureAgain(ctx context.Context, _ *jobs.Job, a einvoicing.AskArgs) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		inv, err := tx.GetEInvoiceByID(ctx, a.EInvoiceID)
		if err != nil {
			return err
		}
		switch einvoice.Status(inv.Status) {
		case einvoice.AwaitingSignature, einvoice.Queued, einvoice.Held:
			// Queued and held documents wait on a fresh signature of the
			// same document (pipeline.go, resign).
		default:
			return nil // moved on
		}
		if inv.SigningRequestID.Valid {
			return nil // already asked (a certificate was registered meanwhile)
		}
		payload, err := einvoicing.RefreshedDocument(ctx, tx, inv)
		if err != nil {
			return err
		}
		_, err = s.core.AskDocumentSignature(ctx, tx, inv, payload)
		if errors.Is(err, einvoicing.ErrNoSigner) {
			s.log.WarnContext(ctx, "e-invoice waits for a signature but the company has no valid certificate", "einvoice", inv.ID)
			return nil
		}
		return err
	})
}

// expire marks r expired and, for what still needs the signature (an
// e-invoice's document), issues its replacement with the company's current
// certificate. Requests of UJP reads are not replaced: the poller and the
// PDF fetch ask afresh when they need one. A decision's request is not
// replaced either: the decision fails back to pending with a problem. It
// returns r as it is now.
func (s *Service) expire(ctx context.Context, tx *store.Tx, r dbq.SigningRequest) (dbq.SigningRequest, error) {
	replacement := ""
	if r.LinkType == einvoicing.LinkEInvoice {
		// Replaced unless its e-invoice moved on (failed, or waits on a
		// newer request).
		inv, err := tx.GetEInvoiceByID(ctx, r.LinkID)
		found := err == nil
		waits := errors.Is(err, sql.ErrNoRows) || (found && inv.SigningRequestID.Valid && inv.SigningRequestID.String == r.ID)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, err
		}
		cur, err := tx.CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: r.CompanyID, Now: tx.Now})
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// No valid certificate left: expire without a replacement;
			// registering one asks again.
		case err != nil:
			return r, err
		case waits:
			payload := r.Payload
			if found && r.Purpose == einvoicing.PurposeDocument {
				// The same document with a fresh requestTimestamp, so the
				// replacement, once signed, is still young enough for UJP.
				b, err := einvoicing.RefreshedDocument(ctx, tx, inv)
				if err != nil {
					return r, err
				}
				payload = jwsverify.B64(b)
			}
			summary, err := einvoicing.ReplacementSummary(ctx, tx, r)
			if err != nil {
				return r, err
			}
			next, err := einvoicing.CreateRequest(ctx, tx, r.AccountID, cur, r.Purpose, payload, einvoicing.SigningLink{Type: r.LinkType, ID: r.LinkID}, summary)
			if err != nil {
				return r, err
			}
			replacement = next.ID
		}
	}
	n, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: einvoicing.StateExpired, ReplacedBy: replacement, Now: tx.Now})
	if err != nil {
		return r, err
	}
	if n == 0 {
		return r, errSignedMeanwhile
	}
	if r.LinkType == einvoicing.LinkEInvoice {
		inv, err := tx.GetEInvoiceByID(ctx, r.LinkID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return r, err
		case replacement != "":
			if err := s.core.DocumentAsked(ctx, tx, inv.ID, replacement); err != nil {
				return r, err
			}
		case inv.SigningRequestID.String == r.ID:
			if err := tx.SetEInvoiceSigningRequest(ctx, dbq.SetEInvoiceSigningRequestParams{ID: inv.ID}); err != nil {
				return r, err
			}
		}
	}
	// What else the expiry means is the link's (a decision is not
	// replaced: it goes back to pending with a problem and
	// inbox.decision_failed, so nobody mistakes a decision nobody signs
	// for one on its way while the deadline runs out).
	if h, ok := s.core.Link(r.LinkType); ok && h.Failed != nil {
		if err := h.Failed(ctx, tx, r, true, "", ""); err != nil {
			return r, err
		}
	}
	r.State, r.ReplacedBy, r.UpdatedAt = einvoicing.StateExpired, replacement, tx.Now
	return r, nil
}

var errSignedMeanwhile = errors.New("signed meanwhile")

// expireSigning is the periodic job that expires every request past
// expiresAt that nobody answered, the same way a late signature does.
func (s *Service) expireSigning(ctx context.Context, _ *jobs.Job, _ expireSigningArgs) error {
	rows, err := s.db.Reader().ListExpiredSigningRequests(ctx, s.db.Now())
	if err != nil {
		return err
	}
	for _, r := range rows {
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := s.expire(ctx, tx, r)
			return err
		})
		if err != nil && !errors.Is(err, errSignedMeanwhile) {
			return fmt.Errorf("expire %s: %w", r.ID, err)
		}
	}
	return nil
}
