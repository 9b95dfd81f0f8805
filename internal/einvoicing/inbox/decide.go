package inbox

// The company's decision on an incoming e-invoice. POST accept/reject
// creates a signing request of purpose decision over UJP's accept-reject
// payload; the decision reaches UJP only once the company's device signed
// it (a job sends it, through the signer's UJP slot), and the document
// moves to accepted or rejected when UJP confirms. Every way a decision can
// fail — a refused or expired signature, UJP's refusal (E1016: no longer
// NEW), the deadline passing while it waits — puts the document back to a
// plain pending decision with a problem and an inbox.decision_failed event;
// nothing is left silently waiting.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/usecase"
)

// DecideInbox is the command of POST /v1/inbox/{id}/accept and /reject.
type DecideInbox struct {
	CompanyID  string
	ID         string
	Accept     bool
	ReasonCode string  // reject only: O-1…O-7, either spelling of О-6/О-7
	Comment    *string // free text, up to 500 characters (required with О-7)
}

// DecideInbox asks the company's signer to sign the decision and answers
// the document in its pending-decision form (decision.state pending,
// decision.requested accept or reject, the signing request). Refused with
// 409 decision_deadline_passed after decideBy (Skopje) or once UJP
// reported 04, 409 inbox_state_conflict when the document is decided, has
// a decision on its way, or is no longer 01 at UJP (voided or corrected by
// its seller), 422 for a reject reason outside UJP's list, 409
// signer_not_ready without a valid certificate.
func (s *Service) DecideInbox(ctx context.Context, c einvoicing.Caller, cmd DecideInbox) (einvoicing.InboxDocument, error) {
	co, err := einvoicing.ActingCompany(ctx, s.db.Reader(), c.Principal, cmd.CompanyID)
	if err != nil {
		return einvoicing.InboxDocument{}, err
	}
	cb := s.core.CodeLists(co.Environment)
	return retryInbox(func() (einvoicing.InboxDocument, error) {
		return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (einvoicing.InboxDocument, error) {
			d, err := inboxRow(ctx, tx.Queries, c.Principal, cmd.CompanyID, cmd.ID)
			if err != nil {
				return einvoicing.InboxDocument{}, err
			}
			if err := decidable(d, tx.Now); err != nil {
				return einvoicing.InboxDocument{}, err
			}
			req := ujp.AcceptRejectRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), EUID: d.Euid, IsAccepted: cmd.Accept, Comment: cmd.Comment}
			next := d
			next.DecisionRequested, next.DecisionReason = decisionAccept, sql.NullString{}
			if cmd.Accept {
				err = einvoice.Acceptance(cmd.Comment)
			} else {
				var code string
				code, err = einvoice.Rejection(cmd.ReasonCode, cmd.Comment, cb)
				req.RejectReasonCode = &code
				next.DecisionRequested, next.DecisionReason = decisionReject, sql.NullString{String: code, Valid: true}
			}
			if err != nil {
				return einvoicing.InboxDocument{}, err
			}
			if req.Comment != nil && strings.TrimSpace(*req.Comment) == "" {
				req.Comment = nil
			}
			next.DecisionComment = sql.NullString{}
			if req.Comment != nil {
				next.DecisionComment = sql.NullString{String: *req.Comment, Valid: true}
			}
			sr, err := askDecisionSignature(ctx, tx, d, req)
			if err != nil {
				return einvoicing.InboxDocument{}, err
			}
			next.SigningRequestID = sql.NullString{String: sr.ID, Valid: true}
			next.Problems = "[]"
			saved, err := saveInbox(ctx, tx, next)
			if err != nil {
				return einvoicing.InboxDocument{}, err
			}
			if err := s.inboxEvent(ctx, tx, saved, webhooks.EventInboxSignatureRequired); err != nil {
				return einvoicing.InboxDocument{}, err
			}
			return inboxView(saved, tx.Now), nil
		})
	})
}

// decidable says why d cannot be decided at now, or nil.
func decidable(d dbq.InboxDocument, now time.Time) error {
	by, err := time.Parse(time.DateOnly, d.DecideBy)
	if err != nil {
		return fmt.Errorf("inbox document %s: deadline %q: %w", d.ID, d.DecideBy, err)
	}
	passed := func(why string) error {
		return &denar.Error{Code: "decision_deadline_passed", Message: fmt.Sprintf("The decision deadline of %s was %s (Europe/Skopje, inclusive); %s.", d.ID, d.DecideBy, why),
			Detail: map[string]any{"decideBy": d.DecideBy}}
	}
	switch {
	case d.DecisionState == einvoice.DecisionAccepted || d.DecisionState == einvoice.DecisionRejected:
		return denar.Errorf("inbox_state_conflict", "%s is already %s.", d.ID, d.DecisionState)
	case d.DecisionState == einvoice.DecisionAutoAccepted || d.UjpStatus == ujp.StatusAutoAccepted:
		return passed("the document is auto-accepted")
	case einvoice.DeadlinePassed(now, by):
		return passed("it can no longer be accepted or rejected")
	case d.DecisionRequested != "":
		return denar.Errorf("inbox_state_conflict", "A decision (%s) of %s is already on its way, waiting on signing request %s.", d.DecisionRequested, d.ID, d.SigningRequestID.String)
	case d.UjpStatus != ujp.StatusSent:
		return denar.Errorf("inbox_state_conflict", "UJP reports %s as %s (%s); only a document in 01 can be accepted or rejected.", d.ID, d.UjpStatus, d.UjpStatusName)
	}
	return nil
}

// askDecisionSignature issues the signing request of a decision (purpose
// decision) over UJP's accept-reject payload.
func askDecisionSignature(ctx context.Context, tx *store.Tx, d dbq.InboxDocument, req ujp.AcceptRejectRequest) (einvoicing.SigningRequest, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return einvoicing.SigningRequest{}, err
	}
	return einvoicing.RequestSignature(ctx, tx, d.CompanyID, einvoicing.PurposeDecision, payload, einvoicing.SigningLink{Type: einvoicing.LinkInboxDecision, ID: d.ID})
}

// inboxProblem is an item of an inbox document's problems: why a decision
// did not reach UJP (httpx.Codes, "inbox_document.problems"). UJP's own
// codes appear there too, unrenamed.
type inboxProblem einvoicing.ProblemItem

// ujpNotNew is UJP's refusal of a decision on a document no longer in
// status 01 (NEW).
func ujpNotNew() string { return "E1016" }

// failDecision puts d back to a plain pending decision (or leaves the
// decision UJP reported) with the problem, and emits inbox.decision_failed.
func (s *Service) failDecision(ctx context.Context, tx *store.Tx, d dbq.InboxDocument, p inboxProblem) (dbq.InboxDocument, error) {
	var items []einvoicing.ProblemItem
	_ = json.Unmarshal([]byte(d.Problems), &items)
	items = append(items, einvoicing.ProblemItem(p))
	b, err := json.Marshal(items)
	if err != nil {
		return d, err
	}
	next := d
	next.Problems = string(b)
	next.DecisionRequested, next.SigningRequestID = "", sql.NullString{}
	if next.DecisionState == einvoice.DecisionPending {
		next.DecisionReason, next.DecisionComment = sql.NullString{}, sql.NullString{}
	}
	saved, err := saveInbox(ctx, tx, next)
	if err != nil {
		return d, err
	}
	return saved, s.inboxEvent(ctx, tx, saved, webhooks.EventInboxDecisionFailed)
}

// decisionSignatureFailed applies a refused or expired signature of a
// decision (or of the status read that checks one) to its document. It
// runs in the transaction that finishes the request; a concurrent change
// of the document is read again in it (PostgreSQL's read committed sees
// it; SQLite has one writer).
func (s *Service) decisionSignatureFailed(ctx context.Context, tx *store.Tx, r dbq.SigningRequest, expired bool, reason, message string) error {
	_, err := retryInbox(func() (struct{}, error) {
		return struct{}{}, s.decisionSignatureFailedOnce(ctx, tx, r, expired, reason, message)
	})
	return err
}

func (s *Service) decisionSignatureFailedOnce(ctx context.Context, tx *store.Tx, r dbq.SigningRequest, expired bool, reason, message string) error {
	d, err := tx.GetInboxDocument(ctx, r.LinkID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("inbox document %s: %w", r.LinkID, err)
	}
	if !d.SigningRequestID.Valid || d.SigningRequestID.String != r.ID || d.DecisionRequested == "" {
		return nil // an older request of the document; the current one decides
	}
	var p inboxProblem
	switch {
	case r.LinkType == einvoicing.LinkInboxStatus:
		p = inboxProblem{Code: ujpNotNew(), Message: "UJP refused the decision (not in status NEW) and the read of its current status was not signed; the decision was not made"}
	case expired:
		p = inboxProblem{Code: "decision_expired", Message: fmt.Sprintf("the %s decision was not signed before its signing request expired; nothing reached UJP — decide again", d.DecisionRequested)}
	default:
		msg := fmt.Sprintf("the signer refused the %s decision (%s)", d.DecisionRequested, reason)
		if message != "" {
			msg += ": " + message
		}
		p = inboxProblem{Code: "decision_refused", Message: msg + "; nothing reached UJP — decide again", Reason: reason}
	}
	p.SigningRequestID = r.ID
	_, err = s.failDecision(ctx, tx, d, p)
	return err
}

// sendDecision is the query job's work for a signed decision: it sends the
// decision to UJP and records what UJP answered.
func (s *Service) sendDecision(ctx context.Context, gw ujp.Gateway, who einvoicing.Signer, sr dbq.SigningRequest) error {
	d, err := s.db.Reader().GetInboxDocument(ctx, sr.LinkID)
	if err != nil {
		return jobs.Cancel(fmt.Errorf("decision %s: document %s: %w", sr.ID, sr.LinkID, err))
	}
	if d.SigningRequestID.String != sr.ID || d.DecisionRequested == "" {
		return nil // failed, overtaken or sent already
	}
	if by, _ := time.Parse(time.DateOnly, d.DecideBy); einvoice.DeadlinePassed(s.db.Now(), by) {
		return s.inboxInTx(ctx, func(tx *store.Tx) error {
			return s.decisionLate(ctx, tx, d.ID, sr.ID)
		})
	}
	if stale, err := s.pipe.Stale(sr); err != nil || stale {
		return s.reaskDecision(ctx, gw, who, d.ID, sr)
	}
	cctx, cancel := context.WithTimeout(ctx, s.pipeCfg().CallTimeout)
	err = gw.AcceptReject(cctx, who.ID, sr.Jws)
	cancel()
	var rej *ujp.RejectedError
	var rl *ujp.RateLimitedError
	if wait, ok := pipeline.Busy(err); ok {
		return jobs.Snooze(wait) // nothing was sent
	}
	switch {
	case err == nil:
		if err := s.inboxInTx(ctx, func(tx *store.Tx) error {
			return s.decisionConfirmed(ctx, tx, d.ID, sr.ID)
		}); err != nil {
			return err
		}
		return s.pipe.AccessOK(ctx, d.CompanyID, "")
	case errors.As(err, &rl):
		return jobs.Snooze(max(rl.RetryAfter, s.pipeCfg().SignerInterval))
	case ujp.AccessProblem(err) != nil:
		// UJP refused the caller, not the decision: it stays on its way
		// (the deadline still rules), and the company carries the problem.
		if _, err := s.pipe.AccessProblem(ctx, d.CompanyID, err); err != nil {
			return err
		}
		return jobs.Snooze(pipeline.RetryDelay(s.pipeCfg().RetryDelays, sql.NullTime{Time: sr.UpdatedAt, Valid: true}, s.db.Now()))
	case errors.As(err, &rej) && pipeline.TimestampCodes[rej.Code]:
		return s.reaskDecision(ctx, gw, who, d.ID, sr)
	case errors.As(err, &rej) && rej.Code == "E1016":
		// Not NEW at UJP: decided elsewhere, auto-accepted, voided — or
		// our own earlier attempt whose answer was lost. Read what UJP
		// holds before saying the decision failed.
		return s.inboxInTx(ctx, func(tx *store.Tx) error {
			return s.verifyDecision(ctx, tx, d.ID, sr.ID, rej)
		})
	case errors.As(err, &rej):
		return s.inboxInTx(ctx, func(tx *store.Tx) error {
			cur, err := tx.GetInboxDocument(ctx, d.ID)
			if err != nil || cur.SigningRequestID.String != sr.ID {
				return err
			}
			_, err = s.failDecision(ctx, tx, cur, inboxProblem{Code: rej.Code, Message: "UJP refused the decision: " + rej.Message, SigningRequestID: sr.ID})
			return err
		})
	default:
		// Unreachable UJP: the outcome of this call is unknown. Try again
		// later; an E1016 then is checked against UJP's status.
		s.log.Warn("UJP unavailable; decision retried", "inbox", d.ID, "err", err)
		return jobs.Snooze(pipeline.RetryDelay(s.pipeCfg().RetryDelays, sql.NullTime{Time: sr.UpdatedAt, Valid: true}, s.db.Now()))
	}
}

// reaskDecision asks the signer again for the same decision with a fresh
// requestTimestamp (UJP refuses one more than 5 minutes off) — once UJP
// answers, so an outage does not ask the signer every few minutes.
func (s *Service) reaskDecision(ctx context.Context, gw ujp.Gateway, who einvoicing.Signer, id string, sr dbq.SigningRequest) error {
	cctx, cancel := context.WithTimeout(ctx, s.pipeCfg().CallTimeout)
	_, err := gw.ServerTime(cctx, who.ID)
	cancel()
	if d, ok := pipeline.Busy(err); ok {
		return jobs.Snooze(d)
	}
	if ujp.Retryable(err) {
		return jobs.Snooze(pipeline.RetryDelay(s.pipeCfg().RetryDelays, sql.NullTime{Time: sr.UpdatedAt, Valid: true}, s.db.Now()))
	}
	raw, err := base64.RawURLEncoding.DecodeString(sr.Payload)
	if err != nil {
		return jobs.Cancel(err)
	}
	var req ujp.AcceptRejectRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return jobs.Cancel(err)
	}
	return s.inboxInTx(ctx, func(tx *store.Tx) error {
		d, err := tx.GetInboxDocument(ctx, id)
		if err != nil || d.SigningRequestID.String != sr.ID {
			return err
		}
		req.RequestTimestamp = ujpdoc.FormatTimestamp(tx.Now)
		next, err := askDecisionSignature(ctx, tx, d, req)
		if errors.Is(err, einvoicing.ErrNoSigner) {
			_, err = s.failDecision(ctx, tx, d, inboxProblem{Code: "decision_signer_missing",
				Message: "the signed decision was too old for UJP and the company has no valid certificate to sign it again", SigningRequestID: sr.ID})
			return err
		}
		if err != nil {
			return err
		}
		d.SigningRequestID = sql.NullString{String: next.ID, Valid: true}
		saved, err := saveInbox(ctx, tx, d)
		if err != nil {
			return err
		}
		return s.inboxEvent(ctx, tx, saved, webhooks.EventInboxSignatureRequired)
	})
}

// decisionWaiting reads document id and whether a decision of it still
// waits on the signing request srID (the decision's own, or the status
// read that follows UJP's E1016).
func decisionWaiting(ctx context.Context, tx *store.Tx, id, srID string) (dbq.InboxDocument, bool, error) {
	d, err := tx.GetInboxDocument(ctx, id)
	return d, err == nil && d.SigningRequestID.String == srID && d.DecisionRequested != "", err
}

// decisionConfirmed records UJP's acceptance of the decision waiting on
// srID.
func (s *Service) decisionConfirmed(ctx context.Context, tx *store.Tx, id, srID string) error {
	d, waiting, err := decisionWaiting(ctx, tx, id, srID)
	if err != nil || !waiting {
		return err
	}
	code := ujp.StatusAccepted
	if d.DecisionRequested == decisionReject {
		code = ujp.StatusRejected
	}
	_, err = s.ApplyUJPStatus(ctx, tx, d, code, s.StatusName(d.Environment, code), tx.Now, nil)
	return err
}

// decisionLate fails the decision waiting on srID: its deadline passed
// before it reached UJP.
func (s *Service) decisionLate(ctx context.Context, tx *store.Tx, id, srID string) error {
	d, waiting, err := decisionWaiting(ctx, tx, id, srID)
	if err != nil || !waiting {
		return err
	}
	_, err = s.failDecision(ctx, tx, d, inboxProblem{Code: "decision_late",
		Message: fmt.Sprintf("the %s decision had not reached UJP when the deadline (%s) passed", d.DecisionRequested, d.DecideBy), SigningRequestID: srID})
	return err
}

// verifyDecision follows UJP's E1016 with a signed read of the document's
// current status (link inbox_status); the read's answer settles the
// decision. Without a signer the decision fails at once.
func (s *Service) verifyDecision(ctx context.Context, tx *store.Tx, id, srID string, rej *ujp.RejectedError) error {
	d, waiting, err := decisionWaiting(ctx, tx, id, srID)
	if err != nil || !waiting {
		return err
	}
	payload, err := json.Marshal(ujp.EUIDRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), EUID: d.Euid})
	if err != nil {
		return err
	}
	read, err := einvoicing.RequestSignature(ctx, tx, d.CompanyID, einvoicing.PurposeQuery, payload, einvoicing.SigningLink{Type: einvoicing.LinkInboxStatus, ID: d.ID})
	if errors.Is(err, einvoicing.ErrNoSigner) {
		_, err = s.failDecision(ctx, tx, d, inboxProblem{Code: rej.Code, Message: "UJP refused the decision: " + rej.Message, SigningRequestID: srID})
		return err
	}
	if err != nil {
		return err
	}
	d.SigningRequestID = sql.NullString{String: read.ID, Valid: true}
	_, err = saveInbox(ctx, tx, d)
	return err
}

// decisionStatusRead applies the current status UJP gave after an E1016:
// the decision is confirmed if UJP holds it, failed otherwise.
func (s *Service) decisionStatusRead(ctx context.Context, tx *store.Tx, id, srID string, st *ujp.DocStatus) error {
	d, waiting, err := decisionWaiting(ctx, tx, id, srID)
	if err != nil {
		return err
	}
	if !waiting {
		// A status read is news all the same.
		_, err := s.ApplyUJPStatus(ctx, tx, d, st.StatusCode, st.StatusName, tx.Now, nil)
		return err
	}
	d, err = s.ApplyUJPStatus(ctx, tx, d, st.StatusCode, st.StatusName, tx.Now, nil)
	if err != nil || d.DecisionRequested == "" {
		return err
	}
	_, err = s.failDecision(ctx, tx, d, inboxProblem{Code: ujpNotNew(),
		Message: fmt.Sprintf("UJP refused the decision: the document is not in status NEW (UJP reports %s %s)", st.StatusCode, st.StatusName), SigningRequestID: srID})
	return err
}

// ApplyUJPStatus records a status UJP reported for d (from a change feed,
// a status read, or the answer to our decision), if it moves d forward
// (einvoice.UJPStatusRank), with the decision it implies and its event:
// 03 accepted, 05 rejected, 04 auto_accepted (no second event when the
// deadline job already recorded it), 07 and 09 the seller's storno and
// correction. A decision of ours on its way is settled by it: confirmed
// when UJP's decision is the one asked for, failed otherwise. ch carries
// the reported change's reason and comment, if any.
func (s *Service) ApplyUJPStatus(ctx context.Context, tx *store.Tx, d dbq.InboxDocument, code, name string, at time.Time, ch *ujp.StatusChange) (dbq.InboxDocument, error) {
	if einvoice.UJPStatusRank(code) <= einvoice.UJPStatusRank(d.UjpStatus) {
		return d, nil
	}
	if name == "" {
		name = s.StatusName(d.Environment, code)
	}
	next := d
	next.UjpStatus, next.UjpStatusName, next.UjpStatusAt = code, name, at
	var events []string
	var failed *inboxProblem
	requested := d.DecisionRequested
	if state, ok := einvoice.DecisionFromUJP(code); ok {
		switch {
		case d.DecisionState == state:
			// Already recorded (the deadline job's auto_accepted): UJP
			// confirms it.
		case d.DecisionState == einvoice.DecisionPending || (d.DecisionState == einvoice.DecisionAutoAccepted && d.UjpStatus != ujp.StatusAutoAccepted):
			// UJP decides: a local auto-acceptance is provisional until
			// UJP reports 04, and a decision UJP reports otherwise wins.
			next.DecisionState = state
			next.DecidedAt = sql.NullTime{Time: at, Valid: true}
			ours := (requested == decisionAccept && state == einvoice.DecisionAccepted) || (requested == decisionReject && state == einvoice.DecisionRejected)
			if !ours {
				next.DecisionReason, next.DecisionComment = sql.NullString{}, sql.NullString{}
				if ch != nil && state != einvoice.DecisionAutoAccepted {
					// The decision made elsewhere, with its reason and
					// comment (UJP's own comment on an auto-acceptance is
					// not a decision's).
					next.DecisionReason = sqlNull(ch.RejectReasonCode)
					next.DecisionComment = sqlNull(ch.Comment)
				}
			}
			switch state {
			case einvoice.DecisionAccepted:
				events = append(events, webhooks.EventInboxAccepted)
			case einvoice.DecisionRejected:
				events = append(events, webhooks.EventInboxRejected)
			case einvoice.DecisionAutoAccepted:
				if ch == nil {
					// A status read has no time of the change: UJP's
					// auto-acceptance took effect when the deadline ended.
					next.DecidedAt = sql.NullTime{Time: deadlineEnd(d.DecideBy, at), Valid: true}
				}
				events = append(events, webhooks.EventInboxAutoAccepted)
			}
			if requested != "" && !ours {
				p := inboxProblem{Code: "decided_elsewhere", Message: fmt.Sprintf("UJP reports the document %s (%s) before the %s decision reached it", name, code, requested),
					SigningRequestID: d.SigningRequestID.String}
				if state == einvoice.DecisionAutoAccepted {
					p = inboxProblem{Code: "decision_late", Message: "UJP auto-accepted the document before the " + requested + " decision reached it",
						SigningRequestID: d.SigningRequestID.String}
				}
				failed = &p
			}
			if ours || failed != nil {
				next.DecisionRequested, next.SigningRequestID = "", sql.NullString{}
			}
		}
	} else {
		switch code {
		case ujp.StatusVoided:
			events = append(events, webhooks.EventInboxCancelledByStorno)
		case ujp.StatusCorrected:
			events = append(events, webhooks.EventInboxCorrected)
		}
		if requested != "" && (code == ujp.StatusVoided || code == ujp.StatusCorrected) {
			p := inboxProblem{Code: ujpNotNew(), Message: fmt.Sprintf("the seller replaced the document (UJP %s %s) before the %s decision reached UJP", code, name, requested),
				SigningRequestID: d.SigningRequestID.String}
			failed = &p
			next.DecisionRequested, next.SigningRequestID = "", sql.NullString{}
			if next.DecisionState == einvoice.DecisionPending {
				next.DecisionReason, next.DecisionComment = sql.NullString{}, sql.NullString{}
			}
		}
	}
	if failed != nil {
		var items []einvoicing.ProblemItem
		_ = json.Unmarshal([]byte(next.Problems), &items)
		b, err := json.Marshal(append(items, einvoicing.ProblemItem(*failed)))
		if err != nil {
			return d, err
		}
		next.Problems = string(b)
		events = append(events, webhooks.EventInboxDecisionFailed)
	}
	saved, err := saveInbox(ctx, tx, next)
	if err != nil {
		return d, err
	}
	for _, e := range events {
		if err := s.inboxEvent(ctx, tx, saved, e); err != nil {
			return saved, err
		}
	}
	return saved, nil
}

// deadlineEnd is the instant the deadline decideBy ends, or at when the
// date cannot be read.
func deadlineEnd(decideBy string, at time.Time) time.Time {
	by, err := time.Parse(time.DateOnly, decideBy)
	if err != nil {
		return at
	}
	return einvoice.DeadlineEnd(by).UTC()
}

func sqlNull(s *string) sql.NullString {
	if s == nil || *s == "" {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}
