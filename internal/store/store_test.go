package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func TestParseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		dialect store.Dialect
		target  string
		wantErr bool
	}{
		{"postgres://u@h/db", store.Postgres, "postgres://u@h/db", false},
		{"postgresql://u@h/db?sslmode=disable", store.Postgres, "postgresql://u@h/db?sslmode=disable", false},
		{"sqlite:///var/lib/denar/denar.db", store.SQLite, "/var/lib/denar/denar.db", false},
		{"sqlite://denar-data/denar.db", store.SQLite, "denar-data/denar.db", false},
		{"file:x.db", store.SQLite, "x.db", false},
		{"./x.db", store.SQLite, "./x.db", false},
		{"", "", "", true},
		{"mysql://h/db", "", "", true},
		{"sqlite://x.db?mode=ro", "", "", true},
		{"sqlite://", "", "", true},
	}
	for _, tt := range tests {
		d, target, err := store.ParseURL(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseURL(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if d != tt.dialect || target != tt.target {
			t.Errorf("ParseURL(%q) = %q, %q; want %q, %q", tt.in, d, target, tt.dialect, tt.target)
		}
	}
}

// TestRoundTrip checks that the one generated query set stores and reads
// back times, booleans, nulls and bytes identically on both engines.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		created := time.Date(2026, 11, 22, 10, 0, 0, 500_000_000, time.UTC)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: "acct_1", Name: "Бирото", Plan: "sandbox", ProductionEnabled: true, CreatedAt: created})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.Reader().GetAccount(ctx, "acct_1")
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(created) || got.Name != "Бирото" || !got.ProductionEnabled {
			t.Errorf("round trip = %+v", got)
		}
		n, err := db.Writer().InsertIdempotencyKey(ctx, dbq.InsertIdempotencyKeyParams{AccountID: "acct_1", IdemKey: "k", Fingerprint: "f", LockedUntil: created, CreatedAt: created})
		if err != nil || n != 1 {
			t.Fatalf("insert = %d, %v", n, err)
		}
		n, err = db.Writer().InsertIdempotencyKey(ctx, dbq.InsertIdempotencyKeyParams{AccountID: "acct_1", IdemKey: "k", Fingerprint: "g", LockedUntil: created, CreatedAt: created})
		if err != nil || n != 0 {
			t.Fatalf("second insert = %d, %v; want 0 rows", n, err)
		}
		body := []byte{0, 1, 2, 0xff}
		if n, err := db.Writer().CompleteIdempotencyKey(ctx, dbq.CompleteIdempotencyKeyParams{AccountID: "acct_1", IdemKey: "k", StatusCode: 201, ContentType: "application/json", Body: body}); err != nil || n != 1 {
			t.Fatalf("complete = %d, %v", n, err)
		}
		row, err := db.Reader().GetIdempotencyKey(ctx, dbq.GetIdempotencyKeyParams{AccountID: "acct_1", IdemKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if string(row.Body) != string(body) || row.State != "done" || row.StatusCode != 201 {
			t.Errorf("idempotency row = %+v", row)
		}
	})
}

// TestRollback checks that an error inside InTx leaves nothing written.
func TestRollback(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: "acct_x", Name: "x", Plan: "sandbox", CreatedAt: time.Now().UTC()}); err != nil {
				t.Fatal(err)
			}
			return context.Canceled
		})
		n, err := db.Reader().CountAccounts(ctx)
		if err != nil || n != 0 {
			t.Fatalf("accounts after rollback = %d, %v", n, err)
		}
	})
}

// TestSavepoint: a part of a transaction that fails is rolled back on its
// own (its AfterCommit functions dropped), the parts around it commit, and
// a failing statement inside a part (which aborts a PostgreSQL
// transaction) leaves the transaction usable.
func TestSavepoint(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		var ran []string
		failed := fmt.Errorf("part failed")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i, fail := range []string{"", "error", "statement", ""} {
				id := fmt.Sprintf("acct_%d", i)
				err := tx.Savepoint(ctx, func() error {
					if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: id, Name: id, Plan: "sandbox", CreatedAt: now}); err != nil {
						return err
					}
					tx.AfterCommit(func() { ran = append(ran, id) })
					switch fail {
					case "error":
						return failed
					case "statement":
						// The same id again: a unique violation inside the part.
						_, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: id, Name: id, Plan: "sandbox", CreatedAt: now})
						if err == nil {
							return fmt.Errorf("duplicate account accepted")
						}
						return failed
					}
					return nil
				})
				if (fail == "") != (err == nil) || (err != nil && err != failed) {
					return fmt.Errorf("part %d (%q): %v", i, fail, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, false, false, true} {
			_, err := db.Reader().GetAccount(ctx, fmt.Sprintf("acct_%d", i))
			if (err == nil) != want {
				t.Errorf("account %d: %v, want kept %v", i, err, want)
			}
		}
		if strings.Join(ran, ",") != "acct_0,acct_3" {
			t.Errorf("after commit ran %v, want the parts that succeeded", ran)
		}
	})
}

// TestPagingStableUnderInserts pages through a company list while new
// companies are inserted between pages: every company that existed when
// paging began is seen exactly once.
func TestPagingStableUnderInserts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		add := func(n int) []string {
			var ids []string
			err := db.InTx(ctx, func(tx *store.Tx) error {
				for range n {
					id := denar.NewID("cmp")
					if _, err := tx.CreateCompanyRecord(ctx, dbq.CreateCompanyRecordParams{ID: id, AccountID: "acct_p", Name: "n", TaxNumber: "t", CreatedAt: tx.Now}); err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return ids
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: "acct_p", Name: "p", Plan: "sandbox", CreatedAt: tx.Now})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		existing := add(23)
		seen := map[string]int{}
		after := ""
		for page := 0; ; page++ {
			rows, err := db.Reader().ListCompanies(ctx, dbq.ListCompaniesParams{AccountID: "acct_p", After: after, Lim: 5})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				seen[r.ID]++
			}
			if len(rows) < 5 {
				break
			}
			after = rows[len(rows)-1].ID
			add(3) // newer rows appear at the head, never in the pages still to come
			if page > 20 {
				t.Fatal("paging does not end")
			}
		}
		for _, id := range existing {
			if seen[id] != 1 {
				t.Errorf("company %s seen %d times", id, seen[id])
			}
		}
	})
}

func ExampleArgs() {
	for _, d := range []store.Dialect{store.Postgres, store.SQLite} {
		a := store.NewArgs(d)
		var b strings.Builder
		b.WriteString("SELECT id FROM jobs WHERE locked_by = " + a.Add("runner-1") + " AND id IN ")
		a.Row(&b, 7, 9)
		fmt.Println(b.String(), a.List())
	}
	// Output:
	// SELECT id FROM jobs WHERE locked_by = $1 AND id IN ($2, $3) [runner-1 7 9]
	// SELECT id FROM jobs WHERE locked_by = ? AND id IN (?, ?) [runner-1 7 9]
}

// TestSQLiteFilesPrivate: a fresh SQLite store is a 0700 directory whose
// files (the database, its -wal and -shm, the access epoch) are 0600,
// whatever the process's umask lets through.
func TestSQLiteFilesPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data", "nested")
	target := filepath.Join(dir, "denar.db")
	db, err := store.Open(t.Context(), "sqlite://"+target)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("directory %s: %v %v, want 0700", d, fi.Mode(), err)
		}
	}
	files := 0
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		files++
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want 0600", e.Name(), fi.Mode())
		}
	}
	for _, want := range []string{"denar.db", "denar.db-wal", "denar.db-shm", "denar.db-access"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
	if files < 4 {
		t.Errorf("%d files in %s", files, dir)
	}
}

// TestTimesCompareAsInstants checks that a time in another zone is stored
// and compared as the instant it is: SQLite keeps times as text with their
// offset and compares them as text, so a Skopje-zoned time written or used
// as a bound must reach it in UTC.
func TestTimesCompareAsInstants(t *testing.T) {
	t.Parallel()
	skopje := time.FixedZone("CET", 3600)
	tests := []struct {
		name    string
		created time.Time
		before  time.Time
		purged  int64
	}{
		// 00:30 in Skopje is 23:30 UTC the day before, before midnight UTC.
		{"zoned row, UTC bound", time.Date(2026, 11, 22, 0, 30, 0, 0, skopje), time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), 1},
		// 23:50 UTC is after 00:45 in Skopje (23:45 UTC).
		{"UTC row, zoned bound", time.Date(2026, 11, 21, 23, 50, 0, 0, time.UTC), time.Date(2026, 11, 22, 0, 45, 0, 0, skopje), 0},
		{"UTC row, zoned bound after it", time.Date(2026, 11, 21, 23, 40, 0, 0, time.UTC), time.Date(2026, 11, 22, 0, 45, 0, 0, skopje), 1},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for i, tt := range tests {
			account := fmt.Sprintf("acct_t%d", i)
			err := db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: account, Name: "x", Plan: "sandbox", CreatedAt: tt.created}); err != nil {
					return err
				}
				_, err := tx.InsertIdempotencyKey(ctx, dbq.InsertIdempotencyKeyParams{AccountID: account, IdemKey: "k", Fingerprint: "f", LockedUntil: tt.created, CreatedAt: tt.created})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			n, err := db.Writer().PurgeIdempotencyKeys(ctx, tt.before)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.purged {
				t.Errorf("%s: purged %d keys created %v before %v; want %d", tt.name, n, tt.created, tt.before, tt.purged)
			}
			if n == 0 {
				// Leave no row for the next case's purge.
				if _, err := db.Writer().PurgeIdempotencyKeys(ctx, tt.created.Add(time.Second)); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
