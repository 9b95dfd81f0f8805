package archive

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/blob"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/usecase"
)

// rss reads a field of /proc/self/status in bytes (VmRSS, VmHWM).
func rss(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n * 1024
		}
	}
	return -1
}

// BenchmarkArchive10k builds the archive of 10,000 sent documents, each
// with a 10 KB PDF, into the database's blob store and prints the peak
// resident memory of the process during the build (VmHWM, reset after
// seeding) against the resident memory before it. Target: under 200 MB.
//
//	go test ./internal/einvoicing/archive -run '^$' -bench Archive10k -benchtime 1x
func BenchmarkArchive10k(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	for name, open := range map[string]func(testing.TB) *store.DB{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := b.Context()
			clk := &clock{t: time.Date(2026, 6, 2, 8, 0, 0, 0, time.UTC)}
			c, err := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvProduction, "4030000000001")
			if err != nil {
				b.Fatal(err)
			}
			const n = 10000
			if _, err := einvoicingtest.Delivered(ctx, db, c, n, einvoicingtest.Options{PDFSize: 10000,
				At: func(i int) time.Time {
					return time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
				}}); err != nil {
				b.Fatal(err)
			}
			db.Now = clk.now
			svc := New(Deps{DB: db, Blobs: blob.NewDB(db, 0), Events: eventsOn(db)}, Config{Settle: -1})
			r := jobs.NewRunner(db, jobs.Config{Workers: 1})
			svc.RegisterJobs(r)
			p := principal(c, auth.EnvProduction)
			b.ResetTimer()
			for b.Loop() {
				runtime.GC()
				debug.FreeOSMemory()
				if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
					b.Fatalf("reset the peak: %v", err)
				}
				before := rss("VmRSS")
				start := time.Now()
				e, err := svc.CreateArchiveExport(ctx, usecase.Caller{Principal: p}, CreateArchiveExport{CompanyID: c.CompanyID, From: "2026-05-01", To: "2026-05-31"})
				if err != nil {
					b.Fatal(err)
				}
				for e.State == exportPending {
					if _, err := r.RunOnce(ctx); err != nil {
						b.Fatal(err)
					}
					if e, err = svc.ArchiveExport(ctx, p, e.ID); err != nil {
						b.Fatal(err)
					}
				}
				took := time.Since(start)
				peak := rss("VmHWM")
				if e.State != exportReady || e.Counts.Sent != n {
					b.Fatalf("export %+v", e)
				}
				b.ReportMetric(float64(peak)/(1<<20), "MB-peak-rss")
				fmt.Printf("archive of %d documents (%d files, %.1f MB zip) on %s in %s: peak RSS %.1f MB (before %.1f MB; target < 200 MB)\n",
					n, e.Counts.Files, float64(*e.Size)/(1<<20), db.Dialect(), took.Round(time.Millisecond),
					float64(peak)/(1<<20), float64(before)/(1<<20))
			}
		})
	}
}
