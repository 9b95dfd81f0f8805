package mail

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Sender delivers one message now.
type Sender interface {
	Deliver(ctx context.Context, m Message) error
}

// SMTP delivers through an SMTP server given as
// smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465
// (implicit TLS).
type SMTP struct {
	host       string
	port       int
	user, pass string
	implicit   bool
	From       string
}

// ParseSMTPURL reads DENAR_SMTP_URL.
func ParseSMTPURL(raw, from string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("SMTP URL: %w", err)
	}
	s := &SMTP{host: u.Hostname(), From: from}
	switch u.Scheme {
	case "smtp":
		s.port = 587
	case "smtps":
		s.port, s.implicit = 465, true
	default:
		return nil, fmt.Errorf("SMTP URL: scheme must be smtp or smtps, not %q", u.Scheme)
	}
	if s.host == "" {
		return nil, fmt.Errorf("SMTP URL: no host")
	}
	if p := u.Port(); p != "" {
		if s.port, err = strconv.Atoi(p); err != nil || s.port <= 0 || s.port > 65535 {
			return nil, fmt.Errorf("SMTP URL: bad port %q", p)
		}
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	return s, nil
}

// Deliver implements Sender.
func (s *SMTP) Deliver(ctx context.Context, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.From); err != nil {
		return fmt.Errorf("smtp: from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("smtp: to: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(gomail.TypeTextPlain, m.Body)
	opts := []gomail.Option{gomail.WithPort(s.port), gomail.WithTimeout(30 * time.Second)}
	if s.implicit {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.user != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain), gomail.WithUsername(s.user), gomail.WithPassword(s.pass))
	}
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return fmt.Errorf("smtp: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp: send to %s: %w", m.To, err)
	}
	return nil
}

// Deliverer sends what the outbox holds: the mail was written with the
// change that caused it, and is delivered after that commit, retried until
// the server takes it.
type Deliverer struct {
	DB       *store.DB
	Sender   Sender
	Log      *slog.Logger
	Interval time.Duration // default 5 s
}

// Run delivers until ctx ends.
func (d *Deliverer) Run(ctx context.Context) {
	iv := d.Interval
	if iv <= 0 {
		iv = 5 * time.Second
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		if _, err := d.Once(ctx); err != nil && ctx.Err() == nil {
			d.Log.WarnContext(ctx, "mail delivery", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once delivers the unsent mail it finds and reports how many were sent.
// Two processes may both send a row (at-least-once); mandate mails are
// harmless to repeat.
func (d *Deliverer) Once(ctx context.Context) (int, error) {
	rows, err := d.DB.Reader().ListUnsentMail(ctx, 50)
	if err != nil {
		return 0, fmt.Errorf("list outbox: %w", err)
	}
	sent := 0
	for _, r := range rows {
		if err := d.Sender.Deliver(ctx, Message{To: r.Recipient, Subject: r.Subject, Body: r.Body}); err != nil {
			return sent, err
		}
		if err := d.DB.Writer().MarkMailSent(ctx, dbq.MarkMailSentParams{ID: r.ID, SentAt: sql.NullTime{Time: d.DB.Now(), Valid: true}}); err != nil {
			return sent, fmt.Errorf("mark mail sent: %w", err)
		}
		d.Log.InfoContext(ctx, "mail sent", "id", r.ID, "to", r.Recipient)
		sent++
	}
	return sent, nil
}
