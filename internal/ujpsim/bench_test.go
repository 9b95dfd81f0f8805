package ujpsim_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// BenchmarkSendInProcess measures one signed send through the client and the
// in-process simulator (signature verification, validation, EUID, the
// document and its history written to the store) on each engine; signing
// happens outside the timer.
func BenchmarkSendInProcess(b *testing.B) {
	for _, engine := range []struct {
		name string
		open func(testing.TB) *store.DB
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(engine.name, func(b *testing.B) {
			s := signer(b)
			sim := newSim(b, engine.open(b), ujpsim.Options{})
			ctx := context.Background()
			if _, err := sim.RegisterCertificate(ctx, s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
				b.Fatal(err)
			}
			c, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL, HTTPClient: &http.Client{Transport: sim.Transport(), Timeout: 10 * time.Second}})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				req := doc(b, "bench-"+strconv.Itoa(i))
				req.RequestTimestamp = ujpdoc.FormatTimestamp(time.Now())
				jws, err := s.Sign(req)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := c.Send(ctx, s.Identity(), "100", jws); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
