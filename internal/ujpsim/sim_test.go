package ujpsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// controlToken is the /_sim token of the simulators under test.
const controlToken = "test-control-token-0123456789"

var (
	once   sync.Once
	seller *ujpsim.SandboxSigner
)

func signer(t testing.TB) *ujpsim.SandboxSigner {
	t.Helper()
	once.Do(func() {
		var err error
		if seller, err = ujpsim.NewSandboxSigner("EUJP-SELLER", ujpsim.TaxSeller); err != nil {
			t.Fatal(err)
		}
	})
	if seller == nil {
		t.Fatal("no signer")
	}
	return seller
}

func newSim(t testing.TB, db *store.DB, opts ujpsim.Options) *ujpsim.Sim {
	t.Helper()
	if opts.ControlToken == "" {
		opts.ControlToken = controlToken
	}
	sim, err := ujpsim.New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// start serves a simulator on db over HTTP and returns a client for it
// that holds the control token. The timeout is generous: 32 concurrent
// sends queue for one SQLite writer, under -race on a loaded machine.
func start(t *testing.T, db *store.DB, opts ujpsim.Options) (*ujpsim.Sim, *httptest.Server, *ujp.Client) {
	t.Helper()
	sim := newSim(t, db, opts)
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	c, err := ujp.NewClient(ujp.Config{BaseURL: srv.URL, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return sim, srv, c
}

// openAgain opens a second store on the database of url, as another
// process would.
func openAgain(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
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

// TestStateSurvivesRestart starts a second simulator on the same database
// (a restarted `denar ujp-sim`, or another `denar serve`): documents,
// certificates and the docId index are there, so a resubmission still
// gets E1023 instead of a second document.
func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		s := signer(t)
		ctx := context.Background()
		sim1, _, c1 := start(t, openAgain(t, url), ujpsim.Options{})
		if _, err := sim1.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		res, err := send(t, c1, s, "persist-1")
		if err != nil {
			t.Fatal(err)
		}
		sim2, _, c2 := start(t, openAgain(t, url), ujpsim.Options{})
		if n, err := sim2.DocumentCount(ctx); err != nil || n != 1 {
			t.Fatalf("the second simulator holds %d documents (%v)", n, err)
		}
		if d, err := sim2.Document(ctx, res.EUID); err != nil || d.Status != ujp.StatusSent || d.DocID != "persist-1" ||
			len(d.History) != 1 || d.History[0].NewStatus.Code != ujp.StatusSent {
			t.Fatalf("document in the second simulator: %+v %v", d, err)
		}
		_, err = send(t, c2, s, "persist-1")
		if !ujp.IsDuplicate(err) || !strings.Contains(err.Error(), res.EUID) {
			t.Fatalf("resubmission to the second simulator: %v", err)
		}
		if _, err := send(t, c2, s, "persist-2"); err != nil {
			t.Fatalf("the certificate registered at the first does not verify at the second: %v", err)
		}
		if _, err := sim2.Document(ctx, "01900000-0000-7000-8000-000000000000"); !errors.Is(err, ujpsim.ErrNotFound) {
			t.Fatalf("unknown EUID: %v, want ErrNotFound", err)
		}
	})
}

func do(t *testing.T, method, url, token, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("X-EUJP-ID", "ADMIN")
	req.Header.Set("X-EDB", ujpsim.TaxSeller)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m, resp.Header
}

func admin(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	code, m, _ := do(t, method, url, controlToken, body)
	return code, m
}

func TestAdminAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := signer(t)
		ctx := context.Background()
		sim, srv, c := start(t, db, ujpsim.Options{})
		if _, err := sim.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		res, err := send(t, c, s, "admin-1")
		if err != nil {
			t.Fatal(err)
		}

		if code, _ := admin(t, "PUT", srv.URL+"/_sim/faults", `{"outage":true}`); code != 200 {
			t.Fatalf("PUT faults: %d", code)
		}
		if code, _ := admin(t, "GET", srv.URL+ujp.PathServerTime, ""); code != 503 {
			t.Fatalf("API during an outage: %d", code)
		}
		if code, m := admin(t, "GET", srv.URL+"/_sim/faults", ""); code != 200 || m["outage"] != true {
			t.Fatalf("/_sim is affected by the outage: %d %v", code, m)
		}
		if code, m := admin(t, "PUT", srv.URL+"/_sim/faults", `{"errorRate":2}`); code != 400 {
			t.Fatalf("error rate 2: %d %v", code, m)
		}
		admin(t, "PUT", srv.URL+"/_sim/faults", `{"latencyMs":0,"rejectSends":{"code":"E5007","count":1}}`)
		if _, err := send(t, c, s, "admin-2"); err == nil || !strings.Contains(err.Error(), "E5007") {
			t.Fatalf("forced rejection over the admin API: %v", err)
		}
		if _, err := send(t, c, s, "admin-2"); err != nil {
			t.Fatalf("the forced rejection was used up, yet: %v", err)
		}

		code, m := admin(t, "POST", srv.URL+"/_sim/documents/"+res.EUID+"/decision", `{"accept":false,"rejectReasonCode":"O-2","comment":"цена"}`)
		if code != 200 || m["status"] != "05" {
			t.Fatalf("decision on the buyer's behalf: %d %v", code, m)
		}
		if code, m := admin(t, "POST", srv.URL+"/_sim/documents/"+res.EUID+"/decision", `{"accept":true}`); code != 409 {
			t.Fatalf("second decision: %d %v", code, m)
		}

		res2, err := send(t, c, s, "admin-3")
		if err != nil {
			t.Fatal(err)
		}
		if code, m := admin(t, "POST", srv.URL+"/_sim/documents/"+res2.EUID+"/auto-accept", ``); code != 200 || m["status"] != "04" {
			t.Fatalf("forced auto-accept: %d %v", code, m)
		}
		if code, _ := admin(t, "POST", srv.URL+"/_sim/clock/advance", `{"seconds":3600}`); code != 200 {
			t.Fatalf("clock advance: %d", code)
		}
		if now, err := sim.Now(ctx); err != nil || now.Before(time.Now().Add(59*time.Minute)) {
			t.Fatalf("clock after advancing: %v %v", now, err)
		}

		if code, _ := admin(t, "POST", srv.URL+"/_sim/companies", `{"taxNumber":"4030000000009","name":"Нова Фирма ДОО","address":{"street":"ул. 1","number":"1","city":"Охрид","zip":"6000"},"countryCode":"MK"}`); code != 200 {
			t.Fatalf("add company: %d", code)
		}
		co, err := c.Company(ctx, ujp.Identity{EUJPID: "X", EDB: ujpsim.TaxSeller}, "4030000000009")
		if err != nil || co.Address.City != "Охрид" {
			t.Fatalf("added company: %+v %v", co, err)
		}
		if code, m := admin(t, "GET", srv.URL+"/_sim/documents/"+res.EUID, ""); code != 200 || m["euid"] != res.EUID {
			t.Fatalf("GET document: %d", code)
		}
		if code, m := admin(t, "GET", srv.URL+"/_sim/documents/no-such-euid", ""); code != 404 {
			t.Fatalf("GET unknown document: %d %v", code, m)
		}
		if code, m := admin(t, "GET", srv.URL+"/_sim/documents/%00%ff", ""); code != 404 {
			t.Fatalf("GET a NUL/invalid UTF-8 EUID: %d %v", code, m)
		}
		code, m = admin(t, "GET", srv.URL+"/_sim/sellers/"+ujpsim.TaxSeller+"/documents", "")
		if docs, _ := m["documents"].([]any); code != 200 || len(docs) != 3 {
			t.Fatalf("seller's documents: %d %v", code, m)
		}
	})
}

// TestControlRequiresToken: every /_sim endpoint answers 401 without the
// configured token, with a wrong one, and when no token is configured at
// all; UJP's own API needs none. Control and the client's certificate
// registration send it.
func TestControlRequiresToken(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	_, srv, _ := start(t, db, ujpsim.Options{})
	routes := []struct{ method, path, body string }{
		{"GET", "/_sim/faults", ""},
		{"PUT", "/_sim/faults", `{"outage":true}`},
		{"POST", "/_sim/certificates", `{"eujpId":"X","edb":"1","certificateDer":""}`},
		{"POST", "/_sim/companies", `{"taxNumber":"4030000000009","name":"X"}`},
		{"GET", "/_sim/clock", ""},
		{"POST", "/_sim/clock/advance", `{"seconds":1}`},
		{"GET", "/_sim/documents/x", ""},
		{"POST", "/_sim/documents/x/decision", `{"accept":true}`},
		{"POST", "/_sim/documents/x/auto-accept", ""},
		{"GET", "/_sim/sellers/" + ujpsim.TaxSeller + "/documents", ""},
		{"POST", "/_sim/sellers/" + ujpsim.TaxSeller + "/outage", `{"on":true}`},
		{"POST", "/_sim/sellers/" + ujpsim.TaxSeller + "/reject-next", `{"code":"E5007","count":1}`},
	}
	for _, r := range routes {
		for _, tok := range []string{"", "wrong", controlToken + "x", strings.TrimSuffix(controlToken, "9")} {
			code, m, h := do(t, r.method, srv.URL+r.path, tok, r.body)
			es, _ := m["errorStatus"].(map[string]any)
			if code != 401 || es["errorCode"] != ujpsim.CodeUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with token %q: %d %v", r.method, r.path, tok, code, m)
			}
		}
	}
	if code, m, _ := do(t, "GET", srv.URL+"/_sim/faults", controlToken, ""); code != 200 || m["outage"] != false {
		t.Fatalf("with the token: %d %v; a refused PUT must have changed nothing", code, m)
	}
	if code, _, _ := do(t, "GET", srv.URL+ujp.PathCompanies+ujpsim.TaxBuyer, "", ""); code != 200 {
		t.Fatalf("UJP's own API without a token: %d", code)
	}

	// No token configured: the control API is closed to everyone.
	closed, err := ujpsim.New(db, ujpsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(closed.Handler())
	defer srv2.Close()
	for _, tok := range []string{"", controlToken} {
		if code, _, _ := do(t, "GET", srv2.URL+"/_sim/faults", tok, ""); code != 401 {
			t.Fatalf("simulator without a token, request with %q: %d", tok, code)
		}
	}

	// The clients send it.
	s := signer(t)
	var ce *ujpsim.ControlError
	if _, err := (ujpsim.Control{BaseURL: srv.URL}).RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); !errors.As(err, &ce) || ce.Code != ujpsim.CodeUnauthorized {
		t.Fatalf("certificate registration without the token: %v", err)
	}
	if _, err := (ujpsim.Control{BaseURL: srv.URL, Token: controlToken}).RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		t.Fatalf("certificate registration with the token: %v", err)
	}
	if err := (ujpsim.Control{BaseURL: srv.URL}).SetSellerOutage(ctx, ujpsim.TaxSeller, true); !errors.As(err, &ce) || ce.Status != 401 {
		t.Fatalf("Control without the token: %v", err)
	}
	if err := (ujpsim.Control{BaseURL: srv.URL, Token: controlToken}).SetSellerOutage(ctx, ujpsim.TaxSeller, true); err != nil {
		t.Fatalf("Control with the token: %v", err)
	}
	if code, _, _ := do(t, "GET", srv.URL+ujp.PathCompanies+ujpsim.TaxBuyer, "", ""); code != 503 {
		t.Fatalf("the seller's outage set through Control: %d", code)
	}
}

func TestPDF(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := signer(t)
		ctx := context.Background()
		sim, _, c := start(t, db, ujpsim.Options{})
		if _, err := sim.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		res, err := send(t, c, s, "pdf-1")
		if err != nil {
			t.Fatal(err)
		}
		jws, _ := s.Sign(ujp.EUIDRequest{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), EUID: res.EUID})
		pdf, err := c.SalesPDF(ctx, s.Identity(), jws)
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
	})
}

func TestInProcessTransport(t *testing.T) {
	t.Parallel()
	s := signer(t)
	sim := newSim(t, storetest.SQLite(t), ujpsim.Options{})
	c, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL,
		HTTPClient: &http.Client{Transport: sim.Transport(), Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.RegisterCertificate(context.Background(), s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		t.Fatal(err)
	}
	if _, err := send(t, c, s, "inproc-1"); err != nil {
		t.Fatal(err)
	}
	// The caller's deadline reaches the handler, as over a network.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = c.Company(ctx, ujp.Identity{EUJPID: "X", EDB: ujpsim.TaxSeller}, ujpsim.TaxNoAnswer)
	if !errors.Is(err, ujp.ErrUnavailable) {
		t.Fatalf("never-answering registry in-process: %v", err)
	}
}

// TestSlowRegistry: the registry answers for TaxSlowRegistry only after
// SlowRegistryDelay; a caller that waits less gets nothing.
func TestSlowRegistry(t *testing.T) {
	t.Parallel()
	sim := newSim(t, storetest.SQLite(t), ujpsim.Options{SlowRegistryDelay: 300 * time.Millisecond})
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

// TestBadText: NUL and invalid UTF-8 wherever a caller can put them (a
// signed payload's fields, headers, paths, control bodies), and counts too
// large to store, are refused with a 4xx on both engines, never a 500 from
// PostgreSQL's types.
func TestBadText(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := signer(t)
		ctx := context.Background()
		sim, srv, c := start(t, db, ujpsim.Options{})
		if _, err := sim.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		for name, mutate := range map[string]func(*ujpdoc.Request){
			"docId":    func(r *ujpdoc.Request) { r.Document.Header.DocID = "a\x00b" },
			"buyerTin": func(r *ujpdoc.Request) { r.Document.Buyer.BuyerTin = "40300\x0000002" },
			"docType":  func(r *ujpdoc.Request) { r.Document.Header.DocType = "1\x0000" },
		} {
			req := doc(t, "bad-"+name)
			mutate(&req)
			jws, err := s.Sign(req)
			if err != nil {
				t.Fatal(err)
			}
			var rej *ujp.RejectedError
			if _, err := c.Send(ctx, s.Identity(), "", jws); !errors.As(err, &rej) || rej.HTTPStatus >= 500 {
				t.Errorf("NUL in %s: %v", name, err)
			}
		}
		jws, _ := s.Sign(ujp.EUIDRequest{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), EUID: "\x00"})
		if _, err := c.CurrentStatus(ctx, s.Identity(), jws); !ujp.IsNotFound(err) {
			var rej *ujp.RejectedError
			if !errors.As(err, &rej) || rej.Code != "E4008" {
				t.Errorf("NUL EUID in a signed read: %v", err)
			}
		}
		bad := s.Identity()
		bad.EDB = "\xff\xfe"
		jws, _ = s.Sign(doc(t, "bad-header"))
		var rej *ujp.RejectedError
		if _, err := c.Send(ctx, bad, "100", jws); !errors.As(err, &rej) || rej.HTTPStatus != 400 {
			t.Errorf("invalid UTF-8 in X-EDB: %v", err)
		}
		for _, r := range []struct{ method, path, body string }{
			{"GET", ujp.PathCompanies + "%00", ""},
			{"GET", ujp.PathCompanies + "%ff", ""},
			{"POST", "/_sim/sellers/%00/outage", `{"on":true}`},
			{"POST", "/_sim/sellers/%ff/reject-next", `{"code":"E5007","count":1}`},
			{"POST", "/_sim/companies", `{"taxNumber":"403\u0000","name":"X"}`},
			{"POST", "/_sim/certificates", `{"eujpId":"\u0000","edb":"1","certificateDer":"AA=="}`},
			{"PUT", "/_sim/faults", `{"outageSellers":{"\u0000":true}}`},
			{"PUT", "/_sim/faults", `{"rejectSends":{"code":"E\u0000","count":1}}`},
			{"PUT", "/_sim/faults", `{"rejectSends":{"code":"E5007","count":5000000000}}`},
			{"POST", "/_sim/sellers/" + ujpsim.TaxSeller + "/reject-next", `{"code":"E5007","count":5000000000}`},
			{"POST", "/_sim/documents/%00/decision", `{"accept":true}`},
			{"POST", "/_sim/documents/%ff/auto-accept", ""},
			{"GET", "/_sim/sellers/%00/documents", ""},
		} {
			code, m, _ := do(t, r.method, srv.URL+r.path, controlToken, r.body)
			if code >= 500 || code == 200 && r.method != "GET" {
				t.Errorf("%s %s: %d %v", r.method, r.path, code, m)
			}
		}
	})
}
