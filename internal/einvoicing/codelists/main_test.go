package codelists

import (
	"log/slog"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// withEvents is d with the publisher cmd/denar gives the room (the
// webhooks package's, on d.DB) when it has none.
func withEvents(d Deps) Deps {
	if d.Events == nil {
		d.Events = webhooks.New(webhooks.Deps{DB: d.DB, Log: slog.New(slog.DiscardHandler),
			Resources: map[string]any{webhooks.ResourceCodeListChange: CodeListChange{}}}, webhooks.Config{})
	}
	return d
}
