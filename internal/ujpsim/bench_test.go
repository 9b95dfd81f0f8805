package ujpsim_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// BenchmarkSendInProcess measures one signed send through the in-process
// transport (identity, rate slot, signature verification, the strict
// validation, EUID, the document and its history written to the store) on
// each engine; signing happens outside the timer. The rate window is
// shortened, never off: the ticking clock spaces the calls.
func BenchmarkSendInProcess(b *testing.B) {
	for _, engine := range []struct {
		name string
		open func(testing.TB) *store.DB
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(engine.name, func(b *testing.B) {
			s, _ := signers(b)
			sim := newSim(b, engine.open(b), ujpsim.Options{Now: ticking(time.Millisecond), Window: time.Millisecond})
			if _, err := sim.RegisterCertificate(context.Background(), s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
				b.Fatal(err)
			}
			e := &env{t: b, sim: sim, url: ujpsim.InProcessBaseURL, transport: sim.Transport()}
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				doc := example(b, "type-100", "bench-"+strconv.Itoa(i))
				ts := ujpsim.FormatTimestamp(time.Now())
				doc["requestTimestamp"] = ts
				jws, err := s.Sign(doc)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := json.Marshal(map[string]string{"requestTimestamp": ts, "jws": jws})
				h := ident(s)
				h["X-DOC-TYPE-CODE"] = "100"
				b.StartTimer()
				if a := e.raw("POST", ujpsim.PathSend, h, body, 10*time.Second); a.status != 200 {
					b.Fatalf("send: %d %s %v", a.status, a.body, a.err)
				}
			}
		})
	}
}
