package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestGroupCommit runs many SQLite transactions at once, so that they
// share commits: each that succeeds is there with its after-commit
// functions run once, each that fails or panics left nothing and got its
// own outcome, whatever the others in its group did.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	const n = 300
	errMine := errors.New("refused")
	var after atomic.Int64
	var wg sync.WaitGroup
	results := make([]error, n)
	panics := make([]any, n)
	for i := range n {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			results[i] = db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: fmt.Sprintf("acct_%03d", i), Name: "x", Plan: "sandbox", CreatedAt: tx.Now}); err != nil {
					return err
				}
				switch i % 10 {
				case 3:
					return errMine
				case 7:
					panic(fmt.Sprintf("member %d", i))
				case 5:
					// A second insert of the same id fails inside the
					// member; the member gives up.
					if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: fmt.Sprintf("acct_%03d", i), Name: "x", Plan: "sandbox", CreatedAt: tx.Now}); err == nil {
						return errors.New("a duplicate id was accepted")
					}
					return errMine
				}
				tx.AfterCommit(func() { after.Add(1) })
				return nil
			})
		})
	}
	wg.Wait()
	want := 0
	for i := range n {
		switch i % 10 {
		case 3, 5:
			if !errors.Is(results[i], errMine) {
				t.Errorf("member %d: %v, want its own error", i, results[i])
			}
		case 7:
			if panics[i] != fmt.Sprintf("member %d", i) {
				t.Errorf("member %d: panic %v, want its own", i, panics[i])
			}
		default:
			want++
			if results[i] != nil || panics[i] != nil {
				t.Errorf("member %d: %v %v", i, results[i], panics[i])
			}
		}
	}
	got, err := db.Reader().CountAccounts(ctx)
	if err != nil || int(got) != want {
		t.Fatalf("%d accounts (%v), want %d", got, err, want)
	}
	if after.Load() != int64(want) {
		t.Fatalf("after-commit functions ran %d times, want %d", after.Load(), want)
	}
}

// TestGroupCommitCancelled: a caller that goes away while its group runs
// does not take the others' work with it.
func TestGroupCommitCancelled(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	var wg sync.WaitGroup
	const n = 50
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_ = db.InTx(ctx, func(tx *store.Tx) error {
				if i%2 == 0 {
					cancel() // the client went away mid-transaction
				}
				_, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: fmt.Sprintf("acct_%03d", i), Name: "x", Plan: "sandbox", CreatedAt: time.Now().UTC()})
				return err
			})
		})
	}
	wg.Wait()
	got, err := db.Reader().CountAccounts(context.Background())
	if err != nil || got != n {
		t.Fatalf("%d accounts (%v), want %d: a cancelled caller's statements still run, and nobody else's are lost", got, err, n)
	}
}
