// Package signer is the signing worker of the denar e-invoicing API for
// customers who sign on their own server (the sdk signing mode) and the
// loop inside denar-agent: receive signing requests, claim, sign with a
// crypto.Signer holding the registered certificate's key, submit — in
// batches: the requests waiting (up to Worker.Batch) are claimed in one
// call, decided at once (BatchPolicy: one question to a person), signed in
// one session of the key (Session: one PIN entry for a PKCS#11 token) and
// answered in one call, so a batch of 100 costs two round trips, not 200.
//
// It imports nothing from the server; the wire format is the public API.
// The server guarantees no request is signed twice (claims and signatures
// are guarded state transitions); the worker adds a local memory of what it
// signed so a retry after a dropped connection resubmits the same JWS
// instead of producing a second signature.
package signer

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Request is a signing request as the API returns it.
type Request struct {
	ID              string            `json:"id"`
	CompanyID       string            `json:"companyId"`
	Purpose         string            `json:"purpose"`
	State           string            `json:"state"`
	ProtectedHeader string            `json:"protectedHeader"`
	Payload         string            `json:"payload"`
	SigningInput    string            `json:"signingInput"`
	ExpiresAt       time.Time         `json:"expiresAt"`
	Links           map[string]string `json:"links"`
	// JWS is the signature the server accepted, once signed.
	JWS *string `json:"jws,omitempty"`
	// Summary is what a person is shown before signing; nil from a server
	// that does not send it.
	Summary *Summary `json:"summary"`
}

// Summary is what a signer is shown before signing (the payload is UJP's
// JSON, which no person reads): the company, what the signature does, and
// for a document its number, buyer (or, for a decision on an incoming
// invoice, seller) and gross total. Fields that do not apply are nil.
type Summary struct {
	CompanyName    string  `json:"companyName"`
	Purpose        string  `json:"purpose"`
	DocumentNumber *string `json:"documentNumber"`
	BuyerName      *string `json:"buyerName"`
	SellerName     *string `json:"sellerName"`
	GrossTotal     *string `json:"grossTotal"`
	Currency       *string `json:"currency"`
}

// Decision is what a Policy says about a request: sign it, or refuse with
// one of the API's reasons (user_declined, policy, token_missing,
// pin_locked, payload_invalid, unattended). token_missing, pin_locked and
// unattended (nobody was there to ask) keep an e-invoice waiting and ask
// again later; the others fail it.
type Decision struct {
	Sign    bool
	Reason  string
	Message string
}

// Policy decides per request; nil signs everything (servers, --auto).
type Policy func(ctx context.Context, r Request) Decision

// BatchPolicy decides a batch at once — asks a person once for the lot —
// and returns one Decision per request, in their order.
type BatchPolicy func(ctx context.Context, rs []Request) []Decision

// Session is implemented by a crypto.Signer that signs in sessions, such
// as a PKCS#11 token that logs in once per session (one PIN entry). The
// worker calls Begin before the first signature of a batch and End after
// its last; the signer may keep its session open while batches keep
// coming. An error of Begin refuses the batch's requests (with the reason
// of a RefusalError, else token_missing).
type Session interface {
	Begin(ctx context.Context) error
	End()
}

// RefusalError is an error of a signer (Sign, or Session.Begin) that says
// how the requests it concerns are refused: pin_locked for a token whose
// PIN is locked or refused, token_missing for a token that is gone. Any
// other signing error refuses with token_missing, which keeps a document
// waiting.
type RefusalError struct {
	Reason string
	Err    error
}

func (e *RefusalError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *RefusalError) Unwrap() error { return e.Err }

// refusalReason is the reason a signing error refuses with.
func refusalReason(err error) string {
	var re *RefusalError
	if errors.As(err, &re) && re.Reason != "" {
		return re.Reason
	}
	return "token_missing"
}

// MaxBatch is the most requests the API takes in one batch.
const MaxBatch = 100

// Credentials are what pairing returned.
type Credentials struct {
	Server  string `json:"server"`
	AgentID string `json:"agentId"`
	Secret  string `json:"agentSecret"`
	// Environment is the pairing code's, sandbox or production (empty in
	// credentials saved before it was recorded).
	Environment string `json:"environment,omitempty"`
}

// Worker signs requests for one agent.
type Worker struct {
	Creds  Credentials
	Signer crypto.Signer // RSA key of Cert; PKCS#1 v1.5 with SHA-256 (RS256); may implement Session
	// BatchPolicy decides each batch at once; without it Policy decides
	// each request; without either every request is signed.
	BatchPolicy BatchPolicy
	Policy      Policy
	Log         *slog.Logger
	HTTP        *http.Client
	// Wait is the long-poll wait in seconds (default 25).
	Wait int
	// Batch is the most requests handled at once, 1 to MaxBatch (default
	// MaxBatch).
	Batch int
	// OnSigned is told after the server accepted a signature (audit log).
	OnSigned func(r Request, jws string)

	mu     sync.Mutex
	signed map[string]string // request id → JWS made, until the server answered for it
}

// APIError is a problem answered by the API.
type APIError struct {
	Status int
	Code   string
	Detail string
}

func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail) }

// ErrPairingAnswerLost is what Pair returns (wrapped with the server's
// problem) when an earlier attempt with the same code paired an agent
// whose answer never arrived: the agent's secret was shown once, in that
// answer, and the server does not keep it. Create a new pairing code and
// pair again.
var ErrPairingAnswerLost = errors.New("an earlier attempt with this code paired an agent but its answer was lost, " +
	"and the agent's secret is shown only once: create a new pairing code and pair again")

// Pair exchanges a pairing code for agent credentials.
func Pair(ctx context.Context, client *http.Client, server, code, name string) (Credentials, error) {
	var out Credentials
	// The key follows the code: running pair again with the same code
	// after a lost answer is recognised as the same pairing, and answered
	// secret_already_shown (ErrPairingAnswerLost) rather than a used code.
	key := "pair:" + strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	err := call(ctx, client, http.MethodPost, strings.TrimRight(server, "/")+"/v1/agents/pair", "", key, map[string]string{"code": code, "name": name}, &out)
	var api *APIError
	if errors.As(err, &api) && api.Code == "secret_already_shown" {
		err = fmt.Errorf("%w (%w)", ErrPairingAnswerLost, err)
	}
	out.Server = strings.TrimRight(server, "/")
	return out, err
}

// NewPairingCode asks for a pairing code with an e-invoicing API key
// (scope companies:write), as POST /v1/agents/pairing-codes; the code pairs
// one agent in the key's account and environment within 10 minutes.
func NewPairingCode(ctx context.Context, client *http.Client, server, apiKey string) (string, error) {
	var out struct{ Code string }
	// Every call asks for a new code; a retry of a lost answer gets another
	// one, and the unused code expires.
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	err := call(ctx, client, http.MethodPost, strings.TrimRight(server, "/")+"/v1/agents/pairing-codes", "Bearer "+apiKey,
		"pairing-code:"+hex.EncodeToString(nonce[:]), nil, &out)
	if err == nil && out.Code == "" {
		err = errors.New("pairing code: the answer holds no code")
	}
	return out.Code, err
}

// RegisterCertificate links cert to companyID for this agent, without an
// EUJP id: only a sandbox company whose UJP is the service's simulator
// accepts that (the service makes one up). Use RegisterCertificateAs
// everywhere UJP itself is called.
func RegisterCertificate(ctx context.Context, client *http.Client, c Credentials, cert *x509.Certificate, companyID string) error {
	return RegisterCertificateAs(ctx, client, c, cert, companyID, "")
}

// RegisterCertificateAs links cert to companyID for this agent, as the UJP
// user eujpID: the EUJP id of the certificate holder's e-UJP registration,
// which UJP identifies the signer by (X-EUJP-ID).
func RegisterCertificateAs(ctx context.Context, client *http.Client, c Credentials, cert *x509.Certificate, companyID, eujpID string) error {
	sum := sha256.Sum256(cert.Raw)
	key := "certificate:" + companyID + ":" + eujpID + ":" + hex.EncodeToString(sum[:16])
	body := map[string]string{"certificateDer": base64.StdEncoding.EncodeToString(cert.Raw), "companyId": companyID}
	if eujpID != "" {
		body["eujpId"] = eujpID
	}
	return call(ctx, client, http.MethodPost, c.Server+"/v1/agents/"+c.AgentID+"/certificates", c.authz(), key, body, nil)
}

func (c Credentials) authz() string { return "Agent " + c.AgentID + "." + c.Secret }

// Run signs until ctx ends. It keeps a WebSocket to the server open and
// handles each request the server pushes; when the server refuses the
// upgrade it long-polls instead for a while and then tries the socket
// again. A dropped connection or an unreachable server is retried with
// exponential backoff (1 s doubling to 60 s, with jitter). Only a rejected
// credential (401) ends it early.
func (w *Worker) Run(ctx context.Context) error {
	backoff := time.Second
	for {
		started := time.Now()
		err := w.runSocket(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var api *APIError
		if errors.As(err, &api) && api.Status == http.StatusUnauthorized {
			return err // credentials revoked or wrong: retrying cannot help
		}
		if errors.Is(err, ErrNoBatches) {
			return err // an older server: retrying cannot help
		}
		if errors.Is(err, errNoSocket) {
			w.log().Info("server refused the WebSocket; long-polling", "err", err)
			err = w.pollFor(ctx, longPollSpell)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.As(err, &api) && api.Status == http.StatusUnauthorized {
				return err
			}
			if err == nil {
				backoff = time.Second
				continue
			}
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second // the connection was healthy for a while
		}
		wait := jitter(backoff)
		w.log().Warn("signing connection lost", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// pollFor long-polls for d, or until an error.
func (w *Worker) pollFor(ctx context.Context, d time.Duration) error {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := w.Once(ctx); err != nil {
			return err
		}
	}
	return nil
}

// batchSize is Batch within 1 to MaxBatch.
func (w *Worker) batchSize() int {
	if w.Batch < 1 || w.Batch > MaxBatch {
		return MaxBatch
	}
	return w.Batch
}

// Once long-polls for the requests waiting (up to Batch, waiting up to
// Wait seconds) and handles them as one batch.
func (w *Worker) Once(ctx context.Context) error {
	wait := w.Wait
	if wait == 0 {
		wait = 25
	}
	var list struct {
		Data []Request `json:"data"`
	}
	url := fmt.Sprintf("%s/v1/agents/%s/signing-requests?wait=%d&limit=%d", w.Creds.Server, w.Creds.AgentID, wait, w.batchSize())
	if err := call(ctx, w.client(), http.MethodGet, url, w.Creds.authz(), "", nil, &list); err != nil {
		return err
	}
	if len(list.Data) == 0 {
		return nil
	}
	return w.HandleBatch(ctx, list.Data)
}

// Handle claims, decides, signs and submits one request (HandleBatch of
// one, over REST).
func (w *Worker) Handle(ctx context.Context, r Request) error {
	return w.HandleBatch(ctx, []Request{r})
}

// HandleBatch claims, decides, signs and answers rs over REST: one call
// for the claims, one for the signatures and one for the refusals (if
// any). An error means the server was not reached or refused a whole call;
// per-request outcomes (another agent claimed first, a request expired)
// are logged, not returned.
func (w *Worker) HandleBatch(ctx context.Context, rs []Request) error {
	return w.handleBatch(ctx, rest{w}, rs)
}

// transport carries the batch operations: REST calls, or messages on the
// WebSocket.
type transport interface {
	// do runs operation op (claim, signatures or refusals) with body and
	// Idempotency-Key key, decoding its answer into out.
	do(ctx context.Context, op, key string, body, out any) error
}

var opPaths = map[string]string{"claim": "/v1/signing-requests/claims", "signatures": "/v1/signing-requests/signatures",
	"refusals": "/v1/signing-requests/refusals"}

// rest is the REST transport.
type rest struct{ w *Worker }

func (t rest) do(ctx context.Context, op, key string, body, out any) error {
	return call(ctx, t.w.client(), http.MethodPost, t.w.Creds.Server+opPaths[op], t.w.Creds.authz(), key, body, out)
}

// batchResult is the answer of a batch operation.
type batchResult struct {
	Data []struct {
		ID      string       `json:"id"`
		Status  int          `json:"status"`
		Request *Request     `json:"request"`
		Error   *itemProblem `json:"error"`
	} `json:"data"`
}

// itemProblem is the problem of one item of a batch.
type itemProblem struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

type signatureItem struct {
	ID  string `json:"id"`
	JWS string `json:"jws"`
}

type refusalItem struct {
	ID      string `json:"id"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// maxBatchBody bounds the body of one call of signatures: a batch of very
// large documents is sent in several calls.
const maxBatchBody = 8 << 20

// opKey is the Idempotency-Key of operation op with body: the same batch
// sent again (after a dropped connection, the worker's memory giving the
// same signatures) is answered as the first time, item for item.
func opKey(op string, body any) string {
	b, _ := json.Marshal(body)
	sum := sha256.Sum256(b)
	return op + ":" + hex.EncodeToString(sum[:16])
}

// handleBatch is HandleBatch over transport t.
func (w *Worker) handleBatch(ctx context.Context, t transport, rs []Request) error {
	trips := 0
	// Signed before a connection dropped: resubmit the same JWS.
	var sigs []signatureItem
	var toClaim []string
	byID := map[string]Request{}
	w.mu.Lock()
	for _, r := range rs {
		if _, dup := byID[r.ID]; dup {
			continue
		}
		byID[r.ID] = r
		if jws, ok := w.signed[r.ID]; ok {
			sigs = append(sigs, signatureItem{r.ID, jws})
		} else {
			toClaim = append(toClaim, r.ID)
		}
	}
	w.mu.Unlock()

	// One claim for the lot; its answer carries each request as this
	// agent signs it (its protected header names this agent's
	// certificate). A request listed as claimed is one this agent claimed
	// before a restart: claiming it again answers it the same.
	var claimed []Request
	if len(toClaim) > 0 {
		body := map[string]any{"ids": toClaim}
		var res batchResult
		trips++
		if err := t.do(ctx, "claim", opKey("claim", body), body, &res); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		for _, it := range res.Data {
			if it.Status == http.StatusOK && it.Request != nil && it.Request.ID == it.ID {
				claimed = append(claimed, *it.Request)
				continue
			}
			w.skipped(it.ID, it.Status, it.Error)
		}
	}

	var refusals []refusalItem
	if len(claimed) > 0 {
		decisions := w.decide(ctx, claimed)
		var toSign []Request
		for i, r := range claimed {
			if d := decisions[i]; !d.Sign {
				w.log().Info("refused", "request", r.ID, "purpose", r.Purpose, "reason", d.Reason)
				refusals = append(refusals, refusalItem{r.ID, d.Reason, d.Message})
				continue
			}
			toSign = append(toSign, r)
		}
		made, refused := w.signAll(ctx, toSign)
		refusals = append(refusals, refused...)
		sigs = append(sigs, made...)
	}

	signed, failed := 0, 0
	for len(sigs) > 0 {
		n, size := 0, 0
		for n < len(sigs) && n < MaxBatch && (n == 0 || size+len(sigs[n].JWS) < maxBatchBody) {
			size += len(sigs[n].JWS)
			n++
		}
		chunk := sigs[:n]
		sigs = sigs[n:]
		body := map[string]any{"items": chunk}
		var res batchResult
		trips++
		if err := t.do(ctx, "signatures", opKey("signatures", body), body, &res); err != nil {
			return fmt.Errorf("signatures: %w", err)
		}
		for _, it := range res.Data {
			w.forget(it.ID)
			if it.Status == http.StatusOK && it.Request != nil && it.Request.JWS != nil {
				signed++
				r := *it.Request
				w.log().Info("signed", "request", r.ID, "purpose", r.Purpose, "company", r.CompanyID, "links", r.Links)
				if w.OnSigned != nil {
					w.OnSigned(r, *it.Request.JWS)
				}
				continue
			}
			failed++
			w.skipped(it.ID, it.Status, it.Error)
		}
	}
	if len(refusals) > 0 {
		body := map[string]any{"items": refusals}
		var res batchResult
		trips++
		if err := t.do(ctx, "refusals", opKey("refusals", body), body, &res); err != nil {
			return fmt.Errorf("refusals: %w", err)
		}
		for _, it := range res.Data {
			if it.Status != http.StatusOK {
				w.skipped(it.ID, it.Status, it.Error)
			}
		}
	}
	w.log().Info("batch answered", "requests", len(byID), "signed", signed, "refused", len(refusals), "failed", failed, "round_trips", trips)
	return nil
}

// decide asks the batch policy, else the policy of each request; without
// either it signs everything.
func (w *Worker) decide(ctx context.Context, rs []Request) []Decision {
	out := make([]Decision, len(rs))
	switch {
	case w.BatchPolicy != nil:
		got := w.BatchPolicy(ctx, rs)
		for i := range out {
			if i < len(got) {
				out[i] = got[i]
			} else {
				out[i] = Decision{Reason: "policy", Message: "the batch policy gave no decision on this request"}
			}
		}
	case w.Policy != nil:
		for i, r := range rs {
			out[i] = w.Policy(ctx, r)
		}
	default:
		for i := range out {
			out[i] = Decision{Sign: true}
		}
	}
	return out
}

// signAll signs rs in one session of the signer (Session), keeping each
// JWS in the worker's memory until the server answered for it. A request
// the signer could not sign is refused with the reason of its error
// (RefusalError): a session that cannot begin refuses them all, a token
// pulled out halfway refuses only what it did not sign.
func (w *Worker) signAll(ctx context.Context, rs []Request) ([]signatureItem, []refusalItem) {
	if len(rs) == 0 {
		return nil, nil
	}
	var made []signatureItem
	var refused []refusalItem
	if sess, ok := w.Signer.(Session); ok {
		if err := sess.Begin(ctx); err != nil {
			reason := refusalReason(err)
			w.log().Warn("the signing key is not available", "err", err, "requests", len(rs), "reason", reason)
			for _, r := range rs {
				refused = append(refused, refusalItem{r.ID, reason, err.Error()})
			}
			return nil, refused
		}
		defer sess.End()
	}
	for _, r := range rs {
		jws, err := Sign(w.Signer, r)
		if err != nil {
			refused = append(refused, refusalItem{r.ID, refusalReason(err), err.Error()})
			continue
		}
		w.mu.Lock()
		if w.signed == nil {
			w.signed = map[string]string{}
		}
		w.signed[r.ID] = jws
		w.mu.Unlock()
		made = append(made, signatureItem{r.ID, jws})
	}
	return made, refused
}

// forget drops the JWS of a request the server answered for.
func (w *Worker) forget(id string) {
	w.mu.Lock()
	delete(w.signed, id)
	w.mu.Unlock()
}

// skipped logs an item the server did not take: another agent claimed
// it, it expired (a replacement follows), it is finished.
func (w *Worker) skipped(id string, status int, p *itemProblem) {
	code, detail := "", ""
	if p != nil {
		code, detail = p.Code, p.Detail
	}
	level := slog.LevelInfo
	if status != http.StatusConflict && status != http.StatusGone {
		level = slog.LevelWarn
	}
	w.log().Log(context.Background(), level, "skipped", "request", id, "status", status, "reason", code, "detail", detail)
}

// Sign returns the compact JWS of r: its protected header and payload
// verbatim, and an RS256 signature over the signing input.
func Sign(s crypto.Signer, r Request) (string, error) {
	input := r.ProtectedHeader + "." + r.Payload
	if r.SigningInput != "" && r.SigningInput != input {
		return "", errors.New("signer: signingInput does not match protectedHeader.payload")
	}
	sum := sha256.Sum256([]byte(input))
	sig, err := s.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("signer: sign %s: %w", r.ID, err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func (w *Worker) client() *http.Client {
	if w.HTTP != nil {
		return w.HTTP
	}
	return http.DefaultClient
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.Default()
}

// call sends body as JSON and decodes a 2xx answer into out, or returns an
// *APIError for a problem. A POST carries idemKey as its Idempotency-Key:
// one key per logical operation (the claim of a request, its signature),
// so a retry of it is answered as the first was.
func call(ctx context.Context, client *http.Client, method, url, authz, idemKey string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var p struct{ Code, Detail string }
		_ = json.Unmarshal(raw, &p)
		return &APIError{Status: resp.StatusCode, Code: p.Code, Detail: p.Detail}
	}
	if out != nil && len(raw) > 0 {
		return json.Unmarshal(raw, out)
	}
	return nil
}
