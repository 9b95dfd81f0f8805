package inbox

import (
	"log/slog"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// TestLinks: building the room registers a read for every link type of
// the inbox, and the decision's (and its status read's) failure hook, so
// that with the port wired the core's registry is complete.
func TestLinks(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	events := webhooks.New(webhooks.Deps{DB: db, Log: slog.New(slog.DiscardHandler), Resources: einvoicing.EventResources()}, webhooks.Config{})
	core := einvoicing.New(einvoicing.Deps{DB: db, Events: events,
		CodeLists: codelists.New(codelists.Deps{DB: db, Events: events}, codelists.Config{})}, einvoicing.Config{})
	if err := core.CheckLinks(); err == nil {
		t.Fatal("CheckLinks passed before the inbox room was built")
	}
	s := New(Deps{Core: core, Pipeline: pipeline.New(pipeline.Deps{DB: db, EInvoicing: core}, pipeline.Config{}), DB: db}, Config{})
	if err := core.CheckLinks(); err == nil {
		t.Fatal("CheckLinks passed before the inbox was wired as the core's port")
	}
	core.UseInbox(s)
	// With the pipeline's, the inbox's types leave the reconciliation's
	// (registered by its room, whose test checks them) to be handled.
	for _, typ := range []string{einvoicing.LinkReconciliation, einvoicing.LinkUJPCheck} {
		core.HandleLink(typ, einvoicing.LinkHandler{Signed: einvoicing.EnqueueQuery})
	}
	if err := core.CheckLinks(); err != nil {
		t.Fatal(err)
	}
	hs := s.linkHandlers()
	for _, typ := range []string{einvoicing.LinkPurchaseIDs, einvoicing.LinkPurchasePayloads, einvoicing.LinkPurchaseChanges,
		einvoicing.LinkInboxPDF, einvoicing.LinkInboxStatus, einvoicing.LinkInboxDecision} {
		h, ok := hs[typ]
		if !ok || h.Signed == nil || h.Read == nil {
			t.Errorf("%s: registered %v, signed %v, read %v", typ, ok, h.Signed != nil, h.Read != nil)
		}
		decision := typ == einvoicing.LinkInboxDecision || typ == einvoicing.LinkInboxStatus
		if (h.Failed != nil) != decision {
			t.Errorf("%s: a failure hook %v, want %v (only a decision fails with its signature)", typ, h.Failed != nil, decision)
		}
	}
	if len(hs) != 6 {
		t.Errorf("%d link types, want the inbox's 6", len(hs))
	}
	if s.cfg.DeadlineEvery != DefaultDeadlineEvery {
		t.Errorf("deadline job every %s, want the default %s", s.cfg.DeadlineEvery, DefaultDeadlineEvery)
	}
}
