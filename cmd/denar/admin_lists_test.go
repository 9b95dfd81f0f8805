package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// adminOn runs one admin command line ("key list --json") on db in this
// process, decodes its JSON output into out and returns it.
func adminOn(t *testing.T, db *store.DB, out any, line ...string) string {
	t.Helper()
	i := slices.IndexFunc(adminCommands, func(c adminCommand) bool { return c.name == line[0]+" "+line[1] })
	if i < 0 {
		t.Fatalf("no admin command %q", line[0]+" "+line[1])
	}
	var stdout, stderr bytes.Buffer
	a := &admin{cmd: adminCommands[i], db: db, stdout: &stdout, stderr: &stderr}
	if err := adminCommands[i].run(a, context.Background(), line[2:]); err != nil {
		t.Fatalf("%v: %v (stderr %q)", line, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%v: %v in %q", line, err, stdout.String())
	}
	return stdout.String()
}

// TestAdminLists: key, client, agent and mail list show what there is,
// never a secret, filtered by --account (and --state, --limit for mail),
// on both engines.
func TestAdminLists(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := &auth.Store{DB: db}
		type made struct{ acct, key, secret, client, agent string }
		var m [2]made
		for i, name := range []string{"Прво Биро", "Второ Биро"} {
			acct, err := s.CreateAccount(ctx, name, "")
			if err != nil {
				t.Fatal(err)
			}
			key, secret, err := s.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
			if err != nil {
				t.Fatal(err)
			}
			client, _, err := s.CreateClient(ctx, auth.ClientParams{AccountID: acct.ID, Environment: auth.EnvSandbox})
			if err != nil {
				t.Fatal(err)
			}
			agent := denar.NewID("agt")
			if _, err := db.Writer().CreateSigningAgent(ctx, dbq.CreateSigningAgentParams{ID: agent, AccountID: acct.ID,
				Environment: auth.EnvSandbox, Name: "агент " + name, SecretHash: "x", CreatedAt: db.Now()}); err != nil {
				t.Fatal(err)
			}
			m[i] = made{acct.ID, key.ID, secret, client.ID, agent}
		}
		if err := s.RevokeKey(ctx, m[1].key); err != nil {
			t.Fatal(err)
		}

		type row struct {
			ID        string
			Account   string
			Name      string
			Scopes    []string
			Display   string
			RevokedAt *string
		}
		var rows []row
		raw := adminOn(t, db, &rows, "key", "list", "--json")
		if len(rows) != 2 || rows[0].RevokedAt != nil || rows[1].RevokedAt == nil || len(rows[0].Scopes) == 0 || rows[0].Display == "" {
			t.Fatalf("key list: %+v", rows)
		}
		for _, x := range m {
			if strings.Contains(raw, x.secret) {
				t.Fatalf("key list shows a secret: %s", raw)
			}
		}
		for _, c := range []struct {
			cmd  string
			want func(made) string
		}{
			{"key", func(x made) string { return x.key }},
			{"client", func(x made) string { return x.client }},
			{"agent", func(x made) string { return x.agent }},
		} {
			for _, x := range m {
				rows = nil
				adminOn(t, db, &rows, c.cmd, "list", "--account", x.acct, "--json")
				if len(rows) != 1 || rows[0].ID != c.want(x) || rows[0].Account != x.acct {
					t.Fatalf("%s list --account %s: %+v, want %s", c.cmd, x.acct, rows, c.want(x))
				}
			}
		}
		rows = nil
		adminOn(t, db, &rows, "agent", "list", "--json")
		if len(rows) != 2 || rows[0].Name != "агент Прво Биро" || rows[1].Name != "агент Второ Биро" {
			t.Fatalf("agent list: %+v", rows)
		}

		var queued []string
		for _, to := range []string{"prv@example.com", "vtor@example.com", "tret@example.com"} {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				id, err := mail.Queue(ctx, tx, mail.Message{To: to, Subject: "Известување", Body: "тело"})
				queued = append(queued, id)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		type mailRow struct {
			ID    string
			To    string
			State string
			Body  *string
		}
		var mails []mailRow
		adminOn(t, db, &mails, "mail", "list", "--json")
		if len(mails) != 3 || mails[0].ID != queued[2] || mails[2].ID != queued[0] || mails[0].State != mail.StateQueued || mails[0].Body != nil {
			t.Fatalf("mail list (newest first, no bodies): %+v, queued %v", mails, queued)
		}
		mails = nil
		adminOn(t, db, &mails, "mail", "list", "--limit", "1", "--json")
		if len(mails) != 1 || mails[0].ID != queued[2] || mails[0].To != "tret@example.com" {
			t.Fatalf("mail list --limit 1: %+v", mails)
		}
		mails = nil
		adminOn(t, db, &mails, "mail", "list", "--state", "sent", "--json")
		if len(mails) != 0 {
			t.Fatalf("mail list --state sent: %+v", mails)
		}
	})
}
