package usecase_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/usecase"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// TestWrite: the work commits with its answer, or not at all when it
// fails.
func TestWrite(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		c := usecase.Caller{Principal: &auth.Principal{AccountID: "acct_x", Environment: auth.EnvSandbox}}
		create := func(ctx context.Context, id string, fail error) (string, error) {
			return usecase.Write(ctx, db, c, func(tx *store.Tx) (string, error) {
				if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: id, Name: "Биро", Plan: "test", CreatedAt: tx.Now}); err != nil {
					return "", err
				}
				return id, fail
			})
		}
		if got, err := create(t.Context(), "acct_ok", nil); err != nil || got != "acct_ok" {
			t.Fatalf("write: %q, %v", got, err)
		}
		boom := errors.New("boom")
		if _, err := create(t.Context(), "acct_failed", boom); !errors.Is(err, boom) {
			t.Fatalf("failing work: %v", err)
		}
		for id, want := range map[string]bool{"acct_ok": true, "acct_failed": false} {
			_, err := db.Reader().GetAccount(t.Context(), id)
			if got := err == nil; got != want || (err != nil && !errors.Is(err, sql.ErrNoRows)) {
				t.Errorf("account %s stored: %v (%v), want %v", id, got, err, want)
			}
		}
	})
}

// TestShownOnce: the replay of an answer that carried a secret names the
// object (and its id, when it has one) under secret_already_shown.
func TestShownOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		object, id string
		want       map[string]any
	}{
		{"webhook_endpoint", "whe_1", map[string]any{"object": "webhook_endpoint", "objectId": "whe_1"}},
		{"agent_pairing_code", "", map[string]any{"object": "agent_pairing_code"}},
	} {
		e := usecase.ShownOnce(tc.object, tc.id, "shown once")
		d := e.Detail
		if e.Code != usecase.ECodeSecretAlreadyShown || denar.ErrorCode(e) != "secret_already_shown" || len(d) != len(tc.want) {
			t.Fatalf("%s: %+v", tc.object, e)
		}
		for k, v := range tc.want {
			if d[k] != v {
				t.Errorf("%s: detail %s = %v, want %v", tc.object, k, d[k], v)
			}
		}
	}
}
