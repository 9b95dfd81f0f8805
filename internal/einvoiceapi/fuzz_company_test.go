package einvoiceapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// FuzzCreateCompanyBody posts arbitrary bodies to POST /v1/companies: the
// answer is a created company or a 4xx problem, never a 5xx or a panic.
func FuzzCreateCompanyBody(f *testing.F) {
	f.Add(body1)
	f.Add(`{"taxNumber":"4039999999997","representative":{"name":"a","email":"a@b.mk"}}`)
	f.Add(`{"taxNumber":4030000000001}`)
	f.Add(`{"taxNumber":"4030000000001","signingMode":"sdk","externalRef":null,"representative":{"name":"","email":"x"}}`)
	f.Add(`[]`)
	f.Add(`{"representative":{"name":"a","email":"a@b.mk","x":1},"taxNumber":"4030000000010"}`)
	db := storetest.SQLite(f)
	as := &auth.Store{DB: db}
	acct, err := as.CreateAccount(f.Context(), "Fuzz", "")
	if err != nil {
		f.Fatal(err)
	}
	_, key, err := as.CreateKey(f.Context(), auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
	if err != nil {
		f.Fatal(err)
	}
	_, api := newApp(db, einvoicing.Deps{Registry: fakeRegistry{}}, appConfig{Config: einvoicing.Config{RegistryTimeout: 20 * time.Millisecond},
		Companies: companies.Config{PublicURL: "http://x"}}, webhooks.Deps{}, webhooks.Config{})
	srv := httptest.NewServer(api.Handler())
	f.Cleanup(srv.Close)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, body string) {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/companies", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "fuzz-"+strconv.FormatInt(n.Add(1), 10)+"-"+strconv.FormatInt(time.Now().UnixNano(), 10))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
			t.Fatalf("status %d, body not JSON: %v", res.StatusCode, err)
		}
		switch {
		case res.StatusCode == 201:
			if m["status"] != "pending_mandate" || m["name"] == "" {
				t.Fatalf("created: %v", m)
			}
		case res.StatusCode == 503 && m["code"] == "ujp_unavailable":
		case res.StatusCode >= 400 && res.StatusCode < 500:
			if m["code"] == nil {
				t.Fatalf("4xx without a code: %v", m)
			}
		default:
			t.Fatalf("status %d for %q: %v", res.StatusCode, body, m)
		}
	})
}
