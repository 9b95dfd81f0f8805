package ujp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

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
	// SerialFormat is how X-SERIAL-NUMBER is written: SerialDecimal (the
	// default) or SerialHex. Identity.SerialNumber is always decimal.
	SerialFormat string
	// Turns spaces the calls of each UJP user (X-EUJP-ID): the client asks
	// it for a turn before every request. Nil sends at once.
	Turns Turns
	// Scope names the UJP the client talks to in the turns' keys (the
	// environment), so the users of two UJPs never share a budget.
	Scope string
	// TurnWait is how long a call waits for its user's turn before it
	// gives up with a *BusyError (default DefaultTurnWait); a context may
	// set its own (WithTurnWait).
	TurnWait time.Duration
}

// X-SERIAL-NUMBER formats (DENAR_UJP_SERIAL_FORMAT). UJP's reference does
// not say which it expects; hexadecimal is written as Java's
// BigInteger.toString(16) does: lower case, no separators, no leading zeros.
const (
	SerialDecimal = "decimal"
	SerialHex     = "hex"
)

// DefaultTurnWait is how long a call waits for its user's turn by default.
const DefaultTurnWait = 2 * time.Second

// Client is the HTTP implementation of Gateway.
type Client struct {
	base     string
	hc       *http.Client
	now      func() time.Time
	hex      bool
	turns    Turns
	scope    string
	turnWait time.Duration
	// untraced: the transport answered a call without saying it wrote it
	// (httptrace), so a call counts as written when it is handed over.
	untraced atomic.Bool
}

var _ Gateway = (*Client)(nil)

// idleConns is how many idle connections to UJP a client keeps.
const idleConns = 64

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
		// The calls of every user go to one host: idle connections are
		// kept for all of them (the default keeps 2), so a call does not
		// wait for a new connection, which would move its arrival at UJP
		// later than its turn by a varying delay.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = idleConns
		hc = &http.Client{Timeout: cfg.Timeout, Transport: tr}
	}
	if tr := onTheWire(hc.Transport); tr != nil {
		// Its connections say when a call is on the wire (wire.go).
		own := *hc
		own.Transport = tr
		hc = &own
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	switch cfg.SerialFormat {
	case "", SerialDecimal, SerialHex:
	default:
		return nil, fmt.Errorf("ujp: serial format %q is neither %s nor %s", cfg.SerialFormat, SerialDecimal, SerialHex)
	}
	if cfg.TurnWait <= 0 {
		cfg.TurnWait = DefaultTurnWait
	}
	return &Client{base: strings.TrimRight(cfg.BaseURL, "/"), hc: hc, now: now, hex: cfg.SerialFormat == SerialHex,
		turns: cfg.Turns, scope: cfg.Scope, turnWait: cfg.TurnWait}, nil
}

// serial writes a decimal certificate serial as X-SERIAL-NUMBER wants it.
func (c *Client) serial(decimal string) string {
	if !c.hex {
		return decimal
	}
	n, ok := new(big.Int).SetString(decimal, 10)
	if !ok {
		return decimal
	}
	return n.Text(16)
}

// envelope is the common part of UJP's responses. Send's success body has
// none of it; status is then the HTTP-like number 200. Some answers carry
// the error at the top level instead of in errorStatus.
type envelope struct {
	Success      *bool        `json:"success"`
	CreatedDate  string       `json:"createdDate"`
	ErrorStatus  *ErrorStatus `json:"errorStatus"`
	ErrorCode    string       `json:"errorCode"`
	ErrorMessage string       `json:"errorMessage"`
}

// ujpCodeRE is the shape of UJP's error codes (E1023, E10201, E500710).
var ujpCodeRE = regexp.MustCompile(`^E[0-9]{4,6}$`)

// parseAnswer reads UJP's envelope out of raw: ok is false when raw is not
// UJP's shape at all (an HTML page, a framework's default error JSON).
func parseAnswer(raw []byte) (env envelope, st ErrorStatus, ok bool) {
	if json.Unmarshal(raw, &env) != nil {
		return env, st, false
	}
	switch {
	case env.ErrorStatus != nil && ujpCodeRE.MatchString(env.ErrorStatus.ErrorCode):
		return env, *env.ErrorStatus, true
	case ujpCodeRE.MatchString(env.ErrorCode):
		return env, ErrorStatus{ErrorCode: env.ErrorCode, ErrorMessage: env.ErrorMessage}, true
	}
	return env, st, env.Success != nil
}

// classify judges an answer: nil for a success, else the error its UJP
// code says (whatever the HTTP status: a 500 may carry a terminal code),
// and, when the body is not UJP's, what its HTTP status says.
func classify(op string, status int, header http.Header, raw []byte) error {
	env, st, ours := parseAnswer(raw)
	code := st.ErrorCode
	failed := status >= 300 || code != "" || (env.Success != nil && !*env.Success)
	if !failed {
		return nil
	}
	if code != "" {
		switch {
		case code == CodeRateLimited:
			return &RateLimitedError{Op: op, RetryAfter: retryAfter(header.Get("Retry-After"))}
		case TransientCode(op, code):
			return &UnavailableError{Op: op, HTTPStatus: status, Code: code, Err: errors.New(st.ErrorMessage)}
		}
		r := &RejectedError{Op: op, HTTPStatus: status, Code: code, Message: st.ErrorMessage, Properties: st.ErrorPropertyMap, Items: st.ErrorList}
		if code == CodePrivilegeNotFound {
			r.Privilege = opPrivilege[op]
		}
		return r
	}
	switch {
	case status == http.StatusTooManyRequests:
		return &RateLimitedError{Op: op, RetryAfter: retryAfter(header.Get("Retry-After"))}
	case status >= 500:
		u := &UnavailableError{Op: op, HTTPStatus: status, Err: errors.New(snippet(raw))}
		if !ours {
			u.Body = snippet(raw)
		}
		return u
	case ours:
		// UJP's envelope saying no, without a code.
		msg := ""
		if env.ErrorStatus != nil {
			msg = env.ErrorStatus.ErrorMessage
		}
		return &RejectedError{Op: op, HTTPStatus: status, Message: msg, Body: snippet(raw)}
	}
	return &RejectedError{Op: op, HTTPStatus: status, Body: snippet(raw)}
}

// do performs one call, in a turn of the caller's UJP user, and decodes a
// successful body into out (if not nil).
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
		req.Header.Set("X-SERIAL-NUMBER", c.serial(id.SerialNumber))
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	call, err := c.takeTurn(ctx, op, id)
	if err != nil {
		return err
	}
	var wrote atomic.Bool
	if call != nil {
		// The next call of the user is spaced from when this one went
		// out: its connection says when its headers reached the socket
		// (wire.go); a transport of the caller's that is not ours says
		// when it wrote the request, a little early.
		var wire atomic.Pointer[wireConn]
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) {
				if w := wireOf(info.Conn); w != nil {
					wire.Store(w)
					w.carry(call)
				}
			},
			WroteRequest: func(httptrace.WroteRequestInfo) {
				wrote.Store(true)
				if wire.Load() == nil {
					call.Wrote()
				}
			},
		}))
		call.Out()
		if c.untraced.Load() {
			// A transport that never says (the simulator in the
			// process) delivers the call as it is handed over.
			call.Wrote()
		}
	}
	resp, err := c.hc.Do(req)
	if call != nil {
		if err == nil && !wrote.Load() {
			// Answered, so written, and the transport did not say.
			c.untraced.Store(true)
		}
		call.Done()
	}
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
	if err := classify(op, resp.StatusCode, resp.Header, raw); err != nil {
		var rl *RateLimitedError
		if errors.As(err, &rl) && c.turns != nil {
			// UJP counts differently from us (another system with the
			// same user, a clock apart): the user's next turn waits.
			if derr := c.turns.Defer(context.WithoutCancel(ctx), c.turnKey(id), c.now().Add(rl.RetryAfter)); derr != nil {
				return errors.Join(err, derr)
			}
		}
		return err
	}
	if out == nil {
		return nil
	}
	if rb, ok := out.(*rawBody); ok {
		*rb = raw
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// A 200 whose body we cannot read leaves the outcome unknown.
		return &UnavailableError{Op: op, HTTPStatus: resp.StatusCode, Body: snippet(raw), Err: fmt.Errorf("decode response: %w", err)}
	}
	return nil
}

// rawBody, as do's out, receives a successful answer's body as it is
// (an ASiC container, which is no JSON).
type rawBody []byte

func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

// maxBody is how much of a foreign answer's body an error keeps.
const maxBody = 500

func snippet(b []byte) string {
	s := strings.ToValidUTF8(strings.TrimSpace(string(b)), "\uFFFD")
	if len(s) > maxBody {
		cut := maxBody
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
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

// Operation names, as errors carry them in Op.
const (
	opServerTime             = "ServerTime"
	opCompany                = "Company"
	opCodebooks              = "Codebooks"
	opSend                   = "Send"
	opCurrentStatus          = "CurrentStatus"
	opStatusHistory          = "StatusHistory"
	opSalesChanges           = "SalesChanges"
	opSalesIDs               = "SalesIDs"
	opSalesInvoicesStatus    = "SalesInvoicesStatus"
	opSalesPayloads          = "SalesPayloads"
	opSalesPDF               = "SalesPDF"
	opPurchaseIDs            = "PurchaseIDs"
	opPurchaseCurrentStatus  = "PurchaseCurrentStatus"
	opPurchasePayload        = "PurchasePayload"
	opPurchasePayloads       = "PurchasePayloads"
	opPurchaseChanges        = "PurchaseChanges"
	opPurchasePDF            = "PurchasePDF"
	opAcceptReject           = "AcceptReject"
	opArchive                = "Archive"
	opPurchaseInvoicesStatus = "PurchaseInvoicesStatus"
)

// Portal privileges a user needs, per company, for some calls
// (api-specification.txt, "Привилегија:" lines 836, 1143, 1249, 1266,
// 1304, 1396).
const (
	PrivilegePDF      = "DP" // PDF renderings (sales and purchase)
	PrivilegePayloads = "RD" // document JSON (payload reads)
	PrivilegeArchive  = "DA" // ASiC containers
)

// opPrivilege names the privilege each privileged call needs.
var opPrivilege = map[string]string{
	opSalesPDF: PrivilegePDF, opPurchasePDF: PrivilegePDF,
	opSalesPayloads: PrivilegePayloads, opPurchasePayload: PrivilegePayloads, opPurchasePayloads: PrivilegePayloads,
	opArchive: PrivilegeArchive,
}

// ServerTime implements Gateway.
func (c *Client) ServerTime(ctx context.Context, caller Identity) (time.Time, error) {
	var out struct {
		Timestamp string `json:"timestamp"`
	}
	if err := c.get(ctx, opServerTime, PathServerTime, caller, &out); err != nil {
		return time.Time{}, err
	}
	t, err := ujpdoc.ParseTimestamp(out.Timestamp)
	if err != nil {
		return time.Time{}, &UnavailableError{Op: opServerTime, Err: err}
	}
	return t, nil
}

// Company implements Gateway. A GET asks nothing of UJP but an answer, so
// UJP's E4007 (it counted another call of the user) is waited out once,
// through the user's turns, within the caller's deadline.
func (c *Client) Company(ctx context.Context, caller Identity, taxNumber string) (*Company, error) {
	var out struct {
		Company *Company `json:"company"`
	}
	if err := c.get(ctx, opCompany, PathCompanies+url.PathEscape(taxNumber), caller, &out); err != nil {
		return nil, err
	}
	if out.Company == nil {
		return nil, &RejectedError{Op: opCompany, HTTPStatus: http.StatusOK, Code: "E1000", Message: "Company not found"}
	}
	return out.Company, nil
}

// get is a GET that waits out one E4007: when the client keeps turns, the
// next turn is already after UJP's Retry-After.
func (c *Client) get(ctx context.Context, op, path string, caller Identity, out any) error {
	err := c.do(ctx, op, http.MethodGet, path, caller, nil, nil, out)
	var rl *RateLimitedError
	if !errors.As(err, &rl) || c.turns == nil {
		return err
	}
	return c.do(ctx, op, http.MethodGet, path, caller, nil, nil, out)
}

// Codebooks implements Gateway: every list of codeListPaths, then the tax
// indicators of each document type (doc-type-x-tax-indicator), each call
// in a turn of the caller at code-list priority. The tax groups an
// indicator may be used with are the union of every entry that names it;
// the indicators each document type may use are its own list's.
func (c *Client) Codebooks(ctx context.Context, caller Identity) (*ujpdoc.Codebooks, error) {
	if _, ok := ctx.Value(priorityKey{}).(Priority); !ok {
		ctx = WithPriority(ctx, PriorityCodeList)
	}
	if _, ok := ctx.Value(turnWaitKey{}).(time.Duration); !ok {
		// A refresh waits behind every other call of the user.
		ctx = WithTurnWait(ctx, max(c.turnWait, codeListTurnWait))
	}
	cb := &ujpdoc.Codebooks{FetchedAt: c.now()}
	u := newIndicatorUnion()
	for _, l := range codeListPaths {
		raw, err := c.codeList(ctx, caller, l.path)
		if err != nil {
			return nil, err
		}
		if l.key == keyTaxIndicators {
			err = u.addList(raw[l.key])
		} else {
			err = decodeCodeList(cb, l.key, raw[l.key])
		}
		if err != nil && raw[l.key] != nil {
			return nil, &UnavailableError{Op: opCodebooks, Err: err}
		}
	}
	for _, dt := range cb.DocumentTypes {
		raw, err := c.codeList(ctx, caller, PathDocTypeTaxIndicators+url.PathEscape(dt.Code))
		if err != nil {
			return nil, err
		}
		codes, err := u.addDocTypeList(raw[keyDocTypeTaxIndicators])
		if err != nil && raw[keyDocTypeTaxIndicators] != nil {
			return nil, &UnavailableError{Op: opCodebooks, Err: err}
		}
		// A type UJP lists no indicator for is left unrestricted: an
		// empty list would make every line of it invalid.
		if len(codes) > 0 {
			if cb.DocTypeTaxIndicators == nil {
				cb.DocTypeTaxIndicators = map[string][]string{}
			}
			cb.DocTypeTaxIndicators[dt.Code] = codes
		}
	}
	cb.TaxIndicators = u.indicators()
	return cb, nil
}

// codeListTurnWait is how long a code-list call waits for its turn: the
// lists have the lowest priority of a user's calls.
const codeListTurnWait = time.Minute

// codeList reads one list; an E4007 (UJP counted another call of the user)
// is waited out through the user's turns, a few times.
func (c *Client) codeList(ctx context.Context, caller Identity, path string) (map[string]json.RawMessage, error) {
	for attempt := 0; ; attempt++ {
		var raw map[string]json.RawMessage
		err := c.do(ctx, opCodebooks, http.MethodGet, path, caller, nil, nil, &raw)
		var rl *RateLimitedError
		if errors.As(err, &rl) && attempt < 3 {
			if c.turns == nil {
				select {
				case <-ctx.Done():
					return nil, &UnavailableError{Op: opCodebooks, Err: ctx.Err()}
				case <-time.After(rl.RetryAfter):
				}
			}
			continue
		}
		return raw, err
	}
}

// Send implements Gateway.
func (c *Client) Send(ctx context.Context, caller Identity, docType, jws string) (*SendResult, error) {
	var out SendResult
	if err := c.do(ctx, opSend, http.MethodPost, PathSend, caller, map[string]string{"X-DOC-TYPE-CODE": docType}, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	if out.EUID == "" {
		return nil, &UnavailableError{Op: opSend, HTTPStatus: http.StatusOK, Err: errors.New("accepted without an EUID")}
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
	return c.docStatus(ctx, opCurrentStatus, PathSalesCurrentStatus, caller, jws)
}

// StatusHistory implements Gateway.
func (c *Client) StatusHistory(ctx context.Context, caller Identity, jws string) ([]StatusChange, error) {
	return c.history(ctx, opStatusHistory, PathSalesStatusHistory, caller, jws)
}

// SalesChanges implements Gateway.
func (c *Client) SalesChanges(ctx context.Context, caller Identity, jws string) ([]StatusChange, error) {
	return c.history(ctx, opSalesChanges, PathSalesChanges, caller, jws)
}

// SalesPDF implements Gateway.
func (c *Client) SalesPDF(ctx context.Context, caller Identity, jws string) ([]byte, error) {
	return c.pdf(ctx, opSalesPDF, PathSalesPDF, caller, jws)
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
	return c.ids(ctx, opSalesIDs, PathSalesIDs, caller, jws)
}

// SalesInvoicesStatus implements Gateway.
func (c *Client) SalesInvoicesStatus(ctx context.Context, caller Identity, jws string) ([]DocStatus, error) {
	var out struct {
		Invoices []DocStatus `json:"invoices"`
	}
	if err := c.do(ctx, opSalesInvoicesStatus, http.MethodPost, PathSalesInvoicesStatus, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out.Invoices, nil
}

// SalesPayloads implements Gateway.
func (c *Client) SalesPayloads(ctx context.Context, caller Identity, jws string) ([]Payload, error) {
	var out struct {
		Invoices []Payload `json:"invoices"`
	}
	if err := c.do(ctx, opSalesPayloads, http.MethodPost, PathSalesPayloadList, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out.Invoices, nil
}

// PurchaseIDs implements Gateway.
func (c *Client) PurchaseIDs(ctx context.Context, caller Identity, jws string) ([]string, error) {
	return c.ids(ctx, opPurchaseIDs, PathPurchaseIDs, caller, jws)
}

// PurchaseInvoicesStatus implements Gateway.
func (c *Client) PurchaseInvoicesStatus(ctx context.Context, caller Identity, jws string) ([]DocStatus, error) {
	var out struct {
		Invoices []DocStatus `json:"invoices"`
	}
	if err := c.do(ctx, opPurchaseInvoicesStatus, http.MethodPost, PathPurchaseInvoicesStatus, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out.Invoices, nil
}

// PurchaseCurrentStatus implements Gateway.
func (c *Client) PurchaseCurrentStatus(ctx context.Context, caller Identity, jws string) (*DocStatus, error) {
	return c.docStatus(ctx, opPurchaseCurrentStatus, PathPurchaseCurrentStatus, caller, jws)
}

// PurchasePayload implements Gateway.
func (c *Client) PurchasePayload(ctx context.Context, caller Identity, jws string) ([]byte, error) {
	var out struct {
		Payload string `json:"payload"`
	}
	if err := c.do(ctx, opPurchasePayload, http.MethodPost, PathPurchasePayload, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return []byte(out.Payload), nil
}

// PurchasePayloads implements Gateway.
func (c *Client) PurchasePayloads(ctx context.Context, caller Identity, jws string) ([]Payload, error) {
	var out struct {
		Invoices []Payload `json:"invoices"`
	}
	if err := c.do(ctx, opPurchasePayloads, http.MethodPost, PathPurchasePayloadList, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out.Invoices, nil
}

// PurchaseChanges implements Gateway.
func (c *Client) PurchaseChanges(ctx context.Context, caller Identity, jws string) ([]StatusChange, error) {
	return c.history(ctx, opPurchaseChanges, PathPurchaseChanges, caller, jws)
}

// PurchasePDF implements Gateway.
func (c *Client) PurchasePDF(ctx context.Context, caller Identity, jws string) ([]byte, error) {
	return c.pdf(ctx, opPurchasePDF, PathPurchasePDF, caller, jws)
}

// AcceptReject implements Gateway.
func (c *Client) AcceptReject(ctx context.Context, caller Identity, jws string) error {
	return c.do(ctx, opAcceptReject, http.MethodPost, PathAcceptReject, caller, nil, c.signedBody(jws), nil)
}

// Archive implements Gateway.
func (c *Client) Archive(ctx context.Context, caller Identity, jws string) ([]byte, error) {
	var out rawBody
	if err := c.do(ctx, opArchive, http.MethodPost, PathArchive, caller, nil, c.signedBody(jws), &out); err != nil {
		return nil, err
	}
	return out, nil
}
