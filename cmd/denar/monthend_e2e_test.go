package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/sdk/signer"
)

// TestMonthEnd is the month-end benchmark (run it with DENAR_MONTHEND=1;
// DENAR_MONTHEND_DOCS, _WINDOW, _MARGIN, _AHEAD and _WORKERS change it;
// DENAR_MONTHEND_LOG=dir keeps the simulator's and the server's logs there): denar serve
// with the ujp backend against a strict denar ujp-sim whose per-user window
// is scaled down, and DENAR_UJP_SIGNER_INTERVAL the same; 10 companies
// sharing 3 signers (UJP users), each signer an auto-signing agent on the
// WebSocket; the e-invoices issued at once, and then one of a quiet company
// that had none. It prints the time until all are delivered against the
// ideal (the UJP calls made for them, sends and reads, × window ÷
// signers), signatures per document, E4007 answers, the quiet invoice's
// wait and the agents' round trips per document.
func TestMonthEnd(t *testing.T) {
	if os.Getenv("DENAR_MONTHEND") == "" {
		t.Skip("the month-end benchmark runs with DENAR_MONTHEND=1")
	}
	docs := envInt(t, "DENAR_MONTHEND_DOCS", 2000)
	window := envDuration(t, "DENAR_MONTHEND_WINDOW", 100*time.Millisecond)
	margin := envDuration(t, "DENAR_MONTHEND_MARGIN", 5*time.Millisecond)
	// 0: the default sign-ahead, what the signer's budget sends in 10 s.
	ahead := envInt(t, "DENAR_MONTHEND_AHEAD", 0)
	workers := envInt(t, "DENAR_MONTHEND_WORKERS", 0)
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		m := newMonthEnd(t, dbURL, 10, 3, window, margin, ahead, workers)
		busy := m.companies[:len(m.companies)-1]
		quiet := m.companies[len(m.companies)-1]

		// Transactions of the service's store (PostgreSQL counts them:
		// pg_stat_database), before and after the run.
		db, err := store.Open(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		xacts := func() int64 {
			if !strings.HasPrefix(dbURL, "postgres") {
				return 0
			}
			var n int64
			if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		xacts0 := xacts()

		start := time.Now()
		ids := make([][]string, len(busy))
		var wg sync.WaitGroup
		for i, co := range busy {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := i; k < docs; k += len(busy) {
					ids[i] = append(ids[i], m.issue(co, fmt.Sprintf("ME-%d-%04d", i, k)))
				}
			}()
		}
		wg.Wait()
		issued := time.Since(start)
		quietAt := time.Now()
		quietID := m.issue(quiet, "QUIET-1")
		_, q := m.get(quiet, "/v1/einvoices/"+quietID)
		t.Logf("the quiet company's invoice at issue: %v", q["queue"])

		// Delivered: read from the store (the API would take turns with
		// the benchmark's own reads).
		var quietWait time.Duration
		deadline := time.Now().Add(20 * time.Minute)
		for {
			var delivered, quietDone int
			if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT COUNT(*), COALESCE(SUM(CASE WHEN id = $1 THEN 1 ELSE 0 END), 0)
				FROM einvoices WHERE status = 'delivered'`, quietID).Scan(&delivered, &quietDone); err != nil {
				t.Fatal(err)
			}
			if quietDone == 1 && quietWait == 0 {
				quietWait = time.Since(quietAt)
			}
			if delivered == docs+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d delivered after %s", delivered, docs+1, time.Since(start))
			}
			waitCondition(50 * time.Millisecond)
		}
		actual := time.Since(start)
		xactsRun := xacts() - xacts0
		// The quiet invoice's delivery as the store stamped it.
		var qd time.Time
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT delivered_at FROM einvoices WHERE id = $1`, quietID).Scan(&qd); err == nil && !qd.IsZero() {
			quietWait = qd.Sub(quietAt)
		}

		var requests, signedDocs int
		if err := db.ReadDB().QueryRowContext(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT link_id) FROM signing_requests
			WHERE purpose = 'document' AND link_type = 'einvoice'`).Scan(&requests, &signedDocs); err != nil {
			t.Fatal(err)
		}
		calls, limited := m.simCalls()
		var need int
		perSigner := map[string]int{}
		for user, n := range calls {
			perSigner[user] += n
			need += n
		}
		var longest int
		for _, n := range perSigner {
			longest = max(longest, n)
		}
		ideal := time.Duration(need) * window / time.Duration(len(m.signers))
		idealBusiest := time.Duration(longest) * window
		n := docs + 1
		t.Logf("MONTH-END %s: %d e-invoices, %d companies, %d signers, window %s (margin %s), sign-ahead %d (0: default), job workers %d (0: default)", storeName(dbURL), n, len(m.companies), len(m.signers), window, margin, ahead, workers)
		t.Logf("  issued in %s; all delivered after %s", issued.Round(time.Millisecond), actual.Round(time.Millisecond))
		t.Logf("  UJP calls of the signers (sends and reads): %d %v; ideal %s (busiest signer alone %s); ratio ideal/actual %.2f (busiest %.2f)",
			need, perSigner, ideal.Round(time.Millisecond), idealBusiest.Round(time.Millisecond), ideal.Seconds()/actual.Seconds(), idealBusiest.Seconds()/actual.Seconds())
		t.Logf("  signatures per document %.2f (%d document signing requests, %d documents); E4007 answers %d",
			float64(requests)/float64(n), requests, signedDocs, limited)
		t.Logf("  quiet company's single invoice delivered after %s = %.1f windows", quietWait.Round(time.Millisecond), quietWait.Seconds()/window.Seconds())
		trips := m.roundTrips.Load()
		t.Logf("  agent signatures per document %.2f (%d)", float64(trips)/float64(n), trips)
		sockets := m.agentMessages(t)
		t.Logf("  agent round trips per document %.3f (%d claim, signatures and refusals messages on the agents' WebSockets)", float64(sockets)/float64(n), sockets)
		if xactsRun > 0 {
			t.Logf("  store transactions per document %.1f (%d, PostgreSQL's count for the service's database: issue, signing, send, everything)", float64(xactsRun)/float64(n), xactsRun)
			rows, err := db.ReadDB().QueryContext(t.Context(), `SELECT relname, n_tup_ins + n_tup_upd + n_tup_del, COALESCE(idx_scan, 0) + COALESCE(seq_scan, 0), COALESCE(seq_tup_read, 0)
				FROM pg_stat_user_tables ORDER BY 2 DESC, 3 DESC LIMIT 12`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var rel string
				var w, r, seq int64
				if err := rows.Scan(&rel, &w, &r, &seq); err != nil {
					t.Fatal(err)
				}
				// Rows read by whole-table scans: a lookup an index should
				// serve shows here as thousands per document.
				t.Logf("    %s: rows written %.1f, scans %.1f, rows read whole-table %.1f per document", rel, float64(w)/float64(n), float64(r)/float64(n), float64(seq)/float64(n))
			}
			rows.Close()
		}
		if dir := os.Getenv("DENAR_MONTHEND_LOG"); dir != "" {
			// The simulator's request log (each call's user and arrival)
			// and the server's log, for a look at where the time went.
			name := strings.ToLower(storeName(dbURL))
			// Each document's moves: when it was issued, asked for,
			// signed, sent and delivered.
			var moves strings.Builder
			rows, err := db.ReadDB().QueryContext(t.Context(), `SELECT h.einvoice_id, e.pace_key, e.company_id, h.to_status, h.cause, h.at
				FROM einvoice_status_history h JOIN einvoices e ON e.id = h.einvoice_id ORDER BY h.at`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id, key, co, to, cause string
				var at time.Time
				if err := rows.Scan(&id, &key, &co, &to, &cause, &at); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&moves, "%s,%s,%s,%s,%s,%s\n", at.UTC().Format("15:04:05.000000"), id, key, co, to, cause)
			}
			rows.Close()
			for file, text := range map[string]string{"sim": m.sim.out.String(), "server": m.srv.stdout.String() + m.srv.stderr.String(), "moves": moves.String()} {
				if err := os.WriteFile(filepath.Join(dir, name+"-"+file+".log"), []byte(text), 0o644); err != nil {
					t.Error(err)
				}
			}
		}
		if requests != n || limited != 0 {
			t.Errorf("signing requests %d for %d documents, E4007 %d", requests, n, limited)
		}
	})
}

func envInt(t *testing.T, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	return def
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return d
	}
	return def
}

func storeName(dbURL string) string {
	if strings.HasPrefix(dbURL, "postgres") {
		return "PostgreSQL"
	}
	return "SQLite"
}

// waitCondition is the pause between two looks at a condition the test
// waits on (the store's count of delivered documents).
func waitCondition(d time.Duration) { <-time.After(d) }

// monthEnd is the benchmark's world: the strict world's processes with
// more companies and signers.
type monthEnd struct {
	strictUJPWorld
	signers    []string
	roundTrips atomic.Int64
}

func newMonthEnd(t *testing.T, dbURL string, companies, signers int, window, margin time.Duration, ahead, workers int) *monthEnd {
	t.Helper()
	m := &monthEnd{strictUJPWorld: strictUJPWorld{t: t, signed: map[string]int{}}}
	u := &m.strictUJPWorld
	u.simDB = storetest.SQLiteURL(t)
	if strings.HasPrefix(dbURL, "postgres") {
		u.simDB = storetest.PostgresURL(t)
	}
	u.sim = startSimProcessAt(t, u.simDB, freeAddr(t), "DENAR_UJP_SIM_WINDOW="+window.String())
	prioritise(t, u.sim.cmd.Process.Pid, simNice)
	u.companies = []strictCompany{{tax: ujpsim.TaxSeller, name: "Тест Продавач ДООЕЛ Скопје"}}
	for i := 1; i < companies; i++ {
		tax := einvoicingtest.TaxNumber("40300002", i)
		name := fmt.Sprintf("Месечна Фирма %d ДООЕЛ Скопје", i)
		body, _ := json.Marshal(map[string]any{"taxNumber": tax, "vatNumber": "МК" + tax, "name": name, "golemina": "1", "countryCode": "MK",
			"registrationNumber": fmt.Sprintf("810000%d", i),
			"address":            map[string]string{"street": "ул. Тестова", "number": fmt.Sprint(i), "city": "Скопје", "zip": "1000"}})
		if r := call(t, "POST", u.sim.url+"/_sim/companies", simToken, nil, string(body)); r.status != 200 {
			t.Fatalf("registry entry %s: %d %s", tax, r.status, r.body)
		}
		u.companies = append(u.companies, strictCompany{tax: tax, name: name})
	}
	operatorFirm := einvoicingtest.TaxNumber("40300009", 2)
	u.simAdmin("user add", strictOperator)
	env := append(baseEnv(t, dbURL), "DENAR_UJP_SANDBOX_BACKEND=ujp", "DENAR_UJP_SANDBOX_URL="+u.sim.url,
		"DENAR_UJP_USER="+strictOperator, "DENAR_UJP_EDB="+operatorFirm,
		"DENAR_UJP_SIGNER_INTERVAL="+window.String(), "DENAR_UJP_TURN_MARGIN="+margin.String(), fmt.Sprintf("DENAR_EINVOICE_SIGN_AHEAD=%d", ahead),
		"DENAR_UJP_POLL_INTERVAL=1m", "DENAR_EINVOICE_RETRY_DELAYS=1s",
		"DENAR_UJP_CALL_TIMEOUT=5s", "DENAR_JOB_LEASE=10s", "DENAR_RATE_LIMIT_RPS=100000", "DENAR_RATE_LIMIT_BURST=100000")
	if workers > 0 {
		env = append(env, fmt.Sprintf("DENAR_JOB_WORKERS=%d", workers))
	}
	u.srv = startServer(t, env)

	var acct struct{ ID string }
	if err := json.Unmarshal([]byte(runAdminCmd(t, u.srv.env, "account", "create", "--name", "Биро Месечно", "--plan", "business", "--json")), &acct); err != nil {
		t.Fatal(err)
	}
	var key struct{ Key string }
	args := []string{"key", "create", "--account", acct.ID, "--service", "einvoice", "--env", "sandbox", "--json"}
	for _, s := range []string{"companies:read", "companies:write", "einvoices:read", "einvoices:write", "inbox:read", "inbox:write", "events:read"} {
		args = append(args, "--scope", s)
	}
	if err := json.Unmarshal([]byte(runAdminCmd(t, u.srv.env, args...)), &key); err != nil {
		t.Fatal(err)
	}
	u.key = key.Key
	for i := range u.companies {
		co := &u.companies[i]
		r := u.post(strictCompany{}, "/v1/companies", fmt.Sprintf(`{"taxNumber":%q,"representative":{"name":"Марија Николовска","email":"rep%d@example.mk"}}`, co.tax, i))
		var got struct{ ID, Name, Status string }
		if err := json.Unmarshal(r.body, &got); r.status != 201 || err != nil || got.Status != "pending_mandate" {
			t.Fatalf("onboard %s: %d %s", co.tax, r.status, r.body)
		}
		co.id = got.ID
	}
	u.acceptMandates(env)

	// Signer s signs for companies s, s+signers, …; each is an agent of
	// its own with one key, on the WebSocket.
	dir := t.TempDir()
	for s := range signers {
		user := fmt.Sprintf("SIGNER-%d", s+1)
		m.signers = append(m.signers, user)
		creds, rsaKey := u.pairAgent(u.companies[s], user)
		for i := s; i < len(u.companies); i += signers {
			co := u.companies[i]
			tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano() + int64(i)), Subject: pkix.Name{CommonName: user, Organization: []string{co.name}},
				NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certValidity)}
			der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &rsaKey.PublicKey, rsaKey)
			if err != nil {
				t.Fatal(err)
			}
			cert, _ := x509.ParseCertificate(der)
			file := filepath.Join(dir, fmt.Sprintf("cert-%d.pem", i))
			if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
				t.Fatal(err)
			}
			u.simAdmin("certificate add", "-eujp-id", user, "-edb", co.tax, "-cert", file)
			u.simAdmin("grant", "-eujp-id", user, "-edb", co.tax, "DP", "RD", "DA")
			if err := signer.RegisterCertificateAs(t.Context(), http.DefaultClient, creds, cert, co.id, user); err != nil {
				t.Fatal(err)
			}
		}
		worker := &signer.Worker{Creds: creds, Signer: rsaKey, Wait: 1, HTTP: &http.Client{Timeout: 10 * time.Second},
			OnSigned: func(r signer.Request, _ string) {
				m.roundTrips.Add(1)
				u.mu.Lock()
				u.signed[r.ID]++
				u.mu.Unlock()
			}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = worker.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return m
}

// agentMessages is how many batch operations the agents sent on their
// WebSockets (claims, signatures, refusals): the server's
// denar_signing_socket_messages_total, received.
func (m *monthEnd) agentMessages(t *testing.T) int64 {
	t.Helper()
	resp, err := http.Get(m.srv.einvoice + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "denar_signing_socket_messages_total{") || !strings.Contains(l, `direction="received"`) {
			continue
		}
		if f := strings.Fields(l); len(f) == 2 {
			var v float64
			if _, err := fmt.Sscan(f[1], &v); err == nil {
				total += int64(v)
			}
		}
	}
	return total
}

// simCalls counts the calls the simulator took (not answered 429) by user
// from its request log, the signers' only, and the E4007 answers of all.
func (m *monthEnd) simCalls() (map[string]int, int64) {
	signers := map[string]bool{}
	for _, s := range m.signers {
		signers[s] = true
	}
	calls := map[string]int{}
	for _, l := range strings.Split(m.sim.out.String(), "\n") {
		if !strings.Contains(l, "ujp-sim request") || strings.Contains(l, "status=429") || !strings.Contains(l, "path=/") {
			continue
		}
		for _, f := range strings.Fields(l) {
			if u, ok := strings.CutPrefix(f, "user="); ok && signers[u] && !strings.Contains(l, "path=/_sim") {
				calls[u]++
			}
		}
	}
	var limited struct {
		Total int64 `json:"total"`
	}
	r := call(m.t, "GET", m.sim.url+"/_sim/rate-limited", simToken, nil, "")
	if err := json.Unmarshal(r.body, &limited); err != nil {
		m.t.Fatal(err)
	}
	return calls, limited.Total
}

// simNice is the simulator's CPU priority in the benchmark. It stands in
// for UJP, which runs on machines of its own: on the benchmark's shared
// cores, at the default priority, the arrival time it judges the window
// by (stamped first thing) carries the scheduling delays of our own load,
// a few milliseconds now and then, and a call on time by the client's
// clock arrives within the window of one that waited for a core.
const simNice = -10

// prioritise sets the nice value of every thread of process pid (Linux
// keeps one per thread; threads made later inherit their maker's). Not
// allowed (not root), it says so and the benchmark runs as it is.
func prioritise(t *testing.T, pid, nice int) {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Logf("simulator priority unchanged: %v", err)
		return
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			t.Logf("simulator priority unchanged: %v", err)
			return
		}
	}
}
