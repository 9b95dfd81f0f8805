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
	"database/sql"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
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
	who, err := h.authAgentPath(r.Context(), AgentAuth{Authorization: r.Header.Get("Authorization"), ID: r.PathValue("id")})
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
	h.deps.Log.InfoContext(ctx, "signing agent connected", "agent", who.AgentID, "transport", "websocket")
	defer h.agentGone(who)

	now := h.deps.DB.Now().UTC()
	if err := wsjson.Write(ctx, c, WSMessage{Type: "hello", AgentID: who.AgentID, ServerTime: &now}); err != nil {
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
		rows, err := h.deps.DB.Reader().ListAgentPendingRequests(ctx, dbq.ListAgentPendingRequestsParams{AgentID: who.AgentID, Now: h.deps.DB.Now()})
		if err != nil {
			if ctx.Err() == nil {
				h.deps.Log.ErrorContext(ctx, "signing socket: pending requests", "agent", who.AgentID, "err", err)
				c.Close(websocket.StatusInternalError, "store unavailable")
			}
			return
		}
		for _, row := range rows {
			if sent[row.ID] {
				continue
			}
			req := einvoicing.SigningRequestFrom(row)
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := wsjson.Write(wctx, c, WSMessage{Type: "signing_request", Request: &req})
			cancel()
			if err != nil {
				return
			}
			sent[row.ID] = true
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
			if err := h.touchAgent(ctx, who.AgentID); err != nil {
				return
			}
		}
	}
}

// touchAgent refreshes last_seen_at while a socket is open.
func (h *handlers) touchAgent(ctx context.Context, agentID string) error {
	return h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetSigningAgent(ctx, agentID)
		if err != nil {
			return err
		}
		return h.markSeen(ctx, tx, a)
	})
}

// agentGone records signing_agent.offline when a socket closes and clears
// last_seen_at, so signerReady turns false at once rather than after the
// reachability window, and the next connection records online again.
func (h *handlers) agentGone(who signerIdentity) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateSigningEvent(ctx, dbq.CreateSigningEventParams{ID: denar.NewID("evt"), AccountID: who.AccountID,
			Type: "signing_agent.offline", ObjectID: who.AgentID, CreatedAt: tx.Now}); err != nil {
			return err
		}
		return tx.TouchSigningAgent(ctx, dbq.TouchSigningAgentParams{ID: who.AgentID, Now: sql.NullTime{}})
	})
	if err != nil {
		h.deps.Log.Error("signing socket: record offline", "agent", who.AgentID, "err", err)
	}
	h.deps.Log.Info("signing agent disconnected", "agent", who.AgentID, "transport", "websocket")
}
