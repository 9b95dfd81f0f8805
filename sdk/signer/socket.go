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
	"time"

	"github.com/coder/websocket"
)

// errNoSocket means the server answered the upgrade with something other
// than 101: it does not offer the WebSocket, so long-poll.
var errNoSocket = errors.New("signer: server does not offer the WebSocket")

// longPollSpell is how long the worker long-polls before it tries the
// WebSocket again.
const longPollSpell = 2 * time.Minute

// Message is one message the server sends on the signing WebSocket.
type Message struct {
	Type       string     `json:"type"` // hello, signing_request
	AgentID    string     `json:"agentId,omitempty"`
	ServerTime *time.Time `json:"serverTime,omitempty"`
	Request    *Request   `json:"request,omitempty"`
}

// DecodeMessage parses one WebSocket message. Unknown types decode without
// error (a newer server may send more); a signing_request without a
// request, or one without an id or signing input, is an error.
func DecodeMessage(b []byte) (Message, error) {
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return Message{}, fmt.Errorf("signer: message: %w", err)
	}
	if m.Type == "signing_request" {
		if m.Request == nil || m.Request.ID == "" || m.Request.SigningInput == "" {
			return Message{}, errors.New("signer: signing_request without a usable request")
		}
	}
	return m, nil
}

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

// runSocket holds one WebSocket until it drops, handling every request the
// server pushes. The server sends every pending request again on a new
// connection; the worker's memory of what it signed makes that harmless.
func (w *Worker) runSocket(ctx context.Context) error {
	h := http.Header{}
	h.Set("Authorization", w.Creds.authz())
	c, resp, err := websocket.Dial(ctx, socketURL(w.Creds.Server, w.Creds.AgentID), &websocket.DialOptions{HTTPHeader: h, HTTPClient: w.dialClient()})
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
	c.SetReadLimit(32 << 20)
	w.log().Info("connected", "transport", "websocket")

	// Requests are handled one at a time apart from the reading, so that a
	// policy waiting for a person does not stop the socket from answering
	// the server's pings.
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reqs := make(chan Request, 64)
	done := make(chan struct{})
	var handleErr error
	go func() {
		defer close(done)
		handleErr = w.handleAll(hctx, reqs)
		cancel()
	}()
	defer func() {
		cancel()
		close(reqs)
		<-done
	}()
	for {
		_, raw, err := c.Read(hctx)
		if err != nil {
			if ctx.Err() == nil && hctx.Err() != nil {
				<-done
				return fmt.Errorf("signing stopped: %w", handleErr)
			}
			return err
		}
		m, err := DecodeMessage(raw)
		if err != nil {
			w.log().Warn("ignored a malformed message", "err", err)
			continue
		}
		if m.Type != "signing_request" {
			continue
		}
		select {
		case reqs <- *m.Request:
		case <-hctx.Done():
		}
	}
}

// handleAll handles the pushed requests in order until reqs closes or one
// fails in a way that needs a new connection.
func (w *Worker) handleAll(ctx context.Context, reqs <-chan Request) error {
	for r := range reqs {
		if ctx.Err() != nil {
			continue // drain: the connection is going
		}
		if err := w.Handle(ctx, r); err != nil {
			var api *APIError
			if errors.As(err, &api) && (api.Status == http.StatusConflict || api.Status == http.StatusGone) {
				w.log().Info("skipped", "request", r.ID, "reason", api.Code)
				continue
			}
			// The REST call failed (the server restarting, say): drop the
			// socket and start over; the request is sent again.
			return fmt.Errorf("request %s: %w", r.ID, err)
		}
	}
	return nil
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
