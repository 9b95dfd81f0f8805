package denar_test

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/denar-mk/denar/sdk/denar"
)

// TestOAuthClientCredentials: a client made with `denar admin client
// create` reaches the API through ClientCredentials' tokens, and once it
// is revoked the token it holds is refused at once as key_revoked.
func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	admin := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(srv.dir, "denar"), append([]string{"admin"}, args...)...)
		cmd.Env = append(cleanEnv(), "DENAR_DATA_DIR="+filepath.Join(srv.dir, "data"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("denar admin %v: %v", args, err)
		}
		return out
	}
	var accounts []struct{ ID string }
	if err := json.Unmarshal(admin("account", "list", "--json"), &accounts); err != nil || len(accounts) == 0 {
		t.Fatalf("accounts: %v %v", accounts, err)
	}
	var cred struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.Unmarshal(admin("client", "create", "--account", accounts[0].ID, "--env", "sandbox", "--scope", "companies:read", "--json"), &cred); err != nil || cred.ClientSecret == "" {
		t.Fatalf("client: %+v %v", cred, err)
	}
	ctx := t.Context()
	c, err := denar.NewEInvoice(srv.einvoiceURL, denar.Options{TokenSource: denar.ClientCredentials(ctx, srv.einvoiceURL, cred.ClientID, cred.ClientSecret)})
	if err != nil {
		t.Fatal(err)
	}
	co, err := c.GetCompany(ctx, srv.company)
	if err != nil || co.Id != srv.company {
		t.Fatalf("company through an OAuth token: %+v %v", co, err)
	}
	admin("client", "revoke", cred.ClientID)
	_, err = c.GetCompany(ctx, srv.company)
	var p *denar.Problem
	if !errors.As(err, &p) || p.Code != denar.CodeKeyRevoked {
		t.Fatalf("after revocation: %v, want a %s problem", err, denar.CodeKeyRevoked)
	}
}
