package pipeline_test

import (
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestLinks: the room registers the reads of its link types when it is
// built (the sales change feed, UJP's PDF, the look-ups of a send whose
// answer was lost); a second room on one service is a wiring mistake
// found at once.
func TestLinks(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	hooks := webhooks.New(webhooks.Deps{DB: db, Resources: einvoicing.EventResources()}, webhooks.Config{})
	svc := einvoicing.New(einvoicing.Deps{DB: db, Events: hooks,
		CodeLists: codelists.New(codelists.Deps{DB: db, Events: hooks}, codelists.Config{})}, einvoicing.Config{})
	for _, typ := range []string{einvoicing.LinkChanges, einvoicing.LinkPDF} {
		if _, ok := svc.Link(typ); ok {
			t.Fatalf("%s handled before the room is built", typ)
		}
	}
	pipeline.New(pipeline.Deps{DB: db, EInvoicing: svc}, pipeline.Config{})
	for _, typ := range []string{einvoicing.LinkChanges, einvoicing.LinkPDF, einvoicing.LinkSalesLookup, einvoicing.LinkSalesLookupPayloads} {
		if l, ok := svc.Link(typ); !ok || l.Signed == nil || l.Read == nil {
			t.Errorf("%s: registered %v, signed %v, read %v", typ, ok, l.Signed != nil, l.Read != nil)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a second pipeline on one service: no panic")
		}
	}()
	pipeline.New(pipeline.Deps{DB: db, EInvoicing: svc}, pipeline.Config{})
}
