package ujpsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// FuzzSend throws arbitrary bodies at the send endpoint of a simulator with
// a registered certificate (on SQLite): whatever arrives, the answer is a
// UJP envelope and never a 5xx. TestBadText covers what a signed body can
// carry to PostgreSQL.
func FuzzSend(f *testing.F) {
	s, err := ujpsim.NewSandboxSigner("EUJP-FUZZ", ujpsim.TaxSeller)
	if err != nil {
		f.Fatal(err)
	}
	sim := newSim(f, storetest.SQLite(f), ujpsim.Options{})
	if _, err := sim.RegisterCertificate(context.Background(), s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		f.Fatal(err)
	}
	h := sim.Handler()
	valid, err := s.Sign(doc(f, "fuzz-seed"))
	if err != nil {
		f.Fatal(err)
	}
	body, _ := json.Marshal(ujp.SignedBody{RequestTimestamp: ujpdoc.FormatTimestamp(time.Now()), JWS: valid})
	f.Add(body)
	f.Add([]byte(`{"requestTimestamp":"2026-01-05T12:00:00","jws":"a.b.c"}`))
	f.Add([]byte(`{"jws":"eyJhbGciOiJSUzI1NiJ9.e30.AAAA"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		req := httptest.NewRequest(http.MethodPost, ujp.PathSend, bytes.NewReader(b))
		id := s.Identity()
		req.Header.Set("X-EUJP-ID", id.EUJPID)
		req.Header.Set("X-EDB", id.EDB)
		req.Header.Set("X-SERIAL-NUMBER", id.SerialNumber)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for %q: %s", rec.Code, b, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("not JSON: %s", rec.Body)
		}
	})
}
