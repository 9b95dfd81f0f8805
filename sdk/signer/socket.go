package signer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// errNoSocket means the server answered the upgrade with something other
// than 101: it does not offer the WebSocket, so long-poll.
var errNoSocket = errors.New("signer: server does not offer the WebSocket")

// longPollSpell is how long the worker long-polls before it tries the
// WebSocket again.
const longPollSpell = 2 * time.Minute

// Message is one message of the signing WebSocket, either way.
type Message struct {
	Type       string     `json:"type"` // hello, signing_requests, signing_request, result; the agent's claim, signatures, refusals
	AgentID    string     `json:"agentId,omitempty"`
	ServerTime *time.Time `json:"serverTime,omitempty"`
	// Batch (hello) is the most requests one signing_requests message
	// carries; 0 from a server that does not sign in batches.
	Batch    int       `json:"batch,omitempty"`
	Request  *Request  `json:"request,omitempty"`
	Requests []Request `json:"requests,omitempty"`
	// ID names an agent's message (its Idempotency-Key), ReplyTo the
	// message a result answers; Status and Body are the operation's
	// status and answer (or problem), Body of an agent's message its body.
	ID      string          `json:"id,omitempty"`
	ReplyTo string          `json:"replyTo,omitempty"`
	Status  int             `json:"status,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"`
}

// DecodeMessage parses one WebSocket message. Unknown types decode without
// error (a newer server may send more); a signing_request without a
// request, a signing_requests with a request without an id or signing
// input, or a result that answers nothing, is an error.
func DecodeMessage(b []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return Message{}, fmt.Errorf("signer: message: %w", err)
	}
	switch m.Type {
	case "signing_request":
		if m.Request == nil || m.Request.ID == "" || m.Request.SigningInput == "" {
			return Message{}, errors.New("signer: signing_request without a usable request")
		}
	case "signing_requests":
		if len(m.Requests) == 0 {
			return Message{}, errors.New("signer: signing_requests without requests")
		}
		for _, r := range m.Requests {
			if r.ID == "" || r.SigningInput == "" {
				return Message{}, errors.New("signer: signing_requests with an unusable request")
			}
		}
	case "result":
		if m.ReplyTo == "" {
			return Message{}, errors.New("signer: result that answers no message")
		}
	}
	return m, nil
}

// ErrNoBatches is what Run returns when the server's WebSocket does not
// sign in batches: a server older than this worker. The worker and the
// server ship together; run the worker of the server's release.
var ErrNoBatches = errors.New("signer: the server does not sign in batches (it is older than this worker); use the worker of the server's release")

func socketURL(server, agentID string) string {
	u := server + "/v1/agents/" + agentID + "/signing-requests"
	switch {
	case strings.HasPrefix(u, "https://"):
		return "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		return "ws://" + strings.TrimPrefix(u, "http://")
	}
	return u
}

// runSocket holds one WebSocket until it drops: the server pushes what
// waits, up to Batch requests per message, and the worker answers each
// batch with claim, signatures and refusals messages on the same socket.
// The server sends every pending request again on a new connection; the
// worker's memory of what it signed makes that harmless.
func (w *Worker) runSocket(ctx context.Context) error {
	h := http.Header{}
	h.Set("Authorization", w.Creds.authz())
	url := fmt.Sprintf("%s?batch=%d", socketURL(w.Creds.Server, w.Creds.AgentID), w.batchSize())
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h, HTTPClient: w.dialClient()})
	if err != nil {
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusUnauthorized:
				// The problem says why (key_revoked: pair again); the
				// handshake's response keeps the first KiB of it readable.
				p := struct{ Code, Detail string }{"unauthenticated", "the server rejected the agent credentials"}
				if resp.Body != nil {
					raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
					_ = json.Unmarshal(raw, &p)
				}
				return &APIError{Status: resp.StatusCode, Code: p.Code, Detail: p.Detail}
			case http.StatusSwitchingProtocols:
			default:
				return fmt.Errorf("%w (HTTP %d)", errNoSocket, resp.StatusCode)
			}
		}
		return err
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	hello, err := readMessage(ctx, c)
	if err != nil {
		return err
	}
	if hello.Type != "hello" || hello.Batch == 0 {
		c.Close(websocket.StatusNormalClosure, "")
		return ErrNoBatches
	}
	w.log().Info("connected", "transport", "websocket", "batch", hello.Batch)

	// Batches are handled one at a time apart from the reading, so that a
	// policy waiting for a person does not stop the socket from answering
	// the server's pings, and so that the answers to the batch's messages
	// are read while it waits for them.
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := &socketTransport{c: c, waiting: map[string]chan Message{}, closed: make(chan struct{})}
	q := newQueue()
	done := make(chan struct{})
	var handleErr error
	go func() {
		defer close(done)
		handleErr = w.handleAll(hctx, st, q)
		cancel()
	}()
	defer func() {
		st.shut() // a call waiting for its answer fails
		cancel()
		<-done
	}()
	for {
		m, err := readMessage(hctx, c)
		if err != nil {
			if ctx.Err() == nil && hctx.Err() != nil {
				<-done // the handler stopped: say why
				return fmt.Errorf("signing stopped: %w", handleErr)
			}
			return err
		}
		switch m.Type {
		case "signing_requests":
			q.push(m.Requests)
		case "signing_request":
			q.push([]Request{*m.Request})
		case "result":
			st.deliver(m)
		}
	}
}

// queue holds the pushed requests not yet handled. The socket's reader
// never waits on it (it must go on reading the results the handler waits
// for), and the handler takes what waits as one batch: requests pushed
// while a person answered the last question are asked in the next one.
type queue struct {
	mu    sync.Mutex
	rs    []Request
	ready chan struct{} // has a value when rs may be non-empty
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) push(rs []Request) {
	q.mu.Lock()
	q.rs = append(q.rs, rs...)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns up to n waiting requests, waiting for one until ctx ends.
func (q *queue) take(ctx context.Context, n int) ([]Request, bool) {
	for {
		q.mu.Lock()
		if len(q.rs) > 0 {
			k := min(n, len(q.rs))
			out := q.rs[:k:k]
			q.rs = q.rs[k:]
			more := len(q.rs) > 0
			q.mu.Unlock()
			if more {
				select {
				case q.ready <- struct{}{}:
				default:
				}
			}
			return out, true
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// readMessage reads the next well-formed message (a malformed one is
// logged by the caller's worker and skipped).
func readMessage(ctx context.Context, c *websocket.Conn) (Message, error) {
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			return Message{}, err
		}
		m, err := DecodeMessage(raw)
		if err != nil {
			continue
		}
		return m, nil
	}
}

// handleAll handles the pushed requests, up to Batch at a time, until ctx
// ends or a batch fails in a way that needs a new connection.
func (w *Worker) handleAll(ctx context.Context, t transport, q *queue) error {
	for {
		rs, ok := q.take(ctx, w.batchSize())
		if !ok {
			return nil
		}
		if err := w.handleBatch(ctx, t, rs); err != nil {
			// A call failed (the server restarting, say): drop the socket
			// and start over; what waits is pushed again.
			return err
		}
	}
}

// socketTransport sends the batch operations as messages on the socket
// and waits for their results, which the socket's reader delivers.
type socketTransport struct {
	c        *websocket.Conn
	mu       sync.Mutex
	waiting  map[string]chan Message
	closed   chan struct{} // closed when the reader stops (shut)
	shutOnce sync.Once
}

func (t *socketTransport) shut() { t.shutOnce.Do(func() { close(t.closed) }) }

// errSocketClosed is a call whose answer can no longer arrive.
var errSocketClosed = errors.New("signer: the WebSocket closed before the answer arrived")

func (t *socketTransport) do(ctx context.Context, op, key string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ch := make(chan Message, 1)
	t.mu.Lock()
	t.waiting[key] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.waiting, key)
		t.mu.Unlock()
	}()
	msg, err := json.Marshal(Message{Type: op, ID: key, Body: b})
	if err != nil {
		return err
	}
	if err := t.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return err
	}
	var m Message
	select {
	case m = <-ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.closed:
		return errSocketClosed
	}
	if m.Status/100 != 2 {
		var p struct{ Code, Detail string }
		_ = json.Unmarshal(m.Body, &p)
		return &APIError{Status: m.Status, Code: p.Code, Detail: p.Detail}
	}
	if out != nil {
		return json.Unmarshal(m.Body, out)
	}
	return nil
}

// deliver hands a result to the call waiting for it.
func (t *socketTransport) deliver(m Message) {
	t.mu.Lock()
	ch := t.waiting[m.ReplyTo]
	t.mu.Unlock()
	if ch != nil {
		select {
		case ch <- m:
		default:
		}
	}
}

// dialClient is the HTTP client for the upgrade: the worker's transport
// without its overall timeout, which would cut a long-lived socket.
func (w *Worker) dialClient() *http.Client {
	if w.HTTP == nil {
		return nil
	}
	c := *w.HTTP
	c.Timeout = 0
	return &c
}

// jitter spreads reconnects of many agents after a server restart.
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}
