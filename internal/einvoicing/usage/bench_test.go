package usage

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// stores runs fn on a fresh SQLite and a fresh PostgreSQL store.
func stores(b *testing.B, fn func(b *testing.B, db *store.DB)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, storetest.Postgres(b)) })
}

// seedLedger writes n counted documents of the account's companies into
// period, as the pipeline and the inbox would (a third received).
func seedLedger(b *testing.B, db *store.DB, acct string, companies []string, period string, n int) {
	ctx := b.Context()
	at := time.Now().UTC().Truncate(time.Microsecond)
	for start := 0; start < n; start += 500 {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var sb strings.Builder
			args := []any{}
			sb.WriteString("INSERT INTO usage_documents (document_id, account_id, company_id, environment, direction, period, day, at) VALUES ")
			for i := start; i < min(n, start+500); i++ {
				if i > start {
					sb.WriteString(",")
				}
				k := len(args)
				fmt.Fprintf(&sb, "($%d,$%d,$%d,$%d,$%d,$%d,$%d,$%d)", k+1, k+2, k+3, k+4, k+5, k+6, k+7, k+8)
				dir := einvoicing.DirectionSent
				if i%3 == 0 {
					dir = einvoicing.DirectionReceived
				}
				args = append(args, denar.NewID("einv"), acct, companies[i%len(companies)], auth.EnvProduction, dir, period,
					period+"-15", at)
			}
			_, err := tx.Tx.ExecContext(ctx, sb.String(), args...)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	// The counters the ledger keeps (einvoicing.CountSent, CountReceived), in one statement.
	if _, err := db.WriteDB().ExecContext(ctx, `INSERT INTO usage_counters (account_id, environment, period, company_id, direction, slot, n)
SELECT account_id, environment, period, company_id, direction, 0, COUNT(*) FROM usage_documents
WHERE account_id = $1 AND period = $2 GROUP BY account_id, environment, period, company_id, direction`, acct, period); err != nil {
		b.Fatal(err)
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkUsage100k answers GET /v1/usage for a month with 100,000
// documents of 20 companies (ledger rows and the counters kept with them),
// and prints the median time against the same query for an empty month
// measured in the same run. Target: under 100 ms on both stores.
//
//	go test ./internal/einvoicing/usage -run '^$' -bench Usage100k -benchtime 1x
func BenchmarkUsage100k(b *testing.B) {
	stores(b, func(b *testing.B, db *store.DB) {
		ctx := b.Context()
		c, err := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvProduction, einvoicingtest.TaxNumber("4030000000", 0))
		if err != nil {
			b.Fatal(err)
		}
		companies := []string{c.CompanyID}
		for i := 1; i < 20; i++ {
			o, err := einvoicingtest.NewCompany(ctx, db, c.AccountID, "", auth.EnvProduction, einvoicingtest.TaxNumber("4030000000", i))
			if err != nil {
				b.Fatal(err)
			}
			companies = append(companies, o.CompanyID)
		}
		seedLedger(b, db, c.AccountID, companies, "2026-03", 100000)
		if db.Dialect() == store.Postgres {
			if _, err := db.WriteDB().ExecContext(ctx, "ANALYZE usage_documents"); err != nil {
				b.Fatal(err)
			}
		}
		svc := New(Deps{DB: db})
		p := principal(c, auth.EnvProduction)
		measure := func(period string, want int) time.Duration {
			var ds []time.Duration
			for range 15 {
				start := time.Now()
				u, err := svc.Usage(ctx, p, Query{Period: period})
				ds = append(ds, time.Since(start))
				if err != nil || u.Totals.Sent+u.Totals.Received != want {
					b.Fatalf("usage %s: %+v %v", period, u.Totals, err)
				}
			}
			return median(ds)
		}
		b.ResetTimer()
		for b.Loop() {
			base := measure("2026-04", 0)
			full := measure("2026-03", 100000)
			b.ReportMetric(float64(full.Microseconds())/1000, "ms/usage-100k")
			b.ReportMetric(float64(full)/float64(max(base, 1)), "x-empty-month")
			fmt.Printf("usage of a 100000-document month on %s: median %.2f ms (empty month %.2f ms, %.0fx; target < 100 ms)\n",
				db.Dialect(), float64(full.Microseconds())/1000, float64(base.Microseconds())/1000, float64(full)/float64(max(base, 1)))
		}
	})
}
