package einvoiceapi_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"crypto/rand"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// decisionGateway forwards to UJP but can lose the answer of the next
// accept-reject calls after UJP applied them, as a timeout would, and can
// make the next payload reads fail as an unreachable UJP would.
type decisionGateway struct {
	ujp.Gateway
	loseNext     atomic.Int32
	decisions    atomic.Int32
	failPayloads atomic.Int32
	failStatus   atomic.Int32 // CurrentStatus answers lost (reconcile_test.go)
}

func (g *decisionGateway) PurchasePayloads(ctx context.Context, caller ujp.Identity, jws string) ([]ujp.Payload, error) {
	if g.failPayloads.Load() > 0 {
		g.failPayloads.Add(-1)
		return nil, &ujp.UnavailableError{Op: "PurchasePayloads", Err: context.DeadlineExceeded}
	}
	return g.Gateway.PurchasePayloads(ctx, caller, jws)
}

func (g *decisionGateway) AcceptReject(ctx context.Context, caller ujp.Identity, jws string) error {
	g.decisions.Add(1)
	err := g.Gateway.AcceptReject(ctx, caller, jws)
	if err == nil && g.loseNext.Load() > 0 {
		g.loseNext.Add(-1)
		return &ujp.UnavailableError{Op: "AcceptReject", Err: context.DeadlineExceeded}
	}
	return err
}

// inboxEnv is pipeEnv with a second sandbox company of the same account,
// the simulator's registered buyer, whose inbox receives what the seller
// sends; the one agent signs for both.
type inboxEnv struct {
	*pipeEnv
	dg       *decisionGateway
	buyer    string // company id of ujpsim.TaxBuyer
	buyerKey string // inbox:read, inbox:write, events:read of the account
}

// newInboxEnv builds the environment; tune adjusts the configuration of
// the application layer, room by room (every room's jobs are registered).
func newInboxEnv(t *testing.T, db *store.DB, tune ...func(*appConfig)) *inboxEnv {
	t.Helper()
	cfg := appConfig{Pipeline: pipeline.Config{RetryDelays: []time.Duration{time.Minute}, SignerInterval: simWindow}}
	for _, f := range tune {
		f(&cfg)
	}
	p := &pipeEnv{t: t, db: db}
	db.Now = p.now
	sim, client, tr := newSimGateway(t, db, ujpsim.Options{Now: p.now, Logger: slog.New(slog.DiscardHandler), ControlToken: "inbox-test"})
	p.sim, p.tr = sim, tr
	dg := &decisionGateway{Gateway: client}
	p.gw = &lossyGateway{Gateway: dg}
	cfg.Gateways = map[string]ujp.Gateway{auth.EnvSandbox: p.gw}
	cfg.Sandbox, cfg.SandboxSetup = sim, simSetup{sim}
	a, api := newApp(db, einvoicing.Deps{Registry: simRegistry{client}},
		cfg, webhooks.Deps{}, webhooks.Config{})
	p.app, p.svc, p.inboxes = a, a.Service, a.inbox
	p.srv = httptest.NewServer(api.Handler())
	t.Cleanup(p.srv.Close)
	p.runner = jobs.NewRunner(db, jobs.Config{Workers: 4, Logger: slog.New(slog.DiscardHandler)})
	a.RegisterJobs(p.runner)
	p.company, p.key = seedSeller(t, db, "companies:read", "companies:write", "einvoices:read", "einvoices:write", "events:read", "signing:agent")
	se := &signEnv{t: t, db: db, srv: p.srv, key: p.key, company: p.company}
	p.cert = newTestCert(t)
	p.agent, p.authz = se.pair(p.cert)

	e := &inboxEnv{pipeEnv: p, dg: dg}
	ctx := t.Context()
	var account string
	if err := db.ReadDB().QueryRowContext(ctx, "SELECT account_id FROM companies WHERE id = $1", p.company).Scan(&account); err != nil {
		t.Fatal(err)
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: account, Name: "Тест Купувач ДОО Скопје",
			TaxNumber: ujpsim.TaxBuyer, VatNumber: "МК" + ujpsim.TaxBuyer, Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox,
			Address: `{"street":"ул. Македонија","number":"2","city":"Скопје","zip":"1000"}`, CreatedAt: tx.Now})
		e.buyer = c.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, e.buyerKey, err = (&auth.Store{DB: db}).CreateKey(ctx, auth.KeyParams{AccountID: account, Service: auth.ServiceEInvoice,
		Environment: auth.EnvSandbox, Scopes: []string{"inbox:read", "inbox:write", "events:read", "einvoices:read"}})
	if err != nil {
		t.Fatal(err)
	}
	// The buyer's certificate: another one with the agent's key, so the
	// agent signs for both companies.
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano() + 1), Subject: pkix.Name{CommonName: "Тест Купувач ДОО Скопје"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.cert.key.PublicKey, p.cert.key)
	if err != nil {
		t.Fatal(err)
	}
	if st, m := se.do("POST", "/v1/agents/"+p.agent+"/certificates", p.authz, map[string]string{
		"certificateDer": base64.StdEncoding.EncodeToString(der), "companyId": e.buyer, "eujpId": "EUJP-BUYER"}); st != 201 {
		t.Fatalf("buyer certificate: %d %v", st, m)
	}
	p.registerSigners()
	return e
}

// buyerDo calls the API as the buyer company with key (the buyer's key
// when ""), a fresh Idempotency-Key unless idem is given.
func (e *inboxEnv) buyerDo(method, path string, body any, hdr ...string) (int, map[string]any, []byte, http.Header) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.buyerKey)
	req.Header.Set("X-Company-Id", e.buyer)
	req.Header.Set("Idempotency-Key", denar.NewID("idem"))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, raw, resp.Header
}

// settleAll signs and runs jobs until nothing is left; a job due within a
// few seconds (a snooze for a signer slot, a retry) is waited for by
// moving the clock.
func (e *inboxEnv) settleAll() {
	e.t.Helper()
	for range 300 {
		signed := e.signAll()
		ran, err := e.runner.RunOnce(e.t.Context())
		if err != nil {
			e.t.Fatal(err)
		}
		if signed > 0 || ran > 0 {
			continue
		}
		var next sql.NullString
		if err := e.db.ReadDB().QueryRowContext(e.t.Context(), `SELECT CAST(MIN(run_at) AS TEXT) FROM jobs
			WHERE state IN ('available', 'retryable') AND (unique_key IS NULL OR unique_key NOT LIKE 'periodic:%')`).Scan(&next); err != nil {
			e.t.Fatal(err)
		}
		if !next.Valid {
			return
		}
		wait := e.dueTime(next.String).Sub(e.now())
		if wait > 5*time.Second {
			return
		}
		e.advance(wait + time.Millisecond)
	}
	e.t.Fatal("the inbox did not settle")
}

// syncBuyer reads the buyer's purchase side now and settles.
func (e *inboxEnv) syncBuyer() {
	e.t.Helper()
	e.enqueue(einvoicing.KindPollCompany, map[string]string{"companyId": e.buyer})
	e.settleAll()
}

// syncSeller reads the seller's change feed now and settles.
func (e *inboxEnv) syncSeller() {
	e.t.Helper()
	e.enqueue(einvoicing.KindPollCompany, map[string]string{"companyId": e.company})
	e.settleAll()
}

func (e *inboxEnv) enqueue(kind string, args any) {
	e.t.Helper()
	if err := e.db.InTx(e.t.Context(), func(tx *store.Tx) error {
		_, err := jobs.Enqueue(e.t.Context(), tx, jobs.Spec{Kind: kind, Args: args})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
}

// setClock moves the shared clock (service and simulator) to at.
func (e *inboxEnv) setClock(at time.Time) {
	e.clock.Store(int64(at.Sub(time.Now().UTC())))
}

// inbox lists the buyer's documents (every page) by EUID.
func (e *inboxEnv) inbox() map[string]map[string]any {
	e.t.Helper()
	out := map[string]map[string]any{}
	cursor := ""
	for {
		path := "/v1/inbox"
		if cursor != "" {
			path += "?cursor=" + cursor
		}
		st, m, raw, _ := e.buyerDo("GET", path, nil)
		if st != 200 {
			e.t.Fatalf("inbox: %d %s", st, raw)
		}
		for _, it := range m["data"].([]any) {
			d := it.(map[string]any)
			if _, dup := out[d["euid"].(string)]; dup {
				e.t.Fatalf("EUID %s listed twice", d["euid"])
			}
			out[d["euid"].(string)] = d
		}
		next, _ := m["nextCursor"].(string)
		if next == "" {
			return out
		}
		cursor = next
	}
}

func (e *inboxEnv) doc(id string) map[string]any {
	e.t.Helper()
	st, m, raw, _ := e.buyerDo("GET", "/v1/inbox/"+id, nil)
	if st != 200 {
		e.t.Fatalf("get %s: %d %s", id, st, raw)
	}
	return m
}

// buyerEvents are the event types of object id, oldest first.
func (e *inboxEnv) buyerEvents(id string) []string {
	e.t.Helper()
	st, m, raw, _ := e.buyerDo("GET", "/v1/events?limit=200&objectId="+id, nil)
	if st != 200 {
		e.t.Fatalf("events: %d %s", st, raw)
	}
	data := m["data"].([]any)
	var out []string
	for i := len(data) - 1; i >= 0; i-- {
		out = append(out, data[i].(map[string]any)["type"].(string))
	}
	return out
}

// countRows counts rows of a query with one argument.
func (e *inboxEnv) countRows(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.ReadDB().QueryRowContext(e.t.Context(), query, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// drop has the simulator's supplier send the buyer an invoice.
func (e *inboxEnv) drop(txDate string) string {
	e.t.Helper()
	d, err := e.sim.DropIncoming(e.t.Context(), ujpsim.Incoming{BuyerTin: ujpsim.TaxBuyer, TransactionDate: txDate})
	if err != nil {
		e.t.Fatal(err)
	}
	return d.EUID
}

func deref(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// TestInboxSellerToBuyer: what the seller issues appears once in the
// buyer's inbox with the spec's fields and deadline, the payload is UJP's
// bytes, the buyer rejects with O-2 (the agent signs the decision) and the
// seller's e-invoice becomes rejected; another is accepted.
func TestInboxSellerToBuyer(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newInboxEnv(t, db)
		rej, acc := e.issue("B-reject"), e.issue("B-accept")
		e.settleAll()
		e.wantStatus(rej, "delivered")
		e.wantStatus(acc, "delivered")
		e.syncBuyer()

		docs := e.inbox()
		if len(docs) != 2 {
			t.Fatalf("%d documents in the buyer's inbox, want 2", len(docs))
		}
		euid := e.einvoice(rej)["euid"].(string)
		d := docs[euid]
		if d == nil {
			t.Fatalf("the rejected invoice %s is not in the inbox", euid)
		}
		today := e.now().In(ujpdoc.Skopje)
		wantBy := einvoice.DecideBy(today).Format(time.DateOnly)
		wantLeft := einvoice.DaysLeft(e.now(), einvoice.DecideBy(today))
		id := d["id"].(string)
		for path, want := range map[string]any{
			"object": "inbox_document", "companyId": e.buyer, "documentType": "100", "number": "B-reject", "kind": "invoice",
			"issueDate": today.Format(time.DateOnly), "transactionDate": today.Format(time.DateOnly), "decideBy": wantBy, "daysLeft": float64(wantLeft),
			"seller.taxNumber": ujpsim.TaxSeller, "seller.name": "Тест Продавач ДООЕЛ Скопје", "seller.country": "MK",
			"totals.net": "2700.00", "totals.vat": "486.00", "totals.gross": "3186.00", "totals.currency": "MKD",
			"ujpStatus.code": "01", "ujpStatus.name": "Испратена (Нова)", "decision.state": "pending",
			"links.payload": "/v1/inbox/" + id + "/payload", "links.pdf": "/v1/inbox/" + id + "/pdf",
		} {
			if got := deref(d, strings.Split(path, ".")...); got != want {
				t.Errorf("%s = %v; want %v", path, got, want)
			}
		}
		if !strings.HasPrefix(id, "inbd_") || d["receivedAt"] == nil || deref(d, "decision", "decidedAt") != nil || d["originalEuid"] != nil {
			t.Errorf("id %s, receivedAt %v, decidedAt %v", id, d["receivedAt"], deref(d, "decision", "decidedAt"))
		}
		if ev := e.buyerEvents(id); !equal(ev, []string{"inbox.received"}) {
			t.Fatalf("events %v", ev)
		}

		// The payload: the seller's document exactly as UJP holds it.
		simDoc, err := e.sim.Document(t.Context(), euid)
		if err != nil {
			t.Fatal(err)
		}
		st, _, raw, hdr := e.buyerDo("GET", "/v1/inbox/"+id+"/payload", nil)
		if st != 200 || !bytes.Equal(raw, simDoc.Payload) || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("payload: %d %s, %d bytes, equal to UJP's %v", st, hdr.Get("Content-Type"), len(raw), bytes.Equal(raw, simDoc.Payload))
		}

		// Reject with O-2: the agent signs the decision.
		st, m, raw, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/reject", map[string]any{"reasonCode": "O-2", "comment": "Погрешна цена"})
		if st != 202 || deref(m, "decision", "state") != "pending" || deref(m, "decision", "requested") != "reject" ||
			deref(m, "decision", "reasonCode") != "O-2" || deref(m, "decision", "signingRequestId") == nil {
			t.Fatalf("reject: %d %s", st, raw)
		}
		sr := deref(m, "decision", "signingRequestId").(string)
		var purpose, payload string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT purpose, payload FROM signing_requests WHERE id = $1", sr).Scan(&purpose, &payload); err != nil {
			t.Fatal(err)
		}
		signed, _ := base64.RawURLEncoding.DecodeString(payload)
		var ar ujp.AcceptRejectRequest
		if err := json.Unmarshal(signed, &ar); err != nil || purpose != einvoicing.PurposeDecision || ar.EUID != euid || ar.IsAccepted ||
			ar.RejectReasonCode == nil || *ar.RejectReasonCode != "O-2" || ar.Comment == nil || *ar.Comment != "Погрешна цена" {
			t.Fatalf("decision request: purpose %s, payload %s (%v)", purpose, signed, err)
		}
		// What its signer is shown: the buyer company, what signing does,
		// the incoming document, its seller and total.
		var raw2 string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT summary FROM signing_requests WHERE id = $1", sr).Scan(&raw2); err != nil {
			t.Fatal(err)
		}
		var sum einvoicing.SigningSummary
		number := deref(d, "number")
		if err := json.Unmarshal([]byte(raw2), &sum); err != nil || number == nil || sum.Purpose != "reject incoming invoice "+number.(string)+" (O-2)" ||
			sum.SellerName == nil || *sum.SellerName != deref(d, "seller", "name") || sum.DocumentNumber == nil || *sum.DocumentNumber != number ||
			sum.GrossTotal == nil || *sum.GrossTotal != deref(d, "totals", "gross") || sum.CompanyName == "" || sum.BuyerName != nil {
			t.Fatalf("decision summary %s (%v)", raw2, err)
		}
		// Nothing reaches UJP before the signature.
		if n := e.dg.decisions.Load(); n != 0 {
			t.Fatalf("%d decisions sent before the signature", n)
		}
		if st, m, _, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 409 || m["code"] != "inbox_state_conflict" {
			t.Fatalf("a second decision while one is on its way: %d %v", st, m)
		}
		e.settleAll()
		d = e.doc(id)
		if deref(d, "decision", "state") != "rejected" || deref(d, "ujpStatus", "code") != "05" || deref(d, "decision", "requested") != nil ||
			deref(d, "decision", "decidedAt") == nil || deref(d, "decision", "reasonCode") != "O-2" {
			t.Fatalf("after signing: %v", d["decision"])
		}
		if got, _ := e.sim.Document(t.Context(), euid); got.Status != ujp.StatusRejected {
			t.Fatalf("UJP has %s", got.Status)
		}
		if ev := e.buyerEvents(id); !equal(ev, []string{"inbox.received", "inbox.signature_required", "inbox.rejected"}) {
			t.Fatalf("events %v", ev)
		}
		if st, m, _, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 409 || m["code"] != "inbox_state_conflict" {
			t.Fatalf("accept after reject: %d %v", st, m)
		}

		// Accept the other, without a body.
		accID := docs[e.einvoice(acc)["euid"].(string)]["id"].(string)
		if st, _, raw, _ := e.buyerDo("POST", "/v1/inbox/"+accID+"/accept", nil); st != 202 {
			t.Fatalf("accept: %d %s", st, raw)
		}
		e.settleAll()
		if d := e.doc(accID); deref(d, "decision", "state") != "accepted" || deref(d, "ujpStatus", "code") != "03" {
			t.Fatalf("accepted: %v %v", d["decision"], d["ujpStatus"])
		}

		// The seller's change feed: rejected and accepted.
		e.syncSeller()
		e.wantStatus(rej, "rejected")
		e.wantStatus(acc, "accepted")
		if n := e.dg.decisions.Load(); n != 2 {
			t.Fatalf("%d decisions sent, want 2", n)
		}
		// Read again: nothing new, nothing twice.
		e.syncBuyer()
		if docs := e.inbox(); len(docs) != 2 {
			t.Fatalf("%d documents after another read", len(docs))
		}
		if n := e.countRows("SELECT COUNT(*) FROM events WHERE type = 'inbox.received' AND company_id = $1", e.buyer); n != 2 {
			t.Fatalf("%d inbox.received events", n)
		}
	})
}

// sign is the agent signing (or refusing) one request.
func (e *inboxEnv) refuse(id, reason string) {
	e.t.Helper()
	se := &signEnv{t: e.t, db: e.db, srv: e.srv}
	if st, m := se.do("POST", "/v1/signing-requests/"+id+"/refuse", e.authz, map[string]string{"reason": reason, "message": "не"}); st != 200 {
		e.t.Fatalf("refuse %s: %d %v", id, st, m)
	}
}

// dropAndSync drops an invoice with transaction date txDate into the
// buyer's inbox and returns its inbox id.
func (e *inboxEnv) dropAndSync(txDate string) (id, euid string) {
	e.t.Helper()
	euid = e.drop(txDate)
	e.syncBuyer()
	d := e.inbox()[euid]
	if d == nil {
		e.t.Fatalf("dropped %s is not in the inbox", euid)
	}
	return d["id"].(string), euid
}

func problemCodes(d map[string]any) []string {
	var out []string
	for _, p := range d["problems"].([]any) {
		out = append(out, p.(map[string]any)["code"].(string))
	}
	return out
}

// TestInboxDecisions: reject reasons checked against UJP's list in either
// spelling (UJP's sent), and every way a decision can fail — a refused or
// expired signature, UJP refusing it (decided elsewhere), the deadline —
// leaves a problem and inbox.decision_failed, never a silent pending; an
// answer lost after UJP applied the decision is found again, not failed.
func TestInboxDecisions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newInboxEnv(t, db)
		today := e.now().In(ujpdoc.Skopje).Format(time.DateOnly)

		// Validation, before anything is asked of the signer.
		id, euid := e.dropAndSync(today)
		for _, tc := range []struct {
			body map[string]any
			path string
		}{
			{map[string]any{"reasonCode": "O-9"}, "reasonCode"},
			{map[string]any{"reasonCode": "S-1"}, "reasonCode"},
			{map[string]any{"reasonCode": "O-7"}, "comment"},
			{map[string]any{"reasonCode": "\u041e-7", "comment": " "}, "comment"},
			{map[string]any{"comment": "без причина"}, "reasonCode"},
		} {
			st, m, raw, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/reject", tc.body)
			errs, _ := m["errors"].([]any)
			if st != 422 || m["code"] != "validation_failed" || len(errs) == 0 || !strings.HasSuffix(errs[0].(map[string]any)["path"].(string), tc.path) {
				t.Fatalf("reject %v: %d %s", tc.body, st, raw)
			}
		}
		if n := e.countRows("SELECT COUNT(*) FROM signing_requests WHERE link_type = 'inbox_decision'"); n != 0 {
			t.Fatalf("%d decision requests after refused bodies", n)
		}
		// Latin O-6 is sent as UJP's Cyrillic О-6; the same key answers the same bytes.
		key := denar.NewID("idem")
		st, m, first, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/reject", map[string]any{"reasonCode": "O-6"}, "Idempotency-Key", key)
		if st != 202 || deref(m, "decision", "reasonCode") != "\u041e-6" {
			t.Fatalf("reject O-6: %d %s", st, first)
		}
		if st, _, again, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/reject", map[string]any{"reasonCode": "O-6"}, "Idempotency-Key", key); st != 202 || !bytes.Equal(again, first) {
			t.Fatalf("replay: %d, identical %v", st, bytes.Equal(again, first))
		}
		if n := e.countRows("SELECT COUNT(*) FROM signing_requests WHERE link_type = 'inbox_decision' AND link_id = $1", id); n != 1 {
			t.Fatalf("%d decision requests after a replay", n)
		}
		e.settleAll()
		if got, _ := e.sim.Document(t.Context(), euid); got.Status != ujp.StatusRejected || *got.History[len(got.History)-1].RejectReasonCode != "\u041e-6" {
			t.Fatalf("UJP has %s", got.Status)
		}

		// A refused signature: back to pending, with the refusal; deciding again works.
		id, _ = e.dropAndSync(today)
		st, m, _, _ = e.buyerDo("POST", "/v1/inbox/"+id+"/accept", map[string]any{"comment": "во ред"})
		if st != 202 {
			t.Fatalf("accept: %d %v", st, m)
		}
		e.refuse(deref(m, "decision", "signingRequestId").(string), "user_declined")
		d := e.doc(id)
		if deref(d, "decision", "state") != "pending" || deref(d, "decision", "requested") != nil || deref(d, "decision", "signingRequestId") != nil ||
			!equal(problemCodes(d), []string{"decision_refused"}) {
			t.Fatalf("after a refusal: %v %v", d["decision"], d["problems"])
		}
		if ev := e.buyerEvents(id); !equal(ev, []string{"inbox.received", "inbox.signature_required", "inbox.decision_failed"}) {
			t.Fatalf("events %v", ev)
		}
		if st, _, raw, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 202 {
			t.Fatalf("accept again: %d %s", st, raw)
		}
		e.settleAll()
		if d := e.doc(id); deref(d, "decision", "state") != "accepted" || len(problemCodes(d)) != 0 {
			t.Fatalf("accepted after a refusal: %v %v", d["decision"], d["problems"])
		}

		// An expired signature: not replaced; back to pending with a problem.
		id, _ = e.dropAndSync(today)
		if st, _, raw, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 202 {
			t.Fatalf("accept: %d %s", st, raw)
		}
		e.advance(16 * time.Minute)
		e.enqueue(signing.KindExpireSigning, nil)
		e.runOnce()
		d = e.doc(id)
		if deref(d, "decision", "state") != "pending" || deref(d, "decision", "requested") != nil || !equal(problemCodes(d), []string{"decision_expired"}) {
			t.Fatalf("after expiry: %v %v", d["decision"], d["problems"])
		}
		if n := e.countRows("SELECT COUNT(*) FROM signing_requests WHERE link_type = 'inbox_decision' AND link_id = $1 AND state IN ('pending','claimed')", id); n != 0 {
			t.Fatalf("%d decision requests still open after expiry", n)
		}

		// Decided elsewhere while ours waited for its signature: UJP says
		// E1016; its current status is read and wins.
		id, euid = e.dropAndSync(today)
		if st, _, raw, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 202 {
			t.Fatalf("accept: %d %s", st, raw)
		}
		if err := e.sim.Decide(t.Context(), euid, false, "O-1", "во порталот"); err != nil {
			t.Fatal(err)
		}
		e.settleAll()
		d = e.doc(id)
		if deref(d, "decision", "state") != "rejected" || deref(d, "ujpStatus", "code") != "05" || deref(d, "decision", "requested") != nil ||
			!equal(problemCodes(d), []string{"decided_elsewhere"}) {
			t.Fatalf("decided elsewhere: %v %v %v", d["decision"], d["ujpStatus"], d["problems"])
		}
		if ev := e.buyerEvents(id); !equal(ev, []string{"inbox.received", "inbox.signature_required", "inbox.rejected", "inbox.decision_failed"}) {
			t.Fatalf("events %v", ev)
		}

		// UJP applied the decision but its answer was lost: the retry gets
		// E1016, the status read finds our decision: accepted, no problem.
		id, euid = e.dropAndSync(today)
		e.dg.loseNext.Store(1)
		before := e.dg.decisions.Load()
		if st, _, raw, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 202 {
			t.Fatalf("accept: %d %s", st, raw)
		}
		e.settleAll()
		if d := e.doc(id); deref(d, "decision", "requested") != "accept" {
			t.Fatalf("after a lost answer: %v", d["decision"])
		}
		e.advance(61 * time.Second)
		e.settleAll()
		d = e.doc(id)
		if deref(d, "decision", "state") != "accepted" || deref(d, "decision", "requested") != nil || len(problemCodes(d)) != 0 {
			t.Fatalf("after the retry: %v %v", d["decision"], d["problems"])
		}
		if n := e.dg.decisions.Load() - before; n != 2 {
			t.Fatalf("%d calls of accept-reject, want 2", n)
		}
		if got, _ := e.sim.Document(t.Context(), euid); got.Status != ujp.StatusAccepted || len(got.History) != 2 {
			t.Fatalf("UJP: %s, %d moves", got.Status, len(got.History))
		}
		if ev := e.buyerEvents(id); !equal(ev, []string{"inbox.received", "inbox.signature_required", "inbox.accepted"}) {
			t.Fatalf("events %v", ev)
		}

		// Past the deadline: 409 decision_deadline_passed, nothing asked.
		old := e.now().In(ujpdoc.Skopje).AddDate(0, -2, 0).Format(time.DateOnly)
		id, _ = e.dropAndSync(old)
		if st, m, _, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 409 || m["code"] != "decision_deadline_passed" {
			t.Fatalf("accept past the deadline: %d %v", st, m)
		}
		// Voided by its seller, the storno confirmed by the buyer at UJP
		// (07): 409 inbox_state_conflict.
		id, euid = e.dropAndSync(today)
		sd, err := e.sim.SellerStorno(t.Context(), euid, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.sim.Decide(t.Context(), sd.EUID, true, "", ""); err != nil {
			t.Fatal(err)
		}
		e.syncBuyer()
		if st, m, _, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/reject", map[string]any{"reasonCode": "O-1"}); st != 409 || m["code"] != "inbox_state_conflict" {
			t.Fatalf("reject a voided document: %d %v", st, m)
		}
	})
}

// runOnce runs the due jobs once.
func (e *inboxEnv) runOnce() {
	e.t.Helper()
	if _, err := e.runner.RunOnce(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
}

// cursor is the buyer's purchase cursor: the first day not done and the
// last day discovered.
func (e *inboxEnv) cursor() (polled, discovered string) {
	e.t.Helper()
	if err := e.db.ReadDB().QueryRowContext(e.t.Context(), "SELECT polled_through, discovered_through FROM ujp_purchase_cursors WHERE company_id = $1",
		e.buyer).Scan(&polled, &discovered); err != nil {
		e.t.Fatal(err)
	}
	return polled, discovered
}

// changeDaysRead are the days whose purchase change feed was read (signed
// and run), in order of the reads.
func (e *inboxEnv) changeDaysRead() []string {
	e.t.Helper()
	rows, err := e.db.ReadDB().QueryContext(e.t.Context(), "SELECT payload FROM signing_requests WHERE company_id = $1 AND link_type = 'ujp_purchase_changes' AND state = 'signed' ORDER BY id", e.buyer)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			e.t.Fatal(err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(p)
		var req ujp.ChangesRequest
		_ = json.Unmarshal(raw, &req)
		out = append(out, req.Date)
	}
	return out
}

// wantInboxOnce checks that every EUID of want is in the inbox exactly once
// with exactly one inbox.received, and nothing else is.
func (e *inboxEnv) wantInboxOnce(want []string) map[string]map[string]any {
	e.t.Helper()
	docs := e.inbox()
	if len(docs) != len(want) {
		e.t.Fatalf("%d documents in the inbox, want %d", len(docs), len(want))
	}
	for _, euid := range want {
		d := docs[euid]
		if d == nil {
			e.t.Fatalf("%s is not in the inbox", euid)
		}
		if n := e.countRows("SELECT COUNT(*) FROM events WHERE type = 'inbox.received' AND object_id = $1", d["id"]); n != 1 {
			e.t.Fatalf("%d inbox.received for %s", n, euid)
		}
	}
	if n := e.countRows("SELECT COUNT(*) FROM inbox_documents WHERE company_id = $1", e.buyer); n != len(want) {
		e.t.Fatalf("%d inbox rows, want %d", n, len(want))
	}
	return docs
}

// TestInboxSyncCompleteness: documents that arrive while the service is
// down (for days), during a UJP outage, and across midnight in Skopje all
// appear in the inbox exactly once; decisions made elsewhere meanwhile are
// applied; the cursor never skips a day and never passes one early.
func TestInboxSyncCompleteness(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newInboxEnv(t, db)
		sk := func(day time.Time, hm string) time.Time {
			v, err := time.ParseInLocation("2006-01-02 15:04:05", day.Format(time.DateOnly)+" "+hm, ujpdoc.Skopje)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		day := func(t time.Time) string { return t.In(ujpdoc.Skopje).Format(time.DateOnly) }
		// Start tomorrow at noon, Skopje time; the first read finds nothing.
		d0 := e.now().In(ujpdoc.Skopje).AddDate(0, 0, 1)
		e.setClock(sk(d0, "12:00:00"))
		e.syncBuyer()
		if docs := e.inbox(); len(docs) != 0 {
			t.Fatalf("%d documents before any was sent", len(docs))
		}
		if polled, _ := e.cursor(); polled != day(d0) {
			t.Fatalf("cursor after an empty first read %s, want %s", polled, day(d0))
		}

		// Down for three days: documents arrive each day, and one is
		// rejected in UJP's portal on the second.
		var all []string
		first := e.drop(day(d0))
		all = append(all, first, e.drop(day(d0)))
		e.setClock(sk(d0.AddDate(0, 0, 1), "09:30:00"))
		all = append(all, e.drop(day(d0)))
		if err := e.sim.Decide(t.Context(), first, false, "O-3", "погрешен купувач"); err != nil {
			t.Fatal(err)
		}
		e.setClock(sk(d0.AddDate(0, 0, 3), "08:00:00"))
		all = append(all, e.drop(""))
		e.syncBuyer()
		docs := e.wantInboxOnce(all)
		if deref(docs[first], "decision", "state") != "rejected" || deref(docs[first], "decision", "reasonCode") != "O-3" {
			t.Fatalf("the document rejected while the service was down: %v", docs[first]["decision"])
		}
		if polled, discovered := e.cursor(); polled != day(d0.AddDate(0, 0, 3)) || discovered != day(d0.AddDate(0, 0, 2)) {
			t.Fatalf("cursor %s/%s after catching up", polled, discovered)
		}
		read := e.changeDaysRead()
		for i := 0; i <= 3; i++ {
			if !slices.Contains(read, day(d0.AddDate(0, 0, i))) {
				t.Fatalf("the change feed of %s was never read (%v)", day(d0.AddDate(0, 0, i)), read)
			}
		}

		// A UJP outage: nothing is read, nothing is lost.
		if err := e.sim.SetOutage(t.Context(), true); err != nil {
			t.Fatal(err)
		}
		all = append(all, e.drop(""))
		e.syncBuyer()
		all = append(all, e.drop(""))
		if docs := e.inbox(); len(docs) != 4 {
			t.Fatalf("%d documents read during an outage", len(docs))
		}
		if err := e.sim.SetOutage(t.Context(), false); err != nil {
			t.Fatal(err)
		}
		// ... and an outage between two reads of one sync: the payload
		// read fails until its job gives up; the next poll finds them.
		e.dg.failPayloads.Store(100)
		all = append(all, e.drop(""))
		e.syncBuyer()
		for range 4 {
			e.advance(90 * time.Second)
			e.settleAll()
		}
		if docs := e.inbox(); len(docs) != 4 {
			t.Fatalf("%d documents with the payload read failing", len(docs))
		}
		e.dg.failPayloads.Store(0)
		e.advance(20 * time.Minute) // the failed reads' signing requests are long expired
		e.syncBuyer()
		e.wantInboxOnce(all)

		// Across midnight in Skopje.
		late := d0.AddDate(0, 0, 4)
		e.setClock(sk(late, "23:58:00"))
		all = append(all, e.drop(""))
		e.syncBuyer()
		e.wantInboxOnce(all)
		// The last read of the day, then a document in its last seconds.
		e.setClock(sk(late, "23:59:00"))
		e.syncBuyer()
		e.setClock(sk(late, "23:59:50"))
		lastOfDay := e.drop("")
		all = append(all, lastOfDay)
		e.setClock(sk(late.AddDate(0, 0, 1), "00:00:20"))
		all = append(all, e.drop(""))
		e.setClock(sk(late.AddDate(0, 0, 1), "00:01:00"))
		e.syncBuyer()
		docs = e.wantInboxOnce(all)
		if polled, _ := e.cursor(); polled != day(late) {
			// A read that started within UJP's clock margin of midnight
			// does not close the day.
			t.Fatalf("cursor %s at 00:01, want %s still open", polled, day(late))
		}
		e.setClock(sk(late.AddDate(0, 0, 1), "00:06:00"))
		e.syncBuyer()
		if polled, _ := e.cursor(); polled != day(late.AddDate(0, 0, 1)) {
			t.Fatalf("cursor %s at 00:06, want %s", polled, day(late.AddDate(0, 0, 1)))
		}
		e.wantInboxOnce(all)
		if d := docs[lastOfDay]; d["transactionDate"] != day(late) {
			t.Fatalf("the last document of the day: transaction date %v", d["transactionDate"])
		}
	})
}

// TestInboxReadTwice: two reads of the same payloads (two processes, or a
// read redone after a crash before its answer was recorded) store each
// document once, with one inbox.received.
func TestInboxReadTwice(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newInboxEnv(t, db)
		euids := []string{e.drop(""), e.drop(""), e.drop("")}
		// Read up to the payloads, then ask for the same payload read again
		// beside the first.
		e.enqueue(einvoicing.KindPollCompany, map[string]string{"companyId": e.buyer})
		// A job may be snoozed for a UJP user's turn, so an idle runner is
		// not yet a failure: look until a deadline.
		deadline := time.Now().Add(30 * time.Second)
		for e.countRows("SELECT COUNT(*) FROM signing_requests WHERE company_id = $1 AND link_type = 'ujp_purchase_payloads'", e.buyer) == 0 {
			if e.signAll() == 0 {
				n, err := e.runner.RunOnce(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					if time.Now().After(deadline) {
						t.Fatal("no payload read was asked for")
					}
					time.Sleep(10 * time.Millisecond) // poll interval while a snoozed job waits
				}
			}
		}
		var payload, link string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT payload, link_id FROM signing_requests WHERE company_id = $1 AND link_type = 'ujp_purchase_payloads'",
			e.buyer).Scan(&payload, &link); err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(payload)
		if err := db.InTx(t.Context(), func(tx *store.Tx) error {
			_, err := einvoicing.RequestSignature(t.Context(), tx, e.buyer, einvoicing.PurposeQuery, raw, einvoicing.SigningLink{Type: "ujp_purchase_payloads", ID: link})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		e.settleAll()
		if n := e.countRows("SELECT COUNT(*) FROM signing_requests WHERE company_id = $1 AND link_type = 'ujp_purchase_payloads' AND state = 'signed'", e.buyer); n != 2 {
			t.Fatalf("%d payload reads signed, want 2", n)
		}
		e.wantInboxOnce(euids)
	})
}

// TestInboxDeadline walks a document through its deadline on a controlled
// clock, with the deadline job of two services (two processes) on one
// store running at every step: inbox.deadline_approaching once each at 5,
// 2 and 1 days left (daysLeft in Skopje's calendar), then auto_accepted
// with inbox.auto_accepted after the 10th, a later accept 409
// decision_deadline_passed, and UJP's 04 confirming it without a second
// event. A decision still waiting for its signature at the deadline fails.
func TestInboxDeadline(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newInboxEnv(t, db)
		otherApp, _ := newApp(db, einvoicing.Deps{}, appConfig{Sandbox: e.sim}, webhooks.Deps{}, webhooks.Config{})
		other := otherApp.inbox
		txDate := e.now().In(ujpdoc.Skopje).Format(time.DateOnly)
		by := einvoice.DecideBy(e.now().In(ujpdoc.Skopje))
		id, euid := e.dropAndSync(txDate)
		waiting, _ := e.dropAndSync(txDate)
		voided, voidedEUID := e.dropAndSync(txDate)
		// Its seller voids it and the buyer confirms the storno at UJP
		// (its portal): UJP moves the original to 07.
		sd, err := e.sim.SellerStorno(t.Context(), voidedEUID, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.sim.Decide(t.Context(), sd.EUID, true, "", ""); err != nil {
			t.Fatal(err)
		}
		e.syncBuyer()
		if d := e.doc(id); d["decideBy"] != by.Format(time.DateOnly) {
			t.Fatalf("decideBy %v, want %s", d["decideBy"], by.Format(time.DateOnly))
		}
		at := func(offsetDays int, hm string) {
			v, err := time.ParseInLocation("2006-01-02 15:04", by.AddDate(0, 0, offsetDays).Format(time.DateOnly)+" "+hm, ujpdoc.Skopje)
			if err != nil {
				t.Fatal(err)
			}
			e.setClock(v)
		}
		deadlines := func() {
			t.Helper()
			for _, step := range []func(*inbox.Service) func(context.Context) error{
				func(s *inbox.Service) func(context.Context) error { return s.InboxReminders },
				func(s *inbox.Service) func(context.Context) error { return s.InboxAutoAccepts },
			} {
				errs := make(chan error, 2)
				for _, s := range []*inbox.Service{e.inboxes, other} {
					go func() { errs <- step(s)(t.Context()) }()
				}
				for range 2 {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		reminders := func(doc string) []float64 {
			t.Helper()
			st, m, raw, _ := e.buyerDo("GET", "/v1/events?limit=200&type=inbox.deadline_approaching&objectId="+doc, nil)
			if st != 200 {
				t.Fatalf("events: %d %s", st, raw)
			}
			var out []float64
			for _, it := range m["data"].([]any) {
				out = append([]float64{deref(it.(map[string]any), "data", "object", "daysLeft").(float64)}, out...)
			}
			return out
		}
		wantReminders := func(want ...float64) {
			t.Helper()
			got := reminders(id)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("reminders %v (daysLeft), want %v", got, want)
			}
		}
		for _, step := range []struct {
			offset int
			hm     string
			want   []float64
		}{
			{-6, "23:59", nil},
			{-5, "00:01", []float64{5}},
			{-5, "18:00", []float64{5}},
			{-4, "12:00", []float64{5}},
			{-3, "12:00", []float64{5}},
			{-2, "00:00", []float64{5, 2}},
			{-2, "23:00", []float64{5, 2}},
			{-1, "08:00", []float64{5, 2, 1}},
			{0, "23:59", []float64{5, 2, 1}},
		} {
			at(step.offset, step.hm)
			deadlines()
			deadlines()
			wantReminders(step.want...)
		}
		if d := e.doc(id); d["daysLeft"] != float64(0) || deref(d, "decision", "state") != "pending" {
			t.Fatalf("on the last day: daysLeft %v, decision %v", d["daysLeft"], d["decision"])
		}
		// A decision asked for on the last day and never signed.
		if st, _, raw, _ := e.buyerDo("POST", "/v1/inbox/"+waiting+"/accept", nil); st != 202 {
			t.Fatalf("accept on the last day: %d %s", st, raw)
		}

		at(1, "00:00")
		deadlines()
		deadlines()
		d := e.doc(id)
		end := einvoice.DeadlineEnd(by).UTC().Format(time.RFC3339)
		if deref(d, "decision", "state") != "auto_accepted" || deref(d, "decision", "decidedAt") != end || d["daysLeft"] != float64(-1) ||
			deref(d, "ujpStatus", "code") != "01" {
			t.Fatalf("after the deadline: %v, daysLeft %v, ujp %v (want decidedAt %s)", d["decision"], d["daysLeft"], d["ujpStatus"], end)
		}
		if ev := e.buyerEvents(id); !equal(ev, []string{"inbox.received", "inbox.deadline_approaching", "inbox.deadline_approaching",
			"inbox.deadline_approaching", "inbox.auto_accepted"}) {
			t.Fatalf("events %v", ev)
		}
		if st, m, _, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 409 || m["code"] != "decision_deadline_passed" {
			t.Fatalf("accept after the deadline: %d %v", st, m)
		}
		w := e.doc(waiting)
		if deref(w, "decision", "state") != "auto_accepted" || deref(w, "decision", "requested") != nil || !equal(problemCodes(w), []string{"decision_late"}) {
			t.Fatalf("the decision waiting at the deadline: %v %v", w["decision"], w["problems"])
		}
		if ev := e.buyerEvents(waiting); ev[len(ev)-2] != "inbox.decision_failed" || ev[len(ev)-1] != "inbox.auto_accepted" {
			t.Fatalf("events of the waiting decision %v", ev)
		}
		// Signed late, it is not sent.
		before := e.dg.decisions.Load()
		e.settleAll()
		if n := e.dg.decisions.Load() - before; n != 0 {
			t.Fatalf("%d decisions sent after the deadline", n)
		}

		// UJP reports 04: confirmed, no second event. (The 10th is closed
		// for reading once UJP's clock margin past midnight has passed.)
		at(1, "00:10")
		e.syncBuyer()
		d = e.doc(id)
		if deref(d, "ujpStatus", "code") != "04" || deref(d, "decision", "state") != "auto_accepted" {
			t.Fatalf("after UJP's 04: %v %v", d["ujpStatus"], d["decision"])
		}
		if got, _ := e.sim.Document(t.Context(), euid); got.Status != ujp.StatusAutoAccepted {
			t.Fatalf("UJP has %s", got.Status)
		}
		if n := e.countRows("SELECT COUNT(*) FROM events WHERE object_id = $1 AND type = 'inbox.auto_accepted'", id); n != 1 {
			t.Fatalf("%d inbox.auto_accepted events", n)
		}
		if n := e.countRows("SELECT COUNT(*) FROM inbox_reminders WHERE document_id = $1", id); n != 3 {
			t.Fatalf("%d reminders recorded", n)
		}
		// The document its seller voided: no reminder, not auto-accepted.
		if v := e.doc(voided); deref(v, "decision", "state") != "pending" || deref(v, "ujpStatus", "code") != "07" || len(reminders(voided)) != 0 {
			t.Fatalf("the voided document: %v %v, reminders %v", v["decision"], v["ujpStatus"], reminders(voided))
		}
	})
}

// TestInboxSandboxAndAccess: the sandbox drops an incoming invoice with a
// chosen transaction date (once per Idempotency-Key) and drives the
// deadline and the seller's storno; the PDF arrives by a signed read; the
// list pages and filters; scopes, X-Company-Id and other companies' ids are
// refused as the spec says.
func TestInboxSandboxAndAccess(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newInboxEnv(t, db)
		now := e.now().In(ujpdoc.Skopje)
		txDate := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		key := denar.NewID("idem")
		st, m, first, _ := e.buyerDo("POST", "/v1/sandbox/inbox", map[string]any{"transactionDate": txDate}, "Idempotency-Key", key)
		wantBy := time.Date(now.Year(), now.Month()+1, 10, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		if st != 202 || m["decideBy"] != wantBy || m["sellerTaxNumber"] != ujpsim.TaxSupplier || m["transactionDate"] != txDate {
			t.Fatalf("drop: %d %s", st, first)
		}
		if st, _, again, _ := e.buyerDo("POST", "/v1/sandbox/inbox", map[string]any{"transactionDate": txDate}, "Idempotency-Key", key); st != 202 || !bytes.Equal(again, first) {
			t.Fatalf("drop replayed: %d %s", st, again)
		}
		supplied, err := e.sim.Documents(t.Context(), ujpsim.TaxSupplier)
		if err != nil || len(supplied) != 1 {
			t.Fatalf("the supplier sent %d documents (%v), want 1", len(supplied), err)
		}
		e.settleAll() // the drop scheduled a read
		euid := m["euid"].(string)
		d := e.inbox()[euid]
		if d == nil || d["decideBy"] != wantBy || deref(d, "seller", "name") != "Тест Добавувач ДООЕЛ Тетово" {
			t.Fatalf("dropped document in the inbox: %v", d)
		}
		id := d["id"].(string)
		if st, m, _, _ := e.buyerDo("POST", "/v1/sandbox/inbox", map[string]any{"transactionDate": "28.10.2026"}); st != 422 || m["code"] != "validation_failed" {
			t.Fatalf("a bad date: %d %v", st, m)
		}

		// The PDF: not ready until its read is signed.
		if st, m, _, _ := e.buyerDo("GET", "/v1/inbox/"+id+"/pdf", nil); st != 409 || m["code"] != "pdf_not_ready" {
			t.Fatalf("pdf before its read: %d %v", st, m)
		}
		e.settleAll()
		if st, _, pdf, hdr := e.buyerDo("GET", "/v1/inbox/"+id+"/pdf", nil); st != 200 || !bytes.HasPrefix(pdf, []byte("%PDF-")) || hdr.Get("Content-Type") != "application/pdf" {
			t.Fatalf("pdf: %d %s", st, hdr.Get("Content-Type"))
		}

		// deadline_passes: UJP auto-accepts now.
		if st, m, raw, _ := e.buyerDo("POST", "/v1/sandbox/inbox/"+id+"/simulate", map[string]any{"action": "deadline_passes"}); st != 202 || m["action"] != "deadline_passes" {
			t.Fatalf("simulate deadline: %d %s", st, raw)
		}
		e.settleAll()
		if d := e.doc(id); deref(d, "decision", "state") != "auto_accepted" || deref(d, "ujpStatus", "code") != "04" {
			t.Fatalf("after deadline_passes: %v %v", d["decision"], d["ujpStatus"])
		}
		if st, m, _, _ := e.buyerDo("POST", "/v1/inbox/"+id+"/accept", nil); st != 409 || m["code"] != "decision_deadline_passed" {
			t.Fatalf("accept after deadline_passes: %d %v", st, m)
		}
		if st, m, _, _ := e.buyerDo("POST", "/v1/sandbox/inbox/"+id+"/simulate", map[string]any{"action": "deadline_passes"}); st != 409 || m["code"] != "inbox_state_conflict" {
			t.Fatalf("deadline_passes twice: %d %v", st, m)
		}

		// seller_stornos: the storno arrives; UJP voids the original (07)
		// once the buyer accepts the storno (statuses.txt's stricter
		// reading), not before.
		other, otherEUID := e.dropAndSync("")
		st, m, raw, _ := e.buyerDo("POST", "/v1/sandbox/inbox/"+other+"/simulate", map[string]any{"action": "seller_stornos"})
		if st != 202 || m["stornoEuid"] == nil {
			t.Fatalf("seller_stornos: %d %s", st, raw)
		}
		e.settleAll()
		if d := e.doc(other); deref(d, "ujpStatus", "code") != "01" || deref(d, "decision", "state") != "pending" {
			t.Fatalf("after the storno, before the buyer accepted it: %v %v", d["ujpStatus"], d["decision"])
		}
		storno := e.inbox()[m["stornoEuid"].(string)]
		if storno == nil || storno["kind"] != "storno" || storno["originalEuid"] != otherEUID || !strings.HasPrefix(deref(storno, "totals", "gross").(string), "-") {
			t.Fatalf("the storno in the inbox: %v", storno)
		}
		if st, _, raw, _ := e.buyerDo("POST", "/v1/inbox/"+storno["id"].(string)+"/accept", nil); st != 202 {
			t.Fatalf("accept the storno: %d %s", st, raw)
		}
		e.settleAll()
		e.syncBuyer()
		if d := e.doc(storno["id"].(string)); deref(d, "decision", "state") != "accepted" || deref(d, "ujpStatus", "code") != "03" {
			t.Fatalf("the storno after the buyer accepted it: %v %v", d["decision"], d["ujpStatus"])
		}
		if d := e.doc(other); deref(d, "ujpStatus", "code") != "07" || deref(d, "decision", "state") != "pending" {
			t.Fatalf("after the storno was accepted: %v %v", d["ujpStatus"], d["decision"])
		}
		if ev := e.buyerEvents(other); !equal(ev, []string{"inbox.received", "inbox.cancelled_by_storno"}) {
			t.Fatalf("events %v", ev)
		}
		if st, m, _, _ := e.buyerDo("POST", "/v1/inbox/"+other+"/accept", nil); st != 409 || m["code"] != "inbox_state_conflict" {
			t.Fatalf("accept a voided document: %d %v", st, m)
		}

		// Filters and pages. One document two months old, its deadline past.
		e.drop(time.Date(now.Year(), now.Month()-2, 15, 0, 0, 0, 0, time.UTC).Format(time.DateOnly))
		for range 24 {
			e.drop("")
		}
		e.syncBuyer()
		if docs := e.inbox(); len(docs) != 28 {
			t.Fatalf("%d documents over every page, want 28", len(docs))
		}
		st, m, _, _ = e.buyerDo("GET", "/v1/inbox", nil)
		if st != 200 || len(m["data"].([]any)) != 25 || m["nextCursor"] == nil {
			t.Fatalf("first page: %d, %d items", st, len(m["data"].([]any)))
		}
		// The old one was auto-accepted by UJP the moment it arrived.
		if st, m, _, _ := e.buyerDo("GET", "/v1/inbox?status=auto_accepted", nil); st != 200 || len(m["data"].([]any)) != 2 {
			t.Fatalf("status=auto_accepted: %d %v", st, m)
		}
		if st, m, _, _ := e.buyerDo("GET", "/v1/inbox?deadlineBefore="+time.Date(now.Year(), now.Month()-1, 11, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), nil); st != 200 || len(m["data"].([]any)) != 1 {
			t.Fatalf("deadlineBefore: %d %v", st, m)
		}
		if st, m, _, _ := e.buyerDo("GET", "/v1/inbox?status=pending&cursor="+m["nextCursor"].(string), nil); st != 422 {
			t.Fatalf("a cursor of another filter: %d %v", st, m)
		}
		if st, _, _, _ := e.buyerDo("GET", "/v1/inbox?deadlineBefore=10.12.2026", nil); st != 422 {
			t.Fatalf("a bad deadlineBefore: %d", st)
		}

		// Access.
		as := &auth.Store{DB: db}
		var account string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT account_id FROM companies WHERE id = $1", e.buyer).Scan(&account); err != nil {
			t.Fatal(err)
		}
		keyWith := func(scopes ...string) string {
			_, k, err := as.CreateKey(t.Context(), auth.KeyParams{AccountID: account, Service: auth.ServiceEInvoice, Environment: auth.EnvSandbox, Scopes: scopes})
			if err != nil {
				t.Fatal(err)
			}
			return "Bearer " + k
		}
		readOnly, noInbox := keyWith("inbox:read"), keyWith("einvoices:read", "einvoices:write")
		for _, tc := range []struct {
			name, method, path string
			hdr                []string
			status             int
			code               string
		}{
			{"accept without inbox:write", "POST", "/v1/inbox/" + id + "/accept", []string{"Authorization", readOnly}, 403, "insufficient_scope"},
			{"list without inbox:read", "GET", "/v1/inbox", []string{"Authorization", noInbox}, 403, "insufficient_scope"},
			{"payload without inbox:read", "GET", "/v1/inbox/" + id + "/payload", []string{"Authorization", noInbox}, 403, "insufficient_scope"},
			{"drop without inbox:write", "POST", "/v1/sandbox/inbox", []string{"Authorization", readOnly}, 403, "insufficient_scope"},
			{"no X-Company-Id with two companies", "GET", "/v1/inbox", []string{"X-Company-Id", ""}, 400, "company_required"},
			{"another company's document", "GET", "/v1/inbox/" + id, []string{"X-Company-Id", e.company}, 404, "not_found"},
			{"no credential", "GET", "/v1/inbox", []string{"Authorization", ""}, 401, "unauthenticated"},
			{"accept without Idempotency-Key", "POST", "/v1/inbox/" + id + "/accept", []string{"Idempotency-Key", ""}, 400, "idempotency_key_required"},
			{"an unknown document", "GET", "/v1/inbox/inbd_nope", nil, 404, "not_found"},
		} {
			st, m, raw, _ := e.buyerDo(tc.method, tc.path, nil, tc.hdr...)
			if st != tc.status || m["code"] != tc.code {
				t.Errorf("%s: %d %s, want %d %s", tc.name, st, raw, tc.status, tc.code)
			}
		}

		// Outside the simulator: 403 sandbox_only.
		_, plain := newAPI(db, einvoicing.Deps{}, einvoicing.Config{})
		srv := httptest.NewServer(plain.Handler())
		defer srv.Close()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/sandbox/inbox", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+e.buyerKey)
		req.Header.Set("X-Company-Id", e.buyer)
		req.Header.Set("Idempotency-Key", denar.NewID("idem"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Fatalf("drop without a simulator: %d", resp.StatusCode)
		}
	})
}
