package einvoiceapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
)

// slowBuyerInvoice is an issue body to the simulator's buyer whose registry
// answers slowly, under name.
func slowBuyerInvoice(number, date, name string) []byte {
	return []byte(fmt.Sprintf(`{"number":%q,"issueDate":%q,
 "buyer":{"taxNumber":%q,"name":%q,"address":{"street":"Октомвриска","number":"4","postalCode":"1300","city":"Куманово"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"2","unitPrice":"500","vatPercent":"18","taxIndicator":"DDV-A"}]}`,
		number, date, ujpsim.TaxSlowRegistry, name))
}

// postWithKey posts body with a given Idempotency-Key and returns the
// status, the replay header and the raw body.
func (e *pipeEnv) postWithKey(path, key string, body []byte) (int, string, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("X-Company-Id", e.company)
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Idempotent-Replayed"), raw
}

// TestValidationStates: when UJP's registry does not answer the buyer
// check within the inline budget, POST /v1/einvoices answers 202 with the
// document in validating (replayed byte for byte for the same key), and a
// job finishes the check: invalid with problems and
// einvoice.validated_failed, or on to signing (einvoice.signature_required)
// and delivery. Shape errors stay synchronous 422s.
func TestValidationStates(t *testing.T) {
	t.Parallel()
	tune := func(c *appConfig) {
		c.ValidationBudget = 50 * time.Millisecond // the simulator takes slowRegistry
		c.RegistryTimeout = 5 * time.Second
	}
	for _, tc := range []struct {
		name, buyer string
		valid       bool
	}{
		{"invalid", "Купувач со друго име", false},
		{"delivered", "Тест Бавен Купувач ДОО Куманово", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newPipeEnvWith(t, db, tune)
				date := e.now().Format(time.DateOnly)
				// A shape error is answered at once, registry or not.
				bad := slowBuyerInvoice("F-bad", "2026-13-01", tc.buyer)
				if st, _, raw := e.postWithKey("/v1/einvoices", "bad-"+tc.name, bad); st != 422 {
					t.Fatalf("shape error: %d %s", st, raw)
				}
				body := slowBuyerInvoice("F-slow", date, tc.buyer)
				st, replayed, first := e.postWithKey("/v1/einvoices", "slow-"+tc.name, body)
				var inv map[string]any
				if err := json.Unmarshal(first, &inv); err != nil || st != 202 || replayed != "" || inv["status"] != "validating" || inv["signingRequestId"] != nil {
					t.Fatalf("issue: %d %s", st, first)
				}
				id := inv["id"].(string)
				if reqs := e.docRequests(id); len(reqs) != 0 {
					t.Fatalf("signing requests while validating: %v", reqs)
				}
				st, replayed, again := e.postWithKey("/v1/einvoices", "slow-"+tc.name, body)
				if st != 202 || replayed != "true" || !bytes.Equal(first, again) {
					t.Fatalf("replay: %d %q\n%s\n%s", st, replayed, first, again)
				}
				e.runJobs() // the validation job waits for the slow registry
				if !tc.valid {
					m := e.wantStatus(id, "invalid")
					probs, _ := m["problems"].([]any)
					if len(probs) != 1 {
						t.Fatalf("problems %v", m["problems"])
					}
					p := probs[0].(map[string]any)
					if p["path"] != "buyer.name" || p["codebook"] != einvoicing.CBRegistry {
						t.Fatalf("problem %v", p)
					}
					if ev := e.events(id); !equal(ev, []string{"einvoice.validated_failed"}) {
						t.Fatalf("events %v", ev)
					}
					if h := e.history(id); !equal(h, []string{"→validating:issued", "validating→invalid:validation_failed"}) {
						t.Fatalf("history %v", h)
					}
					if reqs := e.docRequests(id); len(reqs) != 0 {
						t.Fatalf("signing requests of an invalid document: %v", reqs)
					}
					return
				}
				m := e.wantStatus(id, "awaiting_signature")
				reqs := e.docRequests(id)
				if len(reqs) != 1 || m["signingRequestId"] != reqs[0] {
					t.Fatalf("after validation: requests %v, waits on %v", reqs, m["signingRequestId"])
				}
				if ev := e.events(id); !equal(ev, []string{"einvoice.signature_required"}) {
					t.Fatalf("events %v", ev)
				}
				e.settle()
				m = e.wantStatus(id, "delivered")
				if doc, err := e.sim.Document(t.Context(), m["euid"].(string)); err != nil || doc.BuyerTin != ujpsim.TaxSlowRegistry {
					t.Fatalf("UJP has %+v (%v)", doc, err)
				}
				want := []string{"→validating:issued", "validating→awaiting_signature:validated", "awaiting_signature→queued:signed",
					"queued→submitting:submission", "submitting→delivered:submitted"}
				if h := e.history(id); !equal(h, want) {
					t.Fatalf("history %v", h)
				}
				if ev := e.events(id); !equal(ev, []string{"einvoice.signature_required", "einvoice.submitted"}) {
					t.Fatalf("events %v", ev)
				}
				// The registry's answer is cached: the next document to
				// this buyer is checked inline.
				if st, m, raw := e.call("POST", "/v1/einvoices", json.RawMessage(slowBuyerInvoice("F-slow-2", date, tc.buyer))); st != 202 || m["status"] != "awaiting_signature" {
					t.Fatalf("second document: %d %s", st, raw)
				}
			})
		})
	}
}
