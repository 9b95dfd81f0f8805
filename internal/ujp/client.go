package ujp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the host root, e.g. https://efakturatest.ujp.gov.mk or a
	// simulator's URL; the client appends /einvoice_api/… and
	// /JSONReceiver/… itself.
	BaseURL string
	// Timeout bounds each request (default 15 s). A request that times out
	// is an *UnavailableError.
	Timeout time.Duration
	// HTTPClient defaults to a client with Timeout.
	HTTPClient *http.Client
	// Now is the clock for requestTimestamp on unsigned bodies (default
	// time.Now).
	Now func() time.Time
	// CodeListPause is how long Codebooks waits after E4007 before the next
	// list when UJP sends no Retry-After (default 1 s).
	CodeListPause time.Duration
	// SandboxToken is the sandbox simulator's control token, sent as a
	// bearer token by RegisterCertificate (the simulator's
	// /_sim/certificates stands in for UJP's portal). Unused against UJP.
	SandboxToken string
}

// Client is the HTTP implementation of Gateway.
type Client struct {
	base    string
	hc      *http.Client
	now     func() time.Time
	pause   time.Duration
	simAuth map[string]string // the Authorization header for /_sim, if any
}

var _ Gateway = (*Client)(nil)

// NewClient returns a client for the UJP (or simulator) at cfg.BaseURL.
func NewClient(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("ujp: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: cfg.Timeout}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	pause := cfg.CodeListPause
	if pause <= 0 {
		pause = time.Second
	}
	c := &Client{base: strings.TrimRight(cfg.BaseURL, "/"), hc: hc, now: now, pause: pause}
	if cfg.SandboxToken != "" {
		c.simAuth = map[string]string{"Authorization": "Bearer " + cfg.SandboxToken}
	}
	return c, nil
}

// envelope is the common part of UJP's responses. Send's success body has
// none of it; status is then the HTTP-like number 200.
type envelope struct {
	Success     *bool        `json:"success"`
	CreatedDate string       `json:"createdDate"`
	ErrorStatus *ErrorStatus `json:"errorStatus"`
}

// do performs one call and decodes a successful body into out (if not nil).
func (c *Client) do(ctx context.Context, op, method, path string, id Identity, headers map[string]string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("ujp %s: encode body: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("ujp %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if id.EUJPID != "" {
		req.Header.Set("X-EUJP-ID", id.EUJPID)
	}
	if id.EDB != "" {
		req.Header.Set("X-EDB", id.EDB)
	}
	if id.SerialNumber != "" {
		req.Header.Set("X-SERIAL-NUMBER", id.SerialNumber)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// Cancellation by our own caller is not UJP's fault, but the
		// outcome is the same: nothing is known about the request.
		return &UnavailableError{Op: op, Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return &UnavailableError{Op: op, HTTPStatus: resp.StatusCode, Err: fmt.Errorf("read body: %w", err)}
	}
	var env envelope
	_ = json.Unmarshal(raw, &env) // a non-JSON body is judged by its status below
	code := ""
	if env.ErrorStatus != nil {
		code = env.ErrorStatus.ErrorCode
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || code == CodeRateLimited:
		return &RateLimitedError{Op: op, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	case resp.StatusCode >= 500 || unavailableCodes[code]:
		return &UnavailableError{Op: op, HTTPStatus: resp.StatusCode, Code: code, Err: errors.New(snippet(raw))}
	case resp.StatusCode >= 300 || (env.Success != nil && !*env.Success) || env.ErrorStatus != nil:
		r := &RejectedError{Op: op, HTTPStatus: resp.StatusCode, Code: code, Message: snippet(raw)}
		if env.ErrorStatus != nil {
			r.Message = env.ErrorStatus.ErrorMessage
			r.Properties = env.ErrorStatus.ErrorPropertyMap
			r.Items = env.ErrorStatus.ErrorList
		}
		if r.Code == "" {
			// No UJP code: keep the HTTP status visible rather than invent one.
			r.Code = "HTTP" + strconv.Itoa(resp.StatusCode)
		}
		return r
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// A 200 whose body we cannot read leaves the outcome unknown.
		return &UnavailableError{Op: op, HTTPStatus: resp.StatusCode, Err: fmt.Errorf("decode response: %w", err)}
	}
	return nil
}

func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// signedBody builds {requestTimestamp, jws}, copying requestTimestamp from
// the JWS payload so that the two never disagree.
func (c *Client) signedBody(jws string) SignedBody {
	ts := ""
	if parts := strings.Split(jws, "."); len(parts) == 3 {
		if p, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
			var v struct {
				RequestTimestamp string `json:"requestTimestamp"`
			}
			if json.Unmarshal(p, &v) == nil {
				ts = v.RequestTimestamp
			}
		}
	}
	if ts == "" {
		ts = ujpdoc.FormatTimestamp(c.now())
	}
	return SignedBody{RequestTimestamp: ts, JWS: jws}
}

// ServerTime implements Gateway.
func (c *Client) ServerTime(ctx context.Context) (time.Time, error) {
	var out struct {
		Timestamp string `json:"timestamp"`
	}
	if err := c.do(ctx, "ServerTime", http.MethodGet, PathServerTime, Identity{}, nil, nil, &out); err != nil {
		return time.Time{}, err
	}
	t, err := ujpdoc.ParseTimestamp(out.Timestamp)
	if err != nil {
		return time.Time{}, &UnavailableError{Op: "ServerTime", Err: err}
	}
	return t, nil
}

// Company implements Gateway.
func (c *Client) Company(ctx context.Context, caller Identity, taxNumber string) (*Company, error) {
	var out struct {
		Company *Company `json:"company"`
	}
	if err := c.do(ctx, "Company", http.MethodGet, PathCompanies+url.PathEscape(taxNumber), caller, nil, nil, &out); err != nil {
		return nil, err
	}
	if out.Company == nil {
		return nil, &RejectedError{Op: "Company", HTTPStatus: http.StatusOK, Code: "E1000", Message: "Company not found"}
	}
	return out.Company, nil
}

// Codebooks implements Gateway. UJP allows one request per second per user,
// so after an E4007 it waits and asks again for the same list.
func (c *Client) Codebooks(ctx context.Context, caller Identity) (*ujpdoc.Codebooks, error) {
	cb := &ujpdoc.Codebooks{FetchedAt: c.now()}
	for _, l := range codeListPaths {
		var raw map[string]json.RawMessage
		for attempt := 0; ; attempt++ {
			err := c.do(ctx, "Codebooks", http.MethodGet, l.path, caller, nil, nil, &raw)
			var rl *RateLimitedError
			if errors.As(err, &rl) && attempt < 5 {
				select {
				case <-ctx.Done():
					return nil, &UnavailableError{Op: "Codebooks", Err: ctx.Err()}
				case <-time.After(max(rl.RetryAfter, c.pause)):
				}
				continue
			}
			if err != nil {
				return nil, err
			}
			break
		}
		if err := decodeCodeList(cb, l.key, raw[l.key]); err != nil && raw[l.key] != nil {
			return nil, &UnavailableError{Op: "Codebooks", Err: err}
		}
	}
	return cb, nil
}

// Send implements Gateway.
func (c *Client) Send(ctx context.Context, caller Identity, docType, jws string) (*SendResult, error) {
	var out SendResult
	if err := c.do(ctx, "Send", http.MethodPost, PathSend, caller, map[string]string{"X-DOC-TYPE-CODE": docType}, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	if out.EUID == "" {
		return nil, &UnavailableError{Op: "Send", HTTPStatus: http.StatusOK, Err: errors.New("accepted without an EUID")}
	}
	return &out, nil
}

func (c *Client) docStatus(ctx context.Context, op, path string, caller Identity, jws string) (*DocStatus, error) {
	var out struct {
		DocStatus *DocStatus `json:"docStatus"`
	}
	if err := c.do(ctx, op, http.MethodPost, path, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	if out.DocStatus == nil {
		return nil, &RejectedError{Op: op, HTTPStatus: http.StatusOK, Code: "E4008", Message: "no docStatus in the answer"}
	}
	return out.DocStatus, nil
}

func (c *Client) history(ctx context.Context, op, path string, caller Identity, jws string) ([]StatusChange, error) {
	var out struct {
		StatusHistory []StatusChange `json:"statusHistory"`
	}
	if err := c.do(ctx, op, http.MethodPost, path, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out.StatusHistory, nil
}

func (c *Client) pdf(ctx context.Context, op, path string, caller Identity, jws string) ([]byte, error) {
	var out struct {
		PDFBase64 string `json:"pdfBase64"`
	}
	if err := c.do(ctx, op, http.MethodPost, path, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(out.PDFBase64)
	if err != nil {
		return nil, &UnavailableError{Op: op, Err: fmt.Errorf("pdfBase64: %w", err)}
	}
	return b, nil
}

// CurrentStatus implements Gateway.
func (c *Client) CurrentStatus(ctx context.Context, caller Identity, jws string) (*DocStatus, error) {
	return c.docStatus(ctx, "CurrentStatus", PathSalesCurrentStatus, caller, jws)
}

// StatusHistory implements Gateway.
func (c *Client) StatusHistory(ctx context.Context, caller Identity, jws string) ([]StatusChange, error) {
	return c.history(ctx, "StatusHistory", PathSalesStatusHistory, caller, jws)
}

// SalesChanges implements Gateway.
func (c *Client) SalesChanges(ctx context.Context, caller Identity, jws string) ([]StatusChange, error) {
	return c.history(ctx, "SalesChanges", PathSalesChanges, caller, jws)
}

// SalesPDF implements Gateway.
func (c *Client) SalesPDF(ctx context.Context, caller Identity, jws string) ([]byte, error) {
	return c.pdf(ctx, "SalesPDF", PathSalesPDF, caller, jws)
}

func (c *Client) ids(ctx context.Context, op, path string, caller Identity, jws string) ([]string, error) {
	var out struct {
		EUIDs []string `json:"euids"`
	}
	if err := c.do(ctx, op, http.MethodPost, path, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out.EUIDs, nil
}

// SalesIDs implements Gateway.
func (c *Client) SalesIDs(ctx context.Context, caller Identity, jws string) ([]string, error) {
	return c.ids(ctx, "SalesIDs", PathSalesIDs, caller, jws)
}

// PurchaseIDs implements Gateway.
func (c *Client) PurchaseIDs(ctx context.Context, caller Identity, jws string) ([]string, error) {
	return c.ids(ctx, "PurchaseIDs", PathPurchaseIDs, caller, jws)
}

// PurchaseCurrentStatus implements Gateway.
func (c *Client) PurchaseCurrentStatus(ctx context.Context, caller Identity, jws string) (*DocStatus, error) {
	return c.docStatus(ctx, "PurchaseCurrentStatus", PathPurchaseCurrentStatus, caller, jws)
}

// PurchasePayload implements Gateway.
func (c *Client) PurchasePayload(ctx context.Context, caller Identity, jws string) ([]byte, error) {
	var out struct {
		Payload string `json:"payload"`
	}
	if err := c.do(ctx, "PurchasePayload", http.MethodPost, PathPurchasePayload, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return []byte(out.Payload), nil
}

// PurchasePayloads implements Gateway.
func (c *Client) PurchasePayloads(ctx context.Context, caller Identity, jws string) ([]Payload, error) {
	var out struct {
		Invoices []Payload `json:"invoices"`
	}
	if err := c.do(ctx, "PurchasePayloads", http.MethodPost, PathPurchasePayloadList, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out.Invoices, nil
}

// PurchaseChanges implements Gateway.
func (c *Client) PurchaseChanges(ctx context.Context, caller Identity, jws string) ([]StatusChange, error) {
	return c.history(ctx, "PurchaseChanges", PathPurchaseChanges, caller, jws)
}

// PurchasePDF implements Gateway.
func (c *Client) PurchasePDF(ctx context.Context, caller Identity, jws string) ([]byte, error) {
	return c.pdf(ctx, "PurchasePDF", PathPurchasePDF, caller, jws)
}

// AcceptReject implements Gateway.
func (c *Client) AcceptReject(ctx context.Context, caller Identity, jws string) error {
	return c.do(ctx, "AcceptReject", http.MethodPost, PathAcceptReject, caller, nil, c.signedBody(jws), nil)
}

// RegisterCertificate implements Gateway (sandbox only).
func (c *Client) RegisterCertificate(ctx context.Context, caller Identity, certDER []byte) (string, error) {
	body := map[string]string{"eujpId": caller.EUJPID, "edb": caller.EDB, "certificateDer": base64.StdEncoding.EncodeToString(certDER)}
	var out struct {
		SerialNumber string `json:"serialNumber"`
	}
	if err := c.do(ctx, "RegisterCertificate", http.MethodPost, PathSandboxCertificates, caller, c.simAuth, body, &out); err != nil {
		return "", err
	}
	return out.SerialNumber, nil
}
