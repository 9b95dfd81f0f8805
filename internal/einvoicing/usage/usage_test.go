package usage

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// core is the e-invoicing core on db with the publisher and the code-list
// room cmd/denar gives it.
func core(db *store.DB) *einvoicing.Service {
	log := slog.New(slog.DiscardHandler)
	events := webhooks.New(webhooks.Deps{DB: db, Log: log, Resources: einvoicing.EventResources()}, webhooks.Config{})
	lists := codelists.New(codelists.Deps{DB: db, Log: log, Events: events}, codelists.Config{})
	return einvoicing.New(einvoicing.Deps{DB: db, Log: log, Events: events, CodeLists: lists}, einvoicing.Config{})
}

// deliverAt takes a new e-invoice of c (kind invoice, storno or
// correction) through the real moves — signed, submitted, held, retried —
// to delivered at the given moment, so the ledger row is the one the
// pipeline writes.
func deliverAt(t *testing.T, db *store.DB, c einvoicingtest.Company, kind string, at time.Time) dbq.Einvoice {
	svc := core(db)
	t.Helper()
	ctx := t.Context()
	restore := db.Now
	defer func() { db.Now = restore }()
	db.Now = func() time.Time { return at }
	var inv dbq.Einvoice
	err := db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		id := denar.NewID("einv")
		inv, err = tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: id, AccountID: c.AccountID, CompanyID: c.CompanyID,
			Environment: c.Environment, Kind: kind, Status: string(einvoice.Queued), DocumentType: "100", Number: "N-" + id,
			IssueDate: at.Format(time.DateOnly), Document: "{}", UjpDocID: id, TotalNet: "1.00", TotalVat: "0.18", TotalGross: "1.18",
			Currency: "MKD", Problems: "[]", Fingerprint: "fp", CreatedAt: tx.Now, UpdatedAt: tx.Now})
		if err != nil {
			return err
		}
		payload := base64.RawURLEncoding.EncodeToString([]byte(`{"docId":"` + id + `"}`))
		sr, err := tx.CreateSigningRequest(ctx, dbq.CreateSigningRequestParams{ID: denar.NewID("sgr"), AccountID: c.AccountID,
			CompanyID: c.CompanyID, CertificateID: c.CertificateID, Purpose: "document", ProtectedHeader: "e30", Payload: payload,
			LinkType: einvoicing.LinkEInvoice, LinkID: id, ExpiresAt: tx.Now.Add(time.Hour), CreatedAt: tx.Now})
		if err != nil {
			return err
		}
		_, err = tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{State: "signed", Jws: "e30." + payload + ".c2ln", ID: sr.ID, Now: tx.Now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []einvoicing.StatusMove{{To: einvoice.Submitting, Cause: "submission"}, {To: einvoice.Held, Cause: "ujp_outage"},
		{To: einvoice.Submitting, Cause: "retry"}, {To: einvoice.Delivered, Cause: "submitted", UJPCode: "01", EUID: "euid-" + inv.ID}} {
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			cur, err := tx.GetEInvoiceByID(ctx, inv.ID)
			if err != nil {
				return err
			}
			inv, err = svc.MoveEInvoice(ctx, tx, cur, m)
			return err
		}); err != nil {
			t.Fatalf("move %s to %s: %v", inv.ID, m.To, err)
		}
	}
	return inv
}

func received(t *testing.T, db *store.DB, c einvoicingtest.Company, at time.Time) string {
	t.Helper()
	id := denar.NewID("inbd")
	err := db.InTx(t.Context(), func(tx *store.Tx) error {
		_, err := einvoicing.CountReceived(t.Context(), tx, einvoicing.ReceivedDocument{ID: id, AccountID: c.AccountID, CompanyID: c.CompanyID,
			Environment: c.Environment, ReceivedAt: at})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func principal(c einvoicingtest.Company, env string, companies ...string) *auth.Principal {
	return &auth.Principal{AccountID: c.AccountID, CredentialID: "key_test", Kind: auth.KindAPIKey, Service: auth.ServiceEInvoice,
		Environment: env, Scopes: []string{"usage:read"}, CompanyIDs: companies, ProductionEnabled: true}
}

// TestUsage counts sent documents (storno and correction included) in the
// Skopje month UJP assigned their EUID, received ones in the month they
// arrived, each once however often it was retried or counted again, per
// company and environment, with billable against the plan in production
// and always 0 in the sandbox.
func TestUsage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		authStore := &auth.Store{DB: db}
		if _, err := authStore.PutPlan(ctx, auth.Plan{Code: "tiny", IncludedDocuments: 3, ExtraDocumentPrice: "9.5", Production: true}); err != nil {
			t.Fatal(err)
		}
		a, err := einvoicingtest.NewCompany(ctx, db, "", "tiny", auth.EnvProduction, "4030000000001")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := einvoicingtest.NewCompany(ctx, db, a.AccountID, "", auth.EnvProduction, "4030000000010")
		sb, _ := einvoicingtest.NewCompany(ctx, db, a.AccountID, "", auth.EnvSandbox, "4030000000001")
		other, _ := einvoicingtest.NewCompany(ctx, db, "", "tiny", auth.EnvProduction, "4030000000001")

		march := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
		orig := deliverAt(t, db, a, "invoice", march)
		deliverAt(t, db, a, "storno", march.Add(time.Hour))
		deliverAt(t, db, a, "correction", march.Add(2*time.Hour))
		deliverAt(t, db, b, "invoice", march)
		// 2026-03-31 22:30 UTC is 1 April 00:30 in Skopje (CEST): April.
		deliverAt(t, db, a, "invoice", time.Date(2026, 3, 31, 22, 30, 0, 0, time.UTC))
		// 2026-02-28 23:30 UTC is 1 March 00:30 in Skopje (CET): March.
		deliverAt(t, db, b, "invoice", time.Date(2026, 2, 28, 23, 30, 0, 0, time.UTC))
		deliverAt(t, db, sb, "invoice", march)
		deliverAt(t, db, other, "invoice", march)
		inbd := received(t, db, a, march)
		received(t, db, sb, march)
		received(t, db, sb, march)

		// Counting again changes nothing: the move to delivered cannot
		// happen twice, a second count of the same document is a no-op,
		// and so is the inbox reading a document again, also from two
		// processes at once.
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			cur, err := tx.GetEInvoiceByID(ctx, orig.ID)
			if err != nil {
				return err
			}
			return einvoicing.CountSent(ctx, tx, cur)
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		counted := make(chan bool, 4)
		for range 4 {
			wg.Go(func() {
				_ = db.InTx(ctx, func(tx *store.Tx) error {
					ok, err := einvoicing.CountReceived(ctx, tx, einvoicing.ReceivedDocument{ID: inbd, AccountID: a.AccountID, CompanyID: a.CompanyID,
						Environment: a.Environment, ReceivedAt: march.AddDate(0, 1, 0)})
					counted <- ok
					return err
				})
			})
		}
		wg.Wait()
		close(counted)
		for ok := range counted {
			if ok {
				t.Fatal("a document received again was counted again")
			}
		}

		// The counters GET /v1/usage reads agree with the ledger.
		for _, period := range []string{"2026-02", "2026-03", "2026-04"} {
			for _, env := range []string{auth.EnvProduction, auth.EnvSandbox} {
				ledger, err := db.Reader().LedgerByCompany(ctx, dbq.LedgerByCompanyParams{AccountID: a.AccountID, Environment: env, Period: period})
				if err != nil {
					t.Fatal(err)
				}
				counters, err := db.Reader().UsageByCompany(ctx, dbq.UsageByCompanyParams{AccountID: a.AccountID, Environment: env,
					AllCompanies: true, Period: period})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(ledger) != fmt.Sprint(counters) {
					t.Fatalf("%s %s: ledger %v, counters %v", env, period, ledger, counters)
				}
				total, err := db.Reader().UsageTotal(ctx, dbq.UsageTotalParams{AccountID: a.AccountID, Environment: env, Period: period})
				sum := int64(0)
				for _, r := range ledger {
					sum += r.N
				}
				if err != nil || total != sum {
					t.Fatalf("%s %s: account total %d (%v), ledger %d", env, period, total, err, sum)
				}
			}
		}

		svc := New(Deps{DB: db})
		for _, tc := range []struct {
			name    string
			p       *auth.Principal
			q       Query
			want    Usage
			wantErr string
		}{
			{name: "production March", p: principal(a, auth.EnvProduction), q: Query{Period: "2026-03"},
				want: Usage{Totals: UsageTotals{Sent: 5, Received: 1, Billable: 3},
					ByCompany: []CompanyUsage{{a.CompanyID, 3, 1}, {b.CompanyID, 2, 0}}}},
			{name: "production April", p: principal(a, auth.EnvProduction), q: Query{Period: "2026-04"},
				want: Usage{Totals: UsageTotals{Sent: 1}, ByCompany: []CompanyUsage{{a.CompanyID, 1, 0}}}},
			{name: "production February is empty", p: principal(a, auth.EnvProduction), q: Query{Period: "2026-02"},
				want: Usage{ByCompany: []CompanyUsage{}}},
			{name: "one company; billable stays the account's", p: principal(a, auth.EnvProduction), q: Query{Period: "2026-03", CompanyID: b.CompanyID},
				want: Usage{Totals: UsageTotals{Sent: 2, Billable: 3}, ByCompany: []CompanyUsage{{b.CompanyID, 2, 0}}}},
			{name: "allow-list", p: principal(a, auth.EnvProduction, a.CompanyID), q: Query{Period: "2026-03"},
				want: Usage{Totals: UsageTotals{Sent: 3, Received: 1, Billable: 3}, ByCompany: []CompanyUsage{{a.CompanyID, 3, 1}}}},
			{name: "sandbox is never billable", p: principal(a, auth.EnvSandbox), q: Query{Period: "2026-03", Environment: auth.EnvSandbox},
				want: Usage{Totals: UsageTotals{Sent: 1, Received: 2}, ByCompany: []CompanyUsage{{sb.CompanyID, 1, 2}}}},
			{name: "sandbox key reading production", p: principal(a, auth.EnvSandbox), q: Query{Period: "2026-03"}, wantErr: "environment_mismatch"},
			{name: "company outside the allow-list", p: principal(a, auth.EnvProduction, a.CompanyID), q: Query{Period: "2026-03", CompanyID: b.CompanyID}, wantErr: "company_not_allowed"},
			{name: "company of another account", p: principal(a, auth.EnvProduction), q: Query{Period: "2026-03", CompanyID: other.CompanyID}, wantErr: "company_not_allowed"},
			{name: "sandbox company with a production key", p: principal(a, auth.EnvProduction), q: Query{Period: "2026-03", CompanyID: sb.CompanyID}, wantErr: "environment_mismatch"},
			{name: "not a month", p: principal(a, auth.EnvProduction), q: Query{Period: "2026-13"}, wantErr: "validation_failed"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := svc.Usage(ctx, tc.p, tc.q)
				if tc.wantErr != "" {
					var de *denar.Error
					if !errors.As(err, &de) || de.Code != tc.wantErr {
						t.Fatalf("err %v, want %s", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				env := tc.q.Environment
				if env == "" {
					env = auth.EnvProduction
				}
				want := tc.want
				want.Object, want.Period, want.Environment = "usage", tc.q.Period, env
				want.Plan = UsagePlan{Code: "tiny", IncludedDocuments: 3, ExtraDocumentPrice: "9.50", Currency: "MKD"}
				if tc.q.CompanyID != "" && len(want.ByCompany) == 0 {
					want.ByCompany = []CompanyUsage{{tc.q.CompanyID, 0, 0}}
				}
				if !equalUsage(got, want) {
					t.Fatalf("usage\n got %+v\nwant %+v", got, want)
				}
			})
		}
	})
}

func equalUsage(a, b Usage) bool {
	if a.Object != b.Object || a.Period != b.Period || a.Environment != b.Environment || a.Plan != b.Plan || a.Totals != b.Totals ||
		len(a.ByCompany) != len(b.ByCompany) {
		return false
	}
	for i := range a.ByCompany {
		if a.ByCompany[i] != b.ByCompany[i] {
			return false
		}
	}
	return true
}

// TestSetPlan: production follows the plan, which is data: moving an
// account to a plan without production takes production away on its
// next authentication, and changing the plan's flag moves every account
// on it.
func TestSetPlan(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		as := &auth.Store{DB: db}
		acct, err := as.CreateAccount(ctx, "Биро", "business")
		if err != nil {
			t.Fatal(err)
		}
		_, key, err := as.CreateKey(ctx, auth.KeyParams{AccountID: acct.ID, Service: auth.ServiceEInvoice, Environment: auth.EnvProduction})
		if err != nil {
			t.Fatal(err)
		}
		prod := func() bool {
			p, err := as.Authenticate(ctx, auth.ServiceEInvoice, key)
			if err != nil {
				t.Fatal(err)
			}
			return p.ProductionEnabled
		}
		if !prod() {
			t.Fatal("business has production")
		}
		if _, err := as.SetAccountPlan(ctx, acct.ID, "sandbox"); err != nil {
			t.Fatal(err)
		}
		if prod() {
			t.Fatal("sandbox plan keeps production")
		}
		if _, err := as.SetAccountPlan(ctx, acct.ID, "gold"); err == nil {
			t.Fatal("unknown plan accepted")
		}
		if _, err := as.PutPlan(ctx, auth.Plan{Code: "sandbox", IncludedDocuments: 0, ExtraDocumentPrice: "0", Production: true}); err != nil {
			t.Fatal(err)
		}
		if !prod() {
			t.Fatal("the plan's production flag did not reach its account")
		}
		for _, bad := range []auth.Plan{{Code: "x", ExtraDocumentPrice: "-1"}, {Code: "X", ExtraDocumentPrice: "1"}, {Code: "y", ExtraDocumentPrice: "1.00001"}} {
			if _, err := as.PutPlan(ctx, bad); err == nil {
				t.Fatalf("plan %+v accepted", bad)
			}
		}
	})
}
