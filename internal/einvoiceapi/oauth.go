package einvoiceapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/jsontext"
)

// maxTokenForm bounds the token request body; a real one is a few hundred bytes.
const maxTokenForm = 8 << 10

// maxTokenParam bounds each parameter of the token request (documented as
// its maxLength).
const maxTokenParam = 1000

// tokenResponse is the RFC 6749 §5.1 success body.
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

// tokenRequest is the parsed form of a token request.
type tokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// parseTokenRequest reads a client_credentials request from a form body and
// an optional HTTP Basic header. It is a pure function so it can be fuzzed.
func parseTokenRequest(contentType string, body []byte, basicUser, basicPass string, hasBasic bool) (tokenRequest, *auth.OAuthError) {
	if mt, _, _ := strings.Cut(contentType, ";"); !strings.EqualFold(strings.TrimSpace(mt), "application/x-www-form-urlencoded") {
		return tokenRequest{}, &auth.OAuthError{Code: "invalid_request", Description: "The body must be application/x-www-form-urlencoded."}
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return tokenRequest{}, &auth.OAuthError{Code: "invalid_request", Description: "The form body cannot be parsed."}
	}
	for name, vs := range form {
		if len(vs) > 1 {
			return tokenRequest{}, &auth.OAuthError{Code: "invalid_request", Description: "The parameter " + name + " is repeated."}
		}
	}
	for name, vs := range form {
		if utf8.RuneCountInString(vs[0]) > maxTokenParam {
			return tokenRequest{}, &auth.OAuthError{Code: "invalid_request", Description: "The parameter " + name + " is longer than " + strconv.Itoa(maxTokenParam) + " characters."}
		}
	}
	req := tokenRequest{GrantType: form.Get("grant_type"), ClientID: form.Get("client_id"), ClientSecret: form.Get("client_secret")}
	if req.GrantType == "" {
		return tokenRequest{}, &auth.OAuthError{Code: "invalid_request", Description: "grant_type is required."}
	}
	if req.GrantType != "client_credentials" {
		return tokenRequest{}, &auth.OAuthError{Code: "unsupported_grant_type", Description: "Only client_credentials is supported."}
	}
	if hasBasic {
		if req.ClientSecret != "" {
			return tokenRequest{}, &auth.OAuthError{Code: "invalid_request", Description: "Send client credentials either in the Authorization header or in the body, not both."}
		}
		// RFC 6749 §2.3.1: both parts are form-encoded before Basic encoding.
		u, err1 := url.QueryUnescape(basicUser)
		p, err2 := url.QueryUnescape(basicPass)
		if err1 != nil || err2 != nil {
			return tokenRequest{}, &auth.OAuthError{Code: "invalid_client", Description: "Client authentication failed."}
		}
		if req.ClientID != "" && req.ClientID != u {
			return tokenRequest{}, &auth.OAuthError{Code: "invalid_request", Description: "client_id differs from the Authorization header."}
		}
		req.ClientID, req.ClientSecret = u, p
	}
	// Bytes no issued client id or secret has are refused before the
	// client is looked up (NUL or invalid UTF-8 would fail the query on
	// PostgreSQL). Missing ones are IssueToken's invalid_client.
	if (req.ClientID != "" && !httpx.CredentialText(req.ClientID)) || (req.ClientSecret != "" && !httpx.CredentialText(req.ClientSecret)) {
		return tokenRequest{}, &auth.OAuthError{Code: "invalid_client", Description: "Client authentication failed."}
	}
	req.Scopes = strings.Fields(form.Get("scope"))
	for _, sc := range req.Scopes {
		if bad := jsontext.BadText(sc); bad != "" || len(sc) > 100 {
			return tokenRequest{}, &auth.OAuthError{Code: "invalid_scope", Description: "A requested scope is not one of the service's."}
		}
	}
	return req, nil
}

// registerOAuth adds POST /v1/oauth/token as a plain handler: its errors are
// RFC 6749 JSON rather than problems, and it takes no Idempotency-Key.
func (h *handlers) registerOAuth(s interface {
	HandleFunc(string, func(http.ResponseWriter, *http.Request))
}, api huma.API) {
	s.HandleFunc("POST /v1/oauth/token", h.token)
	maxParam := maxTokenParam
	oauthErr := &huma.Schema{Type: "object", Required: []string{"error"}, Properties: map[string]*huma.Schema{
		"error": {Type: "string", Enum: []any{"invalid_request", "invalid_client", "invalid_scope", "unsupported_grant_type"},
			Description: "RFC 6749 §5.2's error code: invalid_client for an unknown client, a wrong secret or a revoked client."},
		"error_description": {Type: "string", Description: "What was wrong, in words."},
	}, Examples: []any{map[string]any{"error": "invalid_client", "error_description": "Client authentication failed."}}}
	api.OpenAPI().AddOperation(&huma.Operation{
		OperationID: "createToken", Method: http.MethodPost, Path: "/v1/oauth/token",
		Summary: "Get an access token", Tags: []string{"OAuth"},
		Description: "OAuth 2.0 client credentials grant (RFC 6749 §4.4). Client credentials go in the body " +
			"(client_id, client_secret) or in HTTP Basic. The token is opaque, lives 900 seconds and is used like an API key. " +
			"Errors follow RFC 6749 §5.2, not problem JSON. No Idempotency-Key.",
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
			"application/x-www-form-urlencoded": {Schema: &huma.Schema{Type: "object", Required: []string{"grant_type"}, Properties: map[string]*huma.Schema{
				"grant_type":    {Type: "string", Enum: []any{"client_credentials"}, Description: "Always client_credentials."},
				"client_id":     {Type: "string", MaxLength: &maxParam, Description: "The client's id (cli_…). Printable ASCII; anything else is invalid_client before any look-up."},
				"client_secret": {Type: "string", MaxLength: &maxParam, Description: "The client's secret (dncs_…), as denar admin client create printed it once."},
				"scope":         {Type: "string", MaxLength: &maxParam, Description: "Space-separated scopes; all the client's scopes when absent."},
			}}, Example: map[string]any{"grant_type": "client_credentials",
				"client_id": "cli_01jv8k2n3p4q5r6s7t8v9w0xyz", "client_secret": "dncs_6fQx0LwZ3mN8pR2sT5vY9bC1dF4hJ7kA0eG3iK6nM9qS",
				"scope": "einvoices:read einvoices:write"}},
		}},
		Responses: map[string]*huma.Response{
			"200": {Description: "Token issued", Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{
				Type: "object", Required: []string{"access_token", "token_type", "expires_in", "scope"},
				Properties: map[string]*huma.Schema{
					"access_token": {Type: "string", Description: "The token (dnat_…): send it as Authorization: Bearer <token>, like an API key."},
					"token_type":   {Type: "string", Enum: []any{"Bearer"}, Description: "Always Bearer."},
					"expires_in":   {Type: "integer", Description: "Seconds the token lives: 900. Ask for a new one before then."},
					"scope":        {Type: "string", Description: "The scopes the token carries, space-separated."},
				},
				Examples: []any{map[string]any{"access_token": "dnat_3rZq8v2LmXk0pW9sYb4TnHc7", "token_type": "Bearer", "expires_in": 900,
					"scope": "einvoices:read einvoices:write"}},
			}}}},
			"400": {Description: "invalid_request, invalid_client, invalid_scope or unsupported_grant_type", Content: map[string]*huma.MediaType{"application/json": {Schema: oauthErr}}},
			"401": {Description: "invalid_client when the client authenticated with HTTP Basic (with WWW-Authenticate: Basic)", Content: map[string]*huma.MediaType{"application/json": {Schema: oauthErr}}},
		},
	})
}

func (h *handlers) token(w http.ResponseWriter, r *http.Request) {
	body, err := readLimited(r, maxTokenForm)
	if err != nil {
		writeOAuthError(w, &auth.OAuthError{Code: "invalid_request", Description: "The body is too large or unreadable."}, false)
		return
	}
	user, pass, hasBasic := r.BasicAuth()
	req, oerr := parseTokenRequest(r.Header.Get("Content-Type"), body, user, pass, hasBasic)
	if oerr != nil {
		writeOAuthError(w, oerr, hasBasic)
		return
	}
	tok, err := h.deps.Auth.IssueToken(r.Context(), req.ClientID, req.ClientSecret, req.Scopes)
	var oe *auth.OAuthError
	if errors.As(err, &oe) {
		writeOAuthError(w, oe, hasBasic)
		return
	}
	if err != nil {
		h.deps.Log.ErrorContext(r.Context(), "oauth token", "err", err)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"server_error"}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	_ = json.NewEncoder(w).Encode(tokenResponse{
		AccessToken: tok.AccessToken, TokenType: "Bearer", ExpiresIn: tok.ExpiresIn, Scope: strings.Join(tok.Scopes, " "),
	})
}

func readLimited(r *http.Request, n int64) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(nil, r.Body, n))
}

// writeOAuthError answers with RFC 6749 §5.2 JSON. Every error is 400, as
// the spec's table says; invalid_client is 401 with WWW-Authenticate only
// when the client authenticated with HTTP Basic (the RFC's "MUST" for that
// case).
func writeOAuthError(w http.ResponseWriter, e *auth.OAuthError, basic bool) {
	status := http.StatusBadRequest
	if e.Code == "invalid_client" && basic {
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Basic realm="denar"`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": e.Code, "error_description": e.Description})
}
