package archive

import (
	"log/slog"
	"maps"
	"time"

	"github.com/denar-mk/denar/internal/blob"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
)

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// Blobs keeps the zips (the database's own store by default); nil
	// fails every export.
	Blobs blob.Store
	// Events publishes archive.export_ready and archive.export_failed in
	// the transaction that finishes the export (the webhooks package's
	// Service, as for internal/einvoicing); required.
	Events einvoicing.Publisher
}

// Service is the archive exports room: one method per use case, and the
// jobs that build and purge exports.
type Service struct {
	db     *store.DB
	log    *slog.Logger
	cfg    Config
	blobs  blob.Store
	events einvoicing.Publisher
	// received reads received documents: the inbox's tables (inboxArchive),
	// or the documents a test gives.
	received receivedArchive
}

// New builds the room.
func New(d Deps, cfg Config) *Service {
	s := &Service{db: d.DB, log: d.Log, cfg: cfg.withDefaults(), blobs: d.Blobs, events: d.Events, received: inboxArchive{}}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.events == nil {
		panic("archive: New needs Deps.Events, the publisher of events")
	}
	return s
}

// RegisterJobs registers the room's job kinds on r: the build of an export
// and the periodic deletion of expired ones.
func (s *Service) RegisterJobs(r *jobs.Runner) {
	jobs.Register(r, s.buildArchive, jobs.Options{
		Backoff: jobs.Schedule(5*time.Second, 30*time.Second, 2*time.Minute, 10*time.Minute)})
	jobs.Register(r, s.purgeArchives, jobs.Options{Every: s.cfg.PurgeEvery})
}

// EventResources is the event catalogue's resources with the Go type each
// is rendered as (webhooks.Deps.Resources, and the OpenAPI document's
// payloads): internal/einvoicing's (einvoicing.EventResources) and this
// room's export.
func EventResources() map[string]any {
	m := maps.Clone(einvoicing.EventResources())
	m[webhooks.ResourceArchiveExport] = ArchiveExport{}
	return m
}
