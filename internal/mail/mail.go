// Package mail sends the service's e-mails (today: mandate requests). Mail
// is queued inside the transaction that causes it, so a company is never
// created without its mandate mail, nor a mail sent for a company that
// was rolled back. Without SMTP the outbox table is the delivery: it is
// logged, and tests and operators read it there.
package mail

import (
	"context"
	"log/slog"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
)

// Message is one plain-text e-mail.
type Message struct {
	To      string
	Subject string
	Body    string
}

// Mailer queues a message as part of tx.
type Mailer interface {
	Send(ctx context.Context, tx *store.Tx, m Message) error
}

// Outbox stores messages in the mail_outbox table and logs them. With
// SMTP configured a Deliverer sends them after the commit.
type Outbox struct {
	Log  *slog.Logger
	SMTP bool
}

// Send implements Mailer.
func (o Outbox) Send(ctx context.Context, tx *store.Tx, m Message) error {
	id := denar.NewID("mail")
	if err := tx.CreateOutboxMail(ctx, dbqOutbox(id, m, tx)); err != nil {
		return err
	}
	if o.Log != nil {
		how := "mail kept in the outbox (no DENAR_SMTP_URL)"
		if o.SMTP {
			how = "mail queued for SMTP delivery"
		}
		o.Log.InfoContext(ctx, how, "id", id, "to", m.To, "subject", m.Subject)
	}
	return nil
}
