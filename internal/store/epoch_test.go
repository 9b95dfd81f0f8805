package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestAccessEpochAcrossHandles: two stores opened on one SQLite file (as two
// processes would) share the access epoch; a commit or an AccessChanged in
// one moves it in the other at once. PostgreSQL has none.
func TestAccessEpochAcrossHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := "sqlite://" + filepath.Join(t.TempDir(), "d.db")
	a, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	e0, ok := a.AccessEpoch()
	if !ok {
		t.Fatal("SQLite store without an access epoch")
	}
	b.AccessChanged()
	if e1, _ := a.AccessEpoch(); e1 == e0 {
		t.Fatal("AccessChanged in one store is not seen by the other")
	}
	e1, _ := a.AccessEpoch()
	if err := b.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CountAccounts(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if e2, _ := a.AccessEpoch(); e2 == e1 {
		t.Fatal("a commit in one store does not move the epoch in the other")
	}
	if _, ok := storetest.Postgres(t).AccessEpoch(); ok {
		t.Error("PostgreSQL store with an access epoch")
	}
}
