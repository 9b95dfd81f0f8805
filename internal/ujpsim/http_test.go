package ujpsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

func TestMain(m *testing.M) { storetest.Main(m) }

const controlToken = "test-control-token-0123456789"

var (
	once   sync.Once
	seller *ujpsim.SandboxSigner
	buyerS *ujpsim.SandboxSigner
)

func signers(t testing.TB) (*ujpsim.SandboxSigner, *ujpsim.SandboxSigner) {
	t.Helper()
	once.Do(func() {
		seller, _ = ujpsim.NewSandboxSigner("EUJP-SELLER", ujpsim.TaxSeller)
		buyerS, _ = ujpsim.NewSandboxSigner("EUJP-BUYER", ujpsim.TaxBuyer)
	})
	if seller == nil || buyerS == nil {
		t.Fatal("no signers")
	}
	return seller, buyerS
}

// ticking is a clock that moves a window forward on every reading, so a
// test's consecutive calls of one user never meet the rate limit unless it
// means to.
func ticking(window time.Duration) func() time.Time {
	base := time.Now()
	var n atomic.Int64
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * window) }
}

type env struct {
	t   testing.TB
	sim *ujpsim.Sim
	url string
	// transport, when set, carries every request (the in-process one).
	transport http.RoundTripper
}

// start serves a simulator on db with the seller and buyer registered
// (certificates) and, unless opts says otherwise, a ticking clock.
func start(t testing.TB, db *store.DB, opts ujpsim.Options) *env {
	t.Helper()
	if opts.ControlToken == "" {
		opts.ControlToken = controlToken
	}
	if opts.Now == nil {
		opts.Window = time.Millisecond
		opts.Now = ticking(time.Millisecond)
	}
	sim, err := ujpsim.New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, b := signers(t)
	for _, x := range []*ujpsim.SandboxSigner{s, b} {
		if _, err := sim.RegisterCertificate(context.Background(), x.EUJPID, x.EDB, x.Cert.Raw); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(sim.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, sim: sim, url: srv.URL}
}

type answer struct {
	status int
	body   []byte
	hdr    http.Header
	m      map[string]any
	err    error
}

func (a answer) code() string {
	es, _ := a.m["errorStatus"].(map[string]any)
	c, _ := es["errorCode"].(string)
	return c
}

func (e *env) raw(method, path string, hdr map[string]string, body []byte, timeout time.Duration) answer {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.url+path, bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	hc := &http.Client{Timeout: timeout, Transport: e.transport}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: b, hdr: resp.Header}
	_ = json.Unmarshal(b, &a.m)
	return a
}

func ident(s *ujpsim.SandboxSigner) map[string]string {
	return map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": s.EDB, "X-SERIAL-NUMBER": s.Serial()}
}

// signed sends payload (with a fresh requestTimestamp) signed by s.
func (e *env) signed(path string, s *ujpsim.SandboxSigner, payload map[string]any, hdr map[string]string) answer {
	e.t.Helper()
	ts := ujpsim.FormatTimestamp(time.Now())
	payload["requestTimestamp"] = ts
	jws, err := s.Sign(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	h := ident(s)
	for k, v := range hdr {
		h[k] = v
	}
	body, _ := json.Marshal(map[string]string{"requestTimestamp": ts, "jws": jws})
	return e.raw("POST", path, h, body, 30*time.Second)
}

// example reads a valid example document, gives it docID and dates it
// today (Skopje): issued, supplied and referenced today, so its buyer's
// deadline is ahead whenever the test runs.
func example(t testing.TB, name, docID string) map[string]any {
	t.Helper()
	b, err := os.ReadFile("testdata/documents/valid/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	today := time.Now().In(skopje).Format(time.DateOnly)
	doc := m["document"].(map[string]any)
	h := doc["header"].(map[string]any)
	h["docId"], h["docDate"] = docID, today
	if h["docTurnoverDate"] != nil {
		h["docTurnoverDate"] = today
	}
	refs, _ := doc["docReferences"].([]any)
	for _, r := range refs {
		if r.(map[string]any)["docDateRef"] != nil {
			r.(map[string]any)["docDateRef"] = today
		}
	}
	return m
}

var skopje = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Skopje")
	if err != nil {
		panic(err)
	}
	return loc
}()

func (e *env) send(s *ujpsim.SandboxSigner, doc map[string]any) answer {
	e.t.Helper()
	dt := doc["document"].(map[string]any)["header"].(map[string]any)["docType"].(string)
	return e.signed(ujpsim.PathSend, s, doc, map[string]string{"X-DOC-TYPE-CODE": dt})
}

func (e *env) mustSend(s *ujpsim.SandboxSigner, doc map[string]any) string {
	e.t.Helper()
	a := e.send(s, doc)
	euid, _ := a.m["euid"].(string)
	if a.status != 200 || euid == "" {
		e.t.Fatalf("send: %d %s", a.status, a.body)
	}
	return euid
}

const api = "/einvoice_api/api/v1"

func wantCode(t *testing.T, what string, a answer, status int, code string) {
	t.Helper()
	if a.status != status || a.code() != code {
		t.Fatalf("%s: %d %s %v; want %d %s", what, a.status, a.body, a.err, status, code)
	}
}

// TestSendExamplesOverHTTP: every valid example is accepted through the
// JSON Receiver; one invalid example answers every problem in one body.
func TestSendExamplesOverHTTP(t *testing.T) {
	t.Parallel()
	e := start(t, storetest.SQLite(t), ujpsim.Options{})
	s, _ := signers(t)
	for _, name := range []string{"type-100", "type-110", "impact-prenesen", "impact-osloboden", "impact-nula", "advance"} {
		e.mustSend(s, example(t, name, "http-"+name))
	}
	doc := example(t, "type-100", "http-bad")
	h := doc["document"].(map[string]any)["header"].(map[string]any)
	h["docTypeName"] = "Нешто"
	doc["document"].(map[string]any)["docTotals"].(map[string]any)["docNetAmount"] = 1
	a := e.send(s, doc)
	wantCode(t, "two problems", a, 400, "E1020")
	list := a.m["errorStatus"].(map[string]any)["errorList"].([]any)
	if len(list) < 2 || a.m["errorStatus"].(map[string]any)["errorPropertyMap"] == nil {
		t.Fatalf("all problems in one answer: %s", a.body)
	}
	unknown := example(t, "type-100", "http-unknown-field")
	unknown["document"].(map[string]any)["header"].(map[string]any)["extra"] = 1
	wantCode(t, "an unknown field", e.send(s, unknown), 400, "E4013")
	wantCode(t, "X-DOC-TYPE-CODE differs", e.signed(ujpsim.PathSend, s, example(t, "type-100", "x"), map[string]string{"X-DOC-TYPE-CODE": "110"}), 400, "E50079")
}

// TestIdentity: every service requires X-EUJP-ID and X-EDB, a 13-digit
// X-EDB, a registered user, and on signed calls an X-SERIAL-NUMBER in the
// configured format.
func TestIdentity(t *testing.T) {
	t.Parallel()
	db := storetest.SQLite(t)
	clock := ticking(time.Millisecond)
	e := start(t, db, ujpsim.Options{Now: clock, Window: time.Millisecond})
	s, _ := signers(t)
	get := func(path string, hdr map[string]string) answer { return e.raw("GET", path, hdr, nil, 10*time.Second) }
	for _, path := range []string{api + "/server-time", api + "/tax-indicators", api + "/companies/" + ujpsim.TaxBuyer} {
		wantCode(t, path+" without headers", get(path, nil), 400, "E4016")
		wantCode(t, path+" without X-EDB", get(path, map[string]string{"X-EUJP-ID": s.EUJPID}), 400, "E4016")
		wantCode(t, path+" X-EDB of 12 digits", get(path, map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": "403000000001"}), 400, "E4023")
		wantCode(t, path+" unknown user", get(path, map[string]string{"X-EUJP-ID": "NOBODY", "X-EDB": ujpsim.TaxSeller}), 401, "E1010")
		if a := get(path, map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": ujpsim.TaxSeller}); a.status != 200 {
			t.Fatalf("%s with identity: %d %s", path, a.status, a.body)
		}
	}
	if err := e.sim.AddUser(context.Background(), "OPERATOR"); err != nil {
		t.Fatal(err)
	}
	if a := get(api+"/server-time", map[string]string{"X-EUJP-ID": "OPERATOR", "X-EDB": ujpsim.TaxSeller}); a.status != 200 {
		t.Fatalf("a user added out of band: %d %s", a.status, a.body)
	}
	hexSerial := strings.ToUpper(s.Cert.SerialNumber.Text(16)) + "Z"
	wantCode(t, "a serial that is not decimal", e.signed(api+"/documents/sales-invoice/ids", s, map[string]any{"dateFrom": "2026-01-01", "dateTo": "2026-01-02"},
		map[string]string{"X-SERIAL-NUMBER": hexSerial}), 400, "E4021")
	wantCode(t, "no serial", e.signed(api+"/documents/sales-invoice/ids", s, map[string]any{"dateFrom": "2026-01-01", "dateTo": "2026-01-02"},
		map[string]string{"X-SERIAL-NUMBER": ""}), 400, "E4016")

	hexSim := start(t, db, ujpsim.Options{SerialFormat: ujpsim.SerialHex, Now: clock, Window: time.Millisecond})
	hex := strings.ToUpper(s.Cert.SerialNumber.Text(16))
	if a := hexSim.signed(api+"/documents/sales-invoice/ids", s, map[string]any{"dateFrom": "2026-01-01", "dateTo": "2026-01-02"},
		map[string]string{"X-SERIAL-NUMBER": hex}); a.status != 200 {
		t.Fatalf("hex serial at a hex simulator: %d %s", a.status, a.body)
	}
	wantCode(t, "a decimal serial at a hex simulator", hexSim.signed(api+"/documents/sales-invoice/ids", s,
		map[string]any{"dateFrom": "2026-01-01", "dateTo": "2026-01-02"}, map[string]string{"X-SERIAL-NUMBER": s.Serial() + "G"}), 400, "E4021")
	wantCode(t, "a month and a day", e.signed(api+"/documents/sales-invoice/ids", s, map[string]any{"dateFrom": "2026-01-01", "dateTo": "2026-02-02"}, nil), 400, "E4014")
}

// TestRateLimitAcrossSimulators: one request per window per user, judged
// on arrival times, across two simulators on one store, on both engines:
// 429 E4007 with Retry-After. A burst answers E4007 whatever the timing.
func TestRateLimitAcrossSimulators(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, url string) {
		var clock atomic.Int64
		base := time.Now()
		now := func() time.Time { return base.Add(time.Duration(clock.Load())) }
		a := start(t, openAgain(t, url), ujpsim.Options{Now: now, Window: 200 * time.Millisecond})
		b := start(t, openAgain(t, url), ujpsim.Options{Now: now, Window: 200 * time.Millisecond})
		s, buy := signers(t)
		who := map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": ujpsim.TaxSeller}
		other := map[string]string{"X-EUJP-ID": buy.EUJPID, "X-EDB": ujpsim.TaxBuyer}
		get := func(e *env, h map[string]string) answer {
			return e.raw("GET", api+"/server-time", h, nil, 10*time.Second)
		}
		if r := get(a, who); r.status != 200 {
			t.Fatalf("first call: %d %s", r.status, r.body)
		}
		r := get(b, who)
		wantCode(t, "the same user at the other simulator in the same window", r, 429, "E4007")
		if r.hdr.Get("Retry-After") != "1" {
			t.Fatalf("Retry-After %q", r.hdr.Get("Retry-After"))
		}
		if r := get(b, other); r.status != 200 {
			t.Fatalf("another user: %d", r.status)
		}
		clock.Add(int64(200 * time.Millisecond))
		if r := get(b, who); r.status != 200 {
			t.Fatalf("a window later: %d %s", r.status, r.body)
		}
		wantCode(t, "again at the first simulator", get(a, who), 429, "E4007")
		// Calls the store applies in another order than they arrived are
		// judged on their arrivals too: one that arrived a window before
		// the latest accepted call passes, one within a window of it not.
		latest := clock.Load()
		clock.Store(latest - int64(250*time.Millisecond))
		if r := get(a, who); r.status != 200 {
			t.Fatalf("a call that arrived a window before the latest: %d %s", r.status, r.body)
		}
		clock.Store(latest - int64(150*time.Millisecond))
		wantCode(t, "a call that arrived within a window before the latest", get(b, who), 429, "E4007")
		clock.Store(latest + int64(150*time.Millisecond))
		wantCode(t, "within a window after the latest", get(b, who), 429, "E4007")
		clock.Store(latest + int64(200*time.Millisecond))
		if r := get(b, who); r.status != 200 {
			t.Fatalf("a window after the latest: %d %s", r.status, r.body)
		}

		if err := a.sim.BurstRateLimit(context.Background(), s.EUJPID, 2); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			clock.Add(int64(time.Second))
			wantCode(t, "burst call", get(b, who), 429, "E4007")
			_ = i
		}
		clock.Add(int64(time.Second))
		if r := get(a, who); r.status != 200 {
			t.Fatalf("after the burst: %d", r.status)
		}
		// Every refusal is counted against its user, by both simulators.
		if got, err := b.sim.RateLimited(context.Background()); err != nil || len(got) != 1 || got[s.EUJPID] != 6 {
			t.Fatalf("refusals counted: %v, %v", got, err)
		}
		a1 := a.control("GET", "/_sim/rate-limited", controlToken, "")
		if a1.status != 200 || a1.m["total"] != float64(6) {
			t.Fatalf("GET /_sim/rate-limited: %d %s", a1.status, a1.body)
		}
	})
}

func openAgain(t *testing.T, url string) *store.DB {
	t.Helper()
	db := storetest.Open(t, url)
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestDuplicateWithoutEUID: a second send of a docId answers E1023 with
// the reference's text, and the EUID of the stored document appears
// nowhere in the answer.
func TestDuplicateWithoutEUID(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, _ := signers(t)
		euid := e.mustSend(s, example(t, "type-100", "dup-1"))
		a := e.send(s, example(t, "type-100", "dup-1"))
		wantCode(t, "the same docId", a, 409, "E1023")
		if a.m["errorStatus"].(map[string]any)["errorMessage"] != "Invoice already exists for that ID" || bytes.Contains(a.body, []byte(euid)) {
			t.Fatalf("E1023 answer: %s", a.body)
		}
		if n, _ := e.sim.DocumentCount(context.Background()); n != 1 {
			t.Fatalf("%d documents", n)
		}
	})
}

// TestPrivileges: the PDF needs DP, payloads RD, the ASiC container DA,
// each for the caller's company; without one, 403 E1011.
func TestPrivileges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, b := signers(t)
		euid := e.mustSend(s, example(t, "type-100", "priv-1"))
		ctx := context.Background()
		calls := []struct {
			path, priv string
			who        *ujpsim.SandboxSigner
			body       map[string]any
		}{
			{api + "/documents/sales-invoice/pdf", ujpsim.PrivilegePDF, s, map[string]any{"euid": euid}},
			{api + "/documents/sales-invoice/payload", ujpsim.PrivilegePayload, s, map[string]any{"euid": euid}},
			{api + "/documents/sales-invoice/payload/list", ujpsim.PrivilegePayload, s, map[string]any{"euids": []string{euid}}},
			{api + "/documents/purchase-invoice/payload", ujpsim.PrivilegePayload, b, map[string]any{"euid": euid}},
			{api + "/documents/purchase-invoice/pdf", ujpsim.PrivilegePDF, b, map[string]any{"euid": euid}},
			{api + "/documents/invoice", ujpsim.PrivilegeASiC, s, map[string]any{"euid": euid}},
		}
		for _, c := range calls {
			wantCode(t, c.path+" without "+c.priv, e.signed(c.path, c.who, c.body, nil), 403, "E1011")
			// The privilege is judged before what is asked: a document that
			// does not exist is E1011 too, so a harmless read probes it.
			unknown := map[string]any{"euid": "00000000-0000-7000-8000-000000000000"}
			if _, list := c.body["euids"]; list {
				unknown = map[string]any{"euids": []string{"00000000-0000-7000-8000-000000000000"}}
			}
			wantCode(t, c.path+" of an unknown document without "+c.priv, e.signed(c.path, c.who, unknown, nil), 403, "E1011")
		}
		for _, c := range calls {
			if err := e.sim.Grant(ctx, c.who.EUJPID, c.who.EDB, c.priv); err != nil {
				t.Fatal(err)
			}
			if a := e.signed(c.path, c.who, c.body, nil); a.status != 200 {
				t.Fatalf("%s with %s: %d %s", c.path, c.priv, a.status, a.body)
			}
			if _, list := c.body["euids"]; !list {
				wantCode(t, c.path+" of an unknown document with "+c.priv,
					e.signed(c.path, c.who, map[string]any{"euid": "00000000-0000-7000-8000-000000000000"}, nil), 404, "E4008")
			}
		}
		if err := e.sim.Revoke(ctx, s.EUJPID, s.EDB, ujpsim.PrivilegePDF); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "revoked", e.signed(calls[0].path, s, calls[0].body, nil), 403, "E1011")
	})
}

func (e *env) status(euid string) string {
	e.t.Helper()
	d, err := e.sim.Document(context.Background(), euid)
	if err != nil {
		e.t.Fatal(err)
	}
	return d.Status
}

func stornoOf(t *testing.T, e *env, origEUID, docID string) map[string]any {
	t.Helper()
	m := example(t, "storno", docID)
	m["document"].(map[string]any)["docReferences"].([]any)[0].(map[string]any)["docNumberRef"] = origEUID
	return m
}

// TestStornoStricterReading: a storno is accepted only for an original in
// 01 (E1016 otherwise); it is stored in 01 and the original moves to 07
// only when the buyer accepts the storno; a second storno meanwhile is
// E1022; a rejected storno leaves the original as it was. A correction
// moves its original to 09 at once.
func TestStornoStricterReading(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, b := signers(t)
		ctx := context.Background()
		orig := e.mustSend(s, example(t, "type-100", "st-orig"))
		st := e.mustSend(s, stornoOf(t, e, orig, "st-1"))
		if e.status(orig) != "01" || e.status(st) != "01" {
			t.Fatalf("after the storno: original %s, storno %s", e.status(orig), e.status(st))
		}
		wantCode(t, "a second storno while the first awaits the buyer", e.send(s, stornoOf(t, e, orig, "st-2")), 400, "E1022")
		if a := e.signed(api+"/documents/purchase-invoice/accept-reject", b, map[string]any{"euid": st, "isAccepted": true}, nil); a.status != 200 {
			t.Fatalf("the buyer accepts the storno: %d %s", a.status, a.body)
		}
		if e.status(orig) != "07" || e.status(st) != "03" {
			t.Fatalf("after the buyer's confirmation: original %s, storno %s", e.status(orig), e.status(st))
		}
		wantCode(t, "a storno of a voided original", e.send(s, stornoOf(t, e, orig, "st-3")), 400, "E1026")

		accepted := e.mustSend(s, example(t, "type-100", "st-accepted"))
		if err := e.sim.Decide(ctx, accepted, true, "", ""); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "a storno of an accepted original", e.send(s, stornoOf(t, e, accepted, "st-4")), 400, "E1016")

		rejectedStorno := e.mustSend(s, example(t, "type-100", "st-r-orig"))
		st5 := e.mustSend(s, stornoOf(t, e, rejectedStorno, "st-5"))
		if err := e.sim.Decide(ctx, st5, false, "O-2", ""); err != nil {
			t.Fatal(err)
		}
		if e.status(rejectedStorno) != "01" {
			t.Fatalf("a rejected storno moved its original to %s", e.status(rejectedStorno))
		}
		auto := e.mustSend(s, example(t, "type-100", "st-auto"))
		st6 := e.mustSend(s, stornoOf(t, e, auto, "st-6"))
		if err := e.sim.AutoAccept(ctx, st6); err != nil {
			t.Fatal(err)
		}
		if e.status(auto) != "07" {
			t.Fatalf("an auto-accepted storno left its original in %s", e.status(auto))
		}
		wantCode(t, "a storno of an unknown EUID", e.send(s, stornoOf(t, e, "019b8d43-7840-7433-b358-08891b53605c", "st-7")), 400, "E1021")

		// Correction: the original moves to 09 at once, from 03 too.
		corrected := e.mustSend(s, example(t, "type-100", "co-orig"))
		if err := e.sim.Decide(ctx, corrected, true, "", ""); err != nil {
			t.Fatal(err)
		}
		corr := example(t, "correction", "co-1")
		corr["document"].(map[string]any)["docReferences"].([]any)[0].(map[string]any)["docNumberRef"] = corrected
		e.mustSend(s, corr)
		if e.status(corrected) != "09" {
			t.Fatalf("a corrected original is %s", e.status(corrected))
		}
		corr2 := example(t, "correction", "co-2")
		corr2["document"].(map[string]any)["docReferences"].([]any)[0].(map[string]any)["docNumberRef"] = corrected
		wantCode(t, "a correction of a corrected original", e.send(s, corr2), 400, "E1028")
		corr3 := example(t, "correction", "co-3")
		corr3["document"].(map[string]any)["docReferences"].([]any)[0].(map[string]any)["docNumberRef"] = "019b8d43-7840-7433-b358-08891b53605c"
		wantCode(t, "a correction of nothing", e.send(s, corr3), 400, "E1030")
	})
}

// TestFaults: each fault, aimed at the seller's calls only.
func TestFaults(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, b := signers(t)
		ctx := context.Background()
		st := func(who *ujpsim.SandboxSigner) answer {
			return e.raw("GET", api+"/server-time", map[string]string{"X-EUJP-ID": who.EUJPID, "X-EDB": who.EDB}, nil, 10*time.Second)
		}
		for _, c := range []struct {
			fault ujpsim.CallFault
			check func(answer) bool
		}{
			{ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultStatus, Status: 500, Code: "E5007"}, func(a answer) bool { return a.status == 500 && a.code() == "E5007" }},
			{ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultStatus, Status: 500, Code: "E5000"}, func(a answer) bool { return a.status == 500 && a.code() == "E5000" }},
			{ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultStatus, Status: 502}, func(a answer) bool { return a.status == 502 && a.code() == "" && a.m["success"] == false }},
			{ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultStatus, Status: 500, Shape: ujpsim.ShapeSpring}, func(a answer) bool {
				return a.status == 500 && a.m["error"] == "Internal Server Error" && a.m["path"] == api+"/server-time" && a.m["errorStatus"] == nil
			}},
			{ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultStatus, Status: 503, Shape: ujpsim.ShapeHTML}, func(a answer) bool {
				return a.status == 503 && strings.Contains(string(a.body), "<html>") && strings.HasPrefix(a.hdr.Get("Content-Type"), "text/html")
			}},
		} {
			if err := e.sim.FailNextCalls(ctx, ujpsim.TaxSeller, c.fault); err != nil {
				t.Fatal(err)
			}
			if a := st(b); a.status != 200 {
				t.Fatalf("another company during %+v: %d", c.fault, a.status)
			}
			if a := st(s); !c.check(a) {
				t.Fatalf("%+v: %d %s", c.fault, a.status, a.body)
			}
			if a := st(s); a.status != 200 {
				t.Fatalf("the call after %+v: %d", c.fault, a.status)
			}
		}
		// A timeout: the call hangs until the client gives up.
		if err := e.sim.FailNextCalls(ctx, ujpsim.TaxSeller, ujpsim.CallFault{Count: 1, Kind: ujpsim.FaultHang}); err != nil {
			t.Fatal(err)
		}
		if a := e.raw("GET", api+"/server-time", map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": s.EDB}, nil, 200*time.Millisecond); a.err == nil {
			t.Fatalf("a hanging call answered %d", a.status)
		}
		// A send stored and its response lost: the connection drops, or the
		// call hangs; the document is at UJP either way.
		for i, kind := range []string{ujpsim.FaultLost, ujpsim.FaultLostHang} {
			if err := e.sim.FailNextCalls(ctx, ujpsim.TaxSeller, ujpsim.CallFault{Count: 1, Kind: kind, Path: "/sales-invoices/send"}); err != nil {
				t.Fatal(err)
			}
			before, _ := e.sim.DocumentCount(ctx)
			doc := example(t, "type-100", "lost-"+kind)
			ts := ujpsim.FormatTimestamp(time.Now())
			doc["requestTimestamp"] = ts
			jws, _ := s.Sign(doc)
			body, _ := json.Marshal(map[string]string{"requestTimestamp": ts, "jws": jws})
			h := ident(s)
			h["X-DOC-TYPE-CODE"] = "100"
			if a := e.raw("POST", ujpsim.PathSend, h, body, 500*time.Millisecond); a.err == nil {
				t.Fatalf("%s: the send answered %d %s", kind, a.status, a.body)
			}
			if after, _ := e.sim.DocumentCount(ctx); after != before+1 {
				t.Fatalf("%s: %d documents before, %d after", kind, before, after)
			}
			wantCode(t, "the retry", e.send(s, example(t, "type-100", "lost-"+kind)), 409, "E1023")
			_ = i
		}
		// A missing portal privilege is a privilege not granted (TestPrivileges).

		// The faults of every caller, one setter each: an error rate of 1
		// fails every call with 500 E5000, a latency outlasts the
		// caller's patience, forced rejections reject the next sends only.
		if err := e.sim.SetErrorRate(ctx, 1); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "an error rate of 1", st(b), 500, "E5000")
		if err := e.sim.SetErrorRate(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if a := st(b); a.status != 200 {
			t.Fatalf("an error rate of 0: %d %s", a.status, a.body)
		}
		if err := e.sim.SetErrorRate(ctx, 1.5); err == nil {
			t.Fatal("an error rate of 1.5 accepted")
		}
		if err := e.sim.SetLatency(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if a := e.raw("GET", api+"/server-time", who(b), nil, 200*time.Millisecond); a.err == nil {
			t.Fatalf("a call with 5s of latency answered within 200ms: %d", a.status)
		}
		if err := e.sim.SetLatency(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if a := st(b); a.status != 200 {
			t.Fatalf("without latency: %d %s", a.status, a.body)
		}
		if err := e.sim.RejectNextSends(ctx, 2, "E5007", "принудно"); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			wantCode(t, "forced rejection "+strconv.Itoa(i+1), e.send(s, example(t, "type-100", "forced")), 422, "E5007")
		}
		e.mustSend(s, example(t, "type-100", "forced"))
	})
}

// TestCodeListsChangeBetweenReads: after the change, the seller's reads
// show a new tax indicator, a payment type gone and document type 100
// renamed, and its documents are validated against them; others still
// read the published lists.
func TestCodeListsChangeBetweenReads(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, b := signers(t)
		ctx := context.Background()
		read := func(who *ujpsim.SandboxSigner, path string) string {
			a := e.raw("GET", api+path, map[string]string{"X-EUJP-ID": who.EUJPID, "X-EDB": who.EDB}, nil, 10*time.Second)
			if a.status != 200 {
				t.Fatalf("%s: %d", path, a.status)
			}
			return string(a.body)
		}
		before := read(s, "/tax-indicators") + read(s, "/payment-types") + read(s, "/document-types")
		if strings.Contains(before, "DDV-14-3-10") || !strings.Contains(before, `"P13"`) || strings.Contains(before, "Општа Фактура") {
			t.Fatal("the published lists already changed")
		}
		if err := e.sim.SetCodeListsChanged(ctx, ujpsim.TaxSeller, true); err != nil {
			t.Fatal(err)
		}
		after := read(s, "/tax-indicators") + read(s, "/payment-types") + read(s, "/document-types") + read(s, "/doc-type-x-tax-indicator/100")
		if !strings.Contains(after, "DDV-14-3-10") || strings.Contains(after, `"P13"`) || !strings.Contains(after, "Општа Фактура") {
			t.Fatal("the changed lists do not show the changes")
		}
		if strings.Contains(read(b, "/payment-types"), `"P13"`) == false {
			t.Fatal("another company reads the changed lists")
		}
		wantCode(t, "the old name of 100 after the rename", e.send(s, example(t, "type-100", "cl-1")), 400, "E50079")
	})
}

// TestCodeListShapes: each list in UJP's response shape; paged lists page.
func TestCodeListShapes(t *testing.T) {
	t.Parallel()
	e := start(t, storetest.SQLite(t), ujpsim.Options{})
	s, _ := signers(t)
	h := map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": s.EDB}
	for path, key := range map[string]string{"/document-types": "documentTypesList", "/ref-document-types": "refDocumentTypes",
		"/payment-types": "paymentTypeList", "/currency": "currencyList", "/countries": "countryList", "/void-reasons": "voidReasonList",
		"/correction-reason": "correctionReasonList", "/correction-reason/2026-11-20": "correctionReasonList", "/reject-reason": "rejectReasonList",
		"/tax-groups": "taxGroupList", "/tax-indicators": "taxIndicators", "/doc-type-x-tax-indicator/100": "docTypeXTaxIndicatorList",
		"/document-statuses": "statusList", "/purchase-tax-indicators": "purchaseTaxIndicators", "/subsidiary/" + ujpsim.TaxSeller: "subsidiary"} {
		a := e.raw("GET", api+path, h, nil, 10*time.Second)
		list, _ := a.m[key].([]any)
		if a.status != 200 || a.m["success"] != true || len(list) == 0 {
			t.Errorf("%s: %d %.200s", path, a.status, a.body)
		}
	}
	for _, path := range []string{"/countries/list", "/doc-type-x-tax-indicator/list"} {
		body, _ := json.Marshal(map[string]any{"requestTimestamp": ujpsim.FormatTimestamp(time.Now()), "page": 1, "size": 20, "sortDirection": "ASC"})
		a := e.raw("POST", api+path, h, body, 10*time.Second)
		content, _ := a.m["content"].([]any)
		if a.status != 200 || len(content) != 20 || a.m["pageNumber"] != float64(1) || a.m["last"] != false {
			t.Errorf("%s: %d %.300s", path, a.status, a.body)
		}
	}
	body, _ := json.Marshal(map[string]any{"requestTimestamp": ujpsim.FormatTimestamp(time.Now()), "currencyName": "EUR", "date": "2026-04-08"})
	if a := e.raw("POST", api+"/currency-exchange/rate", h, body, 10*time.Second); a.status != 200 || a.m["currencyExcange"] == nil {
		t.Errorf("exchange rate: %d %s", a.status, a.body)
	}
}

// TestBuyerSideTools: the fictitious supplier's invoice passes the
// simulator's own validation and reaches the buyer's reads; the seller's
// storno awaits the buyer.
func TestBuyerSideTools(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		_, b := signers(t)
		ctx := context.Background()
		d, err := e.sim.DropIncoming(ctx, ujpsim.Incoming{BuyerTin: ujpsim.TaxBuyer, DocID: "drop-1"})
		if err != nil {
			t.Fatal(err)
		}
		if again, err := e.sim.DropIncoming(ctx, ujpsim.Incoming{BuyerTin: ujpsim.TaxBuyer, DocID: "drop-1"}); err != nil || again.EUID != d.EUID {
			t.Fatalf("dropped twice: %v", err)
		}
		a := e.signed(api+"/documents/purchase-invoice/ids", b, map[string]any{"dateFrom": time.Now().AddDate(0, 0, -1).Format(time.DateOnly),
			"dateTo": time.Now().AddDate(0, 0, 1).Format(time.DateOnly)}, nil)
		if a.status != 200 || !strings.Contains(string(a.body), d.EUID) {
			t.Fatalf("purchase ids: %d %s", a.status, a.body)
		}
		st, err := e.sim.SellerStorno(ctx, d.EUID, "")
		if err != nil {
			t.Fatal(err)
		}
		if e.status(d.EUID) != "01" || st.Status != "01" {
			t.Fatalf("storno made: original %s storno %s", e.status(d.EUID), st.Status)
		}
		ctl := ujpsim.Control{BaseURL: e.url, Token: controlToken}
		if err := ctl.Decide(ctx, st.EUID, true, "", ""); err != nil {
			t.Fatal(err)
		}
		if e.status(d.EUID) != "07" {
			t.Fatalf("original after the buyer accepted the storno: %s", e.status(d.EUID))
		}
		if _, err := e.sim.DropIncoming(ctx, ujpsim.Incoming{BuyerTin: ujpsim.TaxNeverExisted}); err == nil || !strings.Contains(err.Error(), "E1014") {
			t.Fatalf("an unknown buyer: %v", err)
		}
		euid, err := ctl.SendToBuyer(ctx, ujpsim.TaxBuyer, "", "", "")
		if err != nil || euid == "" {
			t.Fatalf("over the control API: %v", err)
		}
	})
}

// TestControlAPI: registration out of band over /_sim, with the token
// only; Control's methods.
func TestControlAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		ctx := context.Background()
		for _, tok := range []string{"", "wrong"} {
			if err := (ujpsim.Control{BaseURL: e.url, Token: tok}).AddUser(ctx, "NEW"); err == nil {
				t.Fatalf("AddUser with token %q", tok)
			}
		}
		ctl := ujpsim.Control{BaseURL: e.url, Token: controlToken}
		x, err := ujpsim.NewSandboxSigner("EUJP-CTL", ujpsim.TaxSmallBiz)
		if err != nil {
			t.Fatal(err)
		}
		serial, err := ctl.RegisterCertificate(ctx, x.EUJPID, x.EDB, x.Cert.Raw)
		if err != nil || serial != x.Serial() {
			t.Fatalf("register: %q %v", serial, err)
		}
		if err := ctl.Grant(ctx, x.EUJPID, x.EDB, "DP", "RD"); err != nil {
			t.Fatal(err)
		}
		if err := ctl.Grant(ctx, x.EUJPID, x.EDB, "XX"); err == nil {
			t.Fatal("an unknown privilege granted")
		}
		if err := ctl.Grant(ctx, "NOBODY", x.EDB, "DP"); err == nil || !strings.Contains(err.Error(), "E1010") {
			t.Fatalf("a privilege of an unknown user: %v", err)
		}
		ps, err := e.sim.Privileges(ctx, x.EUJPID)
		if err != nil || strings.Join(ps, ",") != ujpsim.TaxSmallBiz+":DP,"+ujpsim.TaxSmallBiz+":RD" {
			t.Fatalf("privileges %v %v", ps, err)
		}
		if err := ctl.Revoke(ctx, x.EUJPID, x.EDB, "RD"); err != nil {
			t.Fatal(err)
		}
		if a := e.raw("GET", api+"/server-time", map[string]string{"X-EUJP-ID": x.EUJPID, "X-EDB": x.EDB}, nil, 10*time.Second); a.status != 200 {
			t.Fatalf("the registered user: %d", a.status)
		}
	})
}

// TestPortalAndLostDocuments: an invoice issued in UJP's portal passes the
// simulator's own validation and shows in the seller's lists, payloads
// and statuses; a lost document is gone from all of them, and its docId
// is free again.
func TestPortalAndLostDocuments(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, _ := signers(t)
		ctx := context.Background()
		d, err := e.sim.IssuedInPortal(ctx, ujpsim.Portal{SellerTin: ujpsim.TaxSeller, DocID: "portal-1"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != "01" || d.SellerTin != ujpsim.TaxSeller || d.BuyerTin != ujpsim.TaxBuyer || d.DocID != "portal-1" {
			t.Fatalf("portal invoice: %+v", d)
		}
		if again, err := e.sim.IssuedInPortal(ctx, ujpsim.Portal{SellerTin: ujpsim.TaxSeller, DocID: "portal-1"}); err != nil || again.EUID != d.EUID {
			t.Fatalf("issued twice: %v", err)
		}
		day := map[string]any{"dateFrom": time.Now().AddDate(0, 0, -1).Format(time.DateOnly), "dateTo": time.Now().AddDate(0, 0, 1).Format(time.DateOnly)}
		for _, path := range []string{"/documents/sales-invoice/ids", "/documents/sales-invoice/invoices-status"} {
			if a := e.signed(api+path, s, maps.Clone(day), nil); a.status != 200 || !strings.Contains(string(a.body), d.EUID) {
				t.Fatalf("%s: %d %s", path, a.status, a.body)
			}
		}
		if err := e.sim.Grant(ctx, s.EUJPID, s.EDB, ujpsim.PrivilegePayload); err != nil {
			t.Fatal(err)
		}
		if a := e.signed(api+"/documents/sales-invoice/payload/list", s, map[string]any{"euids": []string{d.EUID}}, nil); a.status != 200 ||
			!strings.Contains(string(a.body), `\"docId\":\"portal-1\"`) {
			t.Fatalf("payload list: %d %s", a.status, a.body)
		}
		if _, err := e.sim.IssuedInPortal(ctx, ujpsim.Portal{SellerTin: ujpsim.TaxNeverExisted}); err == nil || !strings.Contains(err.Error(), "E1014") {
			t.Fatalf("an unknown seller: %v", err)
		}

		ctl := ujpsim.Control{BaseURL: e.url, Token: controlToken}
		if err := ctl.LoseDocument(ctx, d.EUID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.sim.Document(ctx, d.EUID); !errors.Is(err, ujpsim.ErrNotFound) {
			t.Fatalf("a lost document: %v", err)
		}
		if a := e.signed(api+"/documents/sales-invoice/ids", s, maps.Clone(day), nil); a.status != 200 || strings.Contains(string(a.body), d.EUID) {
			t.Fatalf("ids after the loss: %d %s", a.status, a.body)
		}
		if a := e.signed(api+"/documents/sales-invoice/current-status", s, map[string]any{"euid": d.EUID}, nil); a.status != 404 ||
			a.m["errorStatus"].(map[string]any)["errorCode"] != "E4008" {
			t.Fatalf("current status of a lost document: %d %s", a.status, a.body)
		}
		if err := ctl.LoseDocument(ctx, d.EUID); err == nil {
			t.Fatal("lost twice")
		}
		// Over the control API: a portal invoice with the freed docId.
		again, err := ctl.IssuedInPortal(ctx, ujpsim.TaxSeller, "", "portal-1", "")
		if err != nil || again.EUID == "" || again.EUID == d.EUID {
			t.Fatalf("over the control API: %+v %v", again, err)
		}
	})
}

// TestClockSkew: the clock-skew fault moves UJP's real clock: server-time
// says so, and a requestTimestamp right by the caller's clock is then
// judged by the skewed one (E40122 beyond 5 minutes); 0 ends it. It is
// set through the control API as well.
func TestClockSkew(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := start(t, db, ujpsim.Options{})
		s, _ := signers(t)
		ctx := context.Background()
		serverTime := func() time.Time {
			t.Helper()
			a := e.raw("GET", api+"/server-time", map[string]string{"X-EUJP-ID": s.EUJPID, "X-EDB": s.EDB}, nil, 10*time.Second)
			ts, _ := a.m["timestamp"].(string)
			at, err := time.ParseInLocation("2006-01-02T15:04:05", ts, skopje)
			if a.status != 200 || err != nil {
				t.Fatalf("server-time: %d %s", a.status, a.body)
			}
			return at
		}
		near := func(got time.Time, off time.Duration) bool {
			d := got.Sub(time.Now().Add(off))
			return d > -5*time.Second && d < 5*time.Second
		}
		if got := serverTime(); !near(got, 0) {
			t.Fatalf("server time without a skew: %s", got)
		}
		if err := e.sim.SetClockSkew(ctx, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := serverTime(); !near(got, 10*time.Minute) {
			t.Fatalf("server time with a 10-minute skew: %s", got)
		}
		wantCode(t, "a timestamp 10 minutes behind UJP's clock", e.signed(api+"/documents/sales-invoice/pdf", s, map[string]any{"euid": "00000000-0000-7000-8000-000000000000"}, nil), 400, "E40122")
		if a := e.raw("POST", "/_sim/clock/skew", map[string]string{"Authorization": "Bearer " + controlToken}, []byte(`{"seconds":0}`), 10*time.Second); a.status != 200 {
			t.Fatalf("control API: %d %s", a.status, a.body)
		}
		if got := serverTime(); !near(got, 0) {
			t.Fatalf("server time after the skew ended: %s", got)
		}
		if a := e.raw("POST", "/_sim/clock/skew", map[string]string{"Authorization": "Bearer " + controlToken}, []byte(`{"seconds":90000}`), 10*time.Second); a.status != 400 {
			t.Fatalf("a skew over a day: %d %s", a.status, a.body)
		}
	})
}
