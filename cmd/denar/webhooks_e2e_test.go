package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/sdk/webhook"
)

// TestWebhooksServe: denar serve delivers webhooks on its own runner. On
// SQLite without DENAR_WEBHOOK_SECRET_KEY it generates the key once in the
// data directory (mode 0600) and opens the same secrets after a restart;
// on PostgreSQL it refuses to start without the key.
func TestWebhooksServe(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		env := baseEnv(t, dbURL)
		sqlite := strings.HasPrefix(dbURL, "sqlite:")
		if sqlite {
			env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "DENAR_WEBHOOK_SECRET_KEY=") })
		} else {
			noKey := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "DENAR_WEBHOOK_SECRET_KEY=") })
			cmd := exec.Command(denarBin, "serve")
			cmd.Env = append(noKey, "DENAR_PAYROLL_ADDR="+freeAddr(t), "DENAR_EINVOICE_ADDR="+freeAddr(t))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "DENAR_WEBHOOK_SECRET_KEY is required with PostgreSQL") {
				t.Fatalf("serve on PostgreSQL without a webhook key: %v: %s", err, stderr.String())
			}
		}
		env = append(env, "DENAR_WEBHOOK_ALLOW_PRIVATE_SANDBOX=true")
		s := startServer(t, env)
		key := s.einvoiceKey
		if key == "" {
			t.Fatal("no bootstrap key")
		}
		var dataDir string
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "DENAR_DATA_DIR="); ok {
				dataDir = v
			}
		}
		keyFile := filepath.Join(dataDir, "webhook-secret.key")
		if fi, err := os.Stat(keyFile); sqlite != (err == nil) || (sqlite && fi.Mode().Perm() != 0o600) {
			t.Fatalf("key file %s: %v %v (sqlite %v)", keyFile, fi, err, sqlite)
		}

		var (
			mu     sync.Mutex
			secret string
			got    []string
		)
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			if err := webhook.Verify(body, r.Header.Get(webhook.Header), secret, webhook.Tolerance, time.Now()); err != nil {
				got = append(got, "bad: "+err.Error())
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			var ev struct{ Type string }
			_ = json.Unmarshal(body, &ev)
			got = append(got, ev.Type)
		}))
		defer recv.Close()
		r := call(t, "POST", s.einvoice+"/v1/webhook-endpoints", key, map[string]string{"Idempotency-Key": "ep-1"},
			`{"url":"`+recv.URL+`/hooks","events":["*"]}`)
		if r.status != 201 {
			t.Fatalf("create endpoint: %d %s", r.status, r.body)
		}
		var ep struct{ ID, Secret string }
		_ = json.Unmarshal(r.body, &ep)
		mu.Lock()
		secret = ep.Secret
		mu.Unlock()
		received := func(n int) func() bool {
			return func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(got) >= n
			}
		}
		sendTest := func(idem string) {
			t.Helper()
			if r := call(t, "POST", s.einvoice+"/v1/webhook-endpoints/"+ep.ID+"/test", key, map[string]string{"Idempotency-Key": idem}, ""); r.status != 202 {
				t.Fatalf("test: %d %s", r.status, r.body)
			}
		}
		sendTest("test-1")
		eventually(t, "the test delivery", received(1))
		s.stop(t)

		// After a restart the secret still opens (the same key).
		s = startServer(t, s.env)
		sendTest("test-2")
		eventually(t, "the test delivery after a restart", received(2))
		mu.Lock()
		if len(got) != 2 || got[0] != "webhook_endpoint.test" || got[1] != "webhook_endpoint.test" {
			t.Fatalf("receiver got %v", got)
		}
		mu.Unlock()
		s.stop(t)

		// Who is mailed when an endpoint is disabled.
		var accts []struct {
			ID          string   `json:"id"`
			OwnerEmails []string `json:"ownerEmails"`
		}
		if err := json.Unmarshal([]byte(runAdminCmd(t, env, "account", "list", "--json")), &accts); err != nil || len(accts) != 1 {
			t.Fatalf("accounts %v %v", accts, err)
		}
		runAdminCmd(t, env, "account", "owners", accts[0].ID, "ops@example.mk", "cfo@example.mk")
		_ = json.Unmarshal([]byte(runAdminCmd(t, env, "account", "list", "--json")), &accts)
		if strings.Join(accts[0].OwnerEmails, ",") != "ops@example.mk,cfo@example.mk" {
			t.Fatalf("owners %v", accts[0].OwnerEmails)
		}
	})
}
