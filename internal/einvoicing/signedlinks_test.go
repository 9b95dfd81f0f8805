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
	// The rooms outside this package register their link types when they
	// are built (reconcile.New, whose tests check its handlers): until
	// then CheckLinks names one of them.
	rooms := []string{LinkReconciliation, LinkUJPCheck}
	if err := svc.CheckLinks(); err == nil || !slices.ContainsFunc(rooms, func(t string) bool { return strings.Contains(err.Error(), strconv.Quote(t)) }) {
		t.Fatalf("CheckLinks before the rooms are built: %v", err)
	}
	for _, typ := range rooms {
		svc.HandleLink(typ, LinkHandler{Signed: enqueueRead})
	}
	if err := svc.CheckLinks(); err != nil {
		t.Fatal(err)
	}
	reads := []string{LinkChanges, LinkPDF, LinkPurchaseIDs, LinkPurchasePayloads, LinkPurchaseChanges, LinkInboxPDF,
		LinkInboxStatus, LinkInboxDecision, LinkSalesLookup, LinkSalesLookupPayloads}
	for _, typ := range reads {
		l, ok := svc.link(typ)
		if !ok || l.Signed == nil || l.Read == nil {
			t.Errorf("%s: registered %v, signed %v, read %v", typ, ok, l.Signed != nil, l.Read != nil)
		}
	}
	for _, typ := range []string{LinkEInvoice} {
		if l, ok := svc.link(typ); !ok || l.Signed == nil || l.Read != nil {
			t.Errorf("%s: registered %v, signed %v, read %v (its signature is used without a query job)", typ, ok, l.Signed != nil, l.Read != nil)
		}
	}
	// Wiring mistakes are found when the service is built.
	for name, register := range map[string]func(){
		"unknown type": func() { svc.HandleLink("ujp_unheard_of", LinkHandler{Signed: enqueueRead}) },
		"twice":        func() { svc.HandleLink(LinkPDF, LinkHandler{Signed: enqueueRead}) },
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
