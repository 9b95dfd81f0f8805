// Package smtptest is a small SMTP server for tests: it listens on a
// loopback TCP port, speaks the SMTP of RFC 5321 that a submission client
// uses (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT), keeps every message
// it accepts, and answers each recipient as the test decides, so delivery
// code is tested against the protocol rather than a stand-in for it. It
// offers neither TLS nor AUTH.
package smtptest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/textproto"
	"strings"
	"sync"
	"testing"
)

// Reply is an SMTP answer. The zero Reply accepts.
type Reply struct {
	Code int    // e.g. 550; 0 means 250
	Text string // e.g. "5.1.1 no such user"
}

// Options shape the server's answers.
type Options struct {
	// Recipient answers RCPT TO for addr; nil accepts every recipient. It
	// may be called from several connections at once.
	Recipient func(addr string) Reply
	// Data answers the end of DATA for a message received whole; nil
	// accepts. Only an accepted message is kept, as a real server keeps
	// only what it acknowledged. It may block (a slow server) and may be
	// called from several connections at once.
	Data func(m Message) Reply
}

// Message is one accepted message.
type Message struct {
	From string
	To   []string
	Data []byte // as received after DATA, headers and body, dot-unstuffed
}

// Server is a running SMTP server.
type Server struct {
	ln   net.Listener
	opts Options

	mu      sync.Mutex
	msgs    []Message
	changed chan struct{} // closed and replaced when a message arrives
	conns   map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// Start listens on 127.0.0.1 and serves until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Server{ln: ln, opts: opts, changed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the server as DENAR_SMTP_URL.
func (s *Server) URL() string { return "smtp://" + s.Addr() }

// Messages returns the messages accepted so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait returns the messages once at least n have arrived, or ctx's error.
func (s *Server) Wait(ctx context.Context, n int) ([]Message, error) {
	for {
		s.mu.Lock()
		if len(s.msgs) >= n {
			out := append([]Message(nil), s.msgs...)
			s.mu.Unlock()
			return out, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Messages(), fmt.Errorf("smtptest: %d of %d messages: %w", len(s.Messages()), n, ctx.Err())
		}
	}
}

// Close stops listening, drops open connections and waits for them.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serve(c)
		}()
	}
}

// maxData bounds one message; tests send a few kilobytes.
const maxData = 10 << 20

func (s *Server) serve(c net.Conn) {
	tp := textproto.NewConn(c)
	reply := func(code int, text string) bool { return tp.PrintfLine("%d %s", code, text) == nil }
	if !reply(220, "smtptest ESMTP ready") {
		return
	}
	var (
		from   string
		rcpts  []string
		inMail bool
	)
	reset := func() { from, rcpts, inMail = "", nil, false }
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		ok := true
		switch strings.ToUpper(verb) {
		case "EHLO":
			// Multi-line 250: every line but the last has a hyphen.
			ok = tp.PrintfLine("250-smtptest greets %s", arg) == nil && reply(250, "8BITMIME")
			reset()
		case "HELO":
			ok = reply(250, "smtptest")
			reset()
		case "MAIL":
			addr, found := path(arg, "FROM:")
			switch {
			case !found:
				ok = reply(501, "5.5.4 syntax: MAIL FROM:<address>")
			case inMail:
				ok = reply(503, "5.5.1 nested MAIL command")
			default:
				from, rcpts, inMail = addr, nil, true
				ok = reply(250, "2.1.0 ok")
			}
		case "RCPT":
			addr, found := path(arg, "TO:")
			switch {
			case !inMail:
				ok = reply(503, "5.5.1 need MAIL first")
			case !found || addr == "":
				ok = reply(501, "5.5.4 syntax: RCPT TO:<address>")
			default:
				r := Reply{}
				if s.opts.Recipient != nil {
					r = s.opts.Recipient(addr)
				}
				if r.Code == 0 || r.Code == 250 {
					rcpts = append(rcpts, addr)
					ok = reply(250, "2.1.5 ok")
				} else {
					ok = reply(r.Code, r.Text)
				}
			}
		case "DATA":
			if !inMail || len(rcpts) == 0 {
				ok = reply(554, "5.5.1 no valid recipients")
				break
			}
			if !reply(354, "end data with <CR><LF>.<CR><LF>") {
				return
			}
			data, err := io.ReadAll(io.LimitReader(tp.DotReader(), maxData))
			if err != nil {
				return
			}
			m := Message{From: from, To: rcpts, Data: data}
			reset()
			if s.opts.Data != nil {
				if r := s.opts.Data(m); r.Code != 0 && r.Code != 250 {
					ok = reply(r.Code, r.Text)
					break
				}
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, m)
			n := len(s.msgs)
			close(s.changed)
			s.changed = make(chan struct{})
			s.mu.Unlock()
			ok = reply(250, fmt.Sprintf("2.0.0 ok: queued as %d", n))
		case "RSET":
			reset()
			ok = reply(250, "2.0.0 ok")
		case "NOOP":
			ok = reply(250, "2.0.0 ok")
		case "QUIT":
			reply(221, "2.0.0 bye")
			return
		default:
			ok = reply(502, "5.5.2 command not recognised")
		}
		if !ok {
			return
		}
	}
}

// path reads "FROM:<a@b> PARAMS" (prefix FROM: or TO:) into a@b.
func path(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

// Header parses the message's header.
func (m Message) Header() (netmail.Header, error) {
	msg, err := netmail.ReadMessage(bufio.NewReader(strings.NewReader(string(m.Data))))
	if err != nil {
		return nil, err
	}
	return msg.Header, nil
}

// Subject is the decoded Subject header ("" when unreadable).
func (m Message) Subject() string {
	h, err := m.Header()
	if err != nil {
		return ""
	}
	s, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil {
		return h.Get("Subject")
	}
	return s
}

// Body is the decoded text of a single-part message.
func (m Message) Body() (string, error) {
	msg, err := netmail.ReadMessage(bufio.NewReader(strings.NewReader(string(m.Data))))
	if err != nil {
		return "", err
	}
	var r io.Reader = msg.Body
	switch enc := strings.ToLower(msg.Header.Get("Content-Transfer-Encoding")); enc {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "", "7bit", "8bit":
	default:
		return "", errors.New("smtptest: unsupported transfer encoding " + enc)
	}
	b, err := io.ReadAll(r)
	return string(b), err
}
