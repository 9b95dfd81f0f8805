package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
)

// TestCheckpointOffTheWriter writes far fewer pages than the writer's own
// auto-checkpoint waits for, and expects them in the database file all the
// same: the store's checkpointer copied the log back, not a commit.
func TestCheckpointOffTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "denar.db")
	db, err := store.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(ctx, "CREATE TABLE filler (b TEXT NOT NULL)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	// 200 rows of 8 KB: about 400 pages of 4 KiB, a tenth of the backstop.
	row := strings.Repeat("ж", 4096)
	for range 10 {
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			for range 20 {
				if _, err := tx.Exec(ctx, "INSERT INTO filler (b) VALUES (?)", row); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	const want = 200 * 8192
	deadline := time.Now().Add(10 * time.Second)
	for size()-before < want {
		if time.Now().After(deadline) {
			t.Fatalf("the database file grew by %d bytes in 10 s, want at least %d: the log was not checkpointed", size()-before, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
