// Package signer is the signing worker of the denar e-invoicing API for
// customers who sign on their own server (the sdk signing mode) and the
// loop inside denar-agent: fetch signing requests, claim, sign with a
// crypto.Signer holding the registered certificate's key, submit.
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
	Signer crypto.Signer // RSA key of Cert; PKCS#1 v1.5 with SHA-256 (RS256)
	Policy Policy
	Log    *slog.Logger
	HTTP   *http.Client
	// Wait is the long-poll wait in seconds (default 25).
	Wait int
	// OnSigned is told after the server accepted a signature (audit log).
	OnSigned func(r Request, jws string)

	mu     sync.Mutex
	signed map[string]string // request id → JWS submitted, for resubmission
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

// Once fetches pending requests (waiting up to Wait seconds) and handles
// each of them.
func (w *Worker) Once(ctx context.Context) error {
	wait := w.Wait
	if wait == 0 {
		wait = 25
	}
	var list struct {
		Data []Request `json:"data"`
	}
	url := fmt.Sprintf("%s/v1/agents/%s/signing-requests?wait=%d", w.Creds.Server, w.Creds.AgentID, wait)
	if err := call(ctx, w.client(), http.MethodGet, url, w.Creds.authz(), "", nil, &list); err != nil {
		return err
	}
	for _, r := range list.Data {
		if err := w.Handle(ctx, r); err != nil {
			var api *APIError
			if errors.As(err, &api) && (api.Status == http.StatusConflict || api.Status == http.StatusGone) {
				w.log().Info("skipped", "request", r.ID, "reason", api.Code)
				continue
			}
			return fmt.Errorf("request %s: %w", r.ID, err)
		}
	}
	return nil
}

// Handle claims, decides, signs and submits one request.
func (w *Worker) Handle(ctx context.Context, r Request) error {
	base := w.Creds.Server + "/v1/signing-requests/" + r.ID
	w.mu.Lock()
	jws, done := w.signed[r.ID]
	w.mu.Unlock()
	if done {
		// Signed before a connection dropped: resubmit the same JWS.
		return call(ctx, w.client(), http.MethodPost, base+"/signature", w.Creds.authz(), "signature:"+r.ID, map[string]string{"jws": jws}, nil)
	}
	if r.State != "claimed" {
		// A request listed as claimed is one this agent claimed before a
		// restart and never finished: it may sign it without claiming.
		// The claim answers with the request as this agent signs it: its
		// protected header carries this agent's certificate.
		var claimed Request
		if err := call(ctx, w.client(), http.MethodPost, base+"/claim", w.Creds.authz(), "claim:"+r.ID, nil, &claimed); err != nil {
			return err
		}
		if claimed.ID == r.ID {
			r = claimed
		}
	}
	d := Decision{Sign: true}
	if w.Policy != nil {
		d = w.Policy(ctx, r)
	}
	if !d.Sign {
		w.log().Info("refused", "request", r.ID, "purpose", r.Purpose, "reason", d.Reason)
		return call(ctx, w.client(), http.MethodPost, base+"/refuse", w.Creds.authz(), "refuse:"+r.ID, map[string]string{"reason": d.Reason, "message": d.Message}, nil)
	}
	jws, err := Sign(w.Signer, r)
	if err != nil {
		return call(ctx, w.client(), http.MethodPost, base+"/refuse", w.Creds.authz(), "refuse:"+r.ID,
			map[string]string{"reason": "token_missing", "message": err.Error()}, nil)
	}
	w.mu.Lock()
	if w.signed == nil {
		w.signed = map[string]string{}
	}
	w.signed[r.ID] = jws
	w.mu.Unlock()
	if err := call(ctx, w.client(), http.MethodPost, base+"/signature", w.Creds.authz(), "signature:"+r.ID, map[string]string{"jws": jws}, nil); err != nil {
		return err
	}
	w.log().Info("signed", "request", r.ID, "purpose", r.Purpose, "company", r.CompanyID, "links", r.Links)
	if w.OnSigned != nil {
		w.OnSigned(r, jws)
	}
	return nil
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
