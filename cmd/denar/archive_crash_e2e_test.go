package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestArchiveCrashEndToEnd kills denar serve (SIGKILL) while it streams
// an archive export of 1,500 documents into the database's blob store,
// starts it again, and checks that the export resumes to ready and holds
// the same bytes as a second export of the same range built without a
// crash, every file matching the manifest, and that the crashed attempt's
// partial zip is gone.
func TestArchiveCrashEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		ctx := t.Context()
		srv := startServer(t, append(baseEnv(t, dbURL), "DENAR_JOB_LEASE=2s", "DENAR_JOB_POLL_INTERVAL=100ms", "DENAR_BOOTSTRAP=off"))
		db, err := store.Open(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		c, err := einvoicingtest.NewCompany(ctx, db, "", "business", "sandbox", "4030000000001")
		if err != nil {
			t.Fatal(err)
		}
		const n = 1500
		day := time.Date(2026, 5, 4, 6, 0, 0, 0, time.UTC)
		if _, err := einvoicingtest.Delivered(ctx, db, c, n, einvoicingtest.Options{PDFSize: 30000,
			At: func(i int) time.Time { return day.Add(time.Duration(i) * time.Second) }}); err != nil {
			t.Fatal(err)
		}
		var key struct{ Key string }
		if err := json.Unmarshal([]byte(runAdminCmd(t, srv.env, "key", "create", "--account", c.AccountID, "--service", "einvoice",
			"--env", "sandbox", "--scope", "einvoices:read", "--json")), &key); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"companyId":%q,"from":"2026-05-01","to":"2026-05-31"}`, c.CompanyID)
		export := func(s *server, idem string) string {
			r := call(t, "POST", s.einvoice+"/v1/archive-exports", key.Key, map[string]string{"Idempotency-Key": idem}, body)
			var e struct{ ID string }
			if err := json.Unmarshal(r.body, &e); err != nil || r.status != 202 {
				t.Fatalf("export: %d %s", r.status, r.body)
			}
			return e.ID
		}
		a := export(srv, "export-a")

		// Kill once the zip is streaming: the attempt's blob exists with
		// some chunks and is not complete.
		var buildKey string
		deadline := time.Now().Add(60 * time.Second)
		for {
			var chunks int
			_ = db.ReadDB().QueryRowContext(ctx, "SELECT build_key FROM archive_exports WHERE id = $1", a).Scan(&buildKey)
			if buildKey != "" {
				_ = db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM blob_chunks WHERE key = $1", buildKey).Scan(&chunks)
			}
			if chunks >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the build never started streaming\n%s", tail(srv.stderr.String(), 3000))
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = srv.cmd.Wait()
		var state string
		var complete bool
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT state FROM archive_exports WHERE id = $1", a).Scan(&state); err != nil || state != "pending" {
			t.Fatalf("after the kill the export is %q (%v); the test proves nothing", state, err)
		}
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT complete FROM blobs WHERE key = $1", buildKey).Scan(&complete); err != nil || complete {
			t.Fatalf("after the kill the attempt's blob: complete %v, %v", complete, err)
		}

		srv = startServer(t, srv.env)
		wait := func(id string) (sha string, size int64) {
			deadline := time.Now().Add(120 * time.Second)
			for {
				r := call(t, "GET", srv.einvoice+"/v1/archive-exports/"+id, key.Key, nil, "")
				var e struct {
					State, Sha256 string
					Size          int64
					Counts        struct{ Sent, Files int }
				}
				_ = json.Unmarshal(r.body, &e)
				if e.State == "ready" {
					if e.Counts.Sent != n || e.Counts.Files != n*4+1 {
						t.Fatalf("export %s: %s", id, r.body)
					}
					return e.Sha256, e.Size
				}
				if e.State != "pending" || time.Now().After(deadline) {
					t.Fatalf("export %s: %d %s\n%s", id, r.status, r.body, tail(srv.stderr.String(), 3000))
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
		shaA, sizeA := wait(a)
		b := export(srv, "export-b")
		shaB, sizeB := wait(b)
		if shaA != shaB || sizeA != sizeB {
			t.Fatalf("the resumed export (%s, %d bytes) differs from one built without a crash (%s, %d bytes)", shaA, sizeA, shaB, sizeB)
		}
		za := call(t, "GET", srv.einvoice+"/v1/archive-exports/"+a+"/download", key.Key, nil, "")
		zb := call(t, "GET", srv.einvoice+"/v1/archive-exports/"+b+"/download", key.Key, nil, "")
		if za.status != 200 || !bytes.Equal(za.body, zb.body) || int64(len(za.body)) != sizeA {
			t.Fatalf("downloads: %d, %d and %d bytes", za.status, len(za.body), len(zb.body))
		}
		if files := verifyZip(t, za.body); len(files) != n*4+1 {
			t.Fatalf("%d files in the zip", len(files))
		}
		var left int
		_ = db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM blob_chunks WHERE key = $1", buildKey).Scan(&left)
		if left != 0 {
			t.Fatalf("%d chunks of the killed attempt's zip are left", left)
		}
		t.Logf("killed mid-stream, resumed: %d documents, %.1f MB, sha256 %s", n, float64(sizeA)/(1<<20), shaA)
		srv.stop(t)
	})
}
