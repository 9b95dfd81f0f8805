package mail

import (
	"context"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

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
		// url.Error repeats the URL, password included: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("SMTP URL: %w", err)
	}
	if _, err := netmail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("sender %q (DENAR_MAIL_FROM): %w", from, err)
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
	if h, _, err := net.SplitHostPort(net.JoinHostPort(s.host, "25")); err != nil || h != s.host || strings.ContainsAny(s.host, "[]/\\ ") {
		return nil, fmt.Errorf("SMTP URL: bad host %q", s.host)
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

// Addr is the server's host:port.
func (s *SMTP) Addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

// PermanentError is a delivery failure that no retry can fix: the server
// refused the message's sender, recipient or content with a 5xx answer, or
// an address cannot be written at all.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent reports whether err is a *PermanentError.
func Permanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// Deliver sends m now as message id (which also makes its Message-ID, so
// that a message sent again after a crash can be recognised as the same).
// A failure is a *PermanentError when retrying cannot help; anything else
// (no connection, a timeout, a 4xx answer, a 5xx answer while connecting,
// which speaks of the server or of our configuration rather than of the
// message) is temporary.
func (s *SMTP) Deliver(ctx context.Context, id string, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(s.From); err != nil {
		return &PermanentError{fmt.Errorf("smtp: from %q: %w", s.From, err)}
	}
	if err := msg.To(m.To); err != nil {
		return &PermanentError{fmt.Errorf("smtp: to %q: %w", m.To, err)}
	}
	msg.SetMessageIDWithValue(id + "@" + s.domain())
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
	err = c.DialAndSendWithContext(ctx, msg)
	switch {
	case err == nil:
		return nil
	case msg.IsDelivered():
		// The server took the message; only RSET or QUIT after it failed.
		return nil
	case refusedForGood(err):
		return &PermanentError{fmt.Errorf("smtp: send to %s: %w", m.To, err)}
	}
	return fmt.Errorf("smtp: send to %s: %w", m.To, err)
}

// refusedForGood reports whether err is the server's permanent answer to
// this message: a 5xx reply to MAIL FROM, RCPT TO or DATA, or an address
// go-mail could not put into the envelope.
func refusedForGood(err error) bool {
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Reason {
	case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
		return true
	case gomail.ErrSMTPMailFrom, gomail.ErrSMTPRcptTo, gomail.ErrSMTPData, gomail.ErrSMTPDataClose, gomail.ErrWriteContent:
		return !se.IsTemp() && se.ErrorCode() >= 500 && se.ErrorCode() < 600
	}
	return false
}

// domain is the part after @ of the sender, for Message-IDs.
func (s *SMTP) domain() string {
	if a, err := netmail.ParseAddress(s.From); err == nil {
		if _, d, ok := strings.Cut(a.Address, "@"); ok && d != "" {
			return d
		}
	}
	return "denar.invalid"
}
