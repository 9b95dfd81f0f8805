package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/crashpoint"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// TestProductionBinaryHasNoCrashpoints: the binary the other tests run (and
// that ships) is built without the crashpoints tag, so it holds no crash
// point code and never reads DENAR_CRASHPOINTS.
func TestProductionBinaryHasNoCrashpoints(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "tool", "nm", denarBin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	if bytes.Contains(out, []byte("internal/crashpoint.")) {
		t.Fatal("the production binary contains crash point code")
	}
	bin, err := os.ReadFile(denarBin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(bin, []byte(crashpoint.Env)) {
		t.Fatalf("the production binary mentions %s", crashpoint.Env)
	}
}

// crashClient is one API client of the crash test: one request, one
// Idempotency-Key, sent again with the same key and body after any network
// error, 5xx or 409 idempotency_in_progress, until it gets its 2xx.
type crashClient struct {
	path, key, body string
	company         string // X-Company-Id, "" for none
	want            int
	id              string // from the 2xx
	attempts        int
	replayed        bool // the 2xx was the stored answer of an earlier attempt
	waited          bool // some attempt was told idempotency_in_progress
	err             error
}

func (c *crashClient) send(ctx context.Context, hc *http.Client, base, apiKey string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", base+c.path, strings.NewReader(c.body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", c.key)
	if c.company != "" {
		req.Header.Set("X-Company-Id", c.company)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

func (c *crashClient) run(ctx context.Context, hc *http.Client, base, apiKey string) {
	for {
		c.attempts++
		status, h, body, err := c.send(ctx, hc, base, apiKey)
		var reply struct{ ID, Code string }
		_ = json.Unmarshal(body, &reply)
		switch {
		case ctx.Err() != nil:
			c.err = fmt.Errorf("no %d within the deadline after %d attempts (last: %d %v %.300s)", c.want, c.attempts, status, err, body)
			return
		case err == nil && status == c.want && reply.ID != "":
			c.id, c.replayed = reply.ID, h.Get("Idempotent-Replayed") == "true"
			return
		case status == http.StatusConflict && reply.Code == "idempotency_in_progress":
			c.waited = true
		case err != nil, status >= 500:
			// The server died under the request, or another attempt with
			// this key still holds it: the same key and body again.
		default:
			c.err = fmt.Errorf("answered %d: %s", status, body)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(50+rand.IntN(150)) * time.Millisecond):
		}
	}
}

// crashRound is one life of the server: the point armed, its rule.
type crashRound struct {
	point, rule string
}

// TestCrashExactlyOnce kills denar serve with SIGKILL at armed crash points
// (a build with -tags crashpoints) while 200 e-invoices without
// clientReference and 50 company creations are in flight, restarts it on
// the same store each time, and lets every client retry with its own
// Idempotency-Key until it gets its 2xx. Then: one e-invoice row and one
// company per key, the same id on a replay, one mandate mail per company,
// every e-invoice delivered once (one →delivered move) and one document
// per docId at UJP.
func TestCrashExactlyOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("crash test in -short mode")
	}
	bin := crashBinary(t)
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed of the probabilistic rounds: %d", seed)
		rounds := []crashRound{
			// First, on a fresh server, when almost every response is the
			// answer to work just committed.
			// On SQLite one commit carries every transaction that waited
			// for the writer (store.DB.InTx), so a few commits already
			// answer many requests: the commit points fire early.
			{crashpoint.HTTPBeforeResponse, "hit=60"},
			{crashpoint.StoreAfterCommit, "hit=8"},
			{crashpoint.StoreBeforeCommit, "hit=8"},
			// Then at random passes, likely enough to fire long before
			// the pending requests are all answered (each needs at least
			// one commit and one response).
			{crashpoint.StoreAfterCommit, fmt.Sprintf("p=0.25,seed=%d", seed)},
			{crashpoint.HTTPBeforeResponse, fmt.Sprintf("p=0.05,seed=%d", seed+1)},
			{crashpoint.StoreBeforeCommit, fmt.Sprintf("p=0.25,seed=%d", seed+2)},
		}
		crashExactlyOnce(t, bin, dbURL, rounds)
	})
}

func crashExactlyOnce(t *testing.T, bin, dbURL string, rounds []crashRound) {
	start := time.Now()
	// Registry look-ups take the operator's turns at UJP (one call per
	// window), so 250 requests asking at once would spend the kills in
	// turn waits; the buyer check is left to the validation job at once,
	// so the e-invoices commit and answer at the pace the test needs.
	w := newEInvoiceWorldBin(t, bin, dbURL, "DENAR_IDEMPOTENCY_LEASE=2s", "DENAR_EINVOICE_VALIDATION_BUDGET=1ms")
	const nInvoices, nCompanies = 200, 50
	var clients []*crashClient
	for i := range nInvoices {
		clients = append(clients, &crashClient{path: "/v1/einvoices", key: fmt.Sprintf("crash-inv-%03d", i),
			body: invoiceBody(fmt.Sprintf("CRASH-%03d", i), ""), company: w.company, want: http.StatusAccepted})
	}
	taxes := map[string]int{}
	for i := range nCompanies {
		tax := einvoicingtest.TaxNumber("40350000", i+1)
		taxes[tax] = i
		w.sim.addCompany(t, tax, fmt.Sprintf("Тест Клиент %02d ДООЕЛ", i+1))
		clients = append(clients, &crashClient{path: "/v1/companies", key: fmt.Sprintf("crash-cmp-%02d", i),
			body: fmt.Sprintf(`{"taxNumber":%q,"representative":{"name":"Застапник %02d","email":"rep-%02d@example.mk"}}`, tax, i+1, i+1),
			want: http.StatusCreated})
	}
	// Interleave the two kinds, so both are in flight at every kill.
	rand.Shuffle(len(clients), func(i, j int) { clients[i], clients[j] = clients[j], clients[i] })
	w.srv.stop(t)
	base := w.srv.env
	t.Logf("setup took %s", time.Since(start).Round(time.Millisecond))

	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 300, MaxIdleConns: 300}}
	defer hc.CloseIdleConnections()
	var wg sync.WaitGroup
	var pending atomic.Int64
	pending.Store(int64(len(clients)))
	for _, c := range clients {
		wg.Go(func() {
			c.run(ctx, hc, w.srv.einvoice, w.key)
			pending.Add(-1)
		})
	}

	// Each round: start the crashpoints build with one point armed and
	// wait for it to kill itself; then start it again at once.
	fired := map[string]int{}
	for i, r := range rounds {
		env := append(slices.Clone(base), crashpoint.Env+"="+r.point+"@"+r.rule)
		cmd := exec.Command(bin, "serve")
		cmd.Env = env
		stderr := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = io.Discard, stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("round %d: %s@%s never fired in 30 s (%d requests pending)\n%s", i+1, r.point, r.rule, pending.Load(), tail(stderr.String(), 3000))
		}
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		line := "crashpoint: " + r.point + " fired at hit "
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL || !strings.Contains(stderr.String(), line) {
			t.Fatalf("round %d: denar serve ended with %v, not by %s@%s:\n%s", i+1, cmd.ProcessState, r.point, r.rule, tail(stderr.String(), 3000))
		}
		left := pending.Load()
		hit := strings.TrimSpace(strings.SplitN(stderr.String()[strings.Index(stderr.String(), line)+len(line):], "\n", 2)[0])
		t.Logf("round %d: killed at %s (hit %s, rule %s) with %d of %d requests still waiting for their answer", i+1, r.point, hit, r.rule, left, len(clients))
		if left == 0 {
			t.Fatalf("round %d: every request was answered before the kill; the round proves nothing", i+1)
		}
		fired[r.point]++
	}
	// The generic points; the reconciliation's own is the reconciliation
	// crash test's.
	for _, p := range []string{crashpoint.StoreBeforeCommit, crashpoint.StoreAfterCommit, crashpoint.HTTPBeforeResponse} {
		if fired[p] == 0 {
			t.Fatalf("crash point %s never killed the server", p)
		}
	}
	// The last life, unarmed: every client gets its answer.
	w.srv = startServerBin(t, bin, base)
	wg.Wait()
	t.Logf("all %d requests answered %s after the start, after %d kills", len(clients), time.Since(start).Round(time.Millisecond), len(rounds))
	attempts, replayed, waited := 0, 0, 0
	for _, c := range clients {
		attempts += c.attempts
		if c.replayed {
			replayed++
		}
		if c.waited {
			waited++
		}
		if c.err != nil {
			t.Errorf("%s %s: %v", c.path, c.key, c.err)
		}
	}
	// A replay as the first 2xx is a request whose work committed while
	// its answer was lost; a wait is a request whose key a killed attempt
	// still held.
	t.Logf("%d attempts for %d requests; %d first answered by a replay, %d waited for a killed attempt's key", attempts, len(clients), replayed, waited)
	if replayed == 0 {
		t.Error("no request was first answered by a replay: no kill fell between a commit and its answer, so the test proved less than it claims")
	}

	// A replay of every key answers with the same resource.
	for _, c := range clients {
		if c.err != nil {
			continue
		}
		status, h, body, err := c.send(t.Context(), hc, w.srv.einvoice, w.key)
		var reply struct{ ID string }
		_ = json.Unmarshal(body, &reply)
		if err != nil || status != c.want || h.Get("Idempotent-Replayed") != "true" || reply.ID != c.id {
			t.Errorf("replay of %s: %d %v replayed=%q id %q, first answer %q", c.key, status, err, h.Get("Idempotent-Replayed"), reply.ID, c.id)
		}
	}

	db, err := store.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := func(query string, args ...any) map[string]int {
		t.Helper()
		rs, err := db.ReadDB().QueryContext(t.Context(), query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		out := map[string]int{}
		for rs.Next() {
			var k string
			var n int
			if err := rs.Scan(&k, &n); err != nil {
				t.Fatal(err)
			}
			out[k] = n
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	answered := map[string]bool{}
	for _, c := range clients {
		if c.id != "" {
			answered[c.id] = true
		}
	}

	// One e-invoice per key: 200 rows, one per number, each the id its
	// client was answered with.
	byNumber := rows("SELECT number, COUNT(*) FROM einvoices WHERE company_id = $1 GROUP BY number", w.company)
	byID := rows("SELECT id, COUNT(*) FROM einvoices WHERE company_id = $1 GROUP BY id", w.company)
	if len(byID) != nInvoices || len(byNumber) != nInvoices {
		t.Errorf("%d e-invoice rows with %d numbers, want %d", len(byID), len(byNumber), nInvoices)
	}
	for n, k := range byNumber {
		if k != 1 {
			t.Errorf("e-invoice number %s is stored %d times", n, k)
		}
	}
	for id := range byID {
		if !answered[id] {
			t.Errorf("e-invoice %s was stored but no client was answered with it", id)
		}
	}

	// One company per key, one mandate mail per company.
	companies := rows("SELECT tax_number, COUNT(*) FROM companies WHERE account_id = $1 AND tax_number <> $2 GROUP BY tax_number", w.account, ujpsim.TaxSeller)
	if len(companies) != nCompanies {
		t.Errorf("%d onboarded tax numbers, want %d", len(companies), nCompanies)
	}
	for tax, k := range companies {
		if _, ok := taxes[tax]; !ok || k != 1 {
			t.Errorf("tax number %s: %d companies", tax, k)
		}
	}
	for id := range rows("SELECT id, 1 FROM companies WHERE account_id = $1 AND tax_number <> $2", w.account, ujpsim.TaxSeller) {
		if !answered[id] {
			t.Errorf("company %s was stored but no client was answered with it", id)
		}
	}
	mails := rows("SELECT recipient, COUNT(*) FROM mail_outbox WHERE recipient LIKE 'rep-%' GROUP BY recipient")
	if len(mails) != nCompanies {
		t.Errorf("mandate mails went to %d representatives, want %d", len(mails), nCompanies)
	}
	for to, k := range mails {
		if k != 1 {
			t.Errorf("%d mandate mails to %s", k, to)
		}
	}

	// Every e-invoice delivered, once.
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := rows("SELECT status, COUNT(*) FROM einvoices WHERE company_id = $1 GROUP BY status", w.company)
		if st["delivered"] == len(byID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("e-invoices by status after 60 s: %v\n%s", st, tail(w.srv.stderr.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	moves := rows(`SELECT h.einvoice_id, COUNT(*) FROM einvoice_status_history h JOIN einvoices e ON e.id = h.einvoice_id
		WHERE e.company_id = $1 AND h.to_status = 'delivered' GROUP BY h.einvoice_id`, w.company)
	if len(moves) != nInvoices {
		t.Errorf("%d e-invoices moved to delivered, want %d", len(moves), nInvoices)
	}
	for id, k := range moves {
		if k != 1 {
			t.Errorf("%s moved to delivered %d times", id, k)
		}
	}
	docs := w.sim.documents(t, ujpsim.TaxSeller)
	if len(docs) != nInvoices {
		t.Errorf("UJP holds %d documents, want %d", len(docs), nInvoices)
	}
	for id, k := range docs {
		if k != 1 || byID[id] != 1 || !answered[id] {
			t.Errorf("UJP holds %d documents with docId %s (%d e-invoices)", k, id, byID[id])
		}
	}
	t.Logf("checked %s after the start", time.Since(start).Round(time.Millisecond))
	w.srv.stop(t)
}
