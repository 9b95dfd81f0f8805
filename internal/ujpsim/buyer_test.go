package ujpsim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// TestBuyerSideTools drops an invoice from the fictitious supplier into the
// buyer's inbox, reads it the way the buyer's service does (ids, payload
// list, current status, changes), stornos it as its seller, and drives both
// through the admin API and ujpsim.Control too.
func TestBuyerSideTools(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		sim, srv, c := start(t, db, ujpsim.Options{})
		buyer, err := ujpsim.NewSandboxSigner("EUJP-BUYER", ujpsim.TaxBuyer)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sim.RegisterCertificate(ctx, buyer.EUJPID, buyer.EDB, buyer.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		sign := func(v any) string {
			jws, err := buyer.Sign(v)
			if err != nil {
				t.Fatal(err)
			}
			return jws
		}
		ts := func() string { return ujpdoc.FormatTimestamp(time.Now()) }

		now := time.Now().In(ujpdoc.Skopje)
		txDate := now.Format(time.DateOnly)
		d, err := sim.DropIncoming(ctx, ujpsim.Incoming{BuyerTin: ujpsim.TaxBuyer, TransactionDate: txDate, DocID: "drop-1"})
		if err != nil {
			t.Fatal(err)
		}
		if d.SellerTin != ujpsim.TaxSupplier || d.BuyerTin != ujpsim.TaxBuyer || d.Status != ujp.StatusSent {
			t.Fatalf("dropped: %s seller %s buyer %s status %s", d.EUID, d.SellerTin, d.BuyerTin, d.Status)
		}
		// The deadline ends with the 10th of next month, in Skopje.
		if want := time.Date(now.Year(), now.Month()+1, 11, 0, 0, 0, 0, ujpdoc.Skopje); !d.DecideBy.Equal(want) {
			t.Errorf("decideBy %s; want %s", d.DecideBy, want)
		}
		var req ujpdoc.Request
		if err := json.Unmarshal(d.Payload, &req); err != nil {
			t.Fatal(err)
		}
		// A document UJP would accept from a seller: its own validation passes.
		if ps := ujpdoc.Validate(&req.Document, ujpdoc.Snapshot()); len(ps) > 0 {
			t.Fatalf("the dropped invoice does not validate: %+v", ps)
		}
		if h := req.Document.Header; h.DocTurnoverDate != txDate || h.DocDate != txDate || req.Document.Buyer.BuyerName != "Тест Купувач ДОО Скопје" ||
			req.Document.Seller.SellerName != "Тест Добавувач ДООЕЛ Тетово" || len(req.Document.DocItems) != 3 {
			t.Fatalf("dropped document: header %+v, buyer %q, seller %q, %d lines", h, req.Document.Buyer.BuyerName, req.Document.Seller.SellerName, len(req.Document.DocItems))
		}
		again, err := sim.DropIncoming(ctx, ujpsim.Incoming{BuyerTin: ujpsim.TaxBuyer, TransactionDate: txDate, DocID: "drop-1"})
		if err != nil || again.EUID != d.EUID {
			t.Fatalf("the same docId dropped again: %s, %v; want %s", again.EUID, err, d.EUID)
		}
		if _, err := sim.DropIncoming(ctx, ujpsim.Incoming{BuyerTin: "4039999999999"}); err == nil || !strings.Contains(err.Error(), "E1014") {
			t.Fatalf("an unknown buyer: %v", err)
		}

		// The buyer's reads see it.
		today := time.Now().In(ujpdoc.Skopje).Format(time.DateOnly)
		ids, err := c.PurchaseIDs(ctx, buyer.Identity(), sign(ujp.DateRangeRequest{RequestTimestamp: ts(), DateFrom: today, DateTo: today}))
		if err != nil || len(ids) != 1 || ids[0] != d.EUID {
			t.Fatalf("ids %v, %v", ids, err)
		}
		list, err := c.PurchasePayloads(ctx, buyer.Identity(), sign(ujp.EUIDsRequest{RequestTimestamp: ts(), EUIDs: ids}))
		if err != nil || len(list) != 1 || list[0].Payload != string(d.Payload) {
			t.Fatalf("payloads %v, %v", list, err)
		}

		// The seller stornos it: a storno document for the buyer, the original 07.
		st, err := sim.SellerStorno(ctx, d.EUID, "")
		if err != nil {
			t.Fatal(err)
		}
		if st.DocStorno != ujpdoc.StornoVoid || st.References != d.EUID || st.BuyerTin != ujpsim.TaxBuyer {
			t.Fatalf("storno: docStorno %d references %q buyer %s", st.DocStorno, st.References, st.BuyerTin)
		}
		orig, err := sim.Document(ctx, d.EUID)
		if err != nil || orig.Status != ujp.StatusVoided || len(orig.History) != 2 || orig.History[1].VoidReasonCode == nil {
			t.Fatalf("original after storno: status %s, %d history rows, %v", orig.Status, len(orig.History), err)
		}
		if again, err := sim.SellerStorno(ctx, d.EUID, ""); err != nil || again.EUID != st.EUID {
			t.Fatalf("storno asked again: %s, %v; want %s", again.EUID, err, st.EUID)
		}
		chs, err := c.PurchaseChanges(ctx, buyer.Identity(), sign(ujp.ChangesRequest{RequestTimestamp: ts(), Date: today}))
		if err != nil || len(chs) != 3 || chs[2].EUID != d.EUID || chs[2].NewStatus.Code != ujp.StatusVoided {
			t.Fatalf("changes %+v, %v", chs, err)
		}
		// A decision on a voided document: E1016.
		err = c.AcceptReject(ctx, buyer.Identity(), sign(ujp.AcceptRejectRequest{RequestTimestamp: ts(), EUID: d.EUID, IsAccepted: true}))
		wantRejected(t, err, "E1016")

		// Over the admin API and Control.
		ctl := ujpsim.Control{BaseURL: srv.URL, HTTP: http.DefaultClient, Token: controlToken}
		dec := time.Date(now.Year(), 12, 31, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		euid, err := ctl.SendToBuyer(ctx, ujpsim.TaxBuyer, "", dec, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := sim.Document(ctx, euid)
		if err != nil || !got.DecideBy.Equal(time.Date(now.Year()+1, 1, 11, 0, 0, 0, 0, ujpdoc.Skopje)) {
			t.Fatalf("dropped over HTTP: decideBy %s, %v", got.DecideBy, err)
		}
		stornoEUID, err := ctl.VoidBySeller(ctx, euid, "")
		if err != nil || stornoEUID == "" {
			t.Fatalf("storno over HTTP: %q, %v", stornoEUID, err)
		}
		if _, err := ctl.VoidBySeller(ctx, "01900000-0000-7000-8000-000000000000", ""); err == nil || !strings.Contains(err.Error(), "E4008") {
			t.Fatalf("storno of an unknown EUID: %v", err)
		}
		if code, _ := admin(t, "POST", srv.URL+"/_sim/buyers/"+ujpsim.TaxBuyer+"/incoming", `{"transactionDate":"31.01.2026"}`); code != 400 {
			t.Fatalf("a bad date: %d", code)
		}
	})
}

func wantRejected(t *testing.T, err error, code string) {
	t.Helper()
	var rej *ujp.RejectedError
	if !errors.As(err, &rej) || rej.Code != code {
		t.Fatalf("got %v; want UJP %s", err, code)
	}
}
