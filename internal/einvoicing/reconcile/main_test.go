package reconcile

import (
	"log/slog"
	"maps"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// newRoom is the room on db with d's UJP side and cfg, built on the core
// and the rooms it stands on (the pipeline, the inbox) as cmd/denar builds
// them (the webhooks package's publisher on db).
func newRoom(db *store.DB, d Deps, cfg Config) *Service {
	log := slog.New(slog.DiscardHandler)
	resources := maps.Clone(einvoicing.EventResources())
	maps.Copy(resources, EventResources())
	events := webhooks.New(webhooks.Deps{DB: db, Log: log, Resources: resources}, webhooks.Config{})
	d.DB, d.Log = db, log
	lists := codelists.New(codelists.Deps{DB: db, Log: log, Gateways: d.Gateways, Operators: d.Operators, Events: events}, codelists.Config{})
	d.Core = einvoicing.New(einvoicing.Deps{DB: db, Log: log, Registry: d.Registry, Events: events, CodeLists: lists},
		einvoicing.Config{})
	d.Pipeline = pipeline.New(pipeline.Deps{DB: db, Log: log, EInvoicing: d.Core, Gateways: d.Gateways}, pipeline.Config{})
	d.Inbox = inbox.New(inbox.Deps{Core: d.Core, Pipeline: d.Pipeline, DB: db, Log: log}, inbox.Config{})
	d.Core.UseInbox(d.Inbox)
	return New(d, cfg)
}
