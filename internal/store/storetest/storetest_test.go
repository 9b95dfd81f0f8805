package storetest

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/denar-mk/denar/internal/store"
)

func TestMain(m *testing.M) { Main(m) }

// TestDatabasesAreMigratedAndSeparate checks that each test gets a database
// with every migration applied (the copy of the template, not an empty
// one), the same schema version on both engines, and its own data.
func TestDatabasesAreMigratedAndSeparate(t *testing.T) {
	t.Parallel()
	version := func(t *testing.T, db *store.DB) int64 {
		t.Helper()
		var v int64
		if err := db.ReadDB().QueryRow("SELECT MAX(version_id) FROM goose_db_version").Scan(&v); err != nil {
			t.Fatalf("schema version: %v", err)
		}
		return v
	}
	versions := map[string]int64{}
	var mu sync.Mutex
	for _, engine := range []struct {
		name string
		open func(testing.TB) *store.DB
	}{{"sqlite", SQLite}, {"postgres", Postgres}} {
		t.Run(engine.name, func(t *testing.T) {
			a, b := engine.open(t), engine.open(t)
			va, vb := version(t, a), version(t, b)
			if va < 1 || va != vb {
				t.Fatalf("schema versions %d and %d", va, vb)
			}
			mu.Lock()
			versions[engine.name] = va
			mu.Unlock()
			// Migrating again finds nothing to do.
			if err := a.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
			if v := version(t, a); v != va {
				t.Fatalf("migrating a copy of the template moved it from %d to %d", va, v)
			}
			if _, err := a.WriteDB().Exec("INSERT INTO instance_settings (name, value, updated_at) VALUES ('k', 'v', CURRENT_TIMESTAMP)"); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := b.ReadDB().QueryRow("SELECT COUNT(*) FROM instance_settings WHERE name = 'k'").Scan(&n); err != nil || n != 0 {
				t.Fatalf("a row written in one test database shows in another: %d, %v", n, err)
			}
		})
	}
	if versions["sqlite"] != versions["postgres"] && versions["postgres"] != 0 {
		t.Errorf("schema version sqlite %d, postgres %d", versions["sqlite"], versions["postgres"])
	}
}

// TestURLs: the plain URLs name empty databases (tests of the migrations
// start from nothing), the Migrated ones databases at the current version.
func TestURLs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		url      func(testing.TB) string
		migrated bool
	}{
		{"SQLiteURL", SQLiteURL, false}, {"PostgresURL", PostgresURL, false},
		{"MigratedSQLiteURL", MigratedSQLiteURL, true}, {"MigratedPostgresURL", MigratedPostgresURL, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := open(t, tt.url(t))
			var n int
			err := db.ReadDB().QueryRow("SELECT COUNT(*) FROM goose_db_version").Scan(&n)
			if migrated := err == nil && n > 0; migrated != tt.migrated {
				t.Fatalf("migrated = %v (%d versions, %v), want %v", migrated, n, err, tt.migrated)
			}
		})
	}
}

// TestTemplateBuiltOnce starts several builders of one template at once, as
// the test binaries of several packages do on a shared cluster: exactly one
// builds it, the others wait for it and find it finished.
func TestTemplateBuiltOnce(t *testing.T) {
	t.Parallel()
	url, admin, name := scratchTemplate(t)
	const builders = 4
	var wg sync.WaitGroup
	built := make([]bool, builders)
	errs := make([]error, builders)
	for i := range builders {
		wg.Go(func() { built[i], errs[i] = buildPGTemplate(url, admin, name) })
	}
	wg.Wait()
	n := 0
	for i := range builders {
		if errs[i] != nil {
			t.Fatalf("builder %d: %v", i, errs[i])
		}
		if built[i] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d builders built the template, want exactly 1", n)
	}
	checkTemplate(t, url, admin, name)
	if again, err := buildPGTemplate(url, admin, name); err != nil || again {
		t.Fatalf("second build = %v, %v; want the finished template found", again, err)
	}
}

// TestTemplateAfterDeadBuilder finds a database of the template's name that
// was never marked finished, as a builder killed half-way leaves it, and
// replaces it with a migrated one.
func TestTemplateAfterDeadBuilder(t *testing.T) {
	t.Parallel()
	url, admin, name := scratchTemplate(t)
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	built, err := buildPGTemplate(url, admin, name)
	if err != nil || !built {
		t.Fatalf("build over an unfinished template = %v, %v; want rebuilt", built, err)
	}
	checkTemplate(t, url, admin, name)
}

// scratchTemplate names a template of this test alone and drops it when
// the test ends.
func scratchTemplate(t *testing.T) (url string, admin *sql.DB, name string) {
	t.Helper()
	url, err := adminURL()
	if err != nil {
		t.Skipf("SKIP PostgreSQL: %v", err)
	}
	admin, err = adminPool(url)
	if err != nil {
		t.Fatal(err)
	}
	name = "denar_tmpl_test_" + randomHex(4)
	t.Cleanup(func() {
		_, _ = admin.Exec("ALTER DATABASE " + name + " WITH IS_TEMPLATE false")
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	return url, admin, name
}

// checkTemplate checks that name is a finished template nobody can connect
// to, and that a copy of it is migrated.
func checkTemplate(t *testing.T, url string, admin *sql.DB, name string) {
	t.Helper()
	var isTemplate, allowConn bool
	if err := admin.QueryRow("SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1", name).Scan(&isTemplate, &allowConn); err != nil {
		t.Fatal(err)
	}
	if !isTemplate || allowConn {
		t.Fatalf("%s: datistemplate %v, datallowconn %v; want a closed template", name, isTemplate, allowConn)
	}
	clone := "denar_test_" + randomHex(6)
	if _, err := admin.Exec("CREATE DATABASE " + clone + " TEMPLATE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + clone + " WITH (FORCE)") })
	db, err := store.Open(context.Background(), withDatabase(url, clone))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.ReadDB().QueryRow("SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0").Scan(&n); err != nil || n == 0 {
		t.Fatalf("copy of %s: %d migrations recorded, %v", name, n, err)
	}
}

// BenchmarkNewDatabase compares what a test waits for before it can use a
// database: the copy of the migrated template against the way before it,
// an empty database migrated from scratch (the baseline, same run).
func BenchmarkNewDatabase(b *testing.B) {
	b.Run("postgres/migrate", func(b *testing.B) {
		url, err := adminURL()
		if err != nil {
			b.Skip(err)
		}
		admin, err := adminPool(url)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			name := "denar_test_" + randomHex(6)
			if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
				b.Fatal(err)
			}
			db, err := store.Open(context.Background(), withDatabase(url, name))
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Migrate(context.Background()); err != nil {
				b.Fatal(err)
			}
			db.Close()
			b.StopTimer()
			_, _ = admin.Exec("DROP DATABASE " + name + " WITH (FORCE)")
			b.StartTimer()
		}
	})
	b.Run("postgres/template", func(b *testing.B) {
		for b.Loop() {
			Postgres(b)
		}
	})
	b.Run("sqlite/migrate", func(b *testing.B) {
		for b.Loop() {
			db, err := store.Open(context.Background(), "sqlite://"+b.TempDir()+"/denar.db")
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Migrate(context.Background()); err != nil {
				b.Fatal(err)
			}
			db.Close()
		}
	})
	b.Run("sqlite/template", func(b *testing.B) {
		for b.Loop() {
			SQLite(b)
		}
	})
}
