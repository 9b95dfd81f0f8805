package einvoicing

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/jwsverify"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// Refusal reasons an agent may give. token_missing and pin_locked are
// passing troubles of the device, and unattended says nobody was there to
// ask (an agent asked to ask a person who is not there): the document
// keeps waiting and a new request follows after the refusal backoff. The
// others are a decision: the document fails with problem
// signature_refused.
const (
	RefuseUserDeclined   = "user_declined"
	RefusePolicy         = "policy"
	RefuseTokenMissing   = "token_missing"
	RefusePINLocked      = "pin_locked"
	RefusePayloadInvalid = "payload_invalid"
	RefuseUnattended     = "unattended"
)

// RefusalReasons lists them.
var RefusalReasons = []string{RefuseUserDeclined, RefusePolicy, RefuseTokenMissing, RefusePINLocked, RefusePayloadInvalid, RefuseUnattended}

func transientRefusal(reason string) bool {
	return reason == RefuseTokenMissing || reason == RefusePINLocked || reason == RefuseUnattended
}

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
func (s *Service) SigningRequests(ctx context.Context, p *auth.Principal, f SigningRequestFilter, after string, limit int) ([]SigningRequest, error) {
	if f.CompanyID != "" {
		// 403 outside the account, the allow-list or the credential's
		// environment: never an empty list.
		if _, err := CompanyRef(ctx, s.db.Reader(), p, f.CompanyID); err != nil {
			return nil, err
		}
	}
	now := s.db.Now()
	sc := ScopeOf(p)
	rows, err := s.db.Reader().ListSigningRequests(ctx, dbq.ListSigningRequestsParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, State: f.State, CompanyID: f.CompanyID, AfterID: after, Lim: int32(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list signing requests: %w", err)
	}
	out := make([]SigningRequest, 0, len(rows))
	for _, r := range rows {
		out = append(out, signingRequestView(r, now))
	}
	return out, nil
}

// signingRequestView shows a pending or claimed request past its expiry as
// expired even before anyone touched it.
func signingRequestView(r dbq.SigningRequest, now time.Time) SigningRequest {
	out := SigningRequestFrom(r)
	if (r.State == StatePending || r.State == StateClaimed) && !now.Before(r.ExpiresAt) {
		out.State = StateExpired
	}
	return out
}

// SigningRequest returns one request the caller may sign.
func (s *Service) SigningRequest(ctx context.Context, p *auth.Principal, id string) (SigningRequest, error) {
	r, _, err := s.requestForSigner(ctx, s.db.Reader(), p, id, s.db.Now())
	if err != nil {
		return SigningRequest{}, err
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
	sc := ScopeOf(p)
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
func (s *Service) signerTransition(ctx context.Context, c Caller, id string, step signerStep) (SigningRequest, error) {
	ctx = context.WithoutCancel(ctx)
	for attempt := 0; ; attempt++ {
		r, _, err := s.requestForSigner(ctx, s.db.Reader(), c.Principal, id, s.db.Now())
		if err != nil {
			return SigningRequest{}, err
		}
		if r.State == StateExpired {
			return SigningRequest{}, s.expiredError(ctx, r)
		}
		if (r.State == StatePending || r.State == StateClaimed) && !s.db.Now().Before(r.ExpiresAt) {
			err := s.db.InTx(ctx, func(tx *store.Tx) error {
				cur, err := tx.GetSigningRequest(ctx, id)
				if err != nil {
					return err
				}
				if cur.State == StatePending || cur.State == StateClaimed {
					cur, err = s.expire(ctx, tx, cur)
				}
				r = cur
				return err
			})
			if errors.Is(err, errSignedMeanwhile) && attempt == 0 {
				continue
			}
			if err != nil {
				return SigningRequest{}, err
			}
			if r.State == StateExpired {
				return SigningRequest{}, s.expiredError(ctx, r)
			}
		}
		out, err := usecase.Write(ctx, s.db, c, func(tx *store.Tx) (SigningRequest, error) {
			r, cert, err := s.requestForSigner(ctx, tx.Queries, c.Principal, id, tx.Now)
			if err != nil {
				return SigningRequest{}, err
			}
			if r.State == StateExpired || ((r.State == StatePending || r.State == StateClaimed) && !tx.Now.Before(r.ExpiresAt)) {
				return SigningRequest{}, errExpiredMeanwhile
			}
			if err := step(tx, r, cert); err != nil {
				return SigningRequest{}, err
			}
			r, err = tx.GetSigningRequest(ctx, r.ID)
			if err != nil {
				return SigningRequest{}, err
			}
			return SigningRequestFrom(r), nil
		})
		if errors.Is(err, errExpiredMeanwhile) && attempt == 0 {
			continue
		}
		if errors.Is(err, errExpiredMeanwhile) {
			if cur, rerr := s.db.Reader().GetSigningRequest(ctx, id); rerr == nil {
				return SigningRequest{}, s.expiredError(ctx, cur)
			}
			return SigningRequest{}, denar.Errorf("signature_expired", "The request expired while it was being answered.")
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
		if (next.State == StatePending || next.State == StateClaimed) && !s.db.Now().Before(next.ExpiresAt) {
			err := s.db.InTx(ctx, func(tx *store.Tx) error {
				cur, err := tx.GetSigningRequest(ctx, next.ID)
				if err == nil && (cur.State == StatePending || cur.State == StateClaimed) {
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
		if next.State != StateExpired || next.ReplacedBy == "" {
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
func (s *Service) ClaimSigningRequest(ctx context.Context, c Caller, id string) (SigningRequest, error) {
	return s.signerTransition(ctx, c, id, s.claimStep(ctx, c))
}

// signerStep is one signer's answer to a request, applied inside the
// transaction that records it: r as read there, cert the certificate the
// caller signs it with.
type signerStep func(tx *store.Tx, r dbq.SigningRequest, cert dbq.SigningCertificate) error

// claimStep claims a request for c.
func (s *Service) claimStep(ctx context.Context, c Caller) signerStep {
	return func(tx *store.Tx, r dbq.SigningRequest, cert dbq.SigningCertificate) error {
		who := c.CredentialID
		switch {
		case r.State == StateClaimed && r.ClaimedBy == who:
			return nil
		case r.State == StateClaimed:
			return denar.Errorf("already_claimed", "Another signer claimed this request.")
		case r.State != StatePending:
			return denar.Errorf("signing_request_finished", "The request is %s.", r.State)
		}
		header := r.ProtectedHeader
		if cert.ID != r.CertificateID {
			parsed, err := ParseStoredCert(cert)
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
func (s *Service) SubmitSignature(ctx context.Context, c Caller, id, jws string) (SigningRequest, error) {
	return s.signerTransition(ctx, c, id, s.signatureStep(ctx, c, jws))
}

// signatureStep verifies and records jws as c's signature of a request.
func (s *Service) signatureStep(ctx context.Context, c Caller, jws string) signerStep {
	return func(tx *store.Tx, r dbq.SigningRequest, _ dbq.SigningCertificate) error {
		switch {
		case r.State == StateSigned && r.Jws == jws:
			return nil
		case r.State == StateClaimed && r.ClaimedBy != c.CredentialID:
			return denar.Errorf("already_claimed", "Another signer claimed this request.")
		case r.State != StatePending && r.State != StateClaimed:
			return denar.Errorf("signing_request_finished", "The request is %s; a request is signed at most once.", r.State)
		}
		// The request's own certificate: the claimer's, or the company's
		// current one for a request signed without a claim.
		cert, err := tx.GetSigningCertificate(ctx, r.CertificateID)
		if err != nil {
			return fmt.Errorf("certificate of %s: %w", r.ID, err)
		}
		parsed, err := ParseStoredCert(cert)
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
		n, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: StateSigned, Jws: jws, Now: tx.Now})
		if err != nil {
			return err
		}
		if n == 0 {
			return denar.Errorf("signing_request_finished", "The request was finished concurrently.")
		}
		r.State, r.Jws, r.UpdatedAt = StateSigned, jws, tx.Now
		return s.AfterSigned(ctx, tx, SigningRequestFrom(r))
	}
}

// RefuseSigningRequest records the agent's refusal. For an e-invoice's
// document: token_missing, pin_locked and unattended keep it in awaiting_signature with
// the refusal in problems, and a new request follows after the refusal
// backoff (with einvoice.signature_required); user_declined, policy and
// payload_invalid fail it with problem signature_refused
// (einvoice.failed).
func (s *Service) RefuseSigningRequest(ctx context.Context, c Caller, id, reason, message string) (SigningRequest, error) {
	if !contains(RefusalReasons, reason) {
		return SigningRequest{}, denar.Invalid(denar.FieldError{Path: "reason", Message: "must be one of user_declined, policy, token_missing, pin_locked, payload_invalid, unattended"})
	}
	return s.signerTransition(ctx, c, id, s.refusalStep(ctx, c, reason, message))
}

// refusalStep records c's refusal of a request and what it means for the
// object the request was for.
func (s *Service) refusalStep(ctx context.Context, c Caller, reason, message string) signerStep {
	return func(tx *store.Tx, r dbq.SigningRequest, _ dbq.SigningCertificate) error {
		switch {
		case r.State == StateRefused && r.RefusalReason == reason:
			return nil
		case r.State == StateClaimed && r.ClaimedBy != c.CredentialID:
			return denar.Errorf("already_claimed", "Another signer claimed this request.")
		case r.State != StatePending && r.State != StateClaimed:
			return denar.Errorf("signing_request_finished", "The request is %s.", r.State)
		}
		n, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: StateRefused,
			RefusalReason: reason, RefusalMessage: message, Now: tx.Now})
		if err != nil {
			return err
		}
		if n == 0 {
			return denar.Errorf("signing_request_finished", "The request was finished concurrently.")
		}
		if h, ok := s.link(r.LinkType); ok && h.Failed != nil {
			return h.Failed(ctx, tx, r, false, reason, message)
		}
		return nil
	}
}

// signatureProblem is the problems item of a refused signature.
func signatureProblem(r dbq.SigningRequest, reason, message string) ProblemItem {
	msg := "the signer refused (" + reason + ")"
	if message != "" {
		msg += ": " + message
	}
	return ProblemItem{Code: "signature_refused", Message: msg, Reason: reason, SigningRequestID: r.ID}
}

// documentRefused applies a refusal to the e-invoice the request was for.
func (s *Service) documentRefused(ctx context.Context, tx *store.Tx, r dbq.SigningRequest, reason, message string) error {
	inv, err := tx.GetEInvoiceByID(ctx, r.LinkID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("refused einvoice %s: %w", r.LinkID, err)
	}
	if !inv.SigningRequestID.Valid || inv.SigningRequestID.String != r.ID {
		return nil // an older request of the document; the current one decides
	}
	var items []ProblemItem
	_ = json.Unmarshal([]byte(inv.Problems), &items)
	items = append(items, signatureProblem(r, reason, message))
	problems, err := json.Marshal(items)
	if err != nil {
		return err
	}
	if !transientRefusal(reason) {
		_, err := s.MoveEInvoice(ctx, tx, inv, StatusMove{To: einvoice.Failed, Cause: "signature_refused", Problems: problems})
		return err
	}
	if err := tx.SetEInvoiceProblems(ctx, dbq.SetEInvoiceProblemsParams{ID: inv.ID, Problems: string(problems), UpdatedAt: tx.Now}); err != nil {
		return err
	}
	if err := tx.SetEInvoiceSigningRequest(ctx, dbq.SetEInvoiceSigningRequestParams{ID: inv.ID}); err != nil {
		return err
	}
	_, err = jobs.Insert(ctx, tx, askArgs{EInvoiceID: inv.ID}, jobs.InsertOpts{RunAt: tx.Now.Add(s.cfg.RefusalBackoff), MaxAttempts: 10})
	return err
}

// KindAskSignature asks again for the signature of a document whose signer
// refused for a passing reason.
const KindAskSignature = "einvoice.ask_signature"

type askArgs struct {
	EInvoiceID string `json:"einvoiceId"`
}

// askSignatureAgain is the worker of KindAskSignature.
func (s *Service) askSignatureAgain(ctx context.Context, _ *jobs.Job, a askArgs) error {
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
		payload, err := refreshedDocument(ctx, tx, inv)
		if err != nil {
			return err
		}
		_, err = s.askDocumentSignature(ctx, tx, inv, payload)
		if errors.Is(err, ErrNoSigner) {
			s.log.WarnContext(ctx, "e-invoice waits for a signature but the company has no valid certificate", "einvoice", inv.ID)
			return nil
		}
		return err
	})
}

// refreshedDocument gives the stored document a fresh requestTimestamp
// (UJP refuses one more than 5 minutes off) and stores it.
func refreshedDocument(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) ([]byte, error) {
	var req ujpdoc.Request
	if err := json.Unmarshal([]byte(inv.Document), &req); err != nil {
		return nil, fmt.Errorf("stored document of %s: %w", inv.ID, err)
	}
	req.RequestTimestamp = ujpdoc.FormatTimestamp(tx.Now)
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if err := tx.SetEInvoiceDocument(ctx, dbq.SetEInvoiceDocumentParams{ID: inv.ID, Document: string(b), UpdatedAt: tx.Now}); err != nil {
		return nil, err
	}
	return b, nil
}

// askDocumentSignature issues a document signing request for inv over
// payload, records it on the e-invoice and emits
// einvoice.signature_required, all in tx.
func (s *Service) askDocumentSignature(ctx context.Context, tx *store.Tx, inv dbq.Einvoice, payload []byte) (SigningRequest, error) {
	sr, err := RequestSignature(ctx, tx, inv.CompanyID, PurposeDocument, payload, SigningLink{Type: LinkEInvoice, ID: inv.ID})
	if err != nil {
		return sr, err
	}
	return sr, s.documentAsked(ctx, tx, inv.ID, sr.ID)
}

// documentAsked records that e-invoice id waits on request sr and says so.
func (s *Service) documentAsked(ctx context.Context, tx *store.Tx, id, sr string) error {
	if err := tx.SetEInvoiceSigningRequest(ctx, dbq.SetEInvoiceSigningRequestParams{ID: id, SigningRequestID: sql.NullString{String: sr, Valid: true}}); err != nil {
		return fmt.Errorf("signing request of %s: %w", id, err)
	}
	inv, err := tx.GetEInvoiceByID(ctx, id)
	if err != nil {
		return err
	}
	return s.EInvoiceEvent(ctx, tx, inv, webhooks.EventSignatureRequired)
}

// expire marks r expired and, for what still needs the signature (an
// e-invoice's document), issues its replacement with the company's current
// certificate. Requests of UJP reads are not replaced: the poller and the
// PDF fetch ask afresh when they need one. A decision's request is not
// replaced either: the decision fails back to pending with a problem. It
// returns r as it is now.
func (s *Service) expire(ctx context.Context, tx *store.Tx, r dbq.SigningRequest) (dbq.SigningRequest, error) {
	replacement := ""
	if r.LinkType == LinkEInvoice {
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
			if found && r.Purpose == PurposeDocument {
				// The same document with a fresh requestTimestamp, so the
				// replacement, once signed, is still young enough for UJP.
				b, err := refreshedDocument(ctx, tx, inv)
				if err != nil {
					return r, err
				}
				payload = jwsverify.B64(b)
			}
			summary, err := replacementSummary(ctx, tx, r)
			if err != nil {
				return r, err
			}
			next, err := CreateRequest(ctx, tx, r.AccountID, cur, r.Purpose, payload, SigningLink{Type: r.LinkType, ID: r.LinkID}, summary)
			if err != nil {
				return r, err
			}
			replacement = next.ID
		}
	}
	n, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: r.ID, State: StateExpired, ReplacedBy: replacement, Now: tx.Now})
	if err != nil {
		return r, err
	}
	if n == 0 {
		return r, errSignedMeanwhile
	}
	if r.LinkType == LinkEInvoice {
		inv, err := tx.GetEInvoiceByID(ctx, r.LinkID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return r, err
		case replacement != "":
			if err := s.documentAsked(ctx, tx, inv.ID, replacement); err != nil {
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
	if h, ok := s.link(r.LinkType); ok && h.Failed != nil {
		if err := h.Failed(ctx, tx, r, true, "", ""); err != nil {
			return r, err
		}
	}
	r.State, r.ReplacedBy, r.UpdatedAt = StateExpired, replacement, tx.Now
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
