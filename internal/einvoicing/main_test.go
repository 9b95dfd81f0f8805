package einvoicing

import (
	"log/slog"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// withEvents is d with the publisher cmd/denar gives the service (the
// webhooks package's, on d.DB) when it has none, and the code-list room
// (publishing through it, on d.DB).
func withEvents(d Deps) Deps {
	if d.Events == nil {
		d.Events = eventsOn(d.DB)
	}
	if d.CodeLists == nil {
		d.CodeLists = codelists.New(codelists.Deps{DB: d.DB, Log: slog.New(slog.DiscardHandler), Events: d.Events}, codelists.Config{})
	}
	return d
}

// eventsOn is the webhooks service on db, as cmd/denar builds it: the
// publisher, and the reader of what was published.
func eventsOn(db *store.DB) *webhooks.Service {
	return webhooks.New(webhooks.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Resources: EventResources()}, webhooks.Config{})
}
