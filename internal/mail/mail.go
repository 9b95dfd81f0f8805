// Package mail sends the service's e-mails (today: mandate requests) as
// durable jobs of package jobs.
//
// Queue writes the message to the mail_outbox table and enqueues a
// mail.send job in the transaction that causes it, so a company is never
// created without its mandate mail, nor a mail sent for a company that was
// rolled back. The job is claimed by one runner across every process that
// shares the store; its worker (Register) delivers the message through SMTP
// and records the outcome on the row:
//
//   - sent: the SMTP server took it;
//   - dead: the server refused it for good (a 5xx answer to the message's
//     envelope or content, or an address that cannot be written), or every
//     allowed attempt failed; `denar admin mail retry` queues it again;
//   - logged: there is no SMTP server (DENAR_SMTP_URL unset, the embedded
//     default); the message, with its link, is written to the log instead,
//     once;
//   - queued: the job is pending; a temporary failure (network, timeout, a
//     4xx answer) is retried with backoff.
//
// Each message is its own job, so a recipient the server refuses, or one
// that keeps failing, delays nothing else.
package mail

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// States of a message, as stored in mail_outbox.state.
const (
	StateQueued = "queued"
	StateSent   = "sent"
	StateLogged = "logged"
	StateDead   = "dead"
)

// ValidState reports whether s is one of the states.
func ValidState(s string) bool {
	switch s {
	case StateQueued, StateSent, StateLogged, StateDead:
		return true
	}
	return false
}

// JobKind is the job that delivers one message.
const JobKind = "mail.send"

// Attempt limits. MaxAttemptsLimit bounds DENAR_MAIL_MAX_ATTEMPTS. The
// worker ends a mail job itself (sent, logged or dead), so the job's own
// attempt ceiling, a little above any configured limit, is reached only
// when runners keep dying in the middle of an attempt.
const (
	DefaultMaxAttempts = 10
	MaxAttemptsLimit   = 100
	jobAttemptCeiling  = MaxAttemptsLimit + 10 // also in migration 00009
)

// Message is one plain-text e-mail.
type Message struct {
	To      string
	Subject string
	Body    string
	// Link is the action the message asks for (a mandate URL), already in
	// Body. Without SMTP the log line that stands in for the message shows
	// it, so that a person trying the sandbox can follow it; with SMTP it is
	// never logged. Optional.
	Link string
}

type jobArgs struct {
	ID string `json:"id"`
}

func (jobArgs) Kind() string { return JobKind }

func uniqueKey(id string) string { return "mail:" + id }

// Queue stores m and enqueues its delivery as part of tx, and returns the
// message's id. Nothing is sent unless tx commits.
func Queue(ctx context.Context, tx *store.Tx, m Message) (string, error) {
	return QueueSealed(ctx, tx, nil, m)
}

// QueueSealed is Queue for a message that carries a credential (a mandate
// link): its body and link are stored sealed with box, the message's id as
// additional data, and opened only to be sent (WorkerConfig.Secrets) or
// shown to the operator. A nil box stores them as they are.
func QueueSealed(ctx context.Context, tx *store.Tx, box *auth.SecretBox, m Message) (string, error) {
	if strings.TrimSpace(m.To) == "" {
		return "", errors.New("mail: queue: no recipient")
	}
	id := denar.NewID("mail")
	body, link := m.Body, m.Link
	if box != nil {
		body = box.Seal(body, id)
		if link != "" {
			link = box.Seal(link, id)
		}
	}
	if err := tx.CreateOutboxMail(ctx, dbq.CreateOutboxMailParams{
		ID: id, Recipient: m.To, Subject: m.Subject, Body: body, Link: link, CreatedAt: tx.Now,
	}); err != nil {
		return "", fmt.Errorf("mail: queue: %w", err)
	}
	if _, err := jobs.Insert(ctx, tx, jobArgs{ID: id}, jobs.InsertOpts{MaxAttempts: jobAttemptCeiling, UniqueKey: uniqueKey(id)}); err != nil {
		return "", fmt.Errorf("mail: queue: %w", err)
	}
	return id, nil
}

// Opened returns the body and link of a stored message (its id and
// columns), opening them with box when they are sealed.
func Opened(box *auth.SecretBox, id, body, link string) (string, string, error) {
	open := func(v string) (string, error) {
		if !auth.Sealed(v) {
			return v, nil
		}
		if box == nil {
			return "", fmt.Errorf("mail %s: sealed, and no DENAR_WEBHOOK_SECRET_KEY to open it", id)
		}
		return box.Open(v, id)
	}
	b, err := open(body)
	if err != nil {
		return "", "", err
	}
	l, err := open(link)
	if err != nil {
		return "", "", err
	}
	return b, l, nil
}

// Errors of Retry.
var (
	ErrNotFound    = errors.New("no such message")
	ErrAlreadySent = errors.New("the message was sent")
	ErrPending     = errors.New("the message is still queued: its delivery job is pending")
)

// Retry queues a message that was not sent (dead, logged, or queued with
// no pending job left) for delivery again, with a fresh set of attempts.
func Retry(ctx context.Context, db *store.DB, id string) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.RequeueMail(ctx, dbq.RequeueMailParams{ID: id, UpdatedAt: sql.NullTime{Time: tx.Now, Valid: true}})
		if err != nil {
			return fmt.Errorf("mail: retry %s: %w", id, err)
		}
		if n == 0 {
			switch _, err := tx.GetOutboxMail(ctx, id); {
			case errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("mail: retry %s: %w", id, ErrNotFound)
			case err != nil:
				return fmt.Errorf("mail: retry %s: %w", id, err)
			}
			return fmt.Errorf("mail: retry %s: %w", id, ErrAlreadySent)
		}
		e, err := jobs.Insert(ctx, tx, jobArgs{ID: id}, jobs.InsertOpts{MaxAttempts: jobAttemptCeiling, UniqueKey: uniqueKey(id)})
		if err != nil {
			return fmt.Errorf("mail: retry %s: %w", id, err)
		}
		if e.Duplicate {
			return fmt.Errorf("mail: retry %s: %w (job %d)", id, ErrPending, e.ID)
		}
		return nil
	})
}
