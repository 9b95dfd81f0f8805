package einvoiceapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/sdk/webhook"
)

// testSecrets seals webhook secrets in tests.
func testSecrets(t testing.TB) *auth.SecretBox {
	t.Helper()
	box, err := auth.NewSecretBox(bytes.Repeat([]byte{0x5a}, auth.SecretKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// hookHit is one request a receiver got.
type hookHit struct {
	At         time.Time // on the test's clock
	EventID    string
	Type       string
	DeliveryID string
	Header     string
	Body       []byte
	Verified   []string // the secrets whose signature verified
	Status     int      // what the receiver answered
}

// hookReceiver is a webhook receiver on loopback. It verifies every
// request from its raw bytes, with the API's 300 s tolerance against the
// test's clock, with each secret it knows, and answers as told.
type hookReceiver struct {
	t   *testing.T
	srv *httptest.Server
	now func() time.Time

	mu      sync.Mutex
	secrets []string
	answers []int // the next answers (0: 200 after a second); then answer
	answer  int
	delay   time.Duration
	hits    []hookHit
}

func newHookReceiver(t *testing.T, now func() time.Time) *hookReceiver {
	r := &hookReceiver{t: t, now: now, answer: http.StatusOK}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	h := hookHit{At: r.now(), Header: req.Header.Get(webhook.Header), Body: body, DeliveryID: req.Header.Get("Service-Delivery-Id")}
	for _, s := range r.secrets {
		if webhook.Verify(body, h.Header, s, webhook.Tolerance, r.now()) == nil {
			h.Verified = append(h.Verified, s)
		}
	}
	var ev struct{ ID, Type string }
	_ = json.Unmarshal(body, &ev)
	h.EventID, h.Type = ev.ID, ev.Type
	h.Status = r.answer
	if len(r.answers) > 0 {
		h.Status, r.answers = r.answers[0], r.answers[1:]
	}
	if len(h.Verified) == 0 {
		h.Status = http.StatusBadRequest
	}
	delay := r.delay
	r.hits = append(r.hits, h)
	r.mu.Unlock()
	if h.Status == 0 {
		// Answer only after the client's timeout.
		delay, h.Status = time.Second, http.StatusOK
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	if h.Status >= 300 && h.Status < 400 {
		w.Header().Set("Location", "/elsewhere")
	}
	w.WriteHeader(h.Status)
	_, _ = io.WriteString(w, "answer "+http.StatusText(h.Status))
}

func (r *hookReceiver) setSecrets(s ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = s
}

func (r *hookReceiver) answerWith(status int, next ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer, r.answers = status, next
}

func (r *hookReceiver) taken() []hookHit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.hits)
}

func (r *hookReceiver) url() string { return r.srv.URL + "/hooks" }

// createEndpoint registers an endpoint and returns its id and secret.
func (e *pipeEnv) createEndpoint(u string, events []string, extra map[string]any) (string, string) {
	e.t.Helper()
	body := map[string]any{"url": u, "events": events}
	for k, v := range extra {
		body[k] = v
	}
	st, m, raw := e.call("POST", "/v1/webhook-endpoints", body)
	if st != 201 {
		e.t.Fatalf("create endpoint: %d %s", st, raw)
	}
	sec, _ := m["secret"].(string)
	if !strings.HasPrefix(sec, "whsec_") {
		e.t.Fatalf("secret %q", sec)
	}
	return m["id"].(string), sec
}

// deliver runs the webhook jobs due now until none is left.
func (e *pipeEnv) deliver() int {
	e.t.Helper()
	total := 0
	for {
		n, err := e.hooks.RunOnce(e.t.Context())
		if err != nil {
			e.t.Fatal(err)
		}
		if n == 0 {
			return total
		}
		total += n
	}
}

// feedFrom reads the event feed from cursor to its end.
func (e *pipeEnv) feedFrom(cursor string) ([]map[string]any, string) {
	e.t.Helper()
	var out []map[string]any
	for {
		st, m, raw := e.call("GET", "/v1/events?limit=50&after="+url.QueryEscape(cursor), nil)
		if st != 200 {
			e.t.Fatalf("feed: %d %s", st, raw)
		}
		for _, it := range m["data"].([]any) {
			out = append(out, it.(map[string]any))
		}
		cursor = m["nextCursor"].(string)
		if m["hasMore"] != true {
			return out, cursor
		}
	}
}

// deliveries returns the delivery log of an event or an endpoint.
func (e *pipeEnv) deliveries(path string) []map[string]any {
	e.t.Helper()
	st, m, raw := e.call("GET", path, nil)
	if st != 200 {
		e.t.Fatalf("%s: %d %s", path, st, raw)
	}
	var out []map[string]any
	for _, it := range m["data"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func attemptsOf(d map[string]any) []map[string]any {
	var out []map[string]any
	for _, a := range d["attempts"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

// TestWebhooksEndToEnd: through a full e-invoice life cycle (delivered,
// accepted, rejected, auto-accepted, held, failed, voided by storno,
// corrected, the agent going offline and online) every event is delivered
// to a receiver on loopback exactly once, its signature verified from the
// raw bytes, its body the event as GET /v1/events/{id} shows it.
func TestWebhooksEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		r := newHookReceiver(t, e.now)
		_, startCursor := e.feedFrom("now")
		id, secret := e.createEndpoint(r.url(), []string{"*"}, map[string]any{"description": "all of it"})
		r.setSecrets(secret)

		ids := map[string]string{}
		// A terminal error, alone (the simulator fails the next submission).
		ids["fail"] = e.issue("F-fail")
		if st, m := e.simulate(ids["fail"], "terminal_error", map[string]any{"ujpCode": "E10203"}); st != 202 {
			t.Fatalf("terminal: %d %v", st, m)
		}
		e.settle()
		e.wantStatus(ids["fail"], "failed")
		// An outage: held, then delivered.
		ids["held"] = e.issue("F-held")
		if st, m := e.simulate(ids["held"], "outage_starts", nil); st != 202 {
			t.Fatalf("outage: %d %v", st, m)
		}
		e.settle()
		e.wantStatus(ids["held"], "held")
		if st, m := e.simulate(ids["held"], "outage_ends", nil); st != 202 {
			t.Fatalf("outage end: %d %v", st, m)
		}
		e.advance(61 * time.Second)
		e.settle()
		e.wantStatus(ids["held"], "delivered")
		for _, n := range []string{"accept", "reject", "deadline", "void", "correct"} {
			ids[n] = e.issue("F-" + n)
		}
		e.settle()
		e.simulate(ids["accept"], "buyer_accepts", nil)
		e.simulate(ids["reject"], "buyer_rejects", map[string]any{"rejectReasonCode": firstRejectReason(t)})
		e.simulate(ids["deadline"], "deadline_passes", nil)
		st, m, raw := e.call("POST", "/v1/einvoices/"+ids["void"]+"/storno", map[string]any{"reason": ujpdoc.Snapshot().VoidReasons[0].Code})
		if st != 202 {
			t.Fatalf("storno: %d %s", st, raw)
		}
		ids["storno"] = m["id"].(string)
		corr := map[string]any{}
		_ = json.Unmarshal([]byte(`{"number":"F-correct-2","issueDate":"`+e.now().Format(time.DateOnly)+`",
 "buyer":{"taxNumber":"`+ujpsim.TaxBuyer+`","name":"Тест Купувач ДОО Скопје","address":{"street":"Широк сокак","number":"5","postalCode":"1000","city":"Скопје"}},
 "references":[],"payment":{"typeCode":"P12","currency":"MKD"},
 "lines":[{"description":"Услуга","quantity":"2","unitPrice":"1000","vatPercent":"18","taxIndicator":"DDV-A"}],
 "docStorno":2,"reason":"`+ujpdoc.Snapshot().CorrectionReasons[0].Code+`"}`), &corr)
		if st, _, raw := e.call("POST", "/v1/einvoices/"+ids["correct"]+"/correction", corr); st != 202 {
			t.Fatalf("correction: %d %s", st, raw)
		}
		e.settle()
		// UJP moves the original of a storno to 07 once the buyer confirms
		// the storno (statuses.txt's stricter reading): until then it is
		// delivered.
		e.wantStatus(ids["storno"], "delivered")
		e.wantStatus(ids["void"], "delivered")
		if st, m := e.simulate(ids["storno"], "buyer_accepts", nil); st != 202 {
			t.Fatalf("the buyer accepts the storno: %d %v", st, m)
		}
		e.settle()
		for n, want := range map[string]string{"accept": "accepted", "reject": "rejected", "deadline": "auto_accepted",
			"void": "cancelled_by_storno", "storno": "accepted", "correct": "corrected"} {
			e.wantStatus(ids[n], want)
		}
		// The agent goes quiet, and comes back.
		e.advance(2 * time.Minute)
		e.signAll()

		if n := e.deliver(); n == 0 {
			t.Fatal("no delivery ran")
		}
		events, _ := e.feedFrom(startCursor)
		types := map[string]int{}
		hits := r.taken()
		for _, ev := range events {
			evID := ev["id"].(string)
			types[ev["type"].(string)]++
			var got []hookHit
			for _, h := range hits {
				if h.EventID == evID {
					got = append(got, h)
				}
			}
			if len(got) != 1 {
				t.Fatalf("event %s (%s) delivered %d times", evID, ev["type"], len(got))
			}
			h := got[0]
			if len(h.Verified) != 1 || h.Status != 200 {
				t.Fatalf("event %s: signature %q verified by %d secrets, answered %d", evID, h.Header, len(h.Verified), h.Status)
			}
			var body map[string]any
			if err := json.Unmarshal(h.Body, &body); err != nil {
				t.Fatal(err)
			}
			st, one, _ := e.call("GET", "/v1/events/"+evID, nil)
			if st != 200 || !jsonEqual(t, body, one) || !jsonEqual(t, body, ev) {
				t.Fatalf("event %s: delivered %s\nGET says %v", evID, h.Body, one)
			}
			log := e.deliveries("/v1/events/" + evID + "/deliveries")
			if len(log) != 1 || log[0]["state"] != "succeeded" || log[0]["endpointId"] != id || log[0]["id"] != h.DeliveryID {
				t.Fatalf("event %s deliveries %v", evID, log)
			}
			at := attemptsOf(log[0])
			if len(at) != 1 || at[0]["statusCode"] != float64(200) || at[0]["trigger"] != "scheduled" || at[0]["responseBody"] != "answer OK" ||
				at[0]["statusClass"] != "2xx" || at[0]["succeeded"] != true {
				t.Fatalf("event %s attempts %v", evID, at)
			}
		}
		if len(hits) != len(events) {
			t.Fatalf("%d requests for %d events", len(hits), len(events))
		}
		t.Logf("%d events, each delivered once: %v", len(events), types)
		for _, typ := range []string{webhooks.EventSignatureRequired, webhooks.EventSubmitted, webhooks.EventAccepted,
			webhooks.EventAutoAccepted, webhooks.EventRejected, webhooks.EventHeld, webhooks.EventFailed,
			webhooks.EventCancelledByStorno, webhooks.EventCorrected, webhooks.EventSigningAgentOffline, webhooks.EventSigningAgentOnline} {
			if types[typ] == 0 {
				t.Errorf("no %s event in the life cycle (%v)", typ, types)
			}
		}
		// The endpoint's health.
		_, ep, _ := e.call("GET", "/v1/webhook-endpoints/"+id, nil)
		if ep["lastSuccessAt"] == nil || ep["failingSince"] != nil || ep["secret"] != nil || ep["enabled"] != true {
			t.Fatalf("endpoint %v", ep)
		}
	})
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	var x, y any
	_ = json.Unmarshal(ab, &x)
	_ = json.Unmarshal(bb, &y)
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
