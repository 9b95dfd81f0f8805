package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/idempotency"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func render(v any) (idempotency.Response, error) {
	return idempotency.Response{Status: 201, ContentType: "application/json", Body: []byte(v.(string))}, nil
}

// effect stands for the work of an operation: a row written in the same
// transaction as the claim's completion.
func effect(ctx context.Context, tx *store.Tx, id string) error {
	_, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: id, Name: id, Plan: "sandbox", CreatedAt: tx.Now})
	return err
}

func accounts(t *testing.T, db *store.DB) int {
	t.Helper()
	n, err := db.Reader().CountAccounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestCompleteWithTheEffect: the response is stored in the commit of the
// effect; a rolled-back effect leaves the key running (released by the
// caller), never done.
func TestCompleteWithTheEffect(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		k := idempotency.New(db, time.Minute)
		sc := idempotency.Scope{Account: "acct_1", Environment: "sandbox", Credential: "key_1"}
		c, replay, err := k.Begin(ctx, sc, "k1", "fp", render)
		if err != nil || replay != nil || c == nil {
			t.Fatalf("first begin: %v %v %v", c, replay, err)
		}
		// The work fails after completing: nothing of it, nor the
		// response, may remain.
		boom := errors.New("boom")
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := effect(ctx, tx, "acct_a"); err != nil {
				return err
			}
			if err := c.Complete(ctx, tx, `{"id":"a"}`); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) || c.Done() || accounts(t, db) != 0 {
			t.Fatalf("rolled back: err %v done %v accounts %d", err, c.Done(), accounts(t, db))
		}
		if _, _, err := k.Begin(ctx, sc, "k1", "fp", render); !errors.Is(err, idempotency.ErrInProgress) {
			t.Fatalf("key after a rollback, before release: %v", err)
		}
		if err := k.Release(ctx, c); err != nil {
			t.Fatal(err)
		}
		// Now the retry runs and commits.
		c, _, err = k.Begin(ctx, sc, "k1", "fp", render)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := effect(ctx, tx, "acct_a"); err != nil {
				return err
			}
			return c.Complete(ctx, tx, `{"id":"a"}`)
		}); err != nil {
			t.Fatal(err)
		}
		if !c.Done() || string(c.Response().Body) != `{"id":"a"}` {
			t.Fatalf("done %v response %+v", c.Done(), c.Response())
		}
		_, replay, err = k.Begin(ctx, sc, "k1", "fp", render)
		if err != nil || replay == nil || string(replay.Body) != `{"id":"a"}` || replay.Status != 201 {
			t.Fatalf("replay: %+v %v", replay, err)
		}
		if _, _, err := k.Begin(ctx, sc, "k1", "other", render); !errors.Is(err, idempotency.ErrConflict) {
			t.Fatalf("other fingerprint: %v", err)
		}
		// The same key of another environment or credential is another
		// request.
		for _, other := range []idempotency.Scope{
			{Account: "acct_1", Environment: "production", Credential: "key_1"},
			{Account: "acct_1", Environment: "sandbox", Credential: "key_2"},
		} {
			c, replay, err := k.Begin(ctx, other, "k1", "fp", render)
			if err != nil || replay != nil || c == nil {
				t.Fatalf("%+v: %v %v", other, replay, err)
			}
		}
	})
}

// TestFencedTakeOver: a request whose lease ran out is taken over; when
// the first request then tries to commit, its completion matches no row
// and its effect rolls back, so the work happens once.
func TestFencedTakeOver(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		db.Now = func() time.Time { return now }
		k := idempotency.New(db, time.Minute)
		sc := idempotency.Scope{Account: "acct_1", Environment: "sandbox", Credential: "key_1"}
		slow, _, err := k.Begin(ctx, sc, "k", "fp", render)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := k.Begin(ctx, sc, "k", "fp", render); !errors.Is(err, idempotency.ErrInProgress) {
			t.Fatalf("within the lease: %v", err)
		}
		now = now.Add(2 * time.Minute)
		taker, replay, err := k.Begin(ctx, sc, "k", "fp", render)
		if err != nil || replay != nil {
			t.Fatalf("take over: %v %v", replay, err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := effect(ctx, tx, "acct_slow"); err != nil {
				return err
			}
			return slow.Complete(ctx, tx, `{"by":"slow"}`)
		})
		if !errors.Is(err, idempotency.ErrInProgress) || denar.ErrorCode(err) != "idempotency_in_progress" {
			t.Fatalf("fenced completion: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := effect(ctx, tx, "acct_taker"); err != nil {
				return err
			}
			return taker.Complete(ctx, tx, `{"by":"taker"}`)
		}); err != nil {
			t.Fatal(err)
		}
		if n := accounts(t, db); n != 1 {
			t.Fatalf("%d effects, want 1", n)
		}
		// The slow request's release cannot free the taker's key.
		if err := k.Release(ctx, slow); err != nil {
			t.Fatal(err)
		}
		if _, replay, _ := k.Begin(ctx, sc, "k", "fp", render); replay == nil || string(replay.Body) != `{"by":"taker"}` {
			t.Fatalf("replay after the slow release: %+v", replay)
		}
	})
}

func TestPurge(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		k := idempotency.New(db, time.Minute)
		for key, age := range map[string]time.Duration{"old": 25 * time.Hour, "young": time.Hour} {
			db.Now = func() time.Time { return now.Add(-age) }
			if _, _, err := k.Begin(ctx, idempotency.Scope{Account: "acct"}, key, "f", render); err != nil {
				t.Fatal(err)
			}
		}
		n, err := k.Purge(ctx, now.Add(-24*time.Hour))
		if err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want 1", n, err)
		}
		if _, err := db.Reader().GetIdempotencyKey(ctx, dbq.GetIdempotencyKeyParams{AccountID: "acct", IdemKey: "young"}); err != nil {
			t.Fatalf("young key purged: %v", err)
		}
	})
}

func TestFingerprintCanonical(t *testing.T) {
	t.Parallel()
	a := idempotency.Fingerprint("POST", "/v1/x", "cmp_1", []byte(`{"b":1,"a":"x"}`))
	b := idempotency.Fingerprint("POST", "/v1/x", "cmp_1", []byte(" { \"a\" : \"x\", \"b\" : 1 } "))
	if a != b {
		t.Fatal("re-serialised body changed the fingerprint")
	}
	for _, other := range []string{
		idempotency.Fingerprint("POST", "/v1/x", "cmp_2", []byte(`{"a":"x","b":1}`)),
		idempotency.Fingerprint("POST", "/v1/y", "cmp_1", []byte(`{"a":"x","b":1}`)),
		idempotency.Fingerprint("POST", "/v1/x", "cmp_1", []byte(`{"a":"x","b":1.0}`)),
	} {
		if other == a {
			t.Fatal("a different request has the same fingerprint")
		}
	}
}
