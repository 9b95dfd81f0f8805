package ujp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/internal/ujpturns"
)

// The two sandbox signers are expensive to make (RSA keys), so every test
// shares them; each test has its own simulator.
var (
	signersOnce         sync.Once
	sellerKey, buyerKey *ujpsim.SandboxSigner
	strangerKey         *ujpsim.SandboxSigner
)

func signers(t *testing.T) {
	t.Helper()
	signersOnce.Do(func() {
		var err error
		if sellerKey, err = ujpsim.NewSandboxSigner("EUJP-SELLER", ujpsim.TaxSeller); err != nil {
			t.Fatal(err)
		}
		if buyerKey, err = ujpsim.NewSandboxSigner("EUJP-BUYER", ujpsim.TaxBuyer); err != nil {
			t.Fatal(err)
		}
		if strangerKey, err = ujpsim.NewSandboxSigner("EUJP-SELLER", ujpsim.TaxSeller); err != nil {
			t.Fatal(err)
		}
	})
	if sellerKey == nil {
		t.Fatal("signers not made")
	}
}

// simWindow is the simulators' rate window in these tests: UJP's one call
// per second per user, shortened, never off.
const simWindow = 20 * time.Millisecond

// simToken is the simulators' control token in these tests.
const simToken = "client-test-token"

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// count is how many documents the simulator holds.
func (e *env) count(t *testing.T) int {
	t.Helper()
	n, err := e.sim.DocumentCount(context.Background())
	must(t, err)
	return n
}

type env struct {
	sim    *ujpsim.Sim
	srv    *httptest.Server
	client *ujp.Client // configured by the test
	// patient is a client with the default timeout, for the calls a test
	// needs to succeed when it gave client a short one (the simulator
	// writes to its store, which a loaded machine can make slow).
	patient *ujp.Client
}

// newEnv starts a simulator behind a real HTTP server and a client for it,
// with the seller's and the buyer's certificates registered through the
// client.
func newEnv(t *testing.T, cfg ujp.Config) *env {
	t.Helper()
	signers(t)
	db := storetest.SQLite(t)
	sim, err := ujpsim.New(db, ujpsim.Options{ControlToken: simToken, Window: simWindow})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	// Every client of the test takes its turns from one store, as the
	// service's processes do: the simulator holds each user to one call
	// per window, always.
	turns := ujpturns.New(db, ujpturns.Config{Interval: simWindow})
	cfg.BaseURL = srv.URL
	if cfg.Turns == nil {
		cfg.Turns = turns
	}
	c, err := ujp.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	patient, err := ujp.NewClient(ujp.Config{BaseURL: srv.URL, Turns: turns, TurnWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{sim: sim, srv: srv, client: c, patient: patient}
	// Out of band, as UJP's portal does: the client never registers.
	must(t, sim.AddUser(context.Background(), operator.EUJPID))
	for _, s := range []*ujpsim.SandboxSigner{sellerKey, buyerKey} {
		serial, err := sim.RegisterCertificate(context.Background(), s.EUJPID, s.EDB, s.Cert.Raw)
		if err != nil || serial != signerID(s).SerialNumber {
			t.Fatalf("register certificate: %q, %v", serial, err)
		}
		must(t, sim.Grant(context.Background(), s.EUJPID, s.EDB, ujpsim.PrivilegePDF, ujpsim.PrivilegePayload, ujpsim.PrivilegeASiC))
	}
	return e
}

// operator is the service's own identity for server time and code lists.
var operator = ujp.Identity{EUJPID: "DENAR", EDB: ujpsim.TaxSeller}

func ts() string { return ujpdoc.FormatTimestamp(time.Now()) }

func sp(s string) *string { return &s }

// invoice is a valid 3 × 500 MKD + 18% invoice from the sandbox seller to
// the sandbox buyer.
func invoice(t *testing.T, docID string) *ujpdoc.Document {
	t.Helper()
	d := &ujpdoc.Document{
		Header: ujpdoc.Header{DocType: "100", DocTypeName: "Фактура", DocDate: time.Now().In(ujpdoc.Skopje).Format(time.DateOnly),
			DocTurnoverDate: time.Now().In(ujpdoc.Skopje).Format(time.DateOnly), DocNumber: "F-" + docID, DocID: docID},
		Seller: ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: ujpsim.TaxSeller, SellerVatNumber: sp("МК" + ujpsim.TaxSeller), SellerName: "Тест Продавач ДООЕЛ Скопје",
			SellerAddress: ujpdoc.Address{StreetAddress: "бул. Партизански одреди", StreetNumber: "1", PostalCode: "1000", City: "Скопје"}},
		Buyer: ujpdoc.Buyer{BuyerCCode: "MK", BuyerCName: "Северна Македонија", BuyerTin: ujpsim.TaxBuyer, BuyerVatNumber: sp("МК" + ujpsim.TaxBuyer), BuyerName: "Тест Купувач ДОО Скопје",
			BuyerAddress: ujpdoc.Address{StreetAddress: "ул. Македонија", StreetNumber: "2", PostalCode: "1000", City: "Скопје"}},
		DocPayment: ujpdoc.Payment{DocPaymentTypeCode: "P12", DocPaymentTypeDesc: "Плаќање преку банка", DocCurrency: "MKD", DocCurrencyCode: "MKD"},
		DocItems: []ujpdoc.Item{{DocItemLineNo: 1, DocItemDesc: "Консултантски услуги", DocItemQty: ujpdoc.A("3"),
			DocItemUnitOriginalPriceWoVat: ujpdoc.A("500"), DocItemVatGroup: "DDV-A", DocItemTaxIndicator: "DDV-A"}},
	}
	if err := ujpdoc.ComputeTotals(d, ujpdoc.Snapshot()); err != nil {
		t.Fatal(err)
	}
	return d
}

func (e *env) send(t *testing.T, s *ujpsim.SandboxSigner, d *ujpdoc.Document) (*ujp.SendResult, error) {
	t.Helper()
	return e.sendWith(t, e.client, s, d)
}

func (e *env) sendWith(t *testing.T, c *ujp.Client, s *ujpsim.SandboxSigner, d *ujpdoc.Document) (*ujp.SendResult, error) {
	t.Helper()
	jws, err := s.Sign(ujpdoc.Request{RequestTimestamp: ts(), Document: *d})
	if err != nil {
		t.Fatal(err)
	}
	return c.Send(context.Background(), signerID(s), d.Header.DocType, jws)
}

func sign(t *testing.T, s *ujpsim.SandboxSigner, payload any) string {
	t.Helper()
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	return jws
}

func wantRejected(t *testing.T, err error, code string) *ujp.RejectedError {
	t.Helper()
	var r *ujp.RejectedError
	if !errors.As(err, &r) || r.Code != code {
		t.Fatalf("want a rejection %s, got %v", code, err)
	}
	if ujp.Retryable(err) {
		t.Fatalf("a rejection must not be retryable: %v", err)
	}
	return r
}

func wantUnavailable(t *testing.T, err error) *ujp.UnavailableError {
	t.Helper()
	var u *ujp.UnavailableError
	if !errors.Is(err, ujp.ErrUnavailable) || !errors.As(err, &u) || !ujp.Retryable(err) {
		t.Fatalf("want unavailable, got %v", err)
	}
	return u
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{Timeout: 300 * time.Millisecond})
	caller := ujp.Identity{EUJPID: "DENAR", EDB: ujpsim.TaxSeller}
	ctx := context.Background()
	for _, tax := range []string{ujpsim.TaxSeller, ujpsim.TaxBuyer} {
		c, err := e.patient.Company(ctx, caller, tax)
		if err != nil || c.TaxNumber != tax || c.Address.City != "Скопје" || c.VatNumber == nil {
			t.Fatalf("Company(%s) = %+v, %v", tax, c, err)
		}
	}
	_, err := e.patient.Company(ctx, caller, ujpsim.TaxNeverExisted)
	wantRejected(t, err, "E1000")
	if !ujp.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	start := time.Now()
	_, err = e.client.Company(ctx, caller, ujpsim.TaxNoAnswer)
	wantUnavailable(t, err)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the never-answering registry took %s; the client timeout is 300ms", d)
	}
	_, err = e.patient.Company(ctx, ujp.Identity{}, ujpsim.TaxSeller)
	wantRejected(t, err, "E4016")
}

func TestServerTimeAndCodebooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	ctx := context.Background()
	st, err := e.client.ServerTime(ctx, operator)
	if err != nil || time.Since(st).Abs() > 5*time.Second {
		t.Fatalf("ServerTime = %v, %v", st, err)
	}
	caller := ujp.Identity{EUJPID: "DENAR", EDB: ujpsim.TaxSeller}
	cb, err := e.client.Codebooks(ctx, caller)
	if err != nil {
		t.Fatal(err)
	}
	snap := ujpdoc.Snapshot()
	if len(cb.TaxIndicators) != len(snap.TaxIndicators) || len(cb.Countries) != len(snap.Countries) || len(cb.PaymentTypes) != len(snap.PaymentTypes) ||
		len(cb.RejectReasons) != 7 || len(cb.DocumentStatuses) != 8 {
		t.Fatalf("code lists over HTTP differ from the snapshot: %d/%d indicators, %d/%d countries", len(cb.TaxIndicators), len(snap.TaxIndicators), len(cb.Countries), len(snap.Countries))
	}
	if ti, _ := cb.TaxIndicator("DDV-14-4"); len(ti.TaxGroupCodes) != 2 || ti.VatImpact != ujpdoc.ImpactPrenesen {
		t.Errorf("DDV-14-4 over HTTP: %+v", ti)
	}
	// A document built against the fetched lists validates.
	if ps := ujpdoc.Validate(invoice(t, "cb-1"), cb); len(ps) != 0 {
		t.Errorf("validation with fetched code lists: %+v", ps)
	}
	// UJP's published lists are the snapshot's.
	if d := ujpdoc.Diff(snap, cb); d != nil {
		t.Errorf("the published lists differ from the snapshot: %s", ujpdoc.Summary(d, 5))
	}
	if len(cb.DocTypeTaxIndicators["100"]) != len(snap.TaxIndicators) {
		t.Errorf("document type 100 allows %d indicators, want every one", len(cb.DocTypeTaxIndicators["100"]))
	}

	// UJP changes its lists: a new indicator for type 100 only, a payment
	// type gone, a document type renamed.
	must(t, e.sim.SetCodeListsChanged(ctx, caller.EDB, true))
	changed, err := e.client.Codebooks(ctx, caller)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ujpdoc.Summary(ujpdoc.Diff(cb, changed), 5),
		"document-types: changed 100 (name) · payment-types: removed P13 · tax-indicators: added DDV-14-3-10 · document-type-tax-indicators: added 100/DDV-14-3-10"; got != want {
		t.Errorf("the changed lists:\n got %s\nwant %s", got, want)
	}
	if !changed.IndicatorAllowed("100", "DDV-14-3-10") || changed.IndicatorAllowed("110", "DDV-14-3-10") {
		t.Errorf("DDV-14-3-10 by document type: %v", changed.IndicatorDocTypes("DDV-14-3-10"))
	}
}

// TestMergeCodebooks: a list UJP serves empty keeps the previous one (an
// empty list would refuse every code); a multi-rate indicator keeps the
// published groups; everything else is UJP's.
func TestMergeCodebooks(t *testing.T) {
	t.Parallel()
	prev := ujpdoc.Snapshot()
	next := &ujpdoc.Codebooks{Currencies: []ujpdoc.Code{{Code: "MKD", Name: "Денар"}},
		TaxIndicators: []ujpdoc.TaxIndicator{{Code: "DDV-14-4", TaxGroupCodes: []string{"DDV-A"}}}}
	m, kept := ujp.MergeCodebooks(prev, next)
	if len(m.Currencies) != 1 || len(m.PaymentTypes) != len(prev.PaymentTypes) || len(m.TaxIndicators) != 1 {
		t.Fatalf("merged: %d currencies, %d payment types, %d indicators", len(m.Currencies), len(m.PaymentTypes), len(m.TaxIndicators))
	}
	if g := m.TaxIndicators[0].TaxGroupCodes; strings.Join(g, ",") != "DDV-A,DDV-V,DDV-B" {
		t.Errorf("DDV-14-4's groups: %v", g)
	}
	if slices.Contains(kept, ujpdoc.CBCurrencies) || slices.Contains(kept, ujpdoc.CBTaxIndicators) || !slices.Contains(kept, ujpdoc.CBPaymentTypes) ||
		!slices.Contains(kept, ujpdoc.CBDocTypeTaxIndicators) || len(kept) != 10 {
		t.Errorf("kept %v", kept)
	}
}

// TestInvoiceTrip is the whole life of an invoice: sent, delivered (01),
// seen in the buyer's inbox, accepted by the buyer (03), visible in both
// change feeds, rendered as a PDF.
func TestInvoiceTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	ctx := context.Background()
	res, err := e.send(t, sellerKey, invoice(t, "trip-1"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := uuid.Parse(res.EUID)
	if err != nil || id.Version() != 7 {
		t.Fatalf("EUID %q is not a UUIDv7", res.EUID)
	}
	if res.QRLink != "https://efakturatest.ujp.gov.mk/euid/"+res.EUID || res.Status != 200 || !res.EInvoiceUser {
		t.Errorf("send result: %+v", res)
	}
	st, err := e.client.CurrentStatus(ctx, signerID(sellerKey), sign(t, sellerKey, ujp.EUIDRequest{RequestTimestamp: ts(), EUID: res.EUID}))
	if err != nil || st.StatusCode != ujp.StatusSent || !st.DocGrossAmountR.Equal(ujpdoc.A("1770").Amount) {
		t.Fatalf("CurrentStatus = %+v, %v", st, err)
	}

	today := time.Now().In(ujpdoc.Skopje).Format(time.DateOnly)
	ids, err := e.client.PurchaseIDs(ctx, signerID(buyerKey), sign(t, buyerKey, ujp.DateRangeRequest{RequestTimestamp: ts(), DateFrom: today, DateTo: today}))
	if err != nil || len(ids) != 1 || ids[0] != res.EUID {
		t.Fatalf("buyer inbox = %v, %v", ids, err)
	}
	sold, err := e.client.SalesIDs(ctx, signerID(sellerKey), sign(t, sellerKey, ujp.DateRangeRequest{RequestTimestamp: ts(), DateFrom: today, DateTo: today}))
	if err != nil || len(sold) != 1 || sold[0] != res.EUID {
		t.Fatalf("seller's issued ids = %v, %v", sold, err)
	}
	payload, err := e.client.PurchasePayload(ctx, signerID(buyerKey), sign(t, buyerKey, ujp.EUIDRequest{RequestTimestamp: ts(), EUID: res.EUID}))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ujpdoc.Decode(payload); err != nil || r.Document.Header.DocID != "trip-1" {
		t.Fatalf("payload: %v", err)
	}
	// The list read: the same bytes; an EUID the buyer does not hold is left out.
	list, err := e.client.PurchasePayloads(ctx, signerID(buyerKey), sign(t, buyerKey,
		ujp.EUIDsRequest{RequestTimestamp: ts(), EUIDs: []string{res.EUID, "019b8d43-7840-7433-b358-08891b53605c"}}))
	if err != nil || len(list) != 1 || list[0].EUID != res.EUID || list[0].Payload != string(payload) {
		t.Fatalf("payload list = %+v, %v", list, err)
	}
	_, err = e.client.PurchasePayloads(ctx, signerID(buyerKey), sign(t, buyerKey, ujp.EUIDsRequest{RequestTimestamp: ts(), EUIDs: []string{}}))
	wantRejected(t, err, "E4010")
	// The seller cannot read the buyer's side, and the buyer not the seller's.
	_, err = e.client.CurrentStatus(ctx, signerID(buyerKey), sign(t, buyerKey, ujp.EUIDRequest{RequestTimestamp: ts(), EUID: res.EUID}))
	wantRejected(t, err, "E4008")

	accept := ujp.AcceptRejectRequest{RequestTimestamp: ts(), EUID: res.EUID, IsAccepted: true}
	if err := e.client.AcceptReject(ctx, signerID(buyerKey), sign(t, buyerKey, accept)); err != nil {
		t.Fatal(err)
	}
	err = e.client.AcceptReject(ctx, signerID(buyerKey), sign(t, buyerKey, accept))
	wantRejected(t, err, "E1016")

	st, err = e.client.PurchaseCurrentStatus(ctx, signerID(buyerKey), sign(t, buyerKey, ujp.EUIDRequest{RequestTimestamp: ts(), EUID: res.EUID}))
	if err != nil || st.StatusCode != ujp.StatusAccepted {
		t.Fatalf("after accept: %+v, %v", st, err)
	}
	for _, feed := range []struct {
		s  *ujpsim.SandboxSigner
		fn func(context.Context, ujp.Identity, string) ([]ujp.StatusChange, error)
	}{{sellerKey, e.client.SalesChanges}, {buyerKey, e.client.PurchaseChanges}} {
		chs, err := feed.fn(ctx, signerID(feed.s), sign(t, feed.s, ujp.ChangesRequest{RequestTimestamp: ts(), Date: today}))
		if err != nil || len(chs) != 2 || chs[1].OldStatus.Code != "01" || chs[1].NewStatus.Code != "03" || chs[1].NewStatus.Name != "Прифатена" {
			t.Fatalf("change feed = %+v, %v", chs, err)
		}
	}
	hist, err := e.client.StatusHistory(ctx, signerID(sellerKey), sign(t, sellerKey, ujp.StatusHistoryRequest{RequestTimestamp: ts(), EUID: res.EUID}))
	if err != nil || len(hist) != 2 {
		t.Fatalf("history = %+v, %v", hist, err)
	}
	pdf, err := e.client.SalesPDF(ctx, signerID(sellerKey), sign(t, sellerKey, ujp.EUIDRequest{RequestTimestamp: ts(), EUID: res.EUID}))
	if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("PDF: %d bytes, %v", len(pdf), err)
	}
	if _, err := e.client.PurchasePDF(ctx, signerID(buyerKey), sign(t, buyerKey, ujp.EUIDRequest{RequestTimestamp: ts(), EUID: res.EUID})); err != nil {
		t.Fatal(err)
	}
}

func TestRejectAndAutoAccept(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	ctx := context.Background()
	a, err := e.send(t, sellerKey, invoice(t, "rej-1"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.send(t, sellerKey, invoice(t, "auto-1"))
	if err != nil {
		t.Fatal(err)
	}
	// A rejection needs a reason from the list, spelt as UJP lists it (О-7
	// with a Cyrillic О; the gateway sends that spelling, einvoice/inbox.go).
	bad := ujp.AcceptRejectRequest{RequestTimestamp: ts(), EUID: a.EUID, RejectReasonCode: sp("O-9")}
	wantRejected(t, e.client.AcceptReject(ctx, signerID(buyerKey), sign(t, buyerKey, bad)), "E1002")
	rej := ujp.AcceptRejectRequest{RequestTimestamp: ts(), EUID: a.EUID, RejectReasonCode: sp("\u041e-7"), Comment: sp("Погрешна цена")}
	if err := e.client.AcceptReject(ctx, signerID(buyerKey), sign(t, buyerKey, rej)); err != nil {
		t.Fatal(err)
	}
	doc, _ := e.sim.Document(context.Background(), a.EUID)
	last := doc.History[len(doc.History)-1]
	if doc.Status != "05" || last.RejectReasonCode == nil || *last.RejectReasonCode != "\u041e-7" {
		t.Fatalf("after reject: %s %+v", doc.Status, last)
	}
	must(t, e.sim.AdvanceClock(context.Background(), 70*24*time.Hour))
	doc, _ = e.sim.Document(context.Background(), b.EUID)
	if doc.Status != ujp.StatusAutoAccepted || *doc.History[len(doc.History)-1].Comment != "Document auto accept after expiration date" {
		t.Fatalf("after the deadline: %s", doc.Status)
	}
	if doc, _ := e.sim.Document(context.Background(), a.EUID); doc.Status != "05" {
		t.Fatalf("a rejected document stays rejected, got %s", doc.Status)
	}
}

func TestSendRejections(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	ctx := context.Background()
	if _, err := e.send(t, sellerKey, invoice(t, "dup-1")); err != nil {
		t.Fatal(err)
	}
	before := e.count(t)

	t.Run("duplicate docId", func(t *testing.T) {
		_, err := e.send(t, sellerKey, invoice(t, "dup-1"))
		wantRejected(t, err, "E1023")
		if !ujp.IsDuplicate(err) || e.count(t) != before {
			t.Fatalf("duplicate created something: %v, %d documents", err, e.count(t))
		}
	})
	t.Run("signed with a key that is not the registered certificate's", func(t *testing.T) {
		impostor := *strangerKey
		impostor.Cert = sellerKey.Cert // claims the seller's certificate
		_, err := e.send(t, &impostor, invoice(t, "sig-1"))
		wantRejected(t, err, "E4015")
	})
	t.Run("unregistered certificate", func(t *testing.T) {
		_, err := e.send(t, strangerKey, invoice(t, "cert-1"))
		wantRejected(t, err, "E1012")
	})
	t.Run("certificate of another company", func(t *testing.T) {
		id := signerID(buyerKey)
		id.EDB = ujpsim.TaxSeller
		jws := sign(t, buyerKey, ujpdoc.Request{RequestTimestamp: ts(), Document: *invoice(t, "cert-2")})
		_, err := e.client.Send(ctx, id, "100", jws)
		wantRejected(t, err, "E1013")
	})
	t.Run("x5c names another certificate than X-SERIAL-NUMBER", func(t *testing.T) {
		mixed := *sellerKey
		mixed.Cert = strangerKey.Cert
		jws := sign(t, &mixed, ujpdoc.Request{RequestTimestamp: ts(), Document: *invoice(t, "cert-3")})
		_, err := e.client.Send(ctx, signerID(sellerKey), "100", jws)
		wantRejected(t, err, "E5012")
	})
	t.Run("not RS256", func(t *testing.T) {
		// header {"alg":"none"}: the allow-list refuses it before any key is tried.
		payload := base64.RawURLEncoding.EncodeToString([]byte(`{"requestTimestamp":"` + ts() + `"}`))
		_, err := e.client.Send(ctx, signerID(sellerKey), "100", "eyJhbGciOiJub25lIn0."+payload+".")
		wantRejected(t, err, "E5005")
	})
	t.Run("stale requestTimestamp", func(t *testing.T) {
		jws := sign(t, sellerKey, ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now().Add(-6 * time.Minute)), Document: *invoice(t, "ts-1")})
		_, err := e.client.Send(ctx, signerID(sellerKey), "100", jws)
		wantRejected(t, err, "E40122")
	})
	t.Run("totals that do not add up", func(t *testing.T) {
		d := invoice(t, "tot-1")
		d.DocTotals.DocVatAmount = ujpdoc.A("269.99")
		_, err := e.send(t, sellerKey, d)
		r := wantRejected(t, err, "E1020")
		found := false
		for _, it := range r.Items {
			found = found || (it.ErrorCode == "E10201" && it.Property == "docTotals.docVatAmount")
		}
		if !found {
			t.Fatalf("items: %+v", r.Items)
		}
	})
	t.Run("unknown tax indicator names its codebook", func(t *testing.T) {
		d := invoice(t, "cb-1")
		d.DocItems[0].DocItemTaxIndicator = "DDV-18"
		_, err := e.send(t, sellerKey, d)
		// UJP answers one code (here the totals it cannot work out); the
		// list names every problem, the indicator with its codebook.
		var r *ujp.RejectedError
		if !errors.As(err, &r) {
			t.Fatalf("want a rejection, got %v", err)
		}
		found := false
		for _, it := range r.Items {
			found = found || (it.ErrorCode == "E1009" && it.Codebook == ujpdoc.CBTaxIndicators && it.Property == "docItems[0].docItemTaxIndicator")
		}
		if !found {
			t.Fatalf("items: %+v", r.Items)
		}
	})
	t.Run("buyer not in the registry", func(t *testing.T) {
		d := invoice(t, "reg-1")
		d.Buyer.BuyerTin = ujpsim.TaxNeverExisted
		_, err := e.send(t, sellerKey, d)
		wantRejected(t, err, "E1014")
	})
	t.Run("seller name differs from the registry", func(t *testing.T) {
		d := invoice(t, "reg-2")
		d.Seller.SellerName = "Друго Име ДОО"
		_, err := e.send(t, sellerKey, d)
		wantRejected(t, err, "E10002")
	})
	t.Run("X-EDB is not the seller", func(t *testing.T) {
		// E4020 "Request header mismatch" (error-codes.txt:125); E4023 is
		// an X-EDB that is not a tax number at all.
		_, err := e.send(t, buyerKey, invoice(t, "edb-1"))
		wantRejected(t, err, "E4020")
	})
	t.Run("forced terminal rejection, once", func(t *testing.T) {
		must(t, e.sim.RejectNextSends(context.Background(), 1, "E5007", ""))
		_, err := e.send(t, sellerKey, invoice(t, "force-1"))
		wantRejected(t, err, "E5007")
		if _, err := e.send(t, sellerKey, invoice(t, "force-1")); err != nil {
			t.Fatalf("after the forced rejection: %v", err)
		}
	})
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	caller := ujp.Identity{EUJPID: "DENAR", EDB: ujpsim.TaxSeller}

	must(t, e.sim.SetLatency(context.Background(), time.Second))
	start := time.Now()
	_, err := e.send(t, sellerKey, invoice(t, "slow-1"))
	wantUnavailable(t, err)
	if time.Since(start) > 900*time.Millisecond {
		t.Errorf("the client waited %s past its 200ms timeout", time.Since(start))
	}
	must(t, e.sim.SetLatency(context.Background(), 0))
	if e.count(t) != 0 {
		t.Fatal("a send that timed out before the simulator handled it created a document")
	}

	must(t, e.sim.SetErrorRate(context.Background(), 1))
	_, err = e.patient.Company(ctx, caller, ujpsim.TaxSeller)
	if u := wantUnavailable(t, err); u.HTTPStatus != 500 || u.Code != "E5000" {
		t.Errorf("5xx: %+v", u)
	}
	must(t, e.sim.SetErrorRate(context.Background(), 0))

	must(t, e.sim.SetOutage(context.Background(), true))
	_, err = e.sendWith(t, e.patient, sellerKey, invoice(t, "out-1"))
	if u := wantUnavailable(t, err); u.HTTPStatus != 503 {
		t.Errorf("outage: %+v", u)
	}
	must(t, e.sim.SetOutage(context.Background(), false))
	// The same document goes through once UJP is back.
	if _, err := e.sendWith(t, e.patient, sellerKey, invoice(t, "out-1")); err != nil {
		t.Fatal(err)
	}

	// A server that is gone entirely.
	dead, _ := ujp.NewClient(ujp.Config{BaseURL: "http://127.0.0.1:1", Timeout: 200 * time.Millisecond})
	_, err = dead.ServerTime(ctx, operator)
	wantUnavailable(t, err)
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	ctx := context.Background()
	caller := ujp.Identity{EUJPID: "DENAR", EDB: ujpsim.TaxSeller}
	// A client without turns, and UJP answering the user's next two calls
	// E4007 whatever their timing.
	bare, err := ujp.NewClient(ujp.Config{BaseURL: e.srv.URL})
	must(t, err)
	must(t, e.sim.BurstRateLimit(ctx, caller.EUJPID, 2))
	_, err = bare.Company(ctx, caller, ujpsim.TaxBuyer)
	var rl *ujp.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Second || !ujp.Retryable(err) || errors.Is(err, ujp.ErrUnavailable) {
		t.Fatalf("a call over the user's limit: %v", err)
	}
	// Another user has a budget of its own.
	other := ujp.Identity{EUJPID: "OTHER", EDB: ujpsim.TaxBuyer}
	must(t, e.sim.AddUser(ctx, other.EUJPID))
	if _, err := bare.Company(ctx, other, ujpsim.TaxBuyer); err != nil {
		t.Fatal(err)
	}
	// A refused request uses up nothing but its own turn: asking until it
	// answers is safe.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := bare.Company(ctx, caller, ujpsim.TaxBuyer)
		if err == nil {
			break
		}
		if !errors.As(err, &rl) || time.Now().After(deadline) {
			t.Fatalf("after the burst: %v", err)
		}
		time.Sleep(simWindow)
	}
}

func storno(t *testing.T, orig *ujpdoc.Document, euid, docID string) *ujpdoc.Document {
	t.Helper()
	d, err := ujpdoc.Storno(orig, euid, docID, "S-"+docID, "S-2", sp("Договорот е поништен"), orig.Header.DocDate, ujpdoc.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStornoAndCorrection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	orig := invoice(t, "orig-1")
	a, err := e.send(t, sellerKey, orig)
	if err != nil {
		t.Fatal(err)
	}
	// A storno that does not negate the whole original is refused.
	half := storno(t, orig, a.EUID, "st-0")
	half.DocItems[0].DocItemQty = ujpdoc.A("-1")
	if err := ujpdoc.ComputeTotals(half, ujpdoc.Snapshot()); err != nil {
		t.Fatal(err)
	}
	_, err = e.send(t, sellerKey, half)
	wantRejected(t, err, "E1025")

	st, err := e.send(t, sellerKey, storno(t, orig, a.EUID, "st-1"))
	if err != nil {
		t.Fatal(err)
	}
	// UJP's stricter reading (statuses.txt: 07 "со претходна потврда од
	// страна на Примачот"): the original stays 01 until the buyer accepts
	// the storno, and a second storno meanwhile is refused.
	if doc, _ := e.sim.Document(context.Background(), a.EUID); doc.Status != ujp.StatusSent {
		t.Fatalf("original before the buyer confirmed the storno: %s", doc.Status)
	}
	_, err = e.send(t, sellerKey, storno(t, orig, a.EUID, "st-1b"))
	wantRejected(t, err, "E1022")
	must(t, e.client.AcceptReject(context.Background(), signerID(buyerKey),
		sign(t, buyerKey, ujp.AcceptRejectRequest{RequestTimestamp: ts(), EUID: st.EUID, IsAccepted: true})))
	doc, _ := e.sim.Document(context.Background(), a.EUID)
	last := doc.History[len(doc.History)-1]
	if doc.Status != ujp.StatusVoided || last.VoidReasonCode == nil || *last.VoidReasonCode != "S-2" || *last.VoidComment != "Договорот е поништен" {
		t.Fatalf("original after storno: %s %+v", doc.Status, last)
	}
	if sd, _ := e.sim.Document(context.Background(), st.EUID); sd.References != a.EUID {
		t.Errorf("storno does not point at the original: %+v", sd.References)
	}
	_, err = e.send(t, sellerKey, storno(t, orig, a.EUID, "st-2"))
	wantRejected(t, err, "E1026")

	// Correction: a full replacement of a second invoice.
	orig2 := invoice(t, "orig-2")
	b, err := e.send(t, sellerKey, orig2)
	if err != nil {
		t.Fatal(err)
	}
	corr := invoice(t, "corr-1")
	ujpdoc.MarkCorrection(corr, b.EUID, orig2.Header.DocDate, "C02", nil, ujpdoc.Snapshot())
	corr.DocItems[0].DocItemQty = ujpdoc.A("2")
	if err := ujpdoc.ComputeTotals(corr, ujpdoc.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.send(t, sellerKey, corr); err != nil {
		t.Fatal(err)
	}
	if doc, _ := e.sim.Document(context.Background(), b.EUID); doc.Status != ujp.StatusCorrected {
		t.Fatalf("original after correction: %s", doc.Status)
	}
	corr.Header.DocID = "corr-2"
	_, err = e.send(t, sellerKey, corr)
	wantRejected(t, err, "E1028")
	// A correction pointing at nothing.
	corr.Header.DocID = "corr-3"
	corr.DocReferences[0].DocNumberRef = "019b8d43-7840-7433-b358-08891b53605c"
	_, err = e.send(t, sellerKey, corr)
	wantRejected(t, err, "E1030")
}

func TestDateRangeLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	_, err := e.client.PurchaseIDs(context.Background(), signerID(buyerKey),
		sign(t, buyerKey, ujp.DateRangeRequest{RequestTimestamp: ts(), DateFrom: "2026-01-01", DateTo: "2026-03-01"}))
	wantRejected(t, err, "E4014")
}

func TestSignedBodyCarriesTheSignedTimestamp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	// A payload without requestTimestamp: the envelope gets the client's
	// clock, the signed payload has none, and the simulator refuses it.
	jws := sign(t, sellerKey, map[string]string{"euid": "x"})
	_, err := e.client.CurrentStatus(context.Background(), signerID(sellerKey), jws)
	wantRejected(t, err, "E40121")
	if !strings.Contains(err.Error(), "requestTimestamp") {
		t.Errorf("error does not say what is wrong: %v", err)
	}
}

// TestConcurrentSends races many sends, each docId sent three times at once:
// exactly one document per docId, the others E1023.
func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	// 60 sends of one user, one per window: the last waits for the others.
	e := newEnv(t, ujp.Config{TurnWait: 60 * time.Second})
	const n = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, dups := map[string]int{}, 0
	for i := 0; i < n; i++ {
		d := invoice(t, "conc-"+strconv.Itoa(i))
		for k := 0; k < 3; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				jws, err := sellerKey.Sign(ujpdoc.Request{RequestTimestamp: ts(), Document: *d})
				if err != nil {
					t.Error(err)
					return
				}
				// 60 sends of one user: the turns space them, and one that
				// still reaches UJP too soon on a loaded machine (E4007,
				// retryable: the pipeline sends it again) is sent again.
				for range 10 {
					_, err = e.client.Send(context.Background(), signerID(sellerKey), "100", jws)
					var rl *ujp.RateLimitedError
					if !errors.As(err, &rl) {
						break
					}
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					accepted[d.Header.DocID]++
				case ujp.IsDuplicate(err):
					dups++
				default:
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	if len(accepted) != n || dups != 2*n || e.count(t) != n {
		t.Fatalf("%d docIds accepted, %d duplicates, %d documents; want %d, %d, %d", len(accepted), dups, e.count(t), n, 2*n, n)
	}
	for id, c := range accepted {
		if c != 1 {
			t.Errorf("%s accepted %d times", id, c)
		}
	}
}

// TestAdvancedClockKeepsTheReplayWindow: after the business clock moves on
// (to pass deadlines), callers still sign with their own clocks.
func TestAdvancedClockKeepsTheReplayWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	must(t, e.sim.AdvanceClock(context.Background(), 40*24*time.Hour))
	if _, err := e.send(t, sellerKey, invoice(t, "clock-1")); err != nil {
		t.Fatal(err)
	}
	st, err := e.client.ServerTime(context.Background(), operator)
	if err != nil || time.Since(st).Abs() > 5*time.Second {
		t.Fatalf("server time after advancing: %v, %v", st, err)
	}
}

// TestCodebooksWaitOutRateLimit: UJP's 1 request/second limit hits a client
// fetching eleven lists; it waits Retry-After and asks again.
func TestCodebooksWaitOutRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, ujp.Config{})
	// UJP answers the operator's next call E4007 (Retry-After: 1),
	// whatever its timing.
	must(t, e.sim.BurstRateLimit(context.Background(), operator.EUJPID, 1))
	start := time.Now()
	cb, err := e.client.Codebooks(context.Background(), operator)
	if err != nil || len(cb.Currencies) != 13 {
		t.Fatalf("Codebooks = %v", err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("did not wait out Retry-After: %s", d)
	}
}

// signerID is the identity a sandbox signer's calls carry.
func signerID(s *ujpsim.SandboxSigner) ujp.Identity {
	return ujp.Identity{EUJPID: s.EUJPID, EDB: s.EDB, SerialNumber: s.Serial()}
}
