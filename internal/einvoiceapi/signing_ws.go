package einvoiceapi

// WebSocket delivery of signing requests: an upgrade of GET
// /v1/agents/{id}/signing-requests (the plain GET is the long-poll).
//
// The server pushes what the agent may sign; the agent answers with the
// batch operations, sent as messages on the same socket: each message is
// the POST of the same body, with its id as the Idempotency-Key, served
// in-process through the whole HTTP stack (httpx.Service.Dispatch), so a
// claim, signature or refusal means exactly what it means over REST — the
// guarded state transitions that make a request impossible to sign twice,
// the idempotent replay of an answer lost with a dropped connection, the
// agent's scope per item. A message lost with a dropped connection, or
// sent again after a reconnect, costs nothing.
//
// Protocol (JSON text messages; docs/signing.md):
//
//	server: {"type":"hello","agentId":"agt_…","serverTime":"…","batch":N}   once, first
//	server: {"type":"signing_requests","requests":[…up to N…]}               with ?batch=N
//	server: {"type":"signing_request","request":{…}}                         without ?batch (one per message)
//	agent:  {"type":"claim"|"signatures"|"refusals","id":"<key>","body":{…}}
//	server: {"type":"result","replyTo":"<key>","status":200,"body":{…}}     the POST's answer (or problem)
//
// Each pending request is pushed once per connection. The server looks for
// new requests in the store when a transaction that created requests of
// the agent's account commits (einvoicing.WatchSigningRequests: on
// PostgreSQL in any process sharing the store, on SQLite in this one), and
// every Deps.SigningPoll as well, for a wake-up lost or made elsewhere (an
// admin command on SQLite). The server pings every 20 s. Every
// signing.AgentRecheck it
// reads the agent's credential again, so a revocation made anywhere
// closes the socket (1008, "agent revoked") within about a second.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/jsontext"
)

// WSMessage is one message of the signing WebSocket, either way.
type WSMessage struct {
	Type       string     `json:"type"`
	AgentID    string     `json:"agentId,omitempty"`
	ServerTime *time.Time `json:"serverTime,omitempty"`
	// Batch (hello) is the most requests one signing_requests message
	// carries: the ?batch=N of the upgrade; 0 without it.
	Batch    int                         `json:"batch,omitempty"`
	Request  *einvoicing.SigningRequest  `json:"request,omitempty"`
	Requests []einvoicing.SigningRequest `json:"requests,omitempty"`
	// ID names an agent's claim, signatures or refusals message: the
	// Idempotency-Key of the operation it carries; ReplyTo is the ID a
	// result answers.
	ID      string `json:"id,omitempty"`
	ReplyTo string `json:"replyTo,omitempty"`
	// Status and Body are a result's: the operation's HTTP status and
	// its body (the batch's answer, or a problem). Body of an agent's
	// message is the operation's request body.
	Status int             `json:"status,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// wsOperations are the operations an agent sends as messages, by type.
var wsOperations = map[string]string{"claim": pathClaims, "signatures": pathSignatures, "refusals": pathRefusals}

const (
	wsPing       = 20 * time.Second
	wsTouchEvery = 30 * time.Second // < einvoicing.AgentOnlineTTL, so signerReady holds
	// DefaultSigningPoll is how often an agent's socket looks for new
	// requests when nothing woke it (Deps.SigningPoll): the fallback of the
	// wake-up on commit, one indexed read per connected agent.
	DefaultSigningPoll = time.Second
)

func (h *handlers) registerSigningWS(s *httpx.Service) {
	h.wsMessages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "denar_signing_socket_messages_total",
		Help: "Messages on the signing agents' WebSockets, by direction (sent: to agents, received: from them) and type.",
	}, []string{"direction", "type"})
	s.Metrics.Registry.MustRegister(h.wsMessages)
	s.HandleUpgrade("GET /v1/agents/{id}/signing-requests", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.agentSocket(s, w, r)
	}))
}

// wsWrite sends m on c within 10 s and counts it.
func (h *handlers) wsWrite(ctx context.Context, c *websocket.Conn, m WSMessage) error {
	wctx, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	if err := wsjson.Write(wctx, c, m); err != nil {
		return err
	}
	h.wsMessages.WithLabelValues("sent", m.Type).Inc()
	return nil
}

// legacyPushLimit is how many requests a socket without ?batch looks at
// per poll (each pushed in a message of its own), as before batches.
const legacyPushLimit = 50

func (h *handlers) agentSocket(api *httpx.Service, w http.ResponseWriter, r *http.Request) {
	p, err := h.socketAgent(r)
	if err != nil {
		httpx.WriteProblem(w, r, httpx.FromError(err))
		return
	}
	batch := 0
	if v := r.URL.Query().Get("batch"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > signing.MaxSigningBatch {
			httpx.WriteProblem(w, r, httpx.FromError(denar.Invalid(denar.FieldError{Path: "query.batch",
				Message: "must be an integer from 1 to " + strconv.Itoa(signing.MaxSigningBatch)})))
			return
		}
		batch = n
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered the client already
	}
	defer c.CloseNow()
	c.SetReadLimit(maxSigningBatchBody + 64<<10)
	ctx, cancel := context.WithCancel(r.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	h.deps.Log.InfoContext(ctx, "signing agent connected", "agent", p.CredentialID, "transport", "websocket", "batch", batch)
	defer h.agentGone(p.CredentialID)

	// The agent's messages are read apart from the pushing, and answered
	// one at a time in the order they came.
	incoming := make(chan []byte, 4)
	// answered has a value once an agent's message was answered: what the
	// agent finished frees the window for requests beyond it.
	answered := make(chan struct{}, 1)
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(incoming)
		defer cancel()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			select {
			case incoming <- data:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for data := range incoming {
			if ctx.Err() != nil {
				continue // the socket is closing: nobody reads the answer
			}
			if err := h.wsWrite(ctx, c, h.socketAnswer(ctx, api, r, data)); err != nil {
				cancel()
			}
			select {
			case answered <- struct{}{}:
			default:
			}
		}
	}()

	now := h.svc.Now().UTC()
	if err := h.wsWrite(ctx, c, WSMessage{Type: "hello", AgentID: p.CredentialID, ServerTime: &now, Batch: batch}); err != nil {
		return
	}
	limit := legacyPushLimit
	if batch > 0 {
		// One batch at a time: what was pushed and is not finished fills
		// the window, so the next batch follows once the agent answered.
		limit = batch
	}
	sent := map[string]bool{}
	draining := httpx.Draining(r.Context())
	// Watched before the first look: a request committed in between wakes
	// the loop instead of waiting for the poll.
	wake, stopWake := h.svc.WatchSigningRequests(p.AccountID)
	defer stopWake()
	poll := time.NewTicker(h.deps.SigningPoll)
	defer poll.Stop()
	ping := time.NewTicker(wsPing)
	defer ping.Stop()
	touch := time.NewTicker(wsTouchEvery)
	defer touch.Stop()
	recheck := time.NewTicker(signing.AgentRecheck)
	defer recheck.Stop()
	// The store is read at the start, on a wake-up and on the poll, not
	// on the ping, touch and recheck ticks. In batch mode a batch is
	// pushed once the agent has finished the one before (signed or
	// refused each request of it), so that requests issued meanwhile
	// reach it together, as one batch, not one by one as they commit;
	// after SigningPoll the hold ends all the same (an agent that leaves
	// a request unanswered does not stop the others). Two batches are at
	// least batchGap apart.
	var pushed time.Time
	var gap <-chan time.Time // the look at the end of batchGap
	for look := true; ; {
		if look {
			look = false
			reqs, err := h.signing.PendingForAgent(ctx, p, limit)
			if err != nil {
				if ctx.Err() == nil {
					h.deps.Log.ErrorContext(ctx, "signing socket: pending requests", "agent", p.CredentialID, "err", err)
					c.Close(websocket.StatusInternalError, "store unavailable")
				}
				return
			}
			var msgs []WSMessage
			var fresh []einvoicing.SigningRequest
			open := false // a request pushed before is not finished
			for i := range reqs {
				if sent[reqs[i].ID] {
					open = true
					continue
				}
				if batch == 0 {
					msgs = append(msgs, WSMessage{Type: "signing_request", Request: &reqs[i]})
				} else {
					fresh = append(fresh, reqs[i])
				}
			}
			switch since := time.Since(pushed); {
			case len(fresh) > 0 && open && since < h.deps.SigningPoll:
				// Held until the agent answers (answered) or the poll.
			case len(fresh) > 0 && since < batchGap:
				// Too soon after the last batch: the requests of a burst
				// of issues gather for a moment into the next.
				if gap == nil {
					gap = time.After(batchGap - since)
				}
			case len(fresh) > 0:
				msgs = append(msgs, WSMessage{Type: "signing_requests", Requests: fresh})
				pushed = time.Now()
			}
			for _, m := range msgs {
				if err := h.wsWrite(ctx, c, m); err != nil {
					return
				}
				if m.Request != nil {
					sent[m.Request.ID] = true
				}
				for _, r := range m.Requests {
					sent[r.ID] = true
				}
			}
		}
		select {
		case <-ctx.Done():
			c.Close(websocket.StatusGoingAway, "")
			return
		case <-draining:
			c.Close(websocket.StatusGoingAway, "server shutting down")
			return
		case <-wake:
			look = true
		case <-gap:
			gap, look = nil, true
		case <-answered:
			look = true
		case <-poll.C:
			look = true
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := c.Ping(pctx)
			cancel()
			if err != nil {
				return
			}
		case <-touch.C:
			if err := h.signing.TouchAgent(ctx, p.CredentialID); err != nil {
				if errors.Is(err, signing.ErrAgentRevoked) {
					c.Close(websocket.StatusPolicyViolation, "agent revoked")
				}
				return
			}
		case <-recheck.C:
			// The credential is read again: a revocation by any process
			// sharing the store closes the socket within AgentRecheck.
			switch err := h.signing.CheckAgent(ctx, p.CredentialID); {
			case errors.Is(err, signing.ErrAgentRevoked), errors.Is(err, signing.ErrAgentUnauthenticated):
				h.deps.Log.InfoContext(ctx, "signing socket: agent revoked", "agent", p.CredentialID)
				c.Close(websocket.StatusPolicyViolation, "agent revoked")
				return
			case err != nil && ctx.Err() == nil:
				h.deps.Log.ErrorContext(ctx, "signing socket: check agent", "agent", p.CredentialID, "err", err)
				c.Close(websocket.StatusInternalError, "store unavailable")
				return
			}
		}
	}
}

// batchGap is the least time between two batches pushed on one socket:
// what a burst of issues gathers into one batch, and the most a request
// waits for it.
const batchGap = 100 * time.Millisecond

// socketAnswer serves one message of the agent: the batch operation it
// names, as the POST of its body with its id as the Idempotency-Key and
// the socket's credentials, through the whole HTTP stack. A message that
// names no operation is answered with a problem.
func (h *handlers) socketAnswer(ctx context.Context, api *httpx.Service, up *http.Request, data []byte) WSMessage {
	var m WSMessage
	reply := WSMessage{Type: "result"}
	fail := func(err error) WSMessage {
		p := httpx.ProblemOf(up.Context(), err)
		body, _ := json.Marshal(p)
		reply.Status, reply.Body = p.Status, body
		return reply
	}
	if err := json.Unmarshal(data, &m); err != nil {
		h.wsMessages.WithLabelValues("received", "invalid").Inc()
		return fail(denar.Invalid(jsontext.MalformedJSON(data)))
	}
	reply.ReplyTo = m.ID
	path, ok := wsOperations[m.Type]
	if ok {
		h.wsMessages.WithLabelValues("received", m.Type).Inc()
	} else {
		h.wsMessages.WithLabelValues("received", "invalid").Inc()
	}
	switch {
	case !ok:
		return fail(denar.Invalid(denar.FieldError{Path: "type", Message: "an agent sends claim, signatures or refusals"}))
	case m.ID == "":
		return fail(denar.Invalid(denar.FieldError{Path: "id", Message: "is required: the operation's Idempotency-Key"}))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(m.Body))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Authorization", up.Header.Get("Authorization"))
	req.Header.Set("Idempotency-Key", m.ID)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", up.Header.Get("User-Agent"))
	req.RemoteAddr, req.Host = up.RemoteAddr, up.Host
	status, _, body := api.Dispatch(req)
	reply.Status, reply.Body = status, bytes.TrimSpace(body)
	return reply
}

// socketAgent authenticates the agent of a WebSocket upgrade, which the
// huma guard does not see, and checks it is the agent of the path.
func (h *handlers) socketAgent(r *http.Request) (*auth.Principal, error) {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	id, secret, ok := strings.Cut(strings.TrimSpace(cred), ".")
	if !strings.EqualFold(scheme, "Agent") || !ok || !httpx.CredentialText(id) || !httpx.CredentialText(secret) {
		return nil, signing.ErrAgentUnauthenticated
	}
	p, err := h.signing.AuthenticateAgent(r.Context(), id, secret)
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
	if err := h.signing.AgentGone(ctx, agentID); err != nil {
		h.deps.Log.Error("signing socket: record offline", "agent", agentID, "err", err)
	}
	h.deps.Log.Info("signing agent disconnected", "agent", agentID, "transport", "websocket")
}
