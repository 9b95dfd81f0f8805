package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/usecase"
)

// BenchmarkWebhookDelivery delivers 10,000 events to a receiver on
// loopback that verifies each signature, with at most 16 requests in
// flight (Config.Concurrency; the runner claims batches of
// WebhookBatch, four at most at once, as denar serve does), and measures
// deliveries per second from the start of the runner to the last answer. As the baseline, in the same run, it measures the
// receiver's raw rate: the same 10,000 signed bodies POSTed by 16
// goroutines with a plain http.Client. It reports both rates and their
// ratio (the goal is at least 0.5). The receiver's rate is measured before
// and after the deliveries and averaged. It also prints the CPU time this
// process spent per delivery and per raw request: on SQLite that is all of
// the work (on PostgreSQL the server's share is not in it), and unlike the
// rates it does not depend on what else the machine is doing.
//
//	go test ./internal/einvoicing -run XXX -bench WebhookDelivery -benchtime 1x
func BenchmarkWebhookDelivery(b *testing.B) {
	const n, workers = 10_000, 16
	for _, engine := range []struct {
		name string
		open func(testing.TB) *store.DB
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(engine.name, func(b *testing.B) {
			db := engine.open(b)
			ctx := context.Background()
			recv := newCountingReceiver(b)
			s := New(Deps{DB: db, Secrets: testBox(b), Log: slog.New(slog.DiscardHandler)},
				Config{AllowPrivateSandbox: true, Concurrency: workers})
			acct, cos := seedAccount(b, db, 1)
			ep, err := s.CreateWebhookEndpoint(ctx, usecase.Caller{Principal: &auth.Principal{AccountID: acct, Environment: auth.EnvSandbox}},
				CreateWebhookEndpoint{URL: recv.srv.URL, Events: []string{"*"}})
			if err != nil {
				b.Fatal(err)
			}
			secret := *ep.Secret
			recv.secret.Store(secret)
			var deliveries, raw float64
			var rawCPU, deliveryCPU time.Duration
			for b.Loop() {
				// Baseline: the receiver's raw rate for the same bodies.
				ids := writeEvents(b, db, acct, cos[0], auth.EnvSandbox, n)
				bodies := make([][]byte, 0, n)
				for _, id := range ids {
					r, err := db.Reader().GetEvent(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					body, _ := jsonMarshal(eventView(r))
					bodies = append(bodies, body)
				}
				c0 := einvoicingtest.ProcessCPU()
				rawBefore := rawRate(b, recv.srv.URL, secret, bodies, workers)
				rawCPU = einvoicingtest.ProcessCPU() - c0

				// Deliveries: the events written above, each with its job.
				recv.total.Store(0)
				done := make(chan struct{})
				var once sync.Once
				hit := func(total int64) {
					if total == n {
						once.Do(func() { close(done) })
					}
				}
				recv.onHit.Store(&hit)
				r := jobs.NewRunner(db, jobs.Config{Workers: 4 * WebhookBatch, PollInterval: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
				s.RegisterJobs(r)
				start, c1 := time.Now(), einvoicingtest.ProcessCPU()
				if err := r.Start(ctx); err != nil {
					b.Fatal(err)
				}
				select {
				case <-done:
				case <-time.After(10 * time.Minute):
					b.Fatalf("%d of %d delivered", recv.total.Load(), n)
				}
				deliveries = n / time.Since(start).Seconds()
				deliveryCPU = einvoicingtest.ProcessCPU() - c1
				if err := r.Stop(ctx); err != nil {
					b.Fatal(err)
				}
				recv.onHit.Store(nil)
				if recv.bad.Load() != 0 {
					b.Fatalf("%d requests with a bad signature", recv.bad.Load())
				}
				// The raw rate again after the deliveries, and the mean of
				// the two: the load of a shared machine changes within a run.
				c2 := einvoicingtest.ProcessCPU()
				raw = (rawBefore + rawRate(b, recv.srv.URL, secret, bodies, workers)) / 2
				rawCPU = (rawCPU + einvoicingtest.ProcessCPU() - c2) / 2
			}
			b.ReportMetric(deliveries, "deliveries/s")
			b.ReportMetric(raw, "receiver-raw-req/s")
			b.ReportMetric(deliveries/raw, "ratio")
			b.ReportMetric(float64(deliveryCPU.Microseconds())/n, "cpu-µs/delivery")
			b.ReportMetric(float64(rawCPU.Microseconds())/n, "cpu-µs/raw-request")
			fmt.Printf("webhooks %s: %.0f deliveries/s, receiver raw %.0f req/s, ratio %.2f (goal ≥ 0.5); CPU of this process per delivery %s, per raw request %s\n",
				engine.name, deliveries, raw, deliveries/raw, deliveryCPU/n, rawCPU/n)
		})
	}
}

// rawRate POSTs each body, signed now, with workers goroutines sharing one
// plain client, and returns requests per second.
func rawRate(b *testing.B, url, secret string, bodies [][]byte, workers int) float64 {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers * 2, DisableCompression: true}, Timeout: 15 * time.Second}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(bodies)) {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(bodies[i])))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Service-Signature", SignWebhook(time.Now(), bodies[i], secret))
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					b.Errorf("raw request: %d", resp.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(len(bodies)) / time.Since(start).Seconds()
}
