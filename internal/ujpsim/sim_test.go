package ujpsim_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// serve serves a simulator made without start's registrations.
func serve(t testing.TB, sim *ujpsim.Sim) *env {
	t.Helper()
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, sim: sim, url: srv.URL}
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

// control calls /_sim with the token (or another one).
func (e *env) control(method, path, token, body string) answer {
	e.t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return e.raw(method, path, h, []byte(body), 10*time.Second)
}

func who(s *ujpsim.SandboxSigner) map[string]string {
	return map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": s.EDB}
}

// TestStateSurvivesRestart: a second simulator on the same database (a
// restarted `denar ujp-sim`, or another `denar serve`) knows everything the
// first was told or stored: documents with their history and docIds, users,
// certificates, portal privileges, registry entries, faults and the clock.
func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		ctx := context.Background()
		clock := ticking(time.Millisecond)
		opts := ujpsim.Options{Now: clock, Window: time.Millisecond}
		first := start(t, openAgain(t, url), opts)
		s, _ := signers(t)
		euid := first.mustSend(s, example(t, "type-100", "persist-1"))
		for _, step := range []error{
			first.sim.AddUser(ctx, "OPERATOR"),
			first.sim.Grant(ctx, s.EUJPID, s.EDB, ujpsim.PrivilegePDF),
			first.sim.AddCompany(ctx, ujpsim.Company{TaxNumber: "4030000000095", Name: "Нова Фирма ДОО Охрид", CountryCode: "MK",
				Address: ujpsim.CompanyAddress{Street: "ул. 1", Number: "1", City: "Охрид", Zip: "6000"}}),
			first.sim.FailNextCalls(ctx, ujpsim.TaxSmallBiz, ujpsim.CallFault{Count: 3, Kind: ujpsim.FaultStatus, Status: 500, Code: "E5000"}),
			first.sim.RejectNextSellerSends(ctx, ujpsim.TaxSmallBiz, 2, "E5007", ""),
			first.sim.SetCodeListsChanged(ctx, ujpsim.TaxBuyer, true),
			first.sim.BurstRateLimit(ctx, "OPERATOR", 1),
			first.sim.AdvanceClock(ctx, time.Hour),
		} {
			if step != nil {
				t.Fatal(step)
			}
		}
		before, err := first.sim.Faults(ctx)
		if err != nil {
			t.Fatal(err)
		}

		// The second simulator registers nothing of its own.
		second := serve(t, newSim(t, openAgain(t, url), opts))
		if n, err := second.sim.DocumentCount(ctx); err != nil || n != 1 {
			t.Fatalf("the second simulator holds %d documents (%v)", n, err)
		}
		d, err := second.sim.Document(ctx, euid)
		if err != nil || d.Status != "01" || d.DocID != "persist-1" || len(d.History) != 1 || d.History[0].NewStatus.Code != "01" {
			t.Fatalf("the document at the second simulator: %+v %v", d, err)
		}
		// The certificate verifies and the docId is taken.
		wantCode(t, "the docId again at the second simulator", second.send(s, example(t, "type-100", "persist-1")), 409, "E1023")
		second.mustSend(s, example(t, "type-100", "persist-2"))
		// The privilege holds.
		if a := second.signed("/einvoice_api/api/v1/documents/sales-invoice/pdf", s, map[string]any{"euid": euid}, nil); a.status != 200 {
			t.Fatalf("the PDF with DP granted at the first simulator: %d %s", a.status, a.body)
		}
		wantCode(t, "a payload without RD", second.signed(api+"/documents/sales-invoice/payload", s, map[string]any{"euid": euid}, nil), 403, "E1011")
		// The user, and its burst fault.
		op := map[string]string{"X-EUJP-ID": "OPERATOR", "X-EDB": ujpsim.TaxSeller}
		wantCode(t, "the operator's burst", second.raw("GET", api+"/server-time", op, nil, 10*time.Second), 429, "E4007")
		if a := second.raw("GET", api+"/server-time", op, nil, 10*time.Second); a.status != 200 {
			t.Fatalf("the operator added at the first simulator: %d %s", a.status, a.body)
		}
		// The registry entry.
		if a := second.raw("GET", api+"/companies/4030000000095", op, nil, 10*time.Second); a.status != 200 ||
			a.m["company"].(map[string]any)["name"] != "Нова Фирма ДОО Охрид" {
			t.Fatalf("the company added at the first simulator: %d %s", a.status, a.body)
		}
		// The faults.
		after, err := second.sim.Faults(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(before)
		b, _ := json.Marshal(after)
		if !bytes.Equal(a, b) || after.CallFaults[ujpsim.TaxSmallBiz].Count != 3 || !after.CodeListsChanged[ujpsim.TaxBuyer] ||
			after.RejectSellers[ujpsim.TaxSmallBiz].Count != 2 {
			t.Fatalf("faults at the second simulator:\n%s\nwant\n%s", b, a)
		}
		small := map[string]string{"X-EUJP-ID": "OPERATOR", "X-EDB": ujpsim.TaxSmallBiz}
		wantCode(t, "the small business's call fault", second.raw("GET", api+"/server-time", small, nil, 10*time.Second), 500, "E5000")
		// The clock.
		if now, err := second.sim.Now(ctx); err != nil || now.Before(time.Now().Add(59*time.Minute)) {
			t.Fatalf("the second simulator's clock: %v %v", now, err)
		}
		if _, err := second.sim.Document(ctx, "01900000-0000-7000-8000-000000000000"); !errors.Is(err, ujpsim.ErrNotFound) {
			t.Fatalf("an unknown EUID: %v, want ErrNotFound", err)
		}
	})
}

// TestAdminAPI drives a simulator through /_sim: faults (which never hit
// /_sim itself), forced rejections, decisions, the deadline, the clock,
// the registry and the records.
func TestAdminAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, b := signers(t)
		ctx := context.Background()
		euid := e.mustSend(s, example(t, "type-100", "admin-1"))
		ok := func(what string, a answer) answer {
			t.Helper()
			if a.status != 200 {
				t.Fatalf("%s: %d %s", what, a.status, a.body)
			}
			return a
		}
		ok("PUT faults", e.control("PUT", "/_sim/faults", controlToken, `{"outage":true}`))
		if a := e.raw("GET", api+"/server-time", who(s), nil, 10*time.Second); a.status != 503 {
			t.Fatalf("the API during an outage: %d", a.status)
		}
		if a := ok("GET faults during the outage", e.control("GET", "/_sim/faults", controlToken, "")); a.m["outage"] != true {
			t.Fatalf("faults: %s", a.body)
		}
		wantCode(t, "an error rate of 2", e.control("PUT", "/_sim/faults", controlToken, `{"errorRate":2}`), 400, "E4000")
		// Faults of one seller replace the whole configuration too: the
		// outage ends, the seller's own starts, its lists change.
		ok("PUT seller faults", e.control("PUT", "/_sim/faults", controlToken,
			`{"outageSellers":{"`+ujpsim.TaxSeller+`":true},"codeListsChanged":{"`+ujpsim.TaxBuyer+`":true},"rejectSellers":{"`+ujpsim.TaxBuyer+`":{"code":"E5007","count":2}}}`))
		if a := e.raw("GET", api+"/server-time", who(s), nil, 10*time.Second); a.status != 503 {
			t.Fatalf("the seller during its outage: %d", a.status)
		}
		if a := e.raw("GET", api+"/server-time", who(b), nil, 10*time.Second); a.status != 200 {
			t.Fatalf("the buyer during the seller's outage: %d", a.status)
		}
		a := ok("GET seller faults", e.control("GET", "/_sim/faults", controlToken, ""))
		var f struct {
			Outage           bool
			OutageSellers    map[string]bool
			CodeListsChanged map[string]bool
			RejectSellers    map[string]ujpsim.ForcedRejection
		}
		if err := json.Unmarshal(a.body, &f); err != nil || f.Outage || !f.OutageSellers[ujpsim.TaxSeller] || len(f.OutageSellers) != 1 ||
			!f.CodeListsChanged[ujpsim.TaxBuyer] || f.RejectSellers[ujpsim.TaxBuyer].Count != 2 || f.RejectSellers[ujpsim.TaxBuyer].Code != "E5007" {
			t.Fatalf("seller faults read back: %s", a.body)
		}
		ok("PUT no faults", e.control("PUT", "/_sim/faults", controlToken, `{}`))
		ok("forced rejection", e.control("PUT", "/_sim/faults", controlToken, `{"rejectSends":{"code":"E5007","count":1}}`))
		wantCode(t, "the forced rejection", e.send(s, example(t, "type-100", "admin-2")), 422, "E5007")
		second := e.mustSend(s, example(t, "type-100", "admin-2"))
		wantCode(t, "an unknown reject reason", e.control("POST", "/_sim/documents/"+second+"/decision", controlToken,
			`{"accept":false,"rejectReasonCode":"NOPE"}`), 400, "E1002")

		a = ok("a rejection for the buyer", e.control("POST", "/_sim/documents/"+euid+"/decision", controlToken,
			`{"accept":false,"rejectReasonCode":"O-2","comment":"цена"}`))
		if a.m["status"] != "05" {
			t.Fatalf("after the rejection: %s", a.body)
		}
		wantCode(t, "a second decision", e.control("POST", "/_sim/documents/"+euid+"/decision", controlToken, `{"accept":true}`), 409, "E1016")
		third := e.mustSend(s, example(t, "type-100", "admin-3"))
		if a := ok("auto-accept", e.control("POST", "/_sim/documents/"+third+"/auto-accept", controlToken, "")); a.m["status"] != "04" {
			t.Fatalf("after the auto-acceptance: %s", a.body)
		}
		// The buyer reads the auto-acceptance in its feed.
		feed := e.signed(api+"/documents/purchase-invoice/changes", b, map[string]any{"date": time.Now().In(skopje).Format(time.DateOnly)}, nil)
		if feed.status != 200 || !strings.Contains(string(feed.body), third) || !strings.Contains(string(feed.body), `"code":"04"`) {
			t.Fatalf("the buyer's feed: %d %s", feed.status, feed.body)
		}
		ok("clock", e.control("POST", "/_sim/clock/advance", controlToken, `{"seconds":3600}`))
		if now, err := e.sim.Now(ctx); err != nil || now.Before(time.Now().Add(59*time.Minute)) {
			t.Fatalf("the clock after advancing: %v %v", now, err)
		}
		wantCode(t, "the clock backwards", e.control("POST", "/_sim/clock/advance", controlToken, `{"seconds":-1}`), 400, "E4000")

		ok("add a company", e.control("POST", "/_sim/companies", controlToken,
			`{"taxNumber":"4030000000095","name":"Нова Фирма ДОО","address":{"street":"ул. 1","number":"1","city":"Охрид","zip":"6000"},"countryCode":"MK"}`))
		if a := e.raw("GET", api+"/companies/4030000000095", who(s), nil, 10*time.Second); a.status != 200 ||
			a.m["company"].(map[string]any)["address"].(map[string]any)["city"] != "Охрид" {
			t.Fatalf("the added company: %d %s", a.status, a.body)
		}
		if a := ok("a document", e.control("GET", "/_sim/documents/"+euid, controlToken, "")); a.m["euid"] != euid {
			t.Fatalf("document: %s", a.body)
		}
		wantCode(t, "an unknown document", e.control("GET", "/_sim/documents/no-such-euid", controlToken, ""), 404, "E4008")
		wantCode(t, "a NUL and invalid UTF-8 EUID", e.control("GET", "/_sim/documents/%00%ff", controlToken, ""), 404, "E4008")
		a = ok("the seller's documents", e.control("GET", "/_sim/sellers/"+ujpsim.TaxSeller+"/documents", controlToken, ""))
		if docs, _ := a.m["documents"].([]any); len(docs) != 3 {
			t.Fatalf("the seller's documents: %s", a.body)
		}
	})
}

// TestAddCompanyChecksEDB: a registry entry takes a valid ЕДБ only (13
// digits, the 13th the check digit), through /_sim and the Go method.
func TestAddCompanyChecksEDB(t *testing.T) {
	t.Parallel()
	e := start(t, storetest.SQLite(t), ujpsim.Options{})
	ctx := context.Background()
	for _, tax := range []string{"4030000000002", "4030000000090", "403000000009", "40300000000955", "403000000009X"} {
		body := `{"taxNumber":"` + tax + `","name":"Нова Фирма ДОО","countryCode":"MK"}`
		wantCode(t, "company "+tax, e.control("POST", "/_sim/companies", controlToken, body), 400, "E4000")
		if err := e.sim.AddCompany(ctx, ujpsim.Company{TaxNumber: tax, Name: "X"}); err == nil {
			t.Errorf("AddCompany(%s) accepted", tax)
		}
		if a := e.raw("GET", api+"/companies/"+tax, map[string]string{"X-EUJP-ID": "EUJP-SELLER", "X-EDB": ujpsim.TaxSeller}, nil, 10*time.Second); a.status != 404 {
			t.Errorf("%s stored: %d %s", tax, a.status, a.body)
		}
	}
	s, _ := signers(t)
	for name, err := range map[string]error{
		"certificate": func() error {
			_, err := e.sim.RegisterCertificate(ctx, "EUJP-X", "4030000000002", s.Cert.Raw)
			return err
		}(),
		"grant":  e.sim.Grant(ctx, s.EUJPID, "4030000000002", "DP"),
		"revoke": e.sim.Revoke(ctx, s.EUJPID, "4030000000002", "DP"),
	} {
		if err == nil || !strings.Contains(err.Error(), "check digit") {
			t.Errorf("%s for 4030000000002: %v", name, err)
		}
	}
	if err := e.sim.AddCompany(ctx, ujpsim.Company{TaxNumber: "4030000375897", Name: "Вистинска Фирма"}); err != nil {
		t.Fatalf("a real ЕДБ: %v", err)
	}
}

// TestControlRequiresToken: the /_sim routes answer 401 without the
// configured token, with a wrong one, and when no token is configured at
// all, and change nothing; UJP's own API needs none; Control sends it.
// (TestEveryControlRouteRequiresToken walks every registered route.)
func TestControlRequiresToken(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	ctx := context.Background()
	clock := ticking(time.Millisecond)
	e := start(t, db, ujpsim.Options{Now: clock, Window: time.Millisecond})
	s, _ := signers(t)
	euid := e.mustSend(s, example(t, "type-100", "token-1"))
	routes := []struct{ method, path, body string }{
		{"GET", "/_sim/faults", ""},
		{"PUT", "/_sim/faults", `{"outage":true}`},
		{"GET", "/_sim/rate-limited", ""},
		{"POST", "/_sim/users", `{"eujpId":"INTRUDER"}`},
		{"GET", "/_sim/users/" + s.EUJPID + "/privileges", ""},
		{"POST", "/_sim/privileges/grant", `{"eujpId":"` + s.EUJPID + `","edb":"` + s.EDB + `","privileges":["DP"]}`},
		{"POST", "/_sim/privileges/revoke", `{"eujpId":"` + s.EUJPID + `","edb":"` + s.EDB + `","privileges":["DP"]}`},
		{"POST", "/_sim/certificates", `{"eujpId":"INTRUDER","edb":"` + s.EDB + `","certificateDer":"` + base64.StdEncoding.EncodeToString(s.Cert.Raw) + `"}`},
		{"POST", "/_sim/companies", `{"taxNumber":"4030000000095","name":"X"}`},
		{"GET", "/_sim/clock", ""},
		{"POST", "/_sim/clock/advance", `{"seconds":3600}`},
		{"GET", "/_sim/documents/" + euid, ""},
		{"POST", "/_sim/documents/" + euid + "/decision", `{"accept":true}`},
		{"POST", "/_sim/documents/" + euid + "/auto-accept", ""},
		{"POST", "/_sim/documents/" + euid + "/seller-storno", `{}`},
		{"GET", "/_sim/sellers/" + ujpsim.TaxSeller + "/documents", ""},
		{"POST", "/_sim/sellers/" + ujpsim.TaxSeller + "/outage", `{"on":true}`},
		{"POST", "/_sim/sellers/" + ujpsim.TaxSeller + "/reject-next", `{"code":"E5007","count":1}`},
		{"POST", "/_sim/sellers/" + ujpsim.TaxSeller + "/fail-next", `{"kind":"hang","count":1}`},
		{"POST", "/_sim/sellers/" + ujpsim.TaxSeller + "/code-lists", `{"changed":true}`},
		{"POST", "/_sim/users/" + s.EUJPID + "/rate-limit-burst", `{"count":5}`},
		{"POST", "/_sim/buyers/" + ujpsim.TaxBuyer + "/incoming", `{}`},
		{"GET", "/_sim/no-such-route", ""},
	}
	// A simulator configured without a token.
	closedSim, err := ujpsim.New(db, ujpsim.Options{Now: clock, Window: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closed := serve(t, closedSim)
	for _, r := range routes {
		for _, tok := range []string{"", "wrong", controlToken + "x", strings.TrimSuffix(controlToken, "9"), " " + controlToken} {
			for _, at := range []*env{e, closed} {
				a := at.control(r.method, r.path, tok, r.body)
				if a.status != 401 || a.code() != ujpsim.CodeUnauthorized || !strings.HasPrefix(a.hdr.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("%s %s with token %q: %d %s", r.method, r.path, tok, a.status, a.body)
				}
			}
		}
		if a := closed.control(r.method, r.path, controlToken, r.body); a.status != 401 {
			t.Errorf("%s %s at a simulator without a token: %d %s", r.method, r.path, a.status, a.body)
		}
	}
	// Nothing changed.
	if f, err := e.sim.Faults(ctx); err != nil || f.Outage || len(f.OutageSellers)+len(f.RejectSellers)+len(f.CallFaults)+len(f.CodeListsChanged) > 0 {
		t.Fatalf("a refused request changed the faults: %+v %v", f, err)
	}
	if d, err := e.sim.Document(ctx, euid); err != nil || d.Status != "01" {
		t.Fatalf("a refused request moved the document: %+v %v", d.Status, err)
	}
	if n, err := e.sim.DocumentCount(ctx); err != nil || n != 1 {
		t.Fatalf("%d documents after refused requests (%v)", n, err)
	}
	if ps, err := e.sim.Privileges(ctx, s.EUJPID); err != nil || len(ps) != 0 {
		t.Fatalf("a refused grant: %v %v", ps, err)
	}
	wantCode(t, "a user a refused request tried to add", e.raw("GET", api+"/server-time", map[string]string{"X-EUJP-ID": "INTRUDER", "X-EDB": s.EDB}, nil, 10*time.Second), 401, "E1010")
	if now, err := e.sim.Now(ctx); err != nil || now.After(time.Now().Add(30*time.Minute)) {
		t.Fatalf("a refused request moved the clock: %v %v", now, err)
	}
	if a := e.control("GET", "/_sim/faults", controlToken, ""); a.status != 200 {
		t.Fatalf("with the token: %d %s", a.status, a.body)
	}
	if a := e.raw("GET", api+"/companies/"+ujpsim.TaxBuyer, who(s), nil, 10*time.Second); a.status != 200 {
		t.Fatalf("UJP's own API without a token: %d %s", a.status, a.body)
	}
	var ce *ujpsim.ControlError
	if err := (ujpsim.Control{BaseURL: e.url}).SetSellerOutage(ctx, ujpsim.TaxSeller, true); !errors.As(err, &ce) || ce.Status != 401 || ce.Code != ujpsim.CodeUnauthorized {
		t.Fatalf("Control without the token: %v", err)
	}
	if err := (ujpsim.Control{BaseURL: e.url, Token: controlToken}).SetSellerOutage(ctx, ujpsim.TaxSeller, true); err != nil {
		t.Fatalf("Control with the token: %v", err)
	}
	if a := e.raw("GET", api+"/companies/"+ujpsim.TaxBuyer, who(s), nil, 10*time.Second); a.status != 503 {
		t.Fatalf("the seller's outage set through Control: %d", a.status)
	}
}

// pdfInfo reads a literal string entry (/Title, /Subject) of a PDF's
// document information, decoding PDF escapes and UTF-16BE with a BOM.
func pdfInfo(pdf []byte, key string) string {
	i := bytes.Index(pdf, []byte("/"+key+" ("))
	if i < 0 {
		return ""
	}
	var out []byte
	depth := 0
	for p := i + len(key) + 3; p < len(pdf); p++ {
		c := pdf[p]
		switch {
		case c == '\\' && p+1 < len(pdf):
			p++
			switch n := pdf[p]; n {
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			default:
				if n >= '0' && n <= '7' {
					v := 0
					for k := 0; k < 3 && p < len(pdf) && pdf[p] >= '0' && pdf[p] <= '7'; k++ {
						v = v*8 + int(pdf[p]-'0')
						p++
					}
					p--
					out = append(out, byte(v))
				} else {
					out = append(out, n)
				}
			}
		case c == '(':
			depth++
			out = append(out, c)
		case c == ')' && depth == 0:
			if len(out) >= 2 && out[0] == 0xFE && out[1] == 0xFF {
				u := make([]uint16, 0, len(out)/2)
				for k := 2; k+1 < len(out); k += 2 {
					u = append(u, uint16(out[k])<<8|uint16(out[k+1]))
				}
				return string(utf16.Decode(u))
			}
			return string(out)
		case c == ')':
			depth--
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return ""
}

// TestPDF: sales-invoice/pdf and purchase-invoice/pdf answer a real PDF of
// the document: embedded fonts with a Unicode map (selectable Cyrillic),
// the QR code as an image, and the document named in its information (the
// document number in the title, the EUID in the subject).
func TestPDF(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, b := signers(t)
		ctx := context.Background()
		doc := example(t, "type-100", "pdf-1")
		doc["document"].(map[string]any)["header"].(map[string]any)["docNumber"] = "Ф-2026/0042"
		euid := e.mustSend(s, doc)
		for _, x := range []*ujpsim.SandboxSigner{s, b} {
			if err := e.sim.Grant(ctx, x.EUJPID, x.EDB, ujpsim.PrivilegePDF); err != nil {
				t.Fatal(err)
			}
		}
		for path, x := range map[string]*ujpsim.SandboxSigner{"/documents/sales-invoice/pdf": s, "/documents/purchase-invoice/pdf": b} {
			a := e.signed(api+path, x, map[string]any{"euid": euid}, nil)
			s64, _ := a.m["pdfBase64"].(string)
			pdf, err := base64.StdEncoding.DecodeString(s64)
			if a.status != 200 || err != nil {
				t.Fatalf("%s: %d %.300s (%v)", path, a.status, a.body, err)
			}
			for _, want := range []string{"%PDF-1.", "/Subtype /Image", "/FontFile2", "/ToUnicode", "%%EOF"} {
				if !bytes.Contains(pdf, []byte(want)) {
					t.Errorf("%s: the PDF lacks %q", path, want)
				}
			}
			if title, subject := pdfInfo(pdf, "Title"), pdfInfo(pdf, "Subject"); !strings.Contains(title, "Ф-2026/0042") || !strings.Contains(subject, euid) {
				t.Errorf("%s: title %q, subject %q; want the document number and the EUID", path, title, subject)
			}
		}
		// Another company's document is not there for it.
		other := example(t, "type-100", "pdf-2")
		otherEUID := e.mustSend(s, other)
		stranger, err := ujpsim.NewSandboxSigner("EUJP-STRANGER", ujpsim.TaxSmallBiz)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.sim.RegisterCertificate(ctx, stranger.EUJPID, stranger.EDB, stranger.Cert.Raw); err != nil {
			t.Fatal(err)
		}
		if err := e.sim.Grant(ctx, stranger.EUJPID, stranger.EDB, ujpsim.PrivilegePDF); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "another company's PDF", e.signed(api+"/documents/sales-invoice/pdf", stranger, map[string]any{"euid": otherEUID}, nil), 404, "E4008")
	})
}

// TestInProcessTransport: through Transport(), without a listener, a
// send is stored and answered; the caller's deadline and cancellation
// reach the handler (a registry that never answers, a call that hangs),
// the client's own timeout too, and a dropped connection is a broken
// response, as over a network.
func TestInProcessTransport(t *testing.T) {
	t.Parallel()
	sim := newSim(t, storetest.SQLite(t), ujpsim.Options{Now: ticking(time.Millisecond), Window: time.Millisecond})
	s, _ := signers(t)
	ctx := context.Background()
	if _, err := sim.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sim: sim, url: ujpsim.InProcessBaseURL, transport: sim.Transport()}
	euid := e.mustSend(s, example(t, "type-100", "inproc-1"))
	if d, err := sim.Document(ctx, euid); err != nil || d.DocID != "inproc-1" {
		t.Fatalf("the document sent in process: %+v %v", d, err)
	}
	client := &http.Client{Transport: sim.Transport()}
	get := func(ctx context.Context, c *http.Client, path string) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", ujpsim.InProcessBaseURL+path, nil)
		req.Header.Set("X-EUJP-ID", s.EUJPID)
		req.Header.Set("X-EDB", s.EDB)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			return errors.New(resp.Status)
		}
		return err
	}
	// bounded runs f and fails the test when it does not return in time
	// (a handler that never sees the caller give up).
	bounded := func(what string, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still waiting; the caller's context did not reach the handler", what)
			return nil
		}
	}
	dl, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := bounded("deadline", func() error { return get(dl, client, api+"/companies/"+ujpsim.TaxNoAnswer) }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a registry that never answers, with a deadline: %v", err)
	}
	if err := sim.FailNextCalls(ctx, s.EDB, ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultHang}); err != nil {
		t.Fatal(err)
	}
	cctx, cancelNow := context.WithCancel(ctx)
	go func() {
		// Cancel once the call is held: the fault is spent when it is.
		for {
			f, err := sim.Faults(ctx)
			if err != nil || f.CallFaults[s.EDB].Count == 0 {
				cancelNow()
				return
			}
			select {
			case <-cctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	if err := bounded("cancel", func() error { return get(cctx, client, api+"/server-time") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("a hanging call, cancelled: %v", err)
	}
	timed := &http.Client{Transport: sim.Transport(), Timeout: 200 * time.Millisecond}
	var ne net.Error
	if err := bounded("client timeout", func() error { return get(ctx, timed, api+"/companies/"+ujpsim.TaxNoAnswer) }); !errors.As(err, &ne) ||
		!ne.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the client's timeout: %v, want a net.Error that is a timeout", err)
	}
	// The lost response: stored, and the caller sees a broken connection.
	if err := sim.FailNextCalls(ctx, s.EDB, ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultLost, Path: "/sales-invoices/send"}); err != nil {
		t.Fatal(err)
	}
	if a := e.send(s, example(t, "type-100", "inproc-lost")); !errors.Is(a.err, io.ErrUnexpectedEOF) {
		t.Fatalf("a lost response in process: %d %v", a.status, a.err)
	}
	if n, err := sim.DocumentCount(ctx); err != nil || n != 2 {
		t.Fatalf("%d documents after the lost response (%v)", n, err)
	}
	wantCode(t, "the retry", e.send(s, example(t, "type-100", "inproc-lost")), 409, "E1023")
}

// TestSlowRegistry: the registry answers for TaxSlowRegistry only after
// SlowRegistryDelay; a caller that waits less gets nothing.
func TestSlowRegistry(t *testing.T) {
	t.Parallel()
	sim := newSim(t, storetest.SQLite(t), ujpsim.Options{SlowRegistryDelay: 300 * time.Millisecond, Now: ticking(time.Millisecond), Window: time.Millisecond})
	s, _ := signers(t)
	if err := sim.AddUser(context.Background(), s.EUJPID); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sim: sim, url: ujpsim.InProcessBaseURL, transport: sim.Transport()}
	if a := e.raw("GET", api+"/companies/"+ujpsim.TaxSlowRegistry, who(s), nil, 50*time.Millisecond); a.err == nil {
		t.Fatalf("within 50 ms: %d %s", a.status, a.body)
	}
	began := time.Now()
	a := e.raw("GET", api+"/companies/"+ujpsim.TaxSlowRegistry, who(s), nil, 10*time.Second)
	if a.status != 200 || a.m["company"].(map[string]any)["name"] != "Тест Бавен Купувач ДОО Куманово" {
		t.Fatalf("waiting: %d %s %v", a.status, a.body, a.err)
	}
	if d := time.Since(began); d < 300*time.Millisecond {
		t.Fatalf("answered after %s, before the delay", d)
	}
	if a := e.raw("GET", api+"/companies/"+ujpsim.TaxBuyer, who(s), nil, 100*time.Millisecond); a.status != 200 {
		t.Fatalf("another number is not slow: %d %v", a.status, a.err)
	}
}

// direct serves one request to the handler as given: header values and
// paths a network client would refuse to send reach it too.
func direct(h http.Handler, method, target string, hdr map[string]string, body []byte) answer {
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.URL.Path, req.URL.RawPath = target, ""
	for k, v := range hdr {
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := answer{status: rec.Code, body: rec.Body.Bytes(), hdr: rec.Header()}
	_ = json.Unmarshal(a.body, &a.m)
	return a
}

// TestBadText: NUL and invalid UTF-8 wherever a caller can put them (the
// identity headers, a signed payload's fields, paths, control bodies), and
// counts too large to store, answer a UJP code with a 4xx on both
// engines, never a 500 from PostgreSQL's types, and store nothing.
func TestBadText(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, b := signers(t)
		ctx := context.Background()
		h := e.sim.Handler()
		ok := e.mustSend(s, example(t, "type-100", "bad-ok"))

		// Headers, sent as they are.
		for _, c := range []struct {
			what   string
			hdr    map[string]string
			status int
			code   string
		}{
			{"NUL in X-EDB", map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": "403000000000\x00"}, 400, "E4023"},
			{"invalid UTF-8 in X-EDB", map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": "\xff\xfe"}, 400, "E4023"},
			{"NUL in X-EUJP-ID", map[string]string{"X-EUJP-ID": "EUJP\x00", "X-EDB": s.EDB}, 400, "E4022"},
			{"invalid UTF-8 in X-EUJP-ID", map[string]string{"X-EUJP-ID": "EUJP\xff", "X-EDB": s.EDB}, 400, "E4022"},
		} {
			if a := direct(h, "GET", api+"/server-time", c.hdr, nil); a.status != c.status || a.code() != c.code {
				t.Errorf("%s: %d %s; want %d %s", c.what, a.status, a.body, c.status, c.code)
			}
		}
		signedBody := func(payload map[string]any) []byte {
			ts := ujpsim.FormatTimestamp(time.Now())
			payload["requestTimestamp"] = ts
			jws, err := s.Sign(payload)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(map[string]string{"requestTimestamp": ts, "jws": jws})
			return out
		}
		hdr := func(kv ...string) map[string]string {
			m := map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": s.EDB, "X-SERIAL-NUMBER": s.Serial(), "X-DOC-TYPE-CODE": "100"}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			return m
		}
		doc := func(docID string) []byte { return signedBody(example(t, "type-100", docID)) }
		for _, c := range []struct {
			what   string
			hdr    map[string]string
			body   []byte
			status int
			code   string
		}{
			{"NUL in X-SERIAL-NUMBER", hdr("X-SERIAL-NUMBER", s.Serial()+"\x00"), doc("bad-1"), 400, "E4021"},
			{"invalid UTF-8 in X-SERIAL-NUMBER", hdr("X-SERIAL-NUMBER", "\xff"+s.Serial()), doc("bad-2"), 400, "E4021"},
			{"NUL in X-DOC-TYPE-CODE", hdr("X-DOC-TYPE-CODE", "100\x00"), doc("bad-3"), 400, "E50079"},
			{"invalid UTF-8 in X-DOC-TYPE-CODE", hdr("X-DOC-TYPE-CODE", "\xff"), doc("bad-4"), 400, "E50079"},
			{"invalid UTF-8 in the body", hdr(), []byte("{\"requestTimestamp\":\"\xff\",\"jws\":\"a.b.c\"}"), 400, "E4024"},
			{"a NUL in the body", hdr(), []byte("{\"requestTimestamp\":\"2026\",\"jws\":\"\x00\"}"), 400, "E4024"},
			{"NUL bytes for a body", hdr(), []byte("\x00\x00\x00"), 400, "E4024"},
		} {
			if a := direct(h, "POST", ujpsim.PathSend, c.hdr, c.body); a.status != c.status || a.code() != c.code {
				t.Errorf("%s: %d %s; want %d %s", c.what, a.status, a.body, c.status, c.code)
			}
		}
		// A signed payload's fields: the JWS carries any bytes.
		for _, c := range []struct {
			field string
			set   func(map[string]any)
			code  string
		}{
			{"docId", func(d map[string]any) { d["header"].(map[string]any)["docId"] = "a\x00b" }, "E4013"},
			{"docNumber", func(d map[string]any) { d["header"].(map[string]any)["docNumber"] = "F\x00" }, "E4013"},
			{"docType", func(d map[string]any) { d["header"].(map[string]any)["docType"] = "1\x0000" }, "E50079"},
			{"buyerTin", func(d map[string]any) { d["buyer"].(map[string]any)["buyerTin"] = "40300\x000000010" }, "E4013"},
			{"buyerName", func(d map[string]any) { d["buyer"].(map[string]any)["buyerName"] = "Тест\x00" }, "E10006"},
			{"sellerTin", func(d map[string]any) { d["seller"].(map[string]any)["sellerTin"] = "\x00" }, "E4020"},
		} {
			m := example(t, "type-100", "bad-"+c.field)
			c.set(m["document"].(map[string]any))
			if a := direct(h, "POST", ujpsim.PathSend, hdr(), signedBody(m)); a.status != 400 || a.code() != c.code {
				t.Errorf("NUL in %s: %d %s; want 400 %s", c.field, a.status, a.body, c.code)
			}
		}
		// Invalid UTF-8 inside the signed payload (a JWS carries any
		// bytes): not JSON text, E40131, whatever the field.
		for _, field := range []string{"docId", "docItemDesc", "sellerEmail"} {
			m := example(t, "type-100", "bad-raw")
			ts := ujpsim.FormatTimestamp(time.Now())
			m["requestTimestamp"] = ts
			switch field {
			case "docItemDesc":
				m["document"].(map[string]any)["docItems"].([]any)[0].(map[string]any)["docItemDesc"] = "bad-raw"
			case "sellerEmail":
				m["document"].(map[string]any)["seller"].(map[string]any)["sellerEmail"] = "bad-raw"
			}
			payload, _ := json.Marshal(m)
			payload = bytes.Replace(payload, []byte(`"bad-raw"`), []byte("\"bad-\xff\xfe\""), 1)
			jws, err := s.Sign(payload)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]string{"requestTimestamp": ts, "jws": jws})
			if a := direct(h, "POST", ujpsim.PathSend, hdr(), body); a.status != 400 || a.code() != "E40131" {
				t.Errorf("invalid UTF-8 in %s inside the signed payload: %d %s", field, a.status, a.body)
			}
		}

		// Signed reads.
		for _, c := range []struct {
			path    string
			payload map[string]any
			who     *ujpsim.SandboxSigner
			status  int
			code    string
		}{
			{"/documents/sales-invoice/current-status", map[string]any{"euid": "\x00"}, s, 404, "E4008"},
			{"/documents/sales-invoice/current-status", map[string]any{"euid": ok + "\xff"}, s, 404, "E4008"},
			{"/documents/sales-invoice/status", map[string]any{"euid": ok, "dateFrom": "2026\x00"}, s, 400, "E4010"},
			{"/documents/sales-invoice/changes", map[string]any{"date": "\xff"}, s, 400, "E4010"},
			{"/documents/sales-invoice/ids", map[string]any{"dateFrom": "\x00", "dateTo": "2026-01-01"}, s, 400, "E4010"},
			{"/documents/purchase-invoice/accept-reject", map[string]any{"euid": "\x00", "isAccepted": true}, b, 404, "E4008"},
			{"/documents/purchase-invoice/accept-reject", map[string]any{"euid": ok, "isAccepted": false, "rejectReasonCode": "O-\x00"}, b, 400, "E1002"},
		} {
			if a := e.signed(api+c.path, c.who, c.payload, nil); a.status != c.status || a.code() != c.code {
				t.Errorf("%s %q: %d %s; want %d %s", c.path, c.payload, a.status, a.body, c.status, c.code)
			}
		}
		// A comment with NUL is text like any other: stored and read back.
		if a := e.signed(api+"/documents/purchase-invoice/accept-reject", b, map[string]any{"euid": ok, "isAccepted": true, "comment": "во\x00ред"}, nil); a.status != 200 {
			t.Errorf("a decision with a NUL in its comment: %d %s", a.status, a.body)
		}

		// Paths.
		for _, p := range []string{"/companies/%00", "/companies/%ff", "/subsidiary/%00", "/doc-type-x-tax-indicator/%ff", "/correction-reason/%00"} {
			a := e.raw("GET", api+p, who(s), nil, 10*time.Second)
			if a.status < 400 || a.status >= 500 || a.code() == "" {
				t.Errorf("GET %s: %d %s", p, a.status, a.body)
			}
		}
		// The control API.
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/_sim/sellers/%00/outage", `{"on":true}`},
			{"POST", "/_sim/sellers/%ff/reject-next", `{"code":"E5007","count":1}`},
			{"POST", "/_sim/sellers/%00/fail-next", `{"kind":"hang","count":1}`},
			{"POST", "/_sim/sellers/%ff/code-lists", `{"changed":true}`},
			{"POST", "/_sim/sellers/" + s.EDB + "/fail-next", `{"kind":"status","status":500,"code":"E\u0000","count":1}`},
			{"POST", "/_sim/companies", `{"taxNumber":"403\u0000","name":"X"}`},
			{"POST", "/_sim/companies", `{"taxNumber":"4030000000095","name":"X\u0000"}`},
			{"POST", "/_sim/certificates", `{"eujpId":"\u0000","edb":"` + s.EDB + `","certificateDer":"AA=="}`},
			{"POST", "/_sim/users", `{"eujpId":"A\u0000"}`},
			{"POST", "/_sim/users", "{\"eujpId\":\"A\xff\"}"},
			{"POST", "/_sim/privileges/grant", `{"eujpId":"` + s.EUJPID + `","edb":"403\u0000","privileges":["DP"]}`},
			{"POST", "/_sim/privileges/grant", `{"eujpId":"` + s.EUJPID + `","edb":"` + s.EDB + `","privileges":["D\u0000"]}`},
			{"POST", "/_sim/users/%00/rate-limit-burst", `{"count":1}`},
			{"POST", "/_sim/users/" + s.EUJPID + "/rate-limit-burst", `{"count":5000000000}`},
			{"PUT", "/_sim/faults", `{"outageSellers":{"\u0000":true}}`},
			{"PUT", "/_sim/faults", "{\"codeListsChanged\":{\"\xff\":true}}"},
			{"PUT", "/_sim/faults", `{"rejectSends":{"code":"E\u0000","count":1}}`},
			{"PUT", "/_sim/faults", `{"rejectSends":{"code":"E5007","count":5000000000}}`},
			{"PUT", "/_sim/faults", `{"callFaults":{"` + s.EDB + `":{"kind":"status","status":500,"code":"E\u0000","count":1}}}`},
			{"POST", "/_sim/sellers/" + s.EDB + "/reject-next", `{"code":"E5007","count":5000000000}`},
			{"POST", "/_sim/documents/%00/decision", `{"accept":true}`},
			{"POST", "/_sim/documents/%ff/auto-accept", ""},
			{"POST", "/_sim/documents/%00/seller-storno", `{}`},
			{"POST", "/_sim/buyers/%00/incoming", `{}`},
			{"POST", "/_sim/buyers/" + b.EDB + "/incoming", `{"docId":"d\u0000"}`},
			{"POST", "/_sim/buyers/" + b.EDB + "/incoming", `{"transactionDate":"2026-11-2\u0000"}`},
		} {
			a := e.control(r.method, r.path, controlToken, r.body)
			if a.status < 400 || a.status >= 500 || a.code() == "" {
				t.Errorf("%s %s %s: %d %s", r.method, r.path, r.body, a.status, a.body)
			}
		}
		for _, p := range []string{"/_sim/sellers/%00/documents", "/_sim/users/%ff/privileges", "/_sim/documents/%00%ff"} {
			if a := e.control("GET", p, controlToken, ""); a.status >= 500 {
				t.Errorf("GET %s: %d %s", p, a.status, a.body)
			}
		}

		// Nothing was stored but the one good document.
		var docs, companies, users, faults int
		for q, n := range map[string]*int{"SELECT COUNT(*) FROM ujpsim_documents WHERE doc_id <> 'bad-ok'": &docs,
			"SELECT COUNT(*) FROM ujpsim_companies": &companies, "SELECT COUNT(*) FROM ujpsim_users": &users, "SELECT COUNT(*) FROM ujpsim_seller_faults": &faults} {
			if err := db.ReadDB().QueryRowContext(ctx, q).Scan(n); err != nil {
				t.Fatal(err)
			}
		}
		if docs+companies+faults != 0 || users != 2 {
			t.Fatalf("stored by bad requests: %d documents, %d companies, %d users (want the 2 registered), %d seller faults", docs, companies, users, faults)
		}
		if f, err := e.sim.Faults(ctx); err != nil || f.RejectSends != nil || f.Outage {
			t.Fatalf("global faults after bad requests: %+v %v", f, err)
		}
	})
}
