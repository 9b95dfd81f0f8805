package einvoiceapi

// WebSocket delivery of signing requests: an upgrade of GET
// /v1/agents/{id}/signing-requests (the plain GET is the long-poll).
//
// The socket only delivers. The agent still claims, signs and refuses over
// the REST operations, whose guarded state transitions are what make a
// request impossible to sign twice, so a message lost with a dropped
// connection, or delivered again after a reconnect, costs nothing.
//
// Protocol (JSON text messages, server to agent; docs/signing.md):
//
//	{"type":"hello","agentId":"agt_…","serverTime":"…"}        once, first
//	{"type":"signing_request","request":{…SigningRequest…}}     each pending request, once per connection
//
// The server reads nothing but control frames; it pings every 20 s and
// looks for new requests in the store every WSPollInterval, so a request
// created by any process sharing the store reaches the socket held by
// another.

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
)

// WSMessage is one message of the signing WebSocket.
type WSMessage struct {
	Type       string                     `json:"type"`
	AgentID    string                     `json:"agentId,omitempty"`
	ServerTime *time.Time                 `json:"serverTime,omitempty"`
	Request    *einvoicing.SigningRequest `json:"request,omitempty"`
}

const (
	wsPing       = 20 * time.Second
	wsTouchEvery = 30 * time.Second // < einvoicing.AgentOnlineTTL, so signerReady holds
	// wsPollInterval is how often a socket looks for new requests: one
	// indexed read per connected agent, and the delivery latency.
	wsPollInterval = 250 * time.Millisecond
)

func (h *handlers) registerSigningWS(s *httpx.Service) {
	s.HandleUpgrade("GET /v1/agents/{id}/signing-requests", http.HandlerFunc(h.agentSocket))
}

func (h *handlers) agentSocket(w http.ResponseWriter, r *http.Request) {
	p, err := h.socketAgent(r)
	if err != nil {
		httpx.WriteProblem(w, r, httpx.FromError(err))
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered the client already
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context())
	h.deps.Log.InfoContext(ctx, "signing agent connected", "agent", p.CredentialID, "transport", "websocket")
	defer h.agentGone(p.CredentialID)

	now := h.svc.Now().UTC()
	if err := wsjson.Write(ctx, c, WSMessage{Type: "hello", AgentID: p.CredentialID, ServerTime: &now}); err != nil {
		return
	}
	sent := map[string]bool{}
	draining := httpx.Draining(r.Context())
	poll := time.NewTicker(wsPollInterval)
	defer poll.Stop()
	ping := time.NewTicker(wsPing)
	defer ping.Stop()
	touch := time.NewTicker(wsTouchEvery)
	defer touch.Stop()
	for {
		reqs, err := h.svc.PendingForAgent(ctx, p)
		if err != nil {
			if ctx.Err() == nil {
				h.deps.Log.ErrorContext(ctx, "signing socket: pending requests", "agent", p.CredentialID, "err", err)
				c.Close(websocket.StatusInternalError, "store unavailable")
			}
			return
		}
		for i := range reqs {
			if sent[reqs[i].ID] {
				continue
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := wsjson.Write(wctx, c, WSMessage{Type: "signing_request", Request: &reqs[i]})
			cancel()
			if err != nil {
				return
			}
			sent[reqs[i].ID] = true
		}
		select {
		case <-ctx.Done():
			c.Close(websocket.StatusGoingAway, "")
			return
		case <-draining:
			c.Close(websocket.StatusGoingAway, "server shutting down")
			return
		case <-poll.C:
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := c.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		case <-touch.C:
			if err := h.svc.TouchAgent(ctx, p.CredentialID); err != nil {
				return
			}
		}
	}
}

// socketAgent authenticates the agent of a WebSocket upgrade, which the
// huma guard does not see, and checks it is the agent of the path.
func (h *handlers) socketAgent(r *http.Request) (*auth.Principal, error) {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	id, secret, ok := strings.Cut(strings.TrimSpace(cred), ".")
	if !strings.EqualFold(scheme, "Agent") || !ok || id == "" || secret == "" {
		return nil, einvoicing.ErrAgentUnauthenticated
	}
	p, err := h.svc.AuthenticateAgent(r.Context(), id, secret)
	if err != nil {
		return nil, err
	}
	if p.CredentialID != r.PathValue("id") {
		return nil, denar.Errorf(denar.ECodeNotFound, "Agent %s not found.", r.PathValue("id"))
	}
	return p, nil
}

// agentGone records that the socket closed (signing_agent.offline).
func (h *handlers) agentGone(agentID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.svc.AgentGone(ctx, agentID); err != nil {
		h.deps.Log.Error("signing socket: record offline", "agent", agentID, "err", err)
	}
	h.deps.Log.Info("signing agent disconnected", "agent", agentID, "transport", "websocket")
}
