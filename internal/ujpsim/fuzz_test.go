package ujpsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// fuzzSim is a simulator on SQLite with the seller's certificate.
func fuzzSim(f *testing.F) (*ujpsim.Sim, http.Handler, *ujpsim.SandboxSigner) {
	s, _ := signers(f)
	sim := newSim(f, storetest.SQLite(f), ujpsim.Options{Window: time.Nanosecond, Now: ticking(time.Millisecond)})
	if _, err := sim.RegisterCertificate(context.Background(), s.EUJPID, s.EDB, s.Cert.Raw); err != nil {
		f.Fatal(err)
	}
	return sim, sim.Handler(), s
}

// envelope checks an answer is UJP's: JSON, never a 5xx, and a refusal
// carries success false and an error code.
func envelope(t *testing.T, rec *httptest.ResponseRecorder, in []byte) {
	t.Helper()
	var m struct {
		Success     bool `json:"success"`
		ErrorStatus *struct {
			ErrorCode string `json:"errorCode"`
		} `json:"errorStatus"`
	}
	if rec.Code >= 500 || json.Unmarshal(rec.Body.Bytes(), &m) != nil {
		t.Fatalf("status %d for %q: %s", rec.Code, in, rec.Body)
	}
	if rec.Code != 200 && (m.Success || m.ErrorStatus == nil || m.ErrorStatus.ErrorCode == "") {
		t.Fatalf("a refusal without UJP's error envelope, for %q: %d %s", in, rec.Code, rec.Body)
	}
}

func sendRequest(h http.Handler, s *ujpsim.SandboxSigner, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, ujpsim.PathSend, bytes.NewReader(body))
	for k, v := range ident(s) {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-DOC-TYPE-CODE", "100")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// FuzzSend throws arbitrary bodies at the send endpoint of a simulator with
// a registered certificate: whatever arrives, the answer is UJP's envelope
// and never a 5xx. TestBadText covers what a signed body carries to
// PostgreSQL.
func FuzzSend(f *testing.F) {
	_, h, s := fuzzSim(f)
	b, err := os.ReadFile("testdata/documents/valid/type-100.json")
	if err != nil {
		f.Fatal(err)
	}
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	doc["requestTimestamp"] = ujpsim.FormatTimestamp(time.Now())
	jws, _ := s.Sign(doc)
	body, _ := json.Marshal(map[string]string{"requestTimestamp": doc["requestTimestamp"].(string), "jws": jws})
	f.Add(body)
	f.Add([]byte(`{"requestTimestamp":"2026-01-05T12:00:00","jws":"a.b.c"}`))
	f.Add([]byte(`{"jws":"eyJhbGciOiJSUzI1NiJ9.e30.AAAA"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		envelope(t, sendRequest(h, s, b), b)
	})
}

// FuzzSignedDocument signs whatever payload it is given with the seller's
// registered key, so every byte reaches the strict decoding, validation
// and store of a send: the answer is UJP's envelope and never a 5xx, and
// a document is stored exactly when the send is accepted. Each input is
// signed (RSA) and stored, so an execution takes milliseconds: give the
// fuzzer time, and -fuzzminimizetime a few seconds.
func FuzzSignedDocument(f *testing.F) {
	sim, h, s := fuzzSim(f)
	for _, name := range []string{"type-100", "storno", "impact-prenesen", "advance"} {
		b, err := os.ReadFile("testdata/documents/valid/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"document":{"docItems":[{"docItemQty":1e17,"docItemUnitOriginalPriceWoVat":-1}]}}`))
	f.Add([]byte("{\"document\":{\"header\":{\"docId\":\"\xff\"}}}"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		// The payload's own requestTimestamp is replaced by a fresh one
		// when it has one, so a stale seed date does not hide the rest.
		var m map[string]json.RawMessage
		ts := ujpsim.FormatTimestamp(time.Now())
		if json.Unmarshal(payload, &m) == nil && m != nil {
			if _, ok := m["requestTimestamp"]; ok {
				m["requestTimestamp"], _ = json.Marshal(ts)
				payload, _ = json.Marshal(m)
			}
		}
		jws, err := s.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]string{"requestTimestamp": ts, "jws": jws})
		before, err := sim.DocumentCount(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rec := sendRequest(h, s, body)
		envelope(t, rec, payload)
		after, err := sim.DocumentCount(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if stored := after - before; (rec.Code == 200) != (stored == 1) || stored > 1 {
			t.Fatalf("answer %d and %d documents stored, for %q", rec.Code, stored, payload)
		}
	})
}
