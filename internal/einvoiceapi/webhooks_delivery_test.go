package einvoiceapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// eventOf returns the id of the one event of type typ about object id.
func (e *pipeEnv) eventOf(id, typ string) string {
	e.t.Helper()
	_, m, raw := e.call("GET", "/v1/events?objectId="+id+"&type="+typ, nil)
	data, _ := m["data"].([]any)
	if len(data) != 1 {
		e.t.Fatalf("events %s of %s: %s", typ, id, raw)
	}
	return data[0].(map[string]any)["id"].(string)
}

// callKey is call with a chosen Idempotency-Key; it returns the headers too.
func (e *pipeEnv) callKey(method, path, key string, body any) (int, map[string]any, http.Header) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Idempotency-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, resp.Header
}

func at(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return tm
}

// stepTo advances the clock to just before due (nothing may run), then to
// due (exactly one attempt runs).
func (e *pipeEnv) stepTo(due time.Time) {
	e.t.Helper()
	e.advance(due.Add(-time.Second).Sub(e.now()))
	if n := e.deliver(); n != 0 {
		e.t.Fatalf("%d deliveries ran a second before %s", n, due)
	}
	e.advance(time.Second)
	if n := e.deliver(); n != 1 {
		e.t.Fatalf("%d deliveries ran at %s, want 1", n, due)
	}
}

// TestWebhookRetryLadder: a receiver that fails three times (a 500, a
// redirect, a timeout) sees the retries exactly 1 and 5 and 30 minutes
// apart, then succeeds; one that always fails sees the whole ladder (1 min,
// 5 min, 30 min, 2 h, 6 h, 12 h) and the delivery is abandoned.
func TestWebhookRetryLadder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db, frozenClock, func(e *pipeEnv, _ *appConfig) { e.hookCfg.Timeout = 300 * time.Millisecond })
		r := newHookReceiver(t, e.now)
		ep, secret := e.createEndpoint(r.url(), []string{webhooks.EventSignatureRequired}, nil)
		r.setSecrets(secret)
		r.answerWith(200, 500, 302, 0) // 0: answer after the timeout

		inv := e.issue("F-1")
		ev := e.eventOf(inv, webhooks.EventSignatureRequired)
		t0 := e.now()
		if n := e.deliver(); n != 1 {
			t.Fatalf("%d first attempts", n)
		}
		d := e.deliveries("/v1/events/" + ev + "/deliveries")[0]
		if d["state"] != "failed" || !at(t, d["nextAttemptAt"]).Equal(t0.Add(time.Minute)) {
			t.Fatalf("after the first failure: %v", d)
		}
		for _, off := range []time.Duration{time.Minute, 6 * time.Minute, 36 * time.Minute} {
			e.stepTo(t0.Add(off))
		}
		hits := r.taken()
		if len(hits) != 4 {
			t.Fatalf("%d requests", len(hits))
		}
		for i, want := range []time.Duration{0, time.Minute, 6 * time.Minute, 36 * time.Minute} {
			if got := hits[i].At.Sub(t0); got != want || len(hits[i].Verified) != 1 || hits[i].EventID != ev {
				t.Fatalf("request %d at +%s (want +%s), verified %d, event %s", i+1, got, want, len(hits[i].Verified), hits[i].EventID)
			}
		}
		d = e.deliveries("/v1/events/" + ev + "/deliveries")[0]
		att := attemptsOf(d)
		if d["state"] != "succeeded" || d["nextAttemptAt"] != nil || len(att) != 4 {
			t.Fatalf("delivery %v", d)
		}
		for i, want := range []struct {
			code  any
			class string
			err   string
		}{{float64(500), "5xx", "HTTP 500"}, {float64(302), "3xx", "redirects are not followed"}, {nil, "none", "Timeout"}, {float64(200), "2xx", ""}} {
			a := att[i]
			msg, _ := a["error"].(string)
			if a["number"] != float64(i+1) || a["statusCode"] != want.code || a["statusClass"] != want.class || !strings.Contains(msg, want.err) ||
				a["trigger"] != "scheduled" || (a["succeeded"] == true) != (i == 3) {
				t.Fatalf("attempt %d: %v", i+1, a)
			}
		}
		if got := at(t, att[3]["at"]).Sub(at(t, att[2]["at"])); got != 30*time.Minute {
			t.Fatalf("third retry %s after the second", got)
		}

		// Always failing: the whole ladder, then abandoned.
		r.answerWith(503)
		inv2 := e.issue("F-2")
		ev2 := e.eventOf(inv2, webhooks.EventSignatureRequired)
		t1 := e.now()
		if n := e.deliver(); n != 1 {
			t.Fatalf("%d first attempts", n)
		}
		off := time.Duration(0)
		for _, delay := range webhooks.WebhookRetryDelays() {
			off += delay
			e.stepTo(t1.Add(off))
		}
		e.advance(48 * time.Hour)
		if n := e.deliver(); n != 0 {
			t.Fatalf("%d attempts after the ladder", n)
		}
		d = e.deliveries("/v1/events/" + ev2 + "/deliveries")[0]
		att = attemptsOf(d)
		if d["state"] != "abandoned" || d["abandonedReason"] != "retries_exhausted" || len(att) != 7 || d["nextAttemptAt"] != nil {
			t.Fatalf("abandoned delivery %v", d)
		}
		offsets := []time.Duration{0, time.Minute, 6 * time.Minute, 36 * time.Minute, 2*time.Hour + 36*time.Minute,
			8*time.Hour + 36*time.Minute, 20*time.Hour + 36*time.Minute}
		for i, a := range att {
			if got := at(t, a["at"]).Sub(t1); got != offsets[i] || a["statusCode"] != float64(503) {
				t.Fatalf("attempt %d at +%s (want +%s): %v", i+1, got, offsets[i], a)
			}
		}
		// The log's filters.
		base := "/v1/webhook-endpoints/" + ep + "/deliveries"
		for q, want := range map[string]string{"?state=abandoned": ev2, "?state=succeeded": ev, "?statusClass=5xx": ev2, "?statusClass=2xx": ev} {
			got := e.deliveries(base + q)
			if len(got) != 1 || got[0]["eventId"] != want {
				t.Fatalf("%s: %v", q, got)
			}
		}
		if got := e.deliveries(base + "?state=pending"); len(got) != 0 {
			t.Fatalf("pending: %v", got)
		}
		if st, m, _ := e.call("GET", base+"?state=lost", nil); st != 422 {
			t.Fatalf("bad state filter: %d %v", st, m)
		}
	})
}

// TestWebhookEndpointDisabledAfter72Hours: an endpoint failing for 72
// hours is disabled by the failure that finds it so, its account's owners
// are mailed once (the mail job queued in that transaction), what waits for
// it is abandoned, and events while it is disabled are kept for recover.
// Re-enabled by PATCH, recover sends everything it missed.
func TestWebhookEndpointDisabledAfter72Hours(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db, frozenClock)
		ctx := t.Context()
		accts, err := db.Reader().ListAccounts(ctx)
		if err != nil || len(accts) != 1 {
			t.Fatalf("accounts %v %v", accts, err)
		}
		if err := (&auth.Store{DB: db}).SetOwners(ctx, accts[0].ID, []string{"owner@example.mk", "cfo@example.mk"}); err != nil {
			t.Fatal(err)
		}
		r := newHookReceiver(t, e.now)
		ep, secret := e.createEndpoint(r.url(), []string{webhooks.EventSignatureRequired}, nil)
		r.setSecrets(secret)
		r.answerWith(500)
		t0 := e.now()
		issueAndDeliver := func(n string) string {
			id := e.issue(n)
			e.deliver()
			return e.eventOf(id, webhooks.EventSignatureRequired)
		}
		var evs []string
		evs = append(evs, issueAndDeliver("F-0"))
		for _, h := range []time.Duration{24 * time.Hour, 48 * time.Hour, 72*time.Hour - time.Second} {
			e.advance(t0.Add(h).Sub(e.now()))
			e.deliver() // retries that came due meanwhile
			evs = append(evs, issueAndDeliver("F-"+h.String()))
			_, m, _ := e.call("GET", "/v1/webhook-endpoints/"+ep, nil)
			if m["enabled"] != true || !at(t, m["failingSince"]).Equal(t0) {
				t.Fatalf("at +%s: %v", h, m)
			}
		}
		if mails, _ := db.Reader().ListOutboxMail(ctx); len(mails) != 0 {
			t.Fatalf("%d mails before 72 h", len(mails))
		}
		e.advance(time.Second)
		evs = append(evs, issueAndDeliver("F-72h"))
		_, m, _ := e.call("GET", "/v1/webhook-endpoints/"+ep, nil)
		if m["enabled"] != false || m["disabledReason"] != webhooks.DisabledFailing || !at(t, m["disabledAt"]).Equal(t0.Add(72*time.Hour)) ||
			!at(t, m["failingSince"]).Equal(t0) {
			t.Fatalf("after 72 h: %v", m)
		}
		mails, err := db.Reader().ListOutboxMail(ctx)
		if err != nil || len(mails) != 2 {
			t.Fatalf("mails %d %v", len(mails), err)
		}
		for _, ml := range mails {
			if (ml.Recipient != "owner@example.mk" && ml.Recipient != "cfo@example.mk") || !strings.Contains(ml.Subject, "disabled") ||
				!strings.Contains(ml.Body, ep) || !strings.Contains(ml.Body, "/recover") {
				t.Fatalf("mail %+v", ml)
			}
		}
		jobs, _ := db.Reader().ListJobsByKind(ctx, "mail.send")
		if len(jobs) != 2 {
			t.Fatalf("%d mail jobs", len(jobs))
		}
		for _, q := range []string{"?state=pending", "?state=failed"} {
			if got := e.deliveries("/v1/webhook-endpoints/" + ep + "/deliveries" + q); len(got) != 0 {
				t.Fatalf("%s after disabling: %v", q, got)
			}
		}
		// While disabled: nothing is sent; the event is kept for recover.
		hits := len(r.taken())
		e.advance(time.Hour)
		evs = append(evs, issueAndDeliver("F-disabled"))
		if got := len(r.taken()); got != hits {
			t.Fatalf("%d requests to a disabled endpoint", got-hits)
		}
		if d := e.deliveries("/v1/events/" + evs[len(evs)-1] + "/deliveries"); len(d) != 1 || d[0]["state"] != "abandoned" || d[0]["abandonedReason"] != "endpoint_disabled" {
			t.Fatalf("event while disabled: %v", d)
		}
		if st, m, _ := e.call("POST", "/v1/events/"+evs[0]+"/replay", map[string]any{"endpointId": ep}); st != 409 || m["code"] != "webhook_endpoint_disabled" {
			t.Fatalf("replay to a disabled endpoint: %d %v", st, m)
		}
		if st, m, _ := e.call("POST", "/v1/webhook-endpoints/"+ep+"/recover", map[string]any{"since": t0}); st != 409 || m["code"] != "webhook_endpoint_disabled" {
			t.Fatalf("recover a disabled endpoint: %d %v", st, m)
		}

		// Fixed: enable, recover.
		r.answerWith(200)
		st, m, raw := e.call("PATCH", "/v1/webhook-endpoints/"+ep, map[string]any{"enabled": true})
		if st != 200 || m["enabled"] != true || m["failingSince"] != nil || m["disabledReason"] != nil || m["disabledAt"] != nil {
			t.Fatalf("enable: %d %s", st, raw)
		}
		st, m, raw = e.call("POST", "/v1/webhook-endpoints/"+ep+"/recover", map[string]any{"since": t0})
		if st != 202 || m["requeued"] != float64(len(evs)) || m["more"] != false {
			t.Fatalf("recover: %d %s", st, raw)
		}
		if n := e.deliver(); n != len(evs) {
			t.Fatalf("%d deliveries after recover, want %d", n, len(evs))
		}
		for _, ev := range evs {
			d := e.deliveries("/v1/events/" + ev + "/deliveries")
			att := attemptsOf(d[0])
			if len(d) != 1 || d[0]["state"] != "succeeded" || att[len(att)-1]["trigger"] != "manual" || att[len(att)-1]["statusCode"] != float64(200) {
				t.Fatalf("event %s after recover: %v", ev, d)
			}
		}
		if mails, _ := db.Reader().ListOutboxMail(ctx); len(mails) != 2 {
			t.Fatalf("%d mails in the end", len(mails))
		}
		_, m, _ = e.call("GET", "/v1/webhook-endpoints/"+ep, nil)
		if m["lastSuccessAt"] == nil || m["failingSince"] != nil {
			t.Fatalf("healthy again: %v", m)
		}
	})
}

// TestWebhookReplayAndRecover: replay delivers again now (to the
// subscribed endpoints, or to one named endpoint whatever it subscribes
// to), idempotently; recover brings a waiting retry forward without the
// old schedule running it a second time.
func TestWebhookReplayAndRecover(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db, frozenClock)
		r := newHookReceiver(t, e.now)
		ep1, s1 := e.createEndpoint(r.url()+"?to=1", []string{webhooks.EventSignatureRequired}, nil)
		ep2, s2 := e.createEndpoint(r.url()+"?to=2", []string{webhooks.EventAccepted}, nil)
		r.setSecrets(s1, s2)
		t0 := e.now()
		ev := e.eventOf(e.issue("F-1"), webhooks.EventSignatureRequired)
		if n := e.deliver(); n != 1 {
			t.Fatalf("%d deliveries", n)
		}
		first := e.deliveries("/v1/events/" + ev + "/deliveries")[0]

		e.advance(time.Hour)
		key := denar.NewID("idem")
		st, m, _ := e.callKey("POST", "/v1/events/"+ev+"/replay", key, nil)
		data, _ := m["data"].([]any)
		if st != 202 || len(data) != 1 || data[0].(map[string]any)["id"] != first["id"] || data[0].(map[string]any)["state"] != "pending" {
			t.Fatalf("replay: %d %v", st, m)
		}
		st, m2, h := e.callKey("POST", "/v1/events/"+ev+"/replay", key, nil)
		if st != 202 || h.Get("Idempotent-Replayed") != "true" || !jsonEqual(t, m, m2) {
			t.Fatalf("replayed replay: %d %v %v", st, h, m2)
		}
		if n := e.deliver(); n != 1 {
			t.Fatalf("%d deliveries after replay (one key, one replay)", n)
		}
		st, m, _ = e.call("POST", "/v1/events/"+ev+"/replay", map[string]any{"endpointId": ep2})
		if st != 202 || len(m["data"].([]any)) != 1 || m["data"].([]any)[0].(map[string]any)["endpointId"] != ep2 {
			t.Fatalf("replay to ep2: %d %v", st, m)
		}
		e.deliver()
		hits := r.taken()
		if len(hits) != 3 || hits[1].EventID != ev || hits[2].EventID != ev || !strings.Contains(hits[2].Header, "v1=") {
			t.Fatalf("requests %+v", hits)
		}
		d := e.deliveries("/v1/events/" + ev + "/deliveries")
		if len(d) != 2 {
			t.Fatalf("deliveries %v", d)
		}
		for _, x := range d {
			att := attemptsOf(x)
			last := att[len(att)-1]
			if x["state"] != "succeeded" || last["trigger"] != "manual" {
				t.Fatalf("delivery after replay %v", x)
			}
			if x["endpointId"] == ep1 && (len(att) != 2 || att[0]["trigger"] != "scheduled") {
				t.Fatalf("ep1's log %v", att)
			}
		}
		for _, c := range []struct {
			path string
			body any
			code string
		}{
			{"/v1/events/evt_nope/replay", nil, "not_found"},
			{"/v1/events/" + ev + "/replay", map[string]any{"endpointId": "whe_nope"}, "not_found"},
		} {
			if st, m, _ := e.call("POST", c.path, c.body); st != 404 || m["code"] != c.code {
				t.Fatalf("%s: %d %v", c.path, st, m)
			}
		}

		// A retry waiting for its time, brought forward by recover.
		r.answerWith(200, 500)
		ev2 := e.eventOf(e.issue("F-2"), webhooks.EventSignatureRequired)
		e.deliver()
		d2 := e.deliveries("/v1/events/" + ev2 + "/deliveries")[0]
		if d2["state"] != "failed" {
			t.Fatalf("first attempt: %v", d2)
		}
		st, m, raw := e.call("POST", "/v1/webhook-endpoints/"+ep1+"/recover", map[string]any{"since": t0})
		if st != 202 || m["requeued"] != float64(1) {
			t.Fatalf("recover: %d %s", st, raw)
		}
		if n := e.deliver(); n != 1 {
			t.Fatalf("%d deliveries right after recover", n)
		}
		e.advance(2 * time.Minute)
		if n := e.deliver(); n != 0 {
			t.Fatalf("the old retry ran too: %d", n)
		}
		d2 = e.deliveries("/v1/events/" + ev2 + "/deliveries")[0]
		att := attemptsOf(d2)
		if d2["state"] != "succeeded" || len(att) != 2 || att[1]["trigger"] != "manual" {
			t.Fatalf("recovered delivery %v", d2)
		}
		// Nothing left to recover.
		if _, m, _ := e.call("POST", "/v1/webhook-endpoints/"+ep1+"/recover", map[string]any{"since": t0}); m["requeued"] != float64(0) {
			t.Fatalf("second recover: %v", m)
		}
	})
}

// TestWebhookSecretRotation: after a rotation deliveries carry two
// signatures, each verifying with one secret, for 24 hours; then only the
// new secret signs. Secrets are never shown again: an Idempotency-Key
// replay of create or rotate answers 409 secret_already_shown.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db, frozenClock)
		r := newHookReceiver(t, e.now)
		key := denar.NewID("idem")
		body := map[string]any{"url": r.url(), "events": []string{webhooks.EventSignatureRequired}}
		st, m, _ := e.callKey("POST", "/v1/webhook-endpoints", key, body)
		if st != 201 {
			t.Fatalf("create: %d %v", st, m)
		}
		ep, old := m["id"].(string), m["secret"].(string)
		if st, again, h := e.callKey("POST", "/v1/webhook-endpoints", key, body); st != 409 || h.Get("Idempotent-Replayed") != "true" ||
			again["code"] != "secret_already_shown" || again["objectId"] != ep || again["object"] != "webhook_endpoint" ||
			strings.Contains(fmt.Sprint(again), old) || h.Get("Location") != "" {
			t.Fatalf("replayed create: %d %v %v", st, again, h)
		}
		r.setSecrets(old)
		send := func(n string) hookHit {
			t.Helper()
			e.issue(n)
			if k := e.deliver(); k != 1 {
				t.Fatalf("%d deliveries", k)
			}
			hits := r.taken()
			return hits[len(hits)-1]
		}
		if h := send("F-1"); strings.Count(h.Header, "v1=") != 1 || len(h.Verified) != 1 {
			t.Fatalf("before rotation: %+v", h)
		}
		rotKey := denar.NewID("idem")
		st, m, _ = e.callKey("POST", "/v1/webhook-endpoints/"+ep+"/rotate-secret", rotKey, nil)
		fresh, _ := m["secret"].(string)
		if st != 200 || !strings.HasPrefix(fresh, "whsec_") || fresh == old || !at(t, m["previousSecretExpiresAt"]).Equal(e.now().Add(24*time.Hour)) {
			t.Fatalf("rotate: %d %v", st, m)
		}
		if st, again, h := e.callKey("POST", "/v1/webhook-endpoints/"+ep+"/rotate-secret", rotKey, nil); st != 409 ||
			h.Get("Idempotent-Replayed") != "true" || again["code"] != "secret_already_shown" || again["objectId"] != ep ||
			strings.Contains(fmt.Sprint(again), fresh) {
			t.Fatalf("replayed rotation: %d %v", st, again)
		}
		t1 := e.now()
		r.setSecrets(old, fresh)
		for _, off := range []time.Duration{0, 24*time.Hour - time.Second} {
			e.advance(t1.Add(off).Sub(e.now()))
			h := send("F-" + off.String())
			if strings.Count(h.Header, "v1=") != 2 || len(h.Verified) != 2 {
				t.Fatalf("+%s after rotation: header %q verified by %d", off, h.Header, len(h.Verified))
			}
		}
		e.advance(time.Second)
		h := send("F-24h")
		if strings.Count(h.Header, "v1=") != 1 || len(h.Verified) != 1 || h.Verified[0] != fresh {
			t.Fatalf("24 h after rotation: header %q verified by %v", h.Header, h.Verified)
		}
		_, m, _ = e.call("GET", "/v1/webhook-endpoints/"+ep, nil)
		if m["secret"] != nil {
			t.Fatalf("GET shows the secret: %v", m)
		}
		_, list, _ := e.call("GET", "/v1/webhook-endpoints", nil)
		if got := list["data"].([]any)[0].(map[string]any); got["id"] != ep || got["secret"] != nil {
			t.Fatalf("list: %v", list)
		}
		// The stored form is sealed.
		var sealed string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT secret FROM webhook_endpoints WHERE id = $1", ep).Scan(&sealed); err != nil ||
			strings.Contains(sealed, fresh[len("whsec_"):]) || !strings.HasPrefix(sealed, "v1.") {
			t.Fatalf("stored secret %q %v", sealed, err)
		}

		// The test event: signed like the rest, in the log, not an event.
		st, m, raw := e.call("POST", "/v1/webhook-endpoints/"+ep+"/test", nil)
		if st != 202 || m["test"] != true || m["eventType"] != webhooks.EventWebhookTest || m["state"] != "pending" {
			t.Fatalf("test: %d %s", st, raw)
		}
		e.deliver()
		hits := r.taken()
		th := hits[len(hits)-1]
		var tb struct {
			ID   string
			Type string
			Data struct{ Object map[string]any }
		}
		_ = json.Unmarshal(th.Body, &tb)
		if th.Type != webhooks.EventWebhookTest || len(th.Verified) != 1 || tb.Data.Object["id"] != ep || tb.Data.Object["secret"] != nil {
			t.Fatalf("test request %+v %s", th, th.Body)
		}
		if st, _, _ := e.call("GET", "/v1/events/"+tb.ID, nil); st != 404 {
			t.Fatalf("the test event is an event: %d", st)
		}
		if d := e.deliveries("/v1/webhook-endpoints/" + ep + "/deliveries")[0]; d["test"] != true || d["state"] != "succeeded" || d["companyId"] != nil {
			t.Fatalf("test delivery %v", d)
		}
	})
}
