package einvoiceapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// Answers of UJP, as its reference writes them, and of things in front of
// it.
func ujpAnswer(code, msg string) string {
	return fmt.Sprintf(`{"success":false,"createdDate":"2026-01-05T08:26:07","errorStatus":{"errorCode":%q,"errorMessage":%q}}`, code, msg)
}

const (
	springBoot400 = `{"timestamp":"2026-01-05T08:26:07.846+00:00","status":400,"error":"Bad Request","path":"/JSONReceiver/api/v1/sales-invoices/send"}`
	springBoot500 = `{"timestamp":"2026-01-05T08:26:07.846+00:00","status":500,"error":"Internal Server Error","path":"/JSONReceiver/api/v1/sales-invoices/send"}`
	gatewayPage   = `<html><head><title>504 Gateway Time-out</title></head><body><h1>504 Gateway Time-out</h1></body></html>`
)

// sends are the calls that reached UJP's receiver (or something in front
// of it).
func (e *pipeEnv) sends() int { return len(e.tr.callsTo(ujp.PathSend)) }

// noRateLimit fails the test when UJP refused a call for the rate
// (E4007): the turns keep every user within it.
func (e *pipeEnv) noRateLimit() {
	e.t.Helper()
	var n int
	if err := e.db.ReadDB().QueryRowContext(e.t.Context(), `SELECT COUNT(*) FROM einvoice_status_history WHERE ujp_code = 'E4007'`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	var jobsLimited int
	if err := e.db.ReadDB().QueryRowContext(e.t.Context(), `SELECT COUNT(*) FROM jobs WHERE last_error LIKE '%E4007%'`).Scan(&jobsLimited); err != nil {
		e.t.Fatal(err)
	}
	if n+jobsLimited != 0 {
		e.t.Fatalf("UJP refused %d moves and %d jobs for the rate (E4007)", n, jobsLimited)
	}
}

// TestPipelineDuplicateWithoutEUID: UJP's E1023 "Invoice already exists
// for that ID" names no EUID; the document is looked up in UJP's records
// and delivered with UJP's EUID, never failed, and never sent a third time.
func TestPipelineDuplicateWithoutEUID(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		e.tr.plainDuplicate = true
		id := e.issue("F-dup")
		e.gw.doubleNext.Store(1)
		e.settle()
		m := e.wantStatus(id, "delivered")
		docs := e.simDocs()
		if len(docs) != 1 || docs[0].EUID != m["euid"] || docs[0].DocID != id {
			t.Fatalf("UJP holds %d documents; euid %v", len(docs), m["euid"])
		}
		want := []string{"→awaiting_signature:issued", "awaiting_signature→queued:signed", "queued→submitting:submission",
			"submitting→queued:ujp_duplicate", "queued→delivered:submitted_earlier"}
		if h := e.history(id); !equal(h, want) {
			t.Fatalf("history %v", h)
		}
		if n := e.sends(); n != 2 {
			t.Fatalf("%d sends reached UJP, want the two of the double send", n)
		}
		e.noRateLimit()
	})
}

// TestPipelineNoAnswerNotAtUJP: a send that got a gateway's timeout page
// is held until UJP's records are read; UJP does not hold it, so it is
// sent again, once, and delivered.
func TestPipelineNoAnswerNotAtUJP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-504")
		e.tr.answerNext(ujp.PathSend, 1, 504, gatewayPage)
		e.settle()
		e.wantStatus(id, "held")
		e.advance(61 * time.Second)
		e.settle()
		e.wantStatus(id, "delivered")
		want := []string{"→awaiting_signature:issued", "awaiting_signature→queued:signed", "queued→submitting:submission",
			"submitting→held:ujp_outage", "held→submitting:retry", "submitting→delivered:submitted"}
		if h := e.history(id); !equal(h, want) {
			t.Fatalf("history %v", h)
		}
		if n, docs := e.sends(), e.simDocs(); n != 2 || len(docs) != 1 {
			t.Fatalf("%d sends, %d documents at UJP", n, len(docs))
		}
		if n := e.countLinks("ujp_sales_lookup"); n != 1 {
			t.Fatalf("%d look-ups", n)
		}
	})
}

// TestPipelineLookupWithoutRD: a company whose signer lacks RD (no
// payloads) has the document found by number, date, gross and buyer.
func TestPipelineLookupWithoutRD(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-nord")
		// The payload read of the look-up is refused (no RD): the company
		// carries the problem and the look-up matches without payloads.
		e.tr.answerNext(ujp.PathSalesPayloadList, 1, 403, ujpAnswer("E1011", "Privilege not found"))
		e.gw.loseNext.Store(1)
		e.settle()
		e.advance(61 * time.Second)
		e.settle()
		m := e.wantStatus(id, "delivered")
		if docs := e.simDocs(); len(docs) != 1 || docs[0].EUID != m["euid"] || e.sends() != 1 {
			t.Fatalf("%d documents at UJP, %d sends", len(docs), e.sends())
		}
		if h := e.history(id); h[len(h)-1] != "held→delivered:submitted_earlier" {
			t.Fatalf("history %v", h)
		}
		probs := e.companyProblems()
		if len(probs) != 1 || probs[0]["code"] != "ujp_privilege_missing" || probs[0]["privilege"] != "RD" || probs[0]["ujpCode"] != "E1011" {
			t.Fatalf("company problems %v", probs)
		}
		if n := e.countLinks("ujp_sales_lookup"); n != 2 {
			t.Fatalf("%d status reads, want the first and the one after the refused payloads", n)
		}
	})
}

// companyProblems is the company's problems as GET /v1/companies/{id}
// shows them.
func (e *pipeEnv) companyProblems() []map[string]any {
	e.t.Helper()
	st, m, raw := e.call("GET", "/v1/companies/"+e.company, nil)
	if st != 200 {
		e.t.Fatalf("company: %d %s", st, raw)
	}
	list, ok := m["problems"].([]any)
	if !ok {
		e.t.Fatalf("company without problems: %s", raw)
	}
	out := []map[string]any{}
	for _, p := range list {
		out = append(out, p.(map[string]any))
	}
	return out
}

// TestPipelineUnknownOutcomeOutlivesTheHoldWindow: a held document whose
// send UJP may hold is never failed by the hold window, however long the
// look-up takes.
func TestPipelineUnknownOutcomeOutlivesTheHoldWindow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnvWith(t, db, func(c *appConfig) { c.Pipeline.HoldWindow = 5 * time.Minute })
		id := e.issue("F-window")
		e.gw.loseNext.Store(1)
		e.settle()
		e.wantStatus(id, "held")
		// Nobody signs the look-up for longer than the window.
		for range 8 {
			e.advance(61 * time.Second)
			for range 3 {
				if _, err := e.runner.RunOnce(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
		}
		e.wantStatus(id, "held")
		e.settle()
		e.wantStatus(id, "delivered")
		if len(e.simDocs()) != 1 || e.sends() != 1 {
			t.Fatalf("%d documents, %d sends", len(e.simDocs()), e.sends())
		}
	})
}

// TestPipelineErrorsByUJPCode: a 500 carrying UJP's terminal E5007 fails
// the document at once (not held and signed again for the hold window); a
// 4xx in a framework's shape fails it with the body kept; a 5xx in that
// shape holds it.
func TestPipelineErrorsByUJPCode(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		terminal := e.issue("F-5007")
		e.tr.answerNext(ujp.PathSend, 1, 500, ujpAnswer("E5007", "Document validation failed"))
		e.settle()
		m := e.wantStatus(terminal, "failed")
		if p := m["problems"].([]any); len(p) != 1 || p[0].(map[string]any)["code"] != "E5007" {
			t.Fatalf("problems %v", p)
		}
		foreign := e.issue("F-spring-400")
		e.tr.answerNext(ujp.PathSend, 1, 400, springBoot400)
		e.settle()
		m = e.wantStatus(foreign, "failed")
		p := m["problems"].([]any)[0].(map[string]any)
		if p["code"] != einvoicing.ProblemUnexpectedAnswer || !strings.Contains(p["message"].(string), `"error":"Bad Request"`) ||
			!strings.Contains(p["message"].(string), "HTTP 400") {
			t.Fatalf("problems %v", m["problems"])
		}
		outage := e.issue("F-spring-500")
		e.tr.answerNext(ujp.PathSend, 1, 500, springBoot500)
		e.settle()
		e.wantStatus(outage, "held")
	})
}

// TestAccessRefusalsAreTheCompanys: UJP refusing the signer (E1013 on a
// send, E1011 on a PDF without DP) fails no document: the document waits
// and is sent again, the PDF is asked for again, and the company shows the
// problem until a call of its kind succeeds.
func TestAccessRefusalsAreTheCompanys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-access")
		e.tr.answerNext(ujp.PathSend, 1, 403, ujpAnswer("E1013", "User is not authorized to sign documents for this company"))
		e.tr.answerNext(ujp.PathSalesPDF, 1, 403, ujpAnswer("E1011", "Privilege not found"))
		e.settle()
		e.wantStatus(id, "queued")
		probs := e.companyProblems()
		if len(probs) != 1 || probs[0]["code"] != "ujp_access_missing" || probs[0]["ujpCode"] != "E1013" || probs[0]["since"] == nil {
			t.Fatalf("company problems %v", probs)
		}
		if h := e.history(id); h[len(h)-1] != "submitting→queued:ujp_access_missing" {
			t.Fatalf("history %v", h)
		}
		// Set right in UJP's portal: the retry goes through, and clears it.
		e.advance(61 * time.Second)
		e.settle()
		e.wantStatus(id, "delivered")
		probs = e.companyProblems()
		if len(probs) != 1 || probs[0]["code"] != "ujp_privilege_missing" || probs[0]["privilege"] != "DP" {
			t.Fatalf("company problems after the PDF read %v", probs)
		}
		if st, m, _ := e.call("GET", "/v1/einvoices/"+id+"/pdf", nil); st != 409 || m["code"] != "pdf_not_ready" {
			t.Fatalf("pdf without DP: %d %v", st, m)
		}
		// DP granted: the PDF asked for again arrives, and the problem goes.
		e.settle()
		if st, _, raw := e.call("GET", "/v1/einvoices/"+id+"/pdf", nil); st != 200 || !strings.HasPrefix(string(raw), "%PDF-") {
			t.Fatalf("pdf: %d %.40q", st, raw)
		}
		if probs := e.companyProblems(); len(probs) != 0 {
			t.Fatalf("problems after the PDF %v", probs)
		}
	})
}

// TestPollSurvivesWithoutServerTime: UJP's server-time not answering does
// not stop the poll: the change feed is read by our own clock.
func TestPollSurvivesWithoutServerTime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-time")
		e.settle()
		e.wantStatus(id, "delivered")
		if st, m := e.simulate(id, "buyer_accepts", nil); st != 202 {
			t.Fatalf("simulate: %d %v", st, m)
		}
		e.tr.answerNext(ujp.PathServerTime, 100, 503, gatewayPage)
		e.pollNow()
		e.wantStatus(id, "accepted")
		if len(e.tr.callsTo(ujp.PathServerTime)) == 0 {
			t.Fatal("server time was not asked")
		}
	})
}

// TestIdentityOnUJPCalls: registry look-ups go as the operator's user
// with X-EDB the company they are made for (the buyer check: the seller;
// onboarding: the company onboarded), server time as the signer, every
// call of the pipeline carries X-EUJP-ID and X-EDB, and none is a path
// only the simulator has (the certificate was registered with it out of
// band, by the sandbox's set-up).
func TestIdentityOnUJPCalls(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-who")
		e.settle()
		e.wantStatus(id, "delivered")
		e.pollNow()
		buyerChecks := e.tr.callsTo(ujp.PathCompanies + ujpsim.TaxBuyer)
		if len(buyerChecks) == 0 {
			t.Fatal("no registry look-up of the buyer")
		}
		for _, c := range buyerChecks {
			if c.header.Get("X-EUJP-ID") != testOperator || c.header.Get("X-EDB") != ujpsim.TaxSeller {
				t.Fatalf("buyer check as %q/%q, want the operator for the seller", c.header.Get("X-EUJP-ID"), c.header.Get("X-EDB"))
			}
		}
		st, _, raw := e.call("POST", "/v1/companies", map[string]any{"taxNumber": ujpsim.TaxSmallBiz,
			"representative": map[string]string{"name": "Ана", "email": "ana@example.mk"}})
		if st != 201 {
			t.Fatalf("onboarding: %d %s", st, raw)
		}
		onboard := e.tr.callsTo(ujp.PathCompanies + ujpsim.TaxSmallBiz)
		if len(onboard) != 1 || onboard[0].header.Get("X-EDB") != ujpsim.TaxSmallBiz || onboard[0].header.Get("X-EUJP-ID") != testOperator {
			t.Fatalf("onboarding look-ups %+v", onboard)
		}
		e.tr.mu.Lock()
		defer e.tr.mu.Unlock()
		for _, c := range e.tr.calls {
			if strings.HasPrefix(c.path, "/_sim") {
				t.Errorf("the gateway called the simulator's %s: UJP has no such path", c.path)
			}
			if c.header.Get("X-EUJP-ID") == "" || c.header.Get("X-EDB") == "" {
				t.Errorf("%s without X-EUJP-ID or X-EDB", c.path)
			}
			if strings.HasSuffix(c.path, ujp.PathServerTime) && c.header.Get("X-EDB") != ujpsim.TaxSeller {
				t.Errorf("server time as %q", c.header.Get("X-EDB"))
			}
		}
	})
}

// TestManyDocumentsOneSigner: a burst of documents of one signer goes
// through the signer's turns: no E4007 from the simulator (which holds
// every user to one call per window), no document sent twice.
func TestManyDocumentsOneSigner(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		var ids []string
		for i := range 12 {
			ids = append(ids, e.issue(fmt.Sprintf("F-burst-%d", i)))
		}
		e.settle()
		for _, id := range ids {
			e.wantStatus(id, "delivered")
		}
		e.noRateLimit()
		if n := e.sends(); n != len(ids) {
			t.Fatalf("%d sends for %d documents", n, len(ids))
		}
	})
}

// TestPipelineInterruptedAttempt: a document left in submitting by a
// process that died during its send is not sent blindly again: its attempt
// may have reached UJP, so UJP's records are read; it had, and the document
// is delivered with UJP's EUID, one document at UJP.
func TestPipelineInterruptedAttempt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		id := e.issue("F-crash")
		e.signAll()
		// The dead process's send: it reached UJP, and the row says
		// submitting.
		var jws, eujp, serial string
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT r.jws, c.eujp_id, c.serial FROM signing_requests r
			JOIN signing_certificates c ON c.id = r.certificate_id WHERE r.link_id = $1 AND r.state = 'signed'`, id).Scan(&jws, &eujp, &serial); err != nil {
			t.Fatal(err)
		}
		if _, err := e.gw.Gateway.Send(t.Context(), ujp.Identity{EUJPID: eujp, EDB: ujpsim.TaxSeller, SerialNumber: serial}, "100", jws); err != nil {
			t.Fatal(err)
		}
		if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE einvoices SET status = 'submitting', updated_at = $1 WHERE id = $2",
			e.now().Add(-5*time.Minute), id); err != nil {
			t.Fatal(err)
		}
		e.settle()
		e.advance(61 * time.Second)
		e.settle()
		m := e.wantStatus(id, "delivered")
		if docs := e.simDocs(); len(docs) != 1 || docs[0].EUID != m["euid"] {
			t.Fatalf("%d documents at UJP", len(docs))
		}
		if n := e.gw.sends.Load(); n != 0 {
			t.Fatalf("the pipeline sent %d times", n)
		}
		if h := e.history(id); h[len(h)-2] != "submitting→held:attempt_interrupted" || h[len(h)-1] != "held→delivered:submitted_earlier" {
			t.Fatalf("history %v", h)
		}
	})
}
