package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestNotify: a committed Notify wakes the watchers of its channel and key
// (on PostgreSQL, watchers of another store on the same database, as in
// another process), and only those; a rolled-back transaction or savepoint
// wakes nobody.
func TestNotify(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		watcher := db
		if db.Dialect() == store.Postgres {
			watcher = storetest.Open(t, url) // another pool: another process to PostgreSQL
		}
		ctx := t.Context()
		a, stopA := watcher.Watch("things", "a")
		defer stopA()
		b, stopB := watcher.Watch("things", "b")
		defer stopB()
		c, stopC := watcher.Watch("things", "c")
		defer stopC()
		other, stopOther := watcher.Watch("others", "b")
		defer stopOther()
		if db.Dialect() == store.Postgres {
			// Listening starts with a wake-up of every watcher (whatever was
			// notified before is unknown); take it.
			wait(t, a, "the LISTEN connection's first wake-up")
			for _, w := range []<-chan struct{}{b, c, other} {
				wait(t, w, "the LISTEN connection's first wake-up")
			}
		}

		failed := errors.New("rolled back")
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.Notify(ctx, "things", "a"); err != nil {
				return err
			}
			return failed
		}); !errors.Is(err, failed) {
			t.Fatalf("rolled-back transaction: %v", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.Savepoint(ctx, func() error {
				if err := tx.Notify(ctx, "things", "a"); err != nil {
					return err
				}
				return failed
			}); !errors.Is(err, failed) {
				t.Fatalf("savepoint: %v", err)
			}
			return tx.Notify(ctx, "things", "c")
		}); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 3 {
				if err := tx.Notify(ctx, "things", "b"); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// Delivered in commit order: once b is woken, c was, and a would
		// have been.
		wait(t, b, "b, committed")
		wait(t, c, "c, committed beside a rolled-back savepoint")
		for name, w := range map[string]<-chan struct{}{"a (rolled back)": a, "others/b (another channel)": other} {
			select {
			case <-w:
				t.Errorf("%s woken", name)
			default:
			}
		}

		// A stopped watch is woken no more.
		stopB()
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.Notify(ctx, "things", "b") }); err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.Notify(ctx, "things", "c") }); err != nil {
			t.Fatal(err)
		}
		wait(t, c, "c, after b's watch stopped")
		select {
		case <-b:
			t.Error("b woken after its watch stopped")
		default:
		}
	})
}

// wait waits for a wake-up on w.
func wait(t *testing.T, w <-chan struct{}, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	select {
	case <-w:
	case <-ctx.Done():
		t.Fatalf("no wake-up: %s", what)
	}
}
