package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/blob"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/usecase"
)

// testInbox stands in for the inbox behind the archive's seam for
// received documents.
type testInbox map[string]receivedFiles

func (m testInbox) ReceivedFiles(_ context.Context, _ *dbq.Queries, id string, _ time.Time) (receivedFiles, error) {
	f, ok := m[id]
	if !ok {
		return receivedFiles{}, fmt.Errorf("no inbox document %s", id)
	}
	return f, nil
}

// eventsOn is the webhooks service on db, as cmd/denar builds it: the
// publisher, and the reader of what was published.
func eventsOn(db *store.DB) *webhooks.Service {
	return webhooks.New(webhooks.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Resources: EventResources()}, webhooks.Config{})
}

// newService is the room on db with blobs, its builds starting at once.
func newService(db *store.DB, blobs blob.Store) *Service {
	return New(Deps{DB: db, Log: slog.New(slog.DiscardHandler), Blobs: blobs, Events: eventsOn(db)}, Config{Settle: -1})
}

// received counts an incoming document of c that arrived at at in the
// ledger, as the inbox does, and returns its id.
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

// principal is an API key of c's account in env, allow-listed to
// companies when any are given.
func principal(c einvoicingtest.Company, env string, companies ...string) *auth.Principal {
	return &auth.Principal{AccountID: c.AccountID, CredentialID: "key_test", Kind: auth.KindAPIKey, Service: auth.ServiceEInvoice,
		Environment: env, Scopes: []string{"einvoices:read"}, CompanyIDs: companies, ProductionEnabled: true}
}

// clock is a settable store clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time                 { return c.t }
func (c *clock) advance(d time.Duration)        { c.t = c.t.Add(d) }
func setClock(db *store.DB, t time.Time) *clock { c := &clock{t: t}; db.Now = c.now; return c }

// runUntil steps the runner until cond holds.
func runUntil(t *testing.T, r *jobs.Runner, c *clock, cond func() bool) {
	t.Helper()
	for range 50 {
		if cond() {
			return
		}
		if _, err := r.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		c.advance(time.Minute)
	}
	t.Fatal("condition never held")
}

// checkArchive verifies a zip the way an auditor would: manifest.json
// lists every other file with its size and SHA-256, and nothing else is in
// the zip. It returns the files by path.
func checkArchive(t *testing.T, b []byte) (map[string][]byte, archiveManifestFile) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if _, dup := files[f.Name]; dup {
			t.Fatalf("%s twice in the zip", f.Name)
		}
		files[f.Name] = data
	}
	var m archiveManifestFile
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if len(m.Files) != len(files)-1 {
		t.Fatalf("manifest lists %d files, the zip holds %d besides it", len(m.Files), len(files)-1)
	}
	for _, f := range m.Files {
		data, ok := files[f.Path]
		if !ok {
			t.Fatalf("manifest lists %s, missing from the zip", f.Path)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != f.SHA256 || int64(len(data)) != f.Size {
			t.Fatalf("%s: size %d sha256 %x, manifest says %d %s", f.Path, len(data), sum, f.Size, f.SHA256)
		}
	}
	return files, m
}

type archiveManifestFile struct {
	archiveManifest
	Documents []manifestDocument `json:"documents"`
	Files     []manifestFile     `json:"files"`
}

func download(t *testing.T, svc *Service, p *auth.Principal, id string) []byte {
	t.Helper()
	d, err := svc.OpenArchive(t.Context(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Body.Close()
	b, err := io.ReadAll(d.Body)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if int64(len(b)) != d.Size || d.Export.SHA256 == nil || hex.EncodeToString(sum[:]) != *d.Export.SHA256 {
		t.Fatalf("downloaded %d bytes (sha256 %x), the export says %d %v", len(b), sum, d.Size, d.Export.SHA256)
	}
	return b
}

// TestArchiveExport exports a month of a company with sent and received
// documents and checks the zip file by file against its manifest and the
// stored documents: documents of other days, other companies and after
// the export's asOf are left out; the export ends ready with its event.
func TestArchiveExport(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		clk := setClock(db, time.Date(2026, 6, 2, 8, 0, 0, 0, time.UTC))
		c, err := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvProduction, "4030000000001")
		if err != nil {
			t.Fatal(err)
		}
		other, _ := einvoicingtest.NewCompany(ctx, db, c.AccountID, "", auth.EnvProduction, "4030000000010")
		may := func(i int) time.Time { return time.Date(2026, 5, 1+i*5, 10, 0, 0, 0, time.UTC) }
		sent, err := einvoicingtest.Delivered(ctx, db, c, 5, einvoicingtest.Options{At: may, PDFSize: 5000})
		if err != nil {
			t.Fatal(err)
		}
		// No PDF fetched for this one; one of April 30 in Skopje; one of
		// another company.
		noPDF, _ := einvoicingtest.Delivered(ctx, db, c, 1, einvoicingtest.Options{At: may})
		sent = append(sent, noPDF...)
		einvoicingtest.Delivered(ctx, db, c, 1, einvoicingtest.Options{At: func(int) time.Time { return time.Date(2026, 4, 30, 21, 0, 0, 0, time.UTC) }})
		einvoicingtest.Delivered(ctx, db, other, 1, einvoicingtest.Options{At: may})
		inbox := testInbox{}
		for i := range 2 {
			id := received(t, db, c, may(i).Add(time.Hour))
			inbox[id] = receivedFiles{EUID: fmt.Sprintf("in-%d", i), Number: fmt.Sprintf("IN-%d", i), DocumentType: "100",
				Document: []byte(fmt.Sprintf(`{"invoice":{"number":"IN-%d"}}`, i)), PDF: []byte("%PDF-1.4 in"),
				History: []einvoicing.StatusChange{{To: "pending", Cause: "received", At: may(i)}}}
		}
		svc := newService(db, blob.NewDB(db, 4096))
		svc.received = inbox
		r := jobs.NewRunner(db, jobs.Config{Workers: 1})
		svc.RegisterJobs(r)
		p := principal(c, auth.EnvProduction)

		e, err := svc.CreateArchiveExport(ctx, usecase.Caller{Principal: p}, CreateArchiveExport{CompanyID: c.CompanyID, From: "2026-05-01", To: "2026-05-31"})
		if err != nil {
			t.Fatal(err)
		}
		if e.State != exportPending || e.Size != nil || e.Links.Download != "/v1/archive-exports/"+e.ID+"/download" {
			t.Fatalf("new export: %+v", e)
		}
		if _, err := svc.OpenArchive(ctx, p, e.ID); denar.ErrorCode(err) != "archive_export_not_ready" {
			t.Fatalf("download while pending: %v", err)
		}
		// Delivered after the export was asked for: not in it.
		clk.advance(time.Second)
		einvoicingtest.Delivered(ctx, db, c, 1, einvoicingtest.Options{At: func(int) time.Time { return clk.t }})
		clk.t = time.Date(2026, 6, 2, 8, 0, 0, 0, time.UTC).Add(time.Second) // back: the job runs "now"
		runUntil(t, r, clk, func() bool {
			e, err = svc.ArchiveExport(ctx, p, e.ID)
			return err == nil && e.State != exportPending
		})
		if e.State != exportReady || e.Counts != (ArchiveCounts{Sent: 6, Received: 2, Files: 6*3 + 5 + 2*3 + 1}) || e.Failure != nil {
			t.Fatalf("export: %+v", e)
		}
		files, m := checkArchive(t, download(t, svc, p, e.ID))
		if m.Format != format || m.CompanyID != c.CompanyID || m.From != "2026-05-01" || m.To != "2026-05-31" || len(m.Documents) != 8 {
			t.Fatalf("manifest head %+v with %d documents", m.archiveManifest, len(m.Documents))
		}
		for _, d := range sent {
			dir := "sent/" + d.ID + "/"
			if !bytes.Equal(files[dir+"document.json"], d.Document) || string(files[dir+"signature.jws"]) != d.JWS ||
				!bytes.Equal(files[dir+"ujp.pdf"], d.PDF) {
				t.Fatalf("%s: files differ from what was sent to UJP", d.ID)
			}
			var hist struct{ Data []einvoicing.StatusChange }
			if err := json.Unmarshal(files[dir+"status-history.json"], &hist); err != nil || len(hist.Data) != 4 || hist.Data[3].To != "delivered" {
				t.Fatalf("%s history: %s", d.ID, files[dir+"status-history.json"])
			}
		}
		if _, ok := files["sent/"+noPDF[0].ID+"/ujp.pdf"]; ok {
			t.Fatal("a PDF that was never fetched is in the archive")
		}
		for id, f := range inbox {
			if !bytes.Equal(files["received/"+id+"/document.json"], f.Document) || !bytes.Equal(files["received/"+id+"/ujp.pdf"], f.PDF) {
				t.Fatalf("received %s differs", id)
			}
		}
		evs, err := eventsOn(db).Events(ctx, p, webhooks.EventFilter{ObjectID: e.ID}, "", 10)
		if err != nil || len(evs) != 1 || evs[0].Type != webhooks.EventArchiveExportReady {
			t.Fatalf("events: %v %+v", err, evs)
		}
		var data struct{ Object ArchiveExport }
		if err := json.Unmarshal(evs[0].Data, &data); err != nil || data.Object.ID != e.ID || data.Object.State != exportReady || *data.Object.SHA256 != *e.SHA256 {
			t.Fatalf("event data %s", evs[0].Data)
		}

		// Who may see it, and the range rules.
		for _, tc := range []struct {
			p    *auth.Principal
			code string
		}{
			{principal(c, auth.EnvSandbox), "environment_mismatch"},
			{principal(c, auth.EnvProduction, other.CompanyID), "company_not_allowed"},
			{&auth.Principal{AccountID: "acct_other", Environment: auth.EnvProduction}, denar.ECodeNotFound},
		} {
			if _, err := svc.ArchiveExport(ctx, tc.p, e.ID); denar.ErrorCode(err) != tc.code {
				t.Fatalf("%+v: %v, want %s", tc.p, err, tc.code)
			}
		}
		for _, tc := range []struct {
			from, to, path string
		}{{"2026-05-01", "2027-05-01", "to"}, {"2026-05-02", "2026-05-01", "to"}, {"2026-5-1", "2026-05-31", "from"}} {
			_, err := svc.CreateArchiveExport(ctx, usecase.Caller{Principal: p}, CreateArchiveExport{CompanyID: c.CompanyID, From: tc.from, To: tc.to})
			var de *denar.Error
			if !errors.As(err, &de) || de.Code != denar.ECodeValidation || de.Fields[0].Path != tc.path {
				t.Fatalf("%s..%s: %v", tc.from, tc.to, err)
			}
		}
		if _, err := svc.CreateArchiveExport(ctx, usecase.Caller{Principal: p}, CreateArchiveExport{CompanyID: c.CompanyID, From: "2026-01-01", To: "2026-12-31"}); err != nil {
			t.Fatalf("a whole year: %v", err)
		}

		// Retention: expired, then deleted with its zip.
		clk.advance(8 * 24 * time.Hour)
		if _, err := svc.OpenArchive(ctx, p, e.ID); denar.ErrorCode(err) != "archive_export_expired" {
			t.Fatalf("download after expiry: %v", err)
		}
		row, _ := db.Reader().GetArchiveExport(ctx, e.ID)
		if err := svc.purgeArchives(ctx, nil, purgeArgs{}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ArchiveExport(ctx, p, e.ID); denar.ErrorCode(err) != denar.ECodeNotFound {
			t.Fatalf("purged export: %v", err)
		}
		if _, err := db.Reader().GetBlob(ctx, row.BlobKey); !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("zip of a purged export: %v", err)
		}
	})
}

// crashingStore dies in the middle of a Put, like a process killed while
// the zip streams out: the caller's clean-up never runs, part of the
// object is stored.
type crashingStore struct {
	blob.Store
	after int64
}

func (s crashingStore) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	return s.Store.Put(ctx, key, &dyingReader{r: r, left: s.after})
}

type dyingReader struct {
	r    io.Reader
	left int64
}

func (d *dyingReader) Read(p []byte) (int, error) {
	if d.left <= 0 {
		if c, ok := d.r.(io.Closer); ok {
			c.Close() // the writing side ends with the process
		}
		panic("crash in the middle of the archive")
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.r.Read(p)
	d.left -= int64(n)
	return n, err
}

// TestArchiveResumesAfterCrash: an attempt that dies mid-stream leaves a
// partial blob; the next attempt drops it, builds again and makes the same
// archive, byte for byte, as an export of the same range that never
// crashed.
func TestArchiveResumesAfterCrash(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		clk := setClock(db, time.Date(2026, 6, 2, 8, 0, 0, 0, time.UTC))
		c, _ := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvSandbox, "4030000000001")
		if _, err := einvoicingtest.Delivered(ctx, db, c, 30, einvoicingtest.Options{PDFSize: 20000,
			At: func(i int) time.Time { return time.Date(2026, 5, 1, 10, i, 0, 0, time.UTC) }}); err != nil {
			t.Fatal(err)
		}
		store := blob.NewDB(db, 8192)
		p := principal(c, auth.EnvSandbox)
		build := func(bs blob.Store) (ArchiveExport, *jobs.Runner, *Service) {
			svc := newService(db, bs)
			r := jobs.NewRunner(db, jobs.Config{Workers: 1})
			svc.RegisterJobs(r)
			e, err := svc.CreateArchiveExport(ctx, usecase.Caller{Principal: p}, CreateArchiveExport{CompanyID: c.CompanyID, From: "2026-05-01", To: "2026-05-31"})
			if err != nil {
				t.Fatal(err)
			}
			return e, r, svc
		}
		ref, r, svc := build(store)
		runUntil(t, r, clk, func() bool { ref, _ = svc.ArchiveExport(ctx, p, ref.ID); return ref.State == exportReady })
		want := download(t, svc, p, ref.ID)
		checkArchive(t, want)

		e, r, svc := build(crashingStore{Store: store, after: 200000})
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		row, _ := db.Reader().GetArchiveExport(ctx, e.ID)
		partial, err := db.Reader().GetBlob(ctx, row.BuildKey)
		if row.State != exportPending || err != nil || partial.Complete {
			t.Fatalf("after the crash: export %s, partial blob %+v %v", row.State, partial, err)
		}
		// The process comes back (a runner with a working store).
		svc = newService(db, store)
		r = jobs.NewRunner(db, jobs.Config{Workers: 1})
		svc.RegisterJobs(r)
		runUntil(t, r, clk, func() bool { e, _ = svc.ArchiveExport(ctx, p, e.ID); return e.State == exportReady })
		got := download(t, svc, p, e.ID)
		if !bytes.Equal(got, want) || *e.SHA256 != *ref.SHA256 {
			t.Fatalf("the resumed archive differs: %d bytes %s, want %d bytes %s", len(got), *e.SHA256, len(want), *ref.SHA256)
		}
		if _, err := db.Reader().GetBlob(ctx, row.BuildKey); !errors.Is(err, sql.ErrNoRows) {
			t.Fatalf("the crashed attempt's blob is still there: %v", err)
		}
	})
}

// TestArchiveFailure: a document the archive cannot be made of (a received
// document with no inbox to read it from) fails the export at once, with
// archive.export_failed.
func TestArchiveFailure(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		clk := setClock(db, time.Date(2026, 6, 2, 8, 0, 0, 0, time.UTC))
		c, _ := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvSandbox, "4030000000001")
		received(t, db, c, time.Date(2026, 5, 3, 8, 0, 0, 0, time.UTC))
		svc := newService(db, blob.NewDB(db, 0))
		r := jobs.NewRunner(db, jobs.Config{Workers: 1})
		svc.RegisterJobs(r)
		p := principal(c, auth.EnvSandbox)
		e, err := svc.CreateArchiveExport(ctx, usecase.Caller{Principal: p}, CreateArchiveExport{CompanyID: c.CompanyID, From: "2026-05-01", To: "2026-05-31"})
		if err != nil {
			t.Fatal(err)
		}
		runUntil(t, r, clk, func() bool { e, _ = svc.ArchiveExport(ctx, p, e.ID); return e.State != exportPending })
		if e.State != exportFailed || e.Failure == nil || e.Failure.Code != "archive_content_missing" {
			t.Fatalf("export %+v", e)
		}
		if _, err := svc.OpenArchive(ctx, p, e.ID); denar.ErrorCode(err) != "archive_export_not_ready" {
			t.Fatalf("download of a failed export: %v", err)
		}
		evs, _ := eventsOn(db).Events(ctx, p, webhooks.EventFilter{ObjectID: e.ID}, "", 10)
		if len(evs) != 1 || evs[0].Type != webhooks.EventArchiveExportFailed {
			t.Fatalf("events %+v", evs)
		}
	})
}
