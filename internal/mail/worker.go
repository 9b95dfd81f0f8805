package mail

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// DefaultRetryDelays are the waits between attempts of one message, the
// last repeating: with DefaultMaxAttempts a message keeps being tried for
// about 28 hours before it is dead.
func DefaultRetryDelays() []time.Duration {
	return []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 12 * time.Hour}
}

// WorkerConfig configures delivery.
type WorkerConfig struct {
	// SMTP is the server to deliver through. Nil means there is none: each
	// message is written to the log (with its Link) and marked logged.
	SMTP *SMTP
	// MaxAttempts bounds the SMTP attempts of a message before it is dead;
	// default DefaultMaxAttempts, at most MaxAttemptsLimit.
	MaxAttempts int
	// RetryDelays are the waits after each failed attempt, the last
	// repeating; default DefaultRetryDelays.
	RetryDelays []time.Duration
	// Log receives one line per outcome; default slog.Default().
	Log *slog.Logger
	// Secrets opens the messages queued sealed (QueueSealed).
	Secrets *auth.SecretBox
}

// attemptTimeout bounds one delivery, connection included (go-mail's own
// timeout bounds each step at 30 s).
const attemptTimeout = 2 * time.Minute

// Register makes r deliver queued mail. Every process may register it: the
// job of each message is claimed by one runner at a time.
func Register(r *jobs.Runner, db *store.DB, cfg WorkerConfig) {
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	cfg.MaxAttempts = min(cfg.MaxAttempts, MaxAttemptsLimit)
	if len(cfg.RetryDelays) == 0 {
		cfg.RetryDelays = DefaultRetryDelays()
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	w := &worker{db: db, cfg: cfg, backoff: jobs.Schedule(cfg.RetryDelays...)}
	jobs.Register(r, w.work, jobs.Options{Backoff: w.backoff, Timeout: attemptTimeout})
}

type worker struct {
	db      *store.DB
	cfg     WorkerConfig
	backoff jobs.Backoff
}

// Work delivers one message. The job's attempt number is the message's: the
// runner counts an attempt whose process died, so a message that brings its
// runner down cannot be tried for ever.
func (w *worker) work(ctx context.Context, job *jobs.Job, a jobArgs) error {
	m, err := w.db.Reader().GetOutboxMail(ctx, a.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return jobs.Cancel(fmt.Errorf("mail %s: no such message", a.ID))
	}
	if err != nil {
		return fmt.Errorf("mail %s: load: %w", a.ID, err)
	}
	if m.State != StateQueued {
		// The outcome was recorded by an attempt whose runner died before
		// it could finish the job.
		return nil
	}
	if m.Body, m.Link, err = Opened(w.cfg.Secrets, m.ID, m.Body, m.Link); err != nil {
		return fmt.Errorf("mail %s: %w", a.ID, err)
	}
	log := w.cfg.Log.With("mail", m.ID, "to", m.Recipient)
	// Outcomes are recorded even when ctx ends right after the send.
	rec := context.WithoutCancel(ctx)

	if w.cfg.SMTP == nil {
		attrs := []any{"subject", m.Subject}
		if m.Link != "" {
			attrs = append(attrs, "link", m.Link)
		}
		log.InfoContext(ctx, "mail logged, not sent: DENAR_SMTP_URL is unset", attrs...)
		return w.outcome(rec, m.ID, StateLogged, int(m.Attempts), m.LastError, false)
	}

	if job.Attempt > w.cfg.MaxAttempts {
		// The last allowed attempt ended with its runner's death.
		err := fmt.Errorf("gave up after %d attempts (the last one was interrupted)", w.cfg.MaxAttempts)
		log.ErrorContext(ctx, "mail dead", "attempts", job.Attempt-1, "err", err)
		if rerr := w.outcome(rec, m.ID, StateDead, job.Attempt-1, err.Error(), false); rerr != nil {
			return rerr
		}
		return jobs.Cancel(err)
	}

	sendErr := w.cfg.SMTP.Deliver(ctx, m.ID, Message{To: m.Recipient, Subject: m.Subject, Body: m.Body})
	switch {
	case sendErr == nil:
		if err := w.outcome(rec, m.ID, StateSent, job.Attempt, "", true); err != nil {
			// The server has the message; a retry would send it again.
			// Rare (the store failed just now), and the Message-ID is the
			// same, so the receiver can tell.
			return err
		}
		log.InfoContext(ctx, "mail sent", "attempt", job.Attempt)
		return nil
	case ctx.Err() != nil:
		// Stopped or timed out mid-attempt: the runner decides what the
		// attempt counts for.
		return sendErr
	case Permanent(sendErr):
		log.ErrorContext(ctx, "mail dead: refused for good", "attempt", job.Attempt, "err", sendErr)
		if err := w.outcome(rec, m.ID, StateDead, job.Attempt, sendErr.Error(), false); err != nil {
			return err
		}
		return jobs.Cancel(sendErr)
	case job.Attempt >= w.cfg.MaxAttempts:
		err := fmt.Errorf("gave up after %d attempts: %w", job.Attempt, sendErr)
		log.ErrorContext(ctx, "mail dead: attempts used up", "attempts", job.Attempt, "err", sendErr)
		if rerr := w.outcome(rec, m.ID, StateDead, job.Attempt, err.Error(), false); rerr != nil {
			return rerr
		}
		return jobs.Cancel(err)
	default:
		log.WarnContext(ctx, "mail delivery failed; will retry", "attempt", job.Attempt, "of", w.cfg.MaxAttempts,
			"retry_in", w.backoff(job.Attempt), "err", sendErr)
		if _, err := w.db.Writer().RecordMailAttempt(rec, dbq.RecordMailAttemptParams{
			ID: m.ID, Attempts: int32(job.Attempt), LastError: truncate(sendErr.Error()), UpdatedAt: sql.NullTime{Time: w.db.Now(), Valid: true},
		}); err != nil {
			log.WarnContext(ctx, "mail: record attempt", "err", err)
		}
		return sendErr
	}
}

// outcome records a final state. A row that is no longer queued was
// finished by an earlier run of the job and keeps its outcome.
func (w *worker) outcome(ctx context.Context, id, state string, attempts int, lastErr string, sent bool) error {
	now := w.db.Now()
	p := dbq.SetMailOutcomeParams{ID: id, State: state, Attempts: int32(attempts), LastError: truncate(lastErr), UpdatedAt: sql.NullTime{Time: now, Valid: true}}
	if sent {
		p.SentAt = sql.NullTime{Time: now, Valid: true}
	}
	if _, err := w.db.Writer().SetMailOutcome(ctx, p); err != nil {
		return fmt.Errorf("mail %s: record %s: %w", id, state, err)
	}
	return nil
}

// truncate bounds last_error: an SMTP answer quoted whole is enough.
func truncate(s string) string {
	const maxLen = 2000
	if len(s) > maxLen {
		return s[:maxLen]
	}
	return s
}
