package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestRevocationAcrossStores: a key authenticated (and kept) by one store
// is refused by that store as soon as another store on the same database —
// another process — revokes it; on both engines.
func TestRevocationAcrossStores(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		open := func() *store.DB {
			db := storetest.Open(t, url)
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			return db
		}
		server, admin := &auth.Store{DB: open()}, &auth.Store{DB: open()}
		acct, err := admin.CreateAccount(ctx, "Биро", "")
		if err != nil {
			t.Fatal(err)
		}
		row, key, err := admin.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			p, err := server.Authenticate(ctx, auth.ServicePayroll, key)
			if err != nil || p.CredentialID != row.ID {
				t.Fatalf("authenticate: %v %+v", err, p)
			}
			p.Scopes = nil // a caller changing its copy changes nothing kept
		}
		if p, _ := server.Authenticate(ctx, auth.ServicePayroll, key); len(p.Scopes) == 0 {
			t.Fatal("a caller's change reached the kept principal")
		}
		if _, err := server.Authenticate(ctx, auth.ServiceEInvoice, key); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Fatalf("a payroll key kept by the server passes for e-invoicing: %v", err)
		}
		if err := admin.RevokeKey(ctx, row.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := server.Authenticate(ctx, auth.ServicePayroll, key); !errors.Is(err, auth.ErrRevoked) {
			t.Fatalf("revoked in another store, still accepted: %v", err)
		}
	})
}

// TestRevokeKeyOnce: revoking a key twice, or a key that does not exist,
// is an error that says which (a typo in an id is never taken for done),
// and the first revocation stands; on both engines.
func TestRevokeKeyOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := &auth.Store{DB: db}
		acct, err := s.CreateAccount(ctx, "Биро", "")
		if err != nil {
			t.Fatal(err)
		}
		row, key, err := s.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeKey(ctx, row.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeKey(ctx, row.ID); err == nil || !strings.Contains(err.Error(), "already revoked") {
			t.Fatalf("a second revocation: %v, want already revoked", err)
		}
		if err := s.RevokeKey(ctx, row.ID+"x"); err == nil || !strings.Contains(err.Error(), "no API key") {
			t.Fatalf("revoking an unknown key: %v, want no API key", err)
		}
		if _, err := s.Authenticate(ctx, auth.ServiceEInvoice, key); !errors.Is(err, auth.ErrRevoked) {
			t.Fatalf("the revoked key after the failed revocations: %v", err)
		}
	})
}

// TestCompaniesKeptWithTheKey: a payroll key without an allow-list is kept
// with up to two employers of its account (so X-Company-Id needs no lookup
// of its own), and an employer created anywhere (a commit) is seen by the
// next authentication.
func TestCompaniesKeptWithTheKey(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	s := &auth.Store{DB: db}
	acct, _ := s.CreateAccount(ctx, "Биро", "")
	_, key, _ := s.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServicePayroll, Environment: auth.EnvSandbox})
	p, err := s.Authenticate(ctx, auth.ServicePayroll, key)
	if err != nil {
		t.Fatal(err)
	}
	employers := auth.Employers{DB: db}
	if ids, err := employers.CompanyIDs(ctx, p, 2); err != nil || len(ids) != 0 {
		t.Fatalf("employers %v %v", ids, err)
	}
	for _, name := range []string{"Прва", "Втора", "Трета"} {
		if _, err := createCompany(ctx, db, acct.ID, name); err != nil {
			t.Fatal(err)
		}
		p, _ = s.Authenticate(ctx, auth.ServicePayroll, key)
	}
	if ids, err := employers.CompanyIDs(ctx, p, 2); err != nil || len(ids) != 2 {
		t.Fatalf("after three employers: %v %v, want two (enough to require X-Company-Id)", ids, err)
	}
}

func createCompany(ctx context.Context, db *store.DB, account, name string) (string, error) {
	id := denar.NewID("cmp")
	err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateCompanyRecord(ctx, dbq.CreateCompanyRecordParams{ID: id, AccountID: account, Name: name, TaxNumber: "4030990123455", CreatedAt: tx.Now})
		return err
	})
	return id, err
}
