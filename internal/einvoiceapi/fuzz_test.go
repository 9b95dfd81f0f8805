package einvoiceapi

import (
	"slices"
	"testing"
)

// FuzzParseTokenRequest: any form body and Basic header is either rejected
// with an RFC 6749 error code or yields a client_credentials request.
func FuzzParseTokenRequest(f *testing.F) {
	f.Add("grant_type=client_credentials&client_id=cli_1&client_secret=s&scope=a+b", "", "", false)
	f.Add("grant_type=client_credentials", "cli_1", "s%20x", true)
	f.Add("grant_type=password&grant_type=x", "", "", false)
	f.Add("%zz", "", "", false)
	f.Fuzz(func(t *testing.T, body, user, pass string, basic bool) {
		req, err := parseTokenRequest("application/x-www-form-urlencoded", []byte(body), user, pass, basic)
		if err != nil {
			if !slices.Contains([]string{"invalid_request", "invalid_client", "unsupported_grant_type"}, err.Code) {
				t.Fatalf("unexpected code %q", err.Code)
			}
			return
		}
		if req.GrantType != "client_credentials" {
			t.Fatalf("accepted grant %q", req.GrantType)
		}
		for _, s := range req.Scopes {
			if s == "" {
				t.Fatal("empty scope")
			}
		}
	})
}
