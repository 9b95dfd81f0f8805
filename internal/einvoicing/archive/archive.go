package archive

// Archive exports: a zip of every document a company sent or received in a
// date range, with a manifest an auditor can check without trusting us.
//
// An export is a row (archive_exports) and a job (kindBuild). The
// job streams the zip into the blob store — documents are read a page at a
// time and written entry by entry, so memory does not grow with the
// archive — and marks the export ready in one transaction with the event.
// A crash mid-way leaves a partial blob under the attempt's own key; the
// next attempt starts again from scratch under a new key and removes it.
// The archive shows the data as of the export's as_of (its creation): a
// document, history row or PDF recorded later is left out, and every zip
// timestamp comes from the data, so every attempt writes the same bytes.

import (
	"archive/zip"
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/blob"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// Job kinds of archive exports (the strings stored jobs carry).
const (
	kindBuild = "archive.build"
	kindPurge = "archive.purge"
)

// buildArgs are the arguments of an export's build.
type buildArgs struct {
	ExportID string `json:"exportId"`
}

// purgeArgs: the periodic purge takes none.
type purgeArgs struct{}

func (buildArgs) Kind() string { return kindBuild }
func (purgeArgs) Kind() string { return kindPurge }

// Export states.
const (
	exportPending = "pending"
	exportReady   = "ready"
	exportFailed  = "failed"
)

// format names the layout of the zip and its manifest.
const format = "denar-archive/1"

// Config tunes archive exports; zero values take the defaults.
type Config struct {
	// Retention is how long an export (its zip included) is kept after it
	// finished; default 7 days. Expired exports are deleted by a periodic
	// job.
	Retention time.Duration
	// PurgeEvery is how often expired exports are looked for; default 1h.
	PurgeEvery time.Duration
	// Settle is how long after its creation an export starts building, so
	// that every transaction begun before it has committed; default 5s,
	// negative for none.
	Settle time.Duration
	// MaxAttempts bounds the build attempts; default 8.
	MaxAttempts int
}

// DefaultRetention is how long a finished export is kept.
const DefaultRetention = 7 * 24 * time.Hour

func (c Config) withDefaults() Config {
	if c.Retention <= 0 {
		c.Retention = DefaultRetention
	}
	if c.PurgeEvery <= 0 {
		c.PurgeEvery = time.Hour
	}
	if c.Settle < 0 {
		c.Settle = 0
	} else if c.Settle == 0 {
		c.Settle = 5 * time.Second
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 8
	}
	return c
}

// ArchiveExport is the export object.
type ArchiveExport struct {
	ID          string          `json:"id" doc:"Prefix arx_."`
	Object      string          `json:"object" enum:"archive_export" example:"archive_export" doc:"Always archive_export."`
	CompanyID   string          `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company whose documents are archived (cmp_…)."`
	Environment string          `json:"environment" enum:"sandbox,production" example:"production" doc:"The environment of the company and the credential."`
	From        string          `json:"from" format:"date" doc:"First day (Europe/Skopje) of the documents, inclusive."`
	To          string          `json:"to" format:"date" doc:"Last day (Europe/Skopje), inclusive."`
	State       string          `json:"state" enum:"pending,ready,failed" example:"ready" doc:"pending: being built; ready: download it from links.download; failed: see failure."`
	Counts      ArchiveCounts   `json:"counts" doc:"What the archive holds (zero until ready)."`
	Size        *int64          `json:"size" doc:"Bytes of the zip; null until ready."`
	SHA256      *string         `json:"sha256" doc:"Hex SHA-256 of the zip; null until ready."`
	Failure     *ArchiveFailure `json:"failure" doc:"Why the export failed; null otherwise."`
	AsOf        time.Time       `json:"asOf" doc:"The archive shows the documents, status histories and PDFs recorded up to this moment (the export's creation)."`
	CreatedAt   time.Time       `json:"createdAt" example:"2026-05-04T09:00:00Z" doc:"When the export was asked for."`
	CompletedAt *time.Time      `json:"completedAt" doc:"When it became ready or failed."`
	ExpiresAt   time.Time       `json:"expiresAt" doc:"When the export and its zip are deleted (DENAR_ARCHIVE_RETENTION after it finished)."`
	Links       ArchiveLinks    `json:"links" doc:"Relative paths of the export's endpoints."`
}

// ArchiveCounts says what the archive holds (zero until ready).
type ArchiveCounts struct {
	Sent     int `json:"sent" doc:"Sent documents: those UJP assigned an EUID to in the range."`
	Received int `json:"received" doc:"Received documents: those that arrived in the inbox in the range."`
	Files    int `json:"files" doc:"Files in the zip, manifest.json included."`
}

// ArchiveFailure is why an export failed.
type ArchiveFailure struct {
	Code    string `json:"code" example:"archive_content_missing" doc:"A stable code (docs/errors.md, failed archive exports): archive_build_failed, archive_content_missing or archive_store_missing."`
	Message string `json:"message" example:"e-invoice einv_01jv8k2n3p4q5r6s7t8v9w0xyz has no PDF from UJP yet" doc:"What went wrong, in words."`
}

// ArchiveLinks are relative paths of the export's endpoints.
type ArchiveLinks struct {
	Download string `json:"download" example:"/v1/archive-exports/arx_01jv8k2n3p4q5r6s7t8v9w0xyz/download" doc:"GET this path (with the same credential) for the zip once state is ready."`
}

// Path is the export's path in the API.
func (a ArchiveExport) Path() string { return "/v1/archive-exports/" + a.ID }

func archiveView(r dbq.ArchiveExport) ArchiveExport {
	a := ArchiveExport{ID: r.ID, Object: "archive_export", CompanyID: r.CompanyID, Environment: r.Environment, From: r.FromDay,
		To: r.ToDay, State: r.State, Counts: ArchiveCounts{Sent: int(r.Sent), Received: int(r.Received), Files: int(r.Files)},
		AsOf: r.AsOf.UTC(), CreatedAt: r.CreatedAt.UTC(), CompletedAt: store.TimeOrNil(r.CompletedAt), ExpiresAt: r.ExpiresAt.UTC()}
	a.Links.Download = a.Path() + "/download"
	if r.SizeBytes.Valid {
		a.Size = &r.SizeBytes.Int64
	}
	a.SHA256 = store.TextOrNil(r.Sha256)
	if r.FailureCode.Valid {
		a.Failure = &ArchiveFailure{Code: r.FailureCode.String, Message: r.FailureMessage.String}
	}
	return a
}

// CreateArchiveExport asks for an export of a company's documents.
type CreateArchiveExport struct {
	CompanyID string
	From, To  string // YYYY-MM-DD
}

// maxArchiveYears: an export spans at most one year (to before from plus
// one year).
const maxArchiveYears = 1

// CreateArchiveExport records the export and enqueues its build, in one
// transaction with the idempotency key; 202 with the export pending.
func (s *Service) CreateArchiveExport(ctx context.Context, c usecase.Caller, cmd CreateArchiveExport) (ArchiveExport, error) {
	var fe denar.FieldErrors
	from, ferr := time.Parse(time.DateOnly, cmd.From)
	if ferr != nil {
		fe.Add("from", "must be a date, YYYY-MM-DD")
	}
	to, terr := time.Parse(time.DateOnly, cmd.To)
	if terr != nil {
		fe.Add("to", "must be a date, YYYY-MM-DD")
	}
	if ferr == nil && terr == nil {
		if to.Before(from) {
			fe.Add("to", "must not be before from")
		} else if !to.Before(from.AddDate(maxArchiveYears, 0, 0)) {
			fe.Add("to", "must be less than one year after from (an export spans at most one year)")
		}
	}
	if strings.TrimSpace(cmd.CompanyID) == "" {
		fe.Add("companyId", "is required")
	}
	if len(fe) > 0 {
		return ArchiveExport{}, denar.Invalid(fe...)
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (ArchiveExport, error) {
		co, err := einvoicing.CompanyRef(ctx, tx.Queries, c.Principal, cmd.CompanyID)
		if err != nil {
			return ArchiveExport{}, err
		}
		now := einvoicing.LedgerTime(tx.Now)
		r, err := tx.CreateArchiveExport(ctx, dbq.CreateArchiveExportParams{ID: denar.NewID("arx"), AccountID: c.AccountID,
			CompanyID: co.ID, Environment: co.Environment, FromDay: cmd.From, ToDay: cmd.To, AsOf: now, CreatedAt: now,
			ExpiresAt: now.Add(s.cfg.Retention)})
		if err != nil {
			return ArchiveExport{}, fmt.Errorf("create export: %w", err)
		}
		if _, err := jobs.Insert(ctx, tx, buildArgs{ExportID: r.ID}, jobs.InsertOpts{RunAt: now.Add(s.cfg.Settle), MaxAttempts: s.cfg.MaxAttempts, UniqueKey: kindBuild + ":" + r.ID}); err != nil {
			return ArchiveExport{}, err
		}
		return archiveView(r), nil
	})
}

// archiveRow loads an export within the caller's reach (auth.InReach).
func archiveRow(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.ArchiveExport, error) {
	all, allowed := p.AllowList()
	r, err := q.GetArchiveExportInReach(ctx, dbq.GetArchiveExportInReachParams{ID: id, AccountID: p.AccountID, Environment: p.Environment,
		AllCompanies: all, Allowed: allowed})
	return auth.InReach(ctx, q, p, "Archive export", id, r, err)
}

// ArchiveExport returns one export.
func (s *Service) ArchiveExport(ctx context.Context, p *auth.Principal, id string) (ArchiveExport, error) {
	r, err := archiveRow(ctx, s.db.Reader(), p, id)
	if err != nil {
		return ArchiveExport{}, err
	}
	return archiveView(r), nil
}

// ArchiveDownload is an open zip of a ready export.
type ArchiveDownload struct {
	Export ArchiveExport
	Size   int64
	Body   io.ReadCloser
}

// OpenArchive opens the zip of a ready export for streaming; the caller
// closes Body. Pending or failed: 409 archive_export_not_ready; past
// expiresAt: 410 archive_export_expired.
func (s *Service) OpenArchive(ctx context.Context, p *auth.Principal, id string) (ArchiveDownload, error) {
	r, err := archiveRow(ctx, s.db.Reader(), p, id)
	if err != nil {
		return ArchiveDownload{}, err
	}
	if !s.db.Now().Before(r.ExpiresAt) {
		return ArchiveDownload{}, denar.Errorf("archive_export_expired", "Archive export %s expired at %s; ask for a new one.", id, r.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if r.State != exportReady {
		return ArchiveDownload{}, denar.Errorf("archive_export_not_ready", "Archive export %s is %s; download it once it is ready.", id, r.State)
	}
	if s.blobs == nil {
		return ArchiveDownload{}, errors.New("archive: no blob store configured")
	}
	body, size, err := s.blobs.Open(ctx, r.BlobKey)
	if err != nil {
		return ArchiveDownload{}, fmt.Errorf("archive %s: open %s: %w", id, r.BlobKey, err)
	}
	return ArchiveDownload{Export: archiveView(r), Size: size, Body: body}, nil
}

// receivedFiles are the archive's files of one received document.
type receivedFiles struct {
	EUID         string
	Number       string
	DocumentType string
	// Document is the document JSON exactly as received from UJP.
	Document []byte
	// JWS is the compact JWS UJP handed with it ("" when none).
	JWS string
	// PDF is UJP's rendering when recorded by asOf (nil otherwise).
	PDF []byte
	// History is the document's status history recorded by asOf, oldest
	// first.
	History []einvoicing.StatusChange
}

// receivedArchive gives the archive the files of a received document as
// of a moment. The inbox's tables answer it (inboxArchive, inbox.go); the
// tests give documents of their own.
type receivedArchive interface {
	ReceivedFiles(ctx context.Context, q *dbq.Queries, documentID string, asOf time.Time) (receivedFiles, error)
}

// errArchiveContent is a document the archive cannot be made of: the
// export fails at once instead of retrying.
type errArchiveContent struct{ msg string }

func (e *errArchiveContent) Error() string { return e.msg }

// buildArchive is the worker of kindBuild.
func (s *Service) buildArchive(ctx context.Context, j *jobs.Job, a buildArgs) error {
	r, err := s.db.Reader().GetArchiveExport(ctx, a.ExportID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // purged
	}
	if err != nil {
		return err
	}
	if r.State != exportPending {
		return nil
	}
	if s.blobs == nil {
		return s.failArchive(ctx, r, "archive_store_missing", "No blob store is configured.")
	}
	// Take the build over from any earlier attempt (a crash, a lost lease)
	// and drop what it wrote.
	key := "archive-exports/" + r.ID + "/" + rand.Text() + ".zip"
	n, err := s.db.Writer().StartArchiveBuild(ctx, dbq.StartArchiveBuildParams{BuildKey: key, ID: r.ID, PreviousKey: r.BuildKey})
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("archive %s: build taken over meanwhile", r.ID)
	}
	if r.BuildKey != "" {
		if err := s.blobs.Delete(ctx, r.BuildKey); err != nil {
			s.log.Warn("archive: drop an earlier attempt's blob", "export", r.ID, "key", r.BuildKey, "err", err)
		}
	}
	var st archiveStats
	sum := sha256.New()
	size, err := blob.Write(ctx, s.blobs, key, func(w io.Writer) error {
		return s.writeArchive(ctx, r, io.MultiWriter(w, sum), &st)
	})
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), key)
		var content *errArchiveContent
		if errors.As(err, &content) || j.Attempt >= j.MaxAttempts {
			code := "archive_build_failed"
			if content != nil {
				code = "archive_content_missing"
			}
			if ferr := s.failArchive(ctx, r, code, err.Error()); ferr != nil {
				return ferr
			}
			return jobs.Cancel(err)
		}
		return err
	}
	finished := false
	err = s.db.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		now := einvoicing.LedgerTime(tx.Now)
		n, err := tx.FinishArchiveExport(ctx, dbq.FinishArchiveExportParams{Sent: int32(st.sent), Received: int32(st.received),
			Files: int32(st.files), SizeBytes: sql.NullInt64{Int64: size, Valid: true},
			Sha256:      sql.NullString{String: hex.EncodeToString(sum.Sum(nil)), Valid: true},
			CompletedAt: sql.NullTime{Time: now, Valid: true}, ExpiresAt: now.Add(s.cfg.Retention), ID: r.ID, BuildKey: key})
		if err != nil || n == 0 {
			return err
		}
		finished = true
		return s.archiveEvent(ctx, tx, r.ID, webhooks.EventArchiveExportReady)
	})
	if err != nil {
		return err
	}
	if !finished {
		_ = s.blobs.Delete(ctx, key)
	}
	return nil
}

func (s *Service) archiveEvent(ctx context.Context, tx *store.Tx, id, typ string) error {
	r, err := tx.GetArchiveExport(ctx, id)
	if err != nil {
		return err
	}
	return s.events.Publish(ctx, tx, webhooks.Draft{AccountID: r.AccountID, CompanyID: r.CompanyID, Environment: r.Environment,
		Type: typ, ObjectID: r.ID, Object: archiveView(r), At: tx.Now})
}

func (s *Service) failArchive(ctx context.Context, r dbq.ArchiveExport, code, msg string) error {
	return s.db.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		now := einvoicing.LedgerTime(tx.Now)
		n, err := tx.FailArchiveExport(ctx, dbq.FailArchiveExportParams{FailureCode: sql.NullString{String: code, Valid: true},
			FailureMessage: sql.NullString{String: msg, Valid: true}, CompletedAt: sql.NullTime{Time: now, Valid: true},
			ExpiresAt: now.Add(s.cfg.Retention), ID: r.ID})
		if err != nil || n == 0 {
			return err
		}
		return s.archiveEvent(ctx, tx, r.ID, webhooks.EventArchiveExportFailed)
	})
}

// purgeArchives is the periodic worker of kindPurge: it deletes expired
// exports, their zip first.
func (s *Service) purgeArchives(ctx context.Context, _ *jobs.Job, _ purgeArgs) error {
	for {
		rows, err := s.db.Reader().ExpiredArchiveExports(ctx, dbq.ExpiredArchiveExportsParams{Now: s.db.Now(), Lim: 100})
		if err != nil {
			return err
		}
		for _, r := range rows {
			for _, k := range []string{r.BlobKey, r.BuildKey} {
				if k != "" && s.blobs != nil {
					if err := s.blobs.Delete(ctx, k); err != nil {
						return err
					}
				}
			}
			if _, err := s.db.Writer().DeleteArchiveExport(ctx, r.ID); err != nil {
				return err
			}
		}
		if len(rows) < 100 {
			return nil
		}
	}
}

type archiveStats struct {
	sent, received, files int
}

// manifest.json: what an auditor checks the archive against.
type archiveManifest struct {
	Format      string `json:"format"`
	CompanyID   string `json:"companyId"`
	Environment string `json:"environment"`
	From        string `json:"from"`
	To          string `json:"to"`
}

type manifestDocument struct {
	ID           string   `json:"id"`
	Direction    string   `json:"direction"`
	EUID         string   `json:"euid"`
	Number       string   `json:"number"`
	DocumentType string   `json:"documentType"`
	Kind         string   `json:"kind,omitempty"`
	Day          string   `json:"day" doc:"The Skopje day UJP assigned the EUID (sent) or the document arrived (received)."`
	Files        []string `json:"files"`
}

type manifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// archiveFile is one file of a document in the zip.
type archiveFile struct {
	name string
	data []byte
}

const archivePage = 200

// writeArchive streams the zip of export r into w.
func (s *Service) writeArchive(ctx context.Context, r dbq.ArchiveExport, w io.Writer, st *archiveStats) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	zw := zip.NewWriter(bw)
	var docs []manifestDocument
	var files []manifestFile
	h := sha256.New()
	add := func(name string, data []byte, at time.Time) error {
		method := zip.Deflate
		if strings.HasSuffix(name, ".pdf") {
			method = zip.Store // already compressed
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: at})
		if err != nil {
			return err
		}
		if _, err := fw.Write(data); err != nil {
			return err
		}
		files = append(files, manifestFile{Path: name, Size: int64(len(data)), SHA256: hexSum(h, data)})
		return nil
	}
	// The manifest's own time: the newest document's, else the range's
	// first day.
	last, _ := time.Parse(time.DateOnly, r.FromDay)
	q := s.db.Reader()
	afterDay, afterID := "", ""
	for {
		page, err := q.ArchiveDocuments(ctx, dbq.ArchiveDocumentsParams{CompanyID: r.CompanyID, FromDay: r.FromDay, ToDay: r.ToDay,
			AsOf: r.AsOf, AfterDay: afterDay, AfterID: afterID, Lim: archivePage})
		if err != nil {
			return fmt.Errorf("archive %s: documents: %w", r.ID, err)
		}
		for _, d := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			md, fs, err := s.archiveDocument(ctx, q, r, d)
			if err != nil {
				return err
			}
			at := d.At.UTC().Truncate(time.Second)
			if at.After(last) {
				last = at
			}
			for _, f := range fs {
				if err := add(f.name, f.data, at); err != nil {
					return fmt.Errorf("archive %s: %s: %w", r.ID, f.name, err)
				}
				md.Files = append(md.Files, f.name)
			}
			docs = append(docs, md)
			if d.Direction == einvoicing.DirectionSent {
				st.sent++
			} else {
				st.received++
			}
		}
		if len(page) < archivePage {
			break
		}
		afterDay, afterID = page[len(page)-1].Day, page[len(page)-1].DocumentID
	}
	fw, err := zw.CreateHeader(&zip.FileHeader{Name: "manifest.json", Method: zip.Deflate, Modified: last})
	if err != nil {
		return err
	}
	if err := writeManifest(fw, archiveManifest{Format: format, CompanyID: r.CompanyID, Environment: r.Environment,
		From: r.FromDay, To: r.ToDay}, docs, files); err != nil {
		return err
	}
	st.files = len(files) + 1
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

func hexSum(h hash.Hash, data []byte) string {
	h.Reset()
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// writeManifest writes the manifest element by element (its lists are
// never one big buffer).
func writeManifest(w io.Writer, m archiveManifest, docs []manifestDocument, files []manifestFile) error {
	head, err := json.Marshal(m)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(head[:len(head)-1])
	list := func(name string, n int, item func(i int) any) error {
		fmt.Fprintf(bw, ",\n  %q: [", name)
		for i := range n {
			b, err := json.Marshal(item(i))
			if err != nil {
				return err
			}
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n    ")
			bw.Write(b)
		}
		bw.WriteString("\n  ]")
		return nil
	}
	if err := list("documents", len(docs), func(i int) any { return docs[i] }); err != nil {
		return err
	}
	if err := list("files", len(files), func(i int) any { return files[i] }); err != nil {
		return err
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// archiveDocument returns a document's manifest entry and files.
func (s *Service) archiveDocument(ctx context.Context, q *dbq.Queries, r dbq.ArchiveExport, d dbq.UsageDocument) (manifestDocument, []archiveFile, error) {
	md := manifestDocument{ID: d.DocumentID, Direction: d.Direction, Day: d.Day, Files: []string{}}
	dir := d.Direction + "/" + d.DocumentID + "/"
	switch d.Direction {
	case einvoicing.DirectionSent:
		return s.archiveSent(ctx, q, r, d, md, dir)
	case einvoicing.DirectionReceived:
		if s.received == nil {
			return md, nil, &errArchiveContent{msg: "received document " + d.DocumentID + ": no inbox to read it from"}
		}
		rf, err := s.received.ReceivedFiles(ctx, q, d.DocumentID, r.AsOf)
		if err != nil {
			return md, nil, fmt.Errorf("received document %s: %w", d.DocumentID, err)
		}
		md.EUID, md.Number, md.DocumentType = rf.EUID, rf.Number, rf.DocumentType
		fs := []archiveFile{{dir + "document.json", rf.Document}}
		if rf.JWS != "" {
			fs = append(fs, archiveFile{dir + "signature.jws", []byte(rf.JWS)})
		}
		if rf.PDF != nil {
			fs = append(fs, archiveFile{dir + "ujp.pdf", rf.PDF})
		}
		hist, err := historyJSON(rf.History)
		if err != nil {
			return md, nil, err
		}
		return md, append(fs, archiveFile{dir + "status-history.json", hist}), nil
	}
	return md, nil, &errArchiveContent{msg: "document " + d.DocumentID + ": unknown direction " + d.Direction}
}

func (s *Service) archiveSent(ctx context.Context, q *dbq.Queries, r dbq.ArchiveExport, d dbq.UsageDocument, md manifestDocument, dir string) (manifestDocument, []archiveFile, error) {
	inv, err := q.GetEInvoiceByID(ctx, d.DocumentID)
	if err != nil {
		return md, nil, fmt.Errorf("sent document %s: %w", d.DocumentID, err)
	}
	md.EUID, md.Number, md.DocumentType, md.Kind = inv.Euid.String, inv.Number, inv.DocumentType, inv.Kind
	if inv.Kind == einvoicing.KindExternal {
		// Issued outside the service: no signature of ours; the document
		// as UJP gave it, when its payload could be read.
		var fs []archiveFile
		if inv.Document != "null" {
			fs = append(fs, archiveFile{dir + "document.json", []byte(inv.Document)})
		}
		return s.archiveTail(ctx, q, r, inv, md, dir, fs)
	}
	var sr dbq.SigningRequest
	if d.SigningRequestID.Valid {
		sr, err = q.GetSigningRequest(ctx, d.SigningRequestID.String)
	} else {
		sr, err = q.LatestSignedRequestForLink(ctx, dbq.LatestSignedRequestForLinkParams{LinkType: einvoicing.LinkEInvoice, LinkID: inv.ID})
	}
	if errors.Is(err, sql.ErrNoRows) {
		return md, nil, &errArchiveContent{msg: "sent document " + inv.ID + ": its signature is missing"}
	}
	if err != nil {
		return md, nil, fmt.Errorf("sent document %s: signature: %w", inv.ID, err)
	}
	parts := strings.Split(sr.Jws, ".")
	if len(parts) != 3 {
		return md, nil, &errArchiveContent{msg: "sent document " + inv.ID + ": its JWS is not compact"}
	}
	doc, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return md, nil, &errArchiveContent{msg: "sent document " + inv.ID + ": JWS payload: " + err.Error()}
	}
	fs := []archiveFile{{dir + "document.json", doc}, {dir + "signature.jws", []byte(sr.Jws)}}
	return s.archiveTail(ctx, q, r, inv, md, dir, fs)
}

// archiveTail adds UJP's PDF (when fetched) and the status history of a
// sent document to its files fs.
func (s *Service) archiveTail(ctx context.Context, q *dbq.Queries, r dbq.ArchiveExport, inv dbq.Einvoice, md manifestDocument, dir string, fs []archiveFile) (manifestDocument, []archiveFile, error) {
	pdf, err := q.GetEInvoicePDF(ctx, inv.ID)
	switch {
	case err == nil && !pdf.CreatedAt.After(r.AsOf):
		b, err := base64.StdEncoding.DecodeString(pdf.Pdf)
		if err != nil {
			return md, nil, &errArchiveContent{msg: "sent document " + inv.ID + ": stored PDF: " + err.Error()}
		}
		fs = append(fs, archiveFile{dir + "ujp.pdf", b})
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return md, nil, fmt.Errorf("sent document %s: PDF: %w", inv.ID, err)
	}
	rows, err := q.EInvoiceHistoryAsOf(ctx, dbq.EInvoiceHistoryAsOfParams{EinvoiceID: inv.ID, AsOf: r.AsOf})
	if err != nil {
		return md, nil, fmt.Errorf("sent document %s: history: %w", inv.ID, err)
	}
	hist := make([]einvoicing.StatusChange, 0, len(rows))
	for _, h := range rows {
		hist = append(hist, einvoicing.StatusChange{From: store.TextOrNil(h.FromStatus), To: h.ToStatus, Cause: h.Cause, UJPCode: store.TextOrNil(h.UjpCode), At: h.At.UTC()})
	}
	b, err := historyJSON(hist)
	if err != nil {
		return md, nil, err
	}
	return md, append(fs, archiveFile{dir + "status-history.json", b}), nil
}

func historyJSON(h []einvoicing.StatusChange) ([]byte, error) {
	if h == nil {
		h = []einvoicing.StatusChange{}
	}
	b, err := json.MarshalIndent(map[string]any{"data": h}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
