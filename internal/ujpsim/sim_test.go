package ujpsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

var (
	once   sync.Once
	seller *ujpsim.SandboxSigner
)

func signer(t *testing.T) *ujpsim.SandboxSigner {
	t.Helper()
	once.Do(func() {
		var err error
		if seller, err = ujpsim.NewSandboxSigner("EUJP-SELLER", ujpsim.TaxSeller); err != nil {
			t.Fatal(err)
		}
	})
	return seller
}

func start(t *testing.T, opts ujpsim.Options) (*ujpsim.Sim, *httptest.Server, *ujp.Client) {
	t.Helper()
	sim, err := ujpsim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	c, err := ujp.NewClient(ujp.Config{BaseURL: srv.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return sim, srv, c
}

func doc(t testing.TB, docID string) ujpdoc.Request {
	t.Helper()
	today := time.Now().In(ujpdoc.Skopje).Format(time.DateOnly)
	d := ujpdoc.Document{
		Header: ujpdoc.Header{DocType: "100", DocTypeName: "Фактура", DocDate: today, DocTurnoverDate: today, DocNumber: "F-" + docID, DocID: docID},
		Seller: ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: ujpsim.TaxSeller, SellerName: "Тест Продавач ДООЕЛ Скопје",
			SellerAddress: ujpdoc.Address{StreetAddress: "бул. Партизански одреди", StreetNumber: "1", PostalCode: "1000", City: "Скопје"}},
		Buyer: ujpdoc.Buyer{BuyerCCode: "MK", BuyerCName: "Северна Македонија", BuyerTin: ujpsim.TaxBuyer, BuyerName: "Тест Купувач ДОО Скопје",
			BuyerAddress: ujpdoc.Address{StreetAddress: "ул. Македонија", StreetNumber: "2", PostalCode: "1000", City: "Скопје"}},
		DocPayment: ujpdoc.Payment{DocPaymentTypeCode: "P10", DocPaymentTypeDesc: "Плаќање во готово", DocCurrency: "MKD", DocCurrencyCode: "MKD"},
		DocItems: []ujpdoc.Item{{DocItemLineNo: 1, DocItemDesc: "Леб", DocItemQty: ujpdoc.A("10"), DocItemUnitOriginalPriceWoVat: ujpdoc.A("40"),
			DocItemVatGroup: "DDV-B", DocItemTaxIndicator: "DDV-B"}},
	}
	if err := ujpdoc.ComputeTotals(&d, ujpdoc.Snapshot()); err != nil {
		t.Fatal(err)
	}
	return ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), Document: d}
}

func send(t *testing.T, c *ujp.Client, s *ujpsim.SandboxSigner, docID string) (*ujp.SendResult, error) {
	t.Helper()
	jws, err := s.Sign(doc(t, docID))
	if err != nil {
		t.Fatal(err)
	}
	return c.Send(context.Background(), s.Identity(), "100", jws)
}

// TestStatePersists restarts the simulator on its state file: documents,
// certificates and the docId index survive, so a resubmission after our
// server crashed still gets E1023 instead of a second document.
func TestStatePersists(t *testing.T) {
	s := signer(t)
	path := filepath.Join(t.TempDir(), "sim.json")
	sim1, _, c1 := start(t, ujpsim.Options{StatePath: path})
	if _, err := sim1.RegisterCertificate(s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		t.Fatal(err)
	}
	res, err := send(t, c1, s, "persist-1")
	if err != nil {
		t.Fatal(err)
	}
	sim2, _, c2 := start(t, ujpsim.Options{StatePath: path})
	if sim2.DocumentCount() != 1 {
		t.Fatalf("restarted simulator holds %d documents", sim2.DocumentCount())
	}
	if d, ok := sim2.Document(res.EUID); !ok || d.Status != ujp.StatusSent || d.DocID != "persist-1" {
		t.Fatalf("document after restart: %+v", d)
	}
	_, err = send(t, c2, s, "persist-1")
	if !ujp.IsDuplicate(err) {
		t.Fatalf("resubmission after restart: %v", err)
	}
	if _, err := send(t, c2, s, "persist-2"); err != nil {
		t.Fatalf("the restored certificate does not verify: %v", err)
	}
}

func do(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("X-EUJP-ID", "ADMIN")
	req.Header.Set("X-EDB", ujpsim.TaxSeller)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func TestAdminAPI(t *testing.T) {
	s := signer(t)
	sim, srv, c := start(t, ujpsim.Options{})
	if _, err := sim.RegisterCertificate(s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		t.Fatal(err)
	}
	res, err := send(t, c, s, "admin-1")
	if err != nil {
		t.Fatal(err)
	}

	if code, _ := do(t, "PUT", srv.URL+"/_sim/faults", `{"outage":true}`); code != 200 {
		t.Fatalf("PUT faults: %d", code)
	}
	if code, _ := do(t, "GET", srv.URL+ujp.PathServerTime, ""); code != 503 {
		t.Fatalf("API during an outage: %d", code)
	}
	if code, m := do(t, "GET", srv.URL+"/_sim/faults", ""); code != 200 || m["outage"] != true {
		t.Fatalf("/_sim is affected by the outage: %d %v", code, m)
	}
	do(t, "PUT", srv.URL+"/_sim/faults", `{"latencyMs":0,"rejectSends":{"code":"E5007","count":1}}`)
	if _, err := send(t, c, s, "admin-2"); err == nil || !strings.Contains(err.Error(), "E5007") {
		t.Fatalf("forced rejection over the admin API: %v", err)
	}

	code, m := do(t, "POST", srv.URL+"/_sim/documents/"+res.EUID+"/decision", `{"accept":false,"rejectReasonCode":"O-2","comment":"цена"}`)
	if code != 200 || m["status"] != "05" {
		t.Fatalf("decision on the buyer's behalf: %d %v", code, m)
	}
	if code, m := do(t, "POST", srv.URL+"/_sim/documents/"+res.EUID+"/decision", `{"accept":true}`); code != 409 {
		t.Fatalf("second decision: %d %v", code, m)
	}

	res2, err := send(t, c, s, "admin-3")
	if err != nil {
		t.Fatal(err)
	}
	if code, m := do(t, "POST", srv.URL+"/_sim/documents/"+res2.EUID+"/auto-accept", ``); code != 200 || m["status"] != "04" {
		t.Fatalf("forced auto-accept: %d %v", code, m)
	}
	if code, _ := do(t, "POST", srv.URL+"/_sim/clock/advance", `{"seconds":3600}`); code != 200 || sim.Now().Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("clock advance: %d", code)
	}

	if code, _ := do(t, "POST", srv.URL+"/_sim/companies", `{"taxNumber":"4030000000009","name":"Нова Фирма ДОО","address":{"street":"ул. 1","number":"1","city":"Охрид","zip":"6000"},"countryCode":"MK"}`); code != 200 {
		t.Fatalf("add company: %d", code)
	}
	co, err := c.Company(context.Background(), ujp.Identity{EUJPID: "X", EDB: ujpsim.TaxSeller}, "4030000000009")
	if err != nil || co.Address.City != "Охрид" {
		t.Fatalf("added company: %+v %v", co, err)
	}
	if code, m := do(t, "GET", srv.URL+"/_sim/documents/"+res.EUID, ""); code != 200 || m["euid"] != res.EUID {
		t.Fatalf("GET document: %d", code)
	}
}

func TestPDF(t *testing.T) {
	s := signer(t)
	sim, _, c := start(t, ujpsim.Options{})
	if _, err := sim.RegisterCertificate(s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		t.Fatal(err)
	}
	res, err := send(t, c, s, "pdf-1")
	if err != nil {
		t.Fatal(err)
	}
	jws, _ := s.Sign(ujp.EUIDRequest{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), EUID: res.EUID})
	pdf, err := c.SalesPDF(context.Background(), s.Identity(), jws)
	if err != nil {
		t.Fatal(err)
	}
	// The QR code is an embedded image and the Go fonts are embedded as
	// TrueType with a Unicode map (what makes the Cyrillic selectable).
	for _, want := range []string{"%PDF-1.", "/Subtype /Image", "/FontFile2", "/ToUnicode"} {
		if !bytes.Contains(pdf, []byte(want)) {
			t.Errorf("PDF lacks %q", want)
		}
	}
}

func TestInProcessTransport(t *testing.T) {
	s := signer(t)
	sim, err := ujpsim.New(ujpsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL, HTTPClient: &http.Client{Transport: sim.Transport(), Timeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RegisterCertificate(context.Background(), s.Identity(), s.Cert.Raw); err != nil {
		t.Fatal(err)
	}
	if _, err := send(t, c, s, "inproc-1"); err != nil {
		t.Fatal(err)
	}
	_, err = c.Company(context.Background(), ujp.Identity{EUJPID: "X", EDB: ujpsim.TaxSeller}, ujpsim.TaxNoAnswer)
	if !errors.Is(err, ujp.ErrUnavailable) {
		t.Fatalf("never-answering registry in-process: %v", err)
	}
}

// TestSlowRegistry: the registry answers for TaxSlowRegistry only after
// SlowRegistryDelay; a caller that waits less gets nothing.
func TestSlowRegistry(t *testing.T) {
	sim, err := ujpsim.New(ujpsim.Options{SlowRegistryDelay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	who := ujp.Identity{EUJPID: "X", EDB: ujpsim.TaxSeller}
	client := func(timeout time.Duration) *ujp.Client {
		c, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL, HTTPClient: &http.Client{Transport: sim.Transport(), Timeout: timeout}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := client(50*time.Millisecond).Company(context.Background(), who, ujpsim.TaxSlowRegistry); !errors.Is(err, ujp.ErrUnavailable) {
		t.Fatalf("within 50 ms: %v", err)
	}
	start := time.Now()
	c, err := client(5*time.Second).Company(context.Background(), who, ujpsim.TaxSlowRegistry)
	if err != nil || c.Name != "Тест Бавен Купувач ДОО Куманово" {
		t.Fatalf("waiting: %+v %v", c, err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatal("answered before the delay")
	}
}
