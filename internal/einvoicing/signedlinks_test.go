package einvoicing

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestSignedLinks: every link type a signing request is made for has its
// follow-up in the one registry (a read for every signed read), and a
// request for a type the registry does not know cannot be made, so no
// signature is ever stored with nothing to run it.
func TestSignedLinks(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	svc := New(withEvents(Deps{DB: db}), Config{})
	// The core handles an e-invoice's document itself; its signature is
	// used by the submit job, not by a query job.
	if l, ok := svc.Link(LinkEInvoice); !ok || l.Signed == nil || l.Read != nil || l.Failed == nil {
		t.Errorf("%s: registered %v, signed %v, read %v, failed %v", LinkEInvoice, ok, l.Signed != nil, l.Read != nil, l.Failed != nil)
	}
	// The rooms register their link types when they are built (their
	// tests check their handlers), and cmd/denar wires the inbox's port:
	// until then CheckLinks names a type no room handles.
	rooms := []string{LinkChanges, LinkPDF, LinkSalesLookup, LinkSalesLookupPayloads, LinkPurchaseIDs, LinkPurchasePayloads,
		LinkPurchaseChanges, LinkInboxPDF, LinkInboxStatus, LinkInboxDecision, LinkReconciliation, LinkUJPCheck}
	svc.UseInbox(noInbox{})
	for i, typ := range rooms {
		err := svc.CheckLinks()
		if err == nil || !slices.ContainsFunc(rooms[i:], func(t string) bool { return strings.Contains(err.Error(), strconv.Quote(t)) }) {
			t.Fatalf("CheckLinks with %d of the rooms' types handled: %v", i, err)
		}
		svc.HandleLink(typ, LinkHandler{Signed: EnqueueQuery})
	}
	if err := svc.CheckLinks(); err != nil {
		t.Fatal(err)
	}
	// Without the inbox's port the poll could not start a sync.
	bare := New(withEvents(Deps{DB: db}), Config{})
	for _, typ := range rooms {
		bare.HandleLink(typ, LinkHandler{Signed: EnqueueQuery})
	}
	if err := bare.CheckLinks(); err == nil {
		t.Fatal("CheckLinks passed without the inbox's port (UseInbox)")
	}
	// Wiring mistakes are found when the service is built.
	for name, register := range map[string]func(){
		"unknown type": func() { svc.HandleLink("ujp_unheard_of", LinkHandler{Signed: EnqueueQuery}) },
		"twice":        func() { svc.HandleLink(LinkInboxPDF, LinkHandler{Signed: EnqueueQuery}) },
		"no Signed":    func() { New(withEvents(Deps{DB: db}), Config{}).HandleLink(LinkPDF, LinkHandler{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HandleLink, %s: no panic", name)
				}
			}()
			register()
		}()
	}
	err := db.InTx(t.Context(), func(tx *store.Tx) error {
		acct := denar.NewID("acc")
		if _, err := tx.CreateAccount(t.Context(), dbq.CreateAccountParams{ID: acct, Name: "Биро", Plan: "business", CreatedAt: tx.Now}); err != nil {
			return err
		}
		co, err := tx.CreateCompany(t.Context(), dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: acct, Name: "Тест ДООЕЛ",
			TaxNumber: "4030000000001", VatNumber: "МК4030000000001", Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox, Address: "{}", CreatedAt: tx.Now})
		if err != nil {
			return err
		}
		_, err = RequestSignature(t.Context(), tx, co.ID, PurposeQuery, []byte(`{}`), SigningLink{Type: "ujp_unheard_of", ID: co.ID})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "no handler for link type") {
		t.Fatalf("a request for an unknown link type: %v", err)
	}
}

// noInbox is an inbox room that does nothing, for the registry's check.
type noInbox struct{ Inbox }
