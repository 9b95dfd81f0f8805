package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestTwoServesOneSandboxUJP runs two `denar serve` processes on one
// PostgreSQL database with the embedded simulator (the default sandbox
// backend, no DENAR_UJP_SANDBOX_URL), and the SDK worker signing through
// the first. E-invoices issued through both are all delivered, and the
// simulated UJP holds exactly one document per docId: both processes' job
// runners submit, and both embedded simulators are the same UJP. Buyer
// decisions simulated through one process are observed through the other
// (with a simulator per process, a decision sent to the process whose
// simulator did not receive the document is refused, and a change feed read
// by the other process's runner never shows it). No job ran twice.
func TestTwoServesOneSandboxUJP(t *testing.T) {
	t.Parallel()
	dbURL := storetest.PostgresURL(t)
	env := append(baseEnv(t, dbURL), "DENAR_LOG_LEVEL=debug", "DENAR_UJP_POLL_INTERVAL=300ms",
		"DENAR_JOB_POLL_INTERVAL=100ms", "DENAR_UJP_CALL_TIMEOUT=5s", "DENAR_RATE_LIMIT_RPS=10000", "DENAR_RATE_LIMIT_BURST=10000")
	a := startServer(t, env)
	b := startServer(t, env)
	for _, s := range []*server{a, b} {
		if !strings.Contains(s.stderr.String(), "embedded simulator") {
			t.Fatalf("the start-up log does not name the embedded simulator:\n%s", s.stderr.String())
		}
	}
	w := &einvoiceWorld{t: t, env: a.env, srv: a}
	w.setup()
	procs := map[string]*server{"A": a, "B": b}
	other := map[string]string{"A": "B", "B": "A"}

	const n = 16
	type invoice struct{ id, via string }
	var invoices []invoice
	for i := range n {
		via := "A"
		if i%2 == 1 {
			via = "B"
		}
		r := w.postAt(procs[via], "/v1/einvoices", invoiceBody(fmt.Sprintf("TWO-%02d", i), ""))
		var m struct{ ID string }
		if err := json.Unmarshal(r.body, &m); err != nil || r.status != 202 {
			t.Fatalf("issue through %s: %d %s", via, r.status, r.body)
		}
		invoices = append(invoices, invoice{m.ID, via})
	}
	for _, inv := range invoices {
		w.waitStatusAt(procs[other[inv.via]], inv.id, "delivered", 60*time.Second)
	}

	// Decisions through the process that did not issue the e-invoice,
	// observed through the one that did: accept and reject in turn.
	want := map[string]string{}
	for i, inv := range invoices {
		via := other[inv.via]
		body, status := `{"action":"buyer_accepts"}`, "accepted"
		if i%4 >= 2 {
			body, status = `{"action":"buyer_rejects","rejectReasonCode":"`+firstRejectReason()+`","comment":"two processes"}`, "rejected"
		}
		if r := w.postAt(procs[via], "/v1/sandbox/einvoices/"+inv.id+"/simulate", body); r.status != 202 {
			t.Fatalf("simulate on %s through %s (issued through %s): %d %s", inv.id, via, inv.via, r.status, r.body)
		}
		want[inv.id] = status
	}
	for _, inv := range invoices {
		m := w.waitStatusAt(procs[inv.via], inv.id, want[inv.id], 60*time.Second)
		if m["submitAttempts"] != float64(1) {
			t.Errorf("%s: submitAttempts %v, want 1", inv.id, m["submitAttempts"])
		}
		_, hist := w.getAt(procs[other[inv.via]], "/v1/einvoices/"+inv.id+"/status-history")
		delivered := 0
		for _, it := range hist["data"].([]any) {
			if it.(map[string]any)["to"] == "delivered" {
				delivered++
			}
		}
		if delivered != 1 {
			t.Errorf("%s moved to delivered %d times", inv.id, delivered)
		}
	}
	w.stop()
	a.stop(t)
	b.stop(t)

	db, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Exactly one simulated document per docId (the e-invoice's id), and
	// one for each e-invoice.
	rows, err := db.ReadDB().QueryContext(t.Context(), "SELECT doc_id, COUNT(*) FROM ujpsim_documents GROUP BY doc_id")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]int{}
	for rows.Next() {
		var id string
		var c int
		if err := rows.Scan(&id, &c); err != nil {
			t.Fatal(err)
		}
		docs[id] = c
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(docs) != n {
		t.Errorf("the simulated UJP holds %d docIds, want %d", len(docs), n)
	}
	for _, inv := range invoices {
		if docs[inv.id] != 1 {
			t.Errorf("the simulated UJP holds %d documents with docId %s", docs[inv.id], inv.id)
		}
	}

	// No job ran twice: every finished job finished on its first claim
	// (a second claim, by any process, counts a second attempt), none
	// failed, and each periodic kind has one instance scheduled.
	rows, err = db.ReadDB().QueryContext(t.Context(), "SELECT id, kind, state, attempt, last_error, COALESCE(unique_key, '') FROM jobs ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	scheduled := map[string]int{}
	kinds := map[string]int{}
	for rows.Next() {
		var id int64
		var kind, state, lastErr, key string
		var attempt int
		if err := rows.Scan(&id, &kind, &state, &attempt, &lastErr, &key); err != nil {
			t.Fatal(err)
		}
		kinds[kind]++
		switch state {
		case jobs.StateCompleted:
			if attempt != 1 {
				t.Errorf("job %d (%s) completed on attempt %d: it was claimed more than once (last error %q)", id, kind, attempt, lastErr)
			}
		case jobs.StateAvailable:
			if strings.HasPrefix(key, "periodic:") {
				scheduled[kind]++
			}
		default:
			t.Errorf("job %d (%s) is %s after attempt %d: %s", id, kind, state, attempt, lastErr)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for kind, c := range scheduled {
		if c != 1 {
			t.Errorf("periodic %s has %d instances scheduled", kind, c)
		}
	}
	for _, k := range []string{"einvoice.submit", "einvoice.poll_company", "ujpsim.purge"} {
		if kinds[k] == 0 {
			t.Errorf("no %s job ran; the test did not exercise what it claims", k)
		}
	}
	for name, s := range procs {
		log := s.stderr.String()
		for _, bad := range []string{"lease lost", "result dropped"} {
			if strings.Contains(log, bad) {
				t.Errorf("process %s logged %q", name, bad)
			}
		}
		t.Logf("process %s: its embedded simulator accepted %d documents", name, strings.Count(log, "ujpsim: document accepted"))
	}
	t.Logf("jobs by kind: %v", kinds)
}

// postAt is w.post through the server s.
func (w *einvoiceWorld) postAt(s *server, path, body string) httpReply {
	w.t.Helper()
	w.n++
	h := map[string]string{"Idempotency-Key": fmt.Sprintf("two-%d-%d", time.Now().UnixNano(), w.n), "X-Company-Id": w.company}
	return call(w.t, "POST", s.einvoice+path, w.key, h, body)
}

// getAt is w.get through the server s.
func (w *einvoiceWorld) getAt(s *server, path string) (int, map[string]any) {
	w.t.Helper()
	r := call(w.t, "GET", s.einvoice+path, w.key, map[string]string{"X-Company-Id": w.company}, "")
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	return r.status, m
}

// waitStatusAt polls the e-invoice through s until it reaches want.
func (w *einvoiceWorld) waitStatusAt(s *server, id, want string, within time.Duration) map[string]any {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, m := w.getAt(s, "/v1/einvoices/"+id)
		if m["status"] == want {
			return m
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: status %v after %s, want %s; problems %v", id, m["status"], within, want, m["problems"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
