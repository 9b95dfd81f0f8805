package ujpsim_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// BenchmarkSendInProcess measures one signed send through the client and the
// in-process simulator (signature verification, validation, EUID); signing
// happens outside the timer.
func BenchmarkSendInProcess(b *testing.B) {
	s, err := ujpsim.NewSandboxSigner("EUJP-BENCH", ujpsim.TaxSeller)
	if err != nil {
		b.Fatal(err)
	}
	sim, err := ujpsim.New(ujpsim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := sim.RegisterCertificate(s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		b.Fatal(err)
	}
	c, err := ujp.NewClient(ujp.Config{BaseURL: ujpsim.InProcessBaseURL, HTTPClient: &http.Client{Transport: sim.Transport(), Timeout: 10 * time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
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
}
