package signing_test

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestRegisterJobs: the room runs the expiry of signing requests and the
// ask-again that the e-invoicing service enqueues, under the kinds they
// always had, and the service no longer registers either.
func TestRegisterJobs(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	log := slog.New(slog.DiscardHandler)
	events := webhooks.New(webhooks.Deps{DB: db, Log: log, Resources: einvoicing.EventResources()}, webhooks.Config{})
	core := einvoicing.New(einvoicing.Deps{DB: db, Log: log, Events: events,
		CodeLists: codelists.New(codelists.Deps{DB: db, Log: log, Events: events}, codelists.Config{})}, einvoicing.Config{})
	room := jobs.NewRunner(db, jobs.Config{Logger: log})
	signing.New(signing.Deps{DB: db, Log: log, Core: core}, signing.Config{}).RegisterJobs(room)
	if got, want := room.Kinds(), []string{"einvoice.ask_signature", "signing.expire"}; !slices.Equal(got, want) {
		t.Errorf("the room's kinds: %v, want %v", got, want)
	}
	rest := jobs.NewRunner(db, jobs.Config{Logger: log})
	core.RegisterJobs(rest)
	for _, k := range []string{signing.KindExpireSigning, einvoicing.KindAskSignature} {
		if slices.Contains(rest.Kinds(), k) {
			t.Errorf("the e-invoicing service registers %s too", k)
		}
	}
}

// TestNewNeedsCore: the room without the e-invoicing service is a wiring
// mistake, found when it is built.
func TestNewNeedsCore(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("New without Deps.Core did not panic")
		}
	}()
	signing.New(signing.Deps{}, signing.Config{})
}
