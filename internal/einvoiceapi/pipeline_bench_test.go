package einvoiceapi_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// benchWorld is the e-invoicing API on loopback with one company, its
// certificate and agent, and the pipeline against an in-process simulator.
type benchWorld struct {
	b       testing.TB
	db      *store.DB
	srv     *httptest.Server
	runner  *jobs.Runner
	gw      ujp.Gateway
	key     string
	company string
	agent   string
	authz   string
	rsaKey  *rsa.PrivateKey
	n       atomic.Int64
	http    *http.Client
}

func newBenchWorld(b testing.TB, db *store.DB) *benchWorld {
	// Enough idle connections for every concurrent client to keep its own.
	w := &benchWorld{b: b, db: db, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	b.Cleanup(w.http.CloseIdleConnections)
	log := slog.New(slog.DiscardHandler)
	sim, client, _ := newSimGateway(b, db, ujpsim.Options{Logger: log, ControlToken: "bench"})
	w.gw = client
	app, api := newApp(db, einvoicing.Deps{Log: log},
		appConfig{Gateways: map[string]ujp.Gateway{auth.EnvSandbox: w.gw}, Pipeline: pipeline.Config{SignerInterval: simWindow},
			SandboxSetup: simSetup{sim}},
		webhooks.Deps{}, webhooks.Config{})
	w.srv = httptest.NewServer(api.Handler())
	b.Cleanup(w.srv.Close)
	w.runner = jobs.NewRunner(db, jobs.Config{Workers: 4, PollInterval: 5 * time.Millisecond, Logger: log})
	app.RegisterJobs(w.runner)

	w.company, w.key = seedSeller(b, db, "companies:write", "einvoices:read", "einvoices:write")
	var pc struct{ Code string }
	w.post("/v1/agents/pairing-codes", "Bearer "+w.key, "", 201, &pc)
	var pair struct{ AgentID, AgentSecret string }
	w.post("/v1/agents/pair", "", `{"code":"`+pc.Code+`","name":"bench"}`, 201, &pair)
	w.agent, w.authz = pair.AgentID, "Agent "+pair.AgentID+"."+pair.AgentSecret
	var err error
	w.rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &w.rsaKey.PublicKey, w.rsaKey)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(map[string]string{"certificateDer": base64.StdEncoding.EncodeToString(der), "companyId": w.company})
	w.post("/v1/agents/"+w.agent+"/certificates", w.authz, string(body), 201, nil)
	return w
}

func (w *benchWorld) post(path, authz, body string, want int, out any) {
	if err := w.postErr(path, authz, body, want, out); err != nil {
		w.b.Fatal(err)
	}
}

// postErr is post for goroutines other than the benchmark's: it returns
// what went wrong instead of failing the benchmark.
func (w *benchWorld) postErr(path, authz, body string, want int, out any) error {
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, _ := http.NewRequest("POST", w.srv.URL+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	req.Header.Set("X-Company-Id", w.company)
	req.Header.Set("Idempotency-Key", fmt.Sprintf("b-%d", w.n.Add(1)))
	resp, err := w.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

func (w *benchWorld) invoiceBody() string {
	return fmt.Sprintf(`{"number":"B-%d","issueDate":%q,
 "buyer":{"taxNumber":%q,"name":"Тест Купувач ДОО Скопје","address":{"street":"Широк сокак","number":"5","postalCode":"1000","city":"Скопје"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"3","unitPrice":"1000","unitDiscount":"100","vatPercent":"18","taxIndicator":"DDV-A"}]}`,
		w.n.Add(1), time.Now().Format(time.DateOnly), ujpsim.TaxBuyer)
}

// issueClients is how many clients load the service at once in
// BenchmarkIssueEInvoice (issue 11).
const issueClients = 16

// BenchmarkIssueEInvoice measures POST /v1/einvoices (build, totals,
// validation, the row, its history, its signing request and its event in
// one transaction with the idempotent response) with 16 concurrent
// clients against, as the baseline in the same run and with as many
// clients, POST /v1/agents/pairing-codes: one small insert through the
// same authentication and idempotency path. The two alternate in five
// half-second slices each. It reports both rates and their ratio (issue
// 11 asks for at least 0.5 on both stores), and the CPU time this process
// spent per request of each kind. On SQLite that is all of the work, so
// the ratio of the two CPU times is the rate ratio the machine could reach
// if the run were bound by CPU alone; on PostgreSQL the server's share is
// not in it. Unlike the rates, CPU time per request hardly depends on what
// else a shared machine is doing.
func BenchmarkIssueEInvoice(b *testing.B) {
	for _, engine := range []struct {
		name string
		open func(testing.TB) *store.DB
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(engine.name, func(b *testing.B) {
			w := newBenchWorld(b, engine.open(b))
			// load runs fn from issueClients goroutines for d and returns
			// how many calls completed.
			load := func(what string, d time.Duration, fn func() error) int64 {
				var n atomic.Int64
				var failed atomic.Bool
				start := time.Now()
				var wg sync.WaitGroup
				for range issueClients {
					wg.Go(func() {
						for !failed.Load() && time.Since(start) < d {
							if err := fn(); err != nil {
								failed.Store(true)
								b.Errorf("%s: %v", what, err)
								return
							}
							n.Add(1)
						}
					})
				}
				wg.Wait()
				if failed.Load() {
					b.FailNow()
				}
				return n.Load()
			}
			baseline := func() error { return w.postErr("/v1/agents/pairing-codes", "Bearer "+w.key, "", 201, nil) }
			issue := func() error { return w.postErr("/v1/einvoices", "Bearer "+w.key, w.invoiceBody(), 202, nil) }
			// Warm both paths (connections, caches), then alternate short
			// slices of each, so that a change in the load of a shared
			// machine falls on both rates alike.
			load("baseline", 200*time.Millisecond, baseline)
			load("issue", 200*time.Millisecond, issue)
			var issueRate, baseRate float64
			var issueCPU, baseCPU time.Duration // per request
			for b.Loop() {
				const slices, slice = 5, 500 * time.Millisecond
				var nb, ni int64
				var tb, ti, cb, ci time.Duration
				for range slices {
					t0, c0 := time.Now(), einvoicingtest.ProcessCPU()
					nb += load("baseline", slice, baseline)
					t1, c1 := time.Now(), einvoicingtest.ProcessCPU()
					ni += load("issue", slice, issue)
					tb, ti = tb+t1.Sub(t0), ti+time.Since(t1)
					cb, ci = cb+c1-c0, ci+einvoicingtest.ProcessCPU()-c1
				}
				baseRate, issueRate = float64(nb)/tb.Seconds(), float64(ni)/ti.Seconds()
				baseCPU, issueCPU = cb/time.Duration(max(nb, 1)), ci/time.Duration(max(ni, 1))
			}
			b.ReportMetric(issueRate, "invoices/s")
			b.ReportMetric(baseRate, "baseline-writes/s")
			b.ReportMetric(issueRate/baseRate, "ratio")
			b.ReportMetric(float64(issueCPU.Microseconds()), "cpu-µs/invoice")
			b.ReportMetric(float64(baseCPU.Microseconds()), "cpu-µs/baseline-write")
			b.Logf("%s, %d clients: %.0f e-invoices/s, baseline %.0f writes/s, ratio %.2f; CPU of this process per e-invoice %s, per baseline write %s (their ratio %.2f)",
				engine.name, issueClients, issueRate, baseRate, issueRate/baseRate, issueCPU, baseCPU, float64(baseCPU)/float64(issueCPU))
		})
	}
}

// BenchmarkSignatureToDelivered measures, for invoices issued one after
// another, the time from the recorded signature (the "signed" history row)
// to delivered (the "submitted" row), with the runner polling every 5 ms
// and the simulator in-process; it reports the median and the 90th
// percentile. Run it with -benchtime 50x or more for a stable median.
func BenchmarkSignatureToDelivered(b *testing.B) {
	for _, engine := range []struct {
		name string
		open func(testing.TB) *store.DB
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(engine.name, func(b *testing.B) {
			db := engine.open(b)
			w := newBenchWorld(b, db)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := w.runner.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = w.runner.Stop(context.Background()) }()
			var lat []time.Duration
			for b.Loop() {
				var inv struct{ ID string }
				w.post("/v1/einvoices", "Bearer "+w.key, w.invoiceBody(), 202, &inv)
				w.signPending()
				lat = append(lat, w.waitDelivered(inv.ID))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
			b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}

func (w *benchWorld) signPending() {
	req, _ := http.NewRequest("GET", w.srv.URL+"/v1/agents/"+w.agent+"/signing-requests?wait=0", nil)
	req.Header.Set("Authorization", w.authz)
	resp, err := w.http.Do(req)
	if err != nil {
		w.b.Fatal(err)
	}
	var list struct {
		Data []struct{ ID, State, SigningInput string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	for _, r := range list.Data {
		if r.State == "pending" {
			w.post("/v1/signing-requests/"+r.ID+"/claim", w.authz, "", 200, nil)
		}
		sum := sha256.Sum256([]byte(r.SigningInput))
		sig, err := rsa.SignPKCS1v15(rand.Reader, w.rsaKey, crypto.SHA256, sum[:])
		if err != nil {
			w.b.Fatal(err)
		}
		body, _ := json.Marshal(map[string]string{"jws": r.SigningInput + "." + base64.RawURLEncoding.EncodeToString(sig)})
		w.post("/v1/signing-requests/"+r.ID+"/signature", w.authz, string(body), 200, nil)
	}
}

// waitDelivered returns signed → delivered from the status history.
func (w *benchWorld) waitDelivered(id string) time.Duration {
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := w.db.Reader().ListEInvoiceStatus(context.Background(), id)
		if err != nil {
			w.b.Fatal(err)
		}
		var signed, delivered time.Time
		for _, r := range rows {
			switch r.Cause {
			case "signed":
				signed = r.At
			case "submitted":
				delivered = r.At
			}
		}
		if !delivered.IsZero() {
			return delivered.Sub(signed)
		}
		if time.Now().After(deadline) {
			jr, _ := w.db.ReadDB().Query("SELECT kind, state, COALESCE(last_error, '') FROM jobs ORDER BY id DESC LIMIT 5")
			for jr.Next() {
				var k, st, e string
				_ = jr.Scan(&k, &st, &e)
				w.b.Log(k, st, e)
			}
			jr.Close()
			w.b.Fatalf("%s not delivered: %v", id, rows)
		}
		time.Sleep(time.Millisecond)
	}
}
