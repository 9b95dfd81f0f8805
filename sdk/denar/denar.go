// Package denar is the Go client of the denar payroll and e-invoicing
// APIs. The typed operations are generated from the committed OpenAPI
// documents (packages payrollapi and einvoiceapi, reachable as each
// client's Raw field); this package adds what every integrator otherwise
// writes again:
//
//   - an Idempotency-Key on every POST, kept across that request's own
//     retries;
//   - retries with exponential backoff and jitter on network errors, 429
//     and 503, honouring Retry-After;
//   - problems (RFC 9457) as a typed error, *Problem, with the API's codes
//     as constants (CodeValidationFailed, …);
//   - an iterator (iter.Seq2) for every list, following the cursors;
//   - a client bound to one company (EInvoice.Company), so no call takes
//     a company argument;
//   - OAuth client credentials (ClientCredentials) or an API key;
//   - webhook signature verification (VerifySignature).
//
// docs/sdk.md is the guide.
package denar

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
	"github.com/denar-mk/denar/sdk/denar/payrollapi"
)

// Options configure a client. One of APIKey and TokenSource authenticates.
type Options struct {
	// APIKey is sent as "Authorization: Bearer <APIKey>" (dn_test_… or
	// dn_live_…).
	APIKey string
	// TokenSource gives OAuth access tokens instead (ClientCredentials).
	TokenSource oauth2.TokenSource
	// CompanyID is sent as X-Company-Id on every request that does not set
	// its own: needed when the credential reaches several companies.
	CompanyID string
	// HTTPClient's Transport carries the requests (http.DefaultTransport
	// when nil); its Timeout bounds a call, retries included.
	HTTPClient *http.Client
	// Retry tunes retries; the zero value is DefaultRetry().
	Retry Retry
}

// Payroll is the client of the payroll and filing service.
type Payroll struct {
	// Raw is the generated client: every operation, with its typed
	// responses. Requests through it are retried and keyed like the
	// methods of Payroll.
	Raw *payrollapi.ClientWithResponses
}

// EInvoice is the client of the e-invoicing service.
type EInvoice struct {
	// Raw is the generated client, as for Payroll.
	Raw *einvoiceapi.ClientWithResponses
	// Poll is how often WaitForStatus asks; default 500 ms.
	Poll time.Duration
	// hc carries the requests that are not operations of the API (a
	// sandbox mandate page), with the same retries.
	hc *http.Client
}

// NewPayroll returns a client of the payroll service at baseURL
// (http://127.0.0.1:8080 for a local denar serve).
func NewPayroll(baseURL string, o Options) (*Payroll, error) {
	raw, err := payrollapi.NewClientWithResponses(strings.TrimSuffix(baseURL, "/"), payrollapi.WithHTTPClient(o.httpClient()))
	if err != nil {
		return nil, err
	}
	return &Payroll{Raw: raw}, nil
}

// NewEInvoice returns a client of the e-invoicing service at baseURL
// (http://127.0.0.1:8081 for a local denar serve).
func NewEInvoice(baseURL string, o Options) (*EInvoice, error) {
	hc := o.httpClient()
	raw, err := einvoiceapi.NewClientWithResponses(strings.TrimSuffix(baseURL, "/"), einvoiceapi.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	return &EInvoice{Raw: raw, hc: hc}, nil
}

// httpClient stacks the layers: retries outermost, so that each attempt
// is authenticated afresh (a token refreshed between attempts is used).
func (o Options) httpClient() *http.Client {
	base := http.DefaultTransport
	var timeout time.Duration
	if o.HTTPClient != nil {
		base = cmp.Or[http.RoundTripper](o.HTTPClient.Transport, base)
		timeout = o.HTTPClient.Timeout
	}
	var authed http.RoundTripper = &headers{base: base, apiKey: o.APIKey, company: o.CompanyID}
	if o.TokenSource != nil {
		authed = &oauth2.Transport{Source: o.TokenSource, Base: &headers{base: base, company: o.CompanyID}}
	}
	return &http.Client{Transport: &retrying{base: authed, retry: o.Retry.orDefault()}, Timeout: timeout}
}

// headers adds the API key and the default X-Company-Id.
type headers struct {
	base    http.RoundTripper
	apiKey  string
	company string
}

func (h *headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.apiKey != "" && r.Header.Get("Authorization") == "" {
		r.Header.Set("Authorization", "Bearer "+h.apiKey)
	}
	if h.company != "" && r.Header.Get("X-Company-Id") == "" {
		r.Header.Set("X-Company-Id", h.company)
	}
	return h.base.RoundTrip(r)
}

// response is what every generated response has.
type response interface {
	StatusCode() int
	GetBody() []byte
}

// result returns v when the call succeeded with it, else the call's error
// or the answer as a *Problem.
func result[T any](v *T, r response, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if v != nil && r.StatusCode() < 300 {
		return v, nil
	}
	return nil, problemFrom(r.StatusCode(), r.GetBody())
}

// company sets X-Company-Id on one request.
func company(id string) func(context.Context, *http.Request) error {
	return func(_ context.Context, r *http.Request) error {
		if id != "" {
			r.Header.Set("X-Company-Id", id)
		}
		return nil
	}
}
