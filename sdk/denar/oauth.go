package denar

import (
	"context"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentials returns a token source of the e-invoicing service's
// OAuth client credentials grant (POST /v1/oauth/token at baseURL): it
// asks for a token when it has none or the one it has expires (900 s),
// and reuses it until then. No scopes: all the client's scopes. ctx
// carries the token requests (an *http.Client under oauth2.HTTPClient,
// say); it is kept for the source's lifetime.
func ClientCredentials(ctx context.Context, baseURL, clientID, clientSecret string, scopes ...string) oauth2.TokenSource {
	cfg := clientcredentials.Config{
		ClientID:     clientID,
		ClientSecret: clientSecret,
		TokenURL:     strings.TrimSuffix(baseURL, "/") + "/v1/oauth/token",
		Scopes:       scopes,
		AuthStyle:    oauth2.AuthStyleInParams,
	}
	return cfg.TokenSource(ctx)
}
