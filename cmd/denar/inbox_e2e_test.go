package main

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujpsim"
	"github.com/denar-mk/denar/sdk/signer"
)

// inboxWorld is an einvoiceWorld whose account has a second sandbox
// company, the simulator's buyer, signed for by the same SDK worker, and a
// key with the inbox's scopes.
type inboxWorld struct {
	*einvoiceWorld
	buyer    string
	buyerKey string
}

func newInboxWorld(t *testing.T, dbURL string, extraEnv ...string) *inboxWorld {
	t.Helper()
	w := &inboxWorld{einvoiceWorld: newEInvoiceWorld(t, dbURL, append([]string{"DENAR_INBOX_DEADLINE_INTERVAL=200ms"}, extraEnv...)...)}
	r := w.post("/v1/companies", `{"taxNumber":"`+ujpsim.TaxBuyer+`","representative":{"name":"Петар Петровски","email":"petar@example.mk"}}`)
	if r.status != 201 {
		t.Fatalf("buyer company: %d %s", r.status, r.body)
	}
	var co struct{ ID string }
	_ = json.Unmarshal(r.body, &co)
	w.buyer = co.ID
	db, err := store.Open(t.Context(), w.dbURL())
	if err != nil {
		t.Fatal(err)
	}
	var account string
	if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET status = 'active' WHERE id = $1", w.buyer); err != nil {
		t.Fatal(err)
	}
	if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT account_id FROM companies WHERE id = $1", w.buyer).Scan(&account); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var key struct{ Key string }
	args := []string{"key", "create", "--account", account, "--service", "einvoice", "--env", "sandbox", "--json"}
	for _, s := range []string{"inbox:read", "inbox:write", "events:read", "einvoices:read"} {
		args = append(args, "--scope", s)
	}
	if err := json.Unmarshal([]byte(runAdminCmd(t, w.srv.env, args...)), &key); err != nil {
		t.Fatal(err)
	}
	w.buyerKey = key.Key
	// The buyer's certificate, with the worker's key.
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Тест Купувач ДОО Скопје"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certValidity)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &w.rsaKey.PublicKey, w.rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	if err := signer.RegisterCertificate(t.Context(), http.DefaultClient, w.creds, cert, w.buyer); err != nil {
		t.Fatal(err)
	}
	return w
}

// buyerCall calls the e-invoicing API as the buyer company.
func (w *inboxWorld) buyerCall(method, path, body string) httpReply {
	w.t.Helper()
	w.n++
	h := map[string]string{"X-Company-Id": w.buyer}
	if method == "POST" {
		h["Idempotency-Key"] = fmt.Sprintf("inbox-e2e-%d-%d", time.Now().UnixNano(), w.n)
	}
	return call(w.t, method, w.srv.einvoice+path, w.buyerKey, h, body)
}

// inbox lists the buyer's documents by EUID (every page), failing on an
// EUID listed twice.
func (w *inboxWorld) inbox() map[string]map[string]any {
	w.t.Helper()
	out := map[string]map[string]any{}
	path := "/v1/inbox"
	for {
		r := w.buyerCall("GET", path, "")
		if r.status != 200 {
			w.t.Fatalf("inbox: %d %s", r.status, r.body)
		}
		var page struct {
			Data       []map[string]any `json:"data"`
			NextCursor *string          `json:"nextCursor"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			w.t.Fatal(err)
		}
		for _, d := range page.Data {
			euid := d["euid"].(string)
			if out[euid] != nil {
				w.t.Fatalf("%s listed twice", euid)
			}
			out[euid] = d
		}
		if page.NextCursor == nil {
			return out
		}
		path = "/v1/inbox?cursor=" + url.QueryEscape(*page.NextCursor)
	}
}

// waitInbox waits until every EUID of want is in the inbox and returns it.
func (w *inboxWorld) waitInbox(want []string, within time.Duration) map[string]map[string]any {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for {
		docs := w.inbox()
		missing := 0
		for _, e := range want {
			if docs[e] == nil {
				missing++
			}
		}
		if missing == 0 {
			return docs
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%d of %d documents not in the inbox after %s\nlog tail:\n%s", missing, len(want), within, tail(w.srv.stderr.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitDoc polls an inbox document until ok says it is there.
func (w *inboxWorld) waitDoc(id string, within time.Duration, what string, ok func(map[string]any) bool) map[string]any {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := w.buyerCall("GET", "/v1/inbox/"+id, "")
		var d map[string]any
		_ = json.Unmarshal(r.body, &d)
		if r.status == 200 && ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: not %s after %s: %d %s\nlog tail:\n%s", id, what, within, r.status, r.body, tail(w.srv.stderr.String(), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func decisionIs(state string) func(map[string]any) bool {
	return func(d map[string]any) bool {
		dec, _ := d["decision"].(map[string]any)
		return dec["state"] == state
	}
}

// buyerEvents are the types of the events of object id, oldest first.
func (w *inboxWorld) buyerEvents(query string) []map[string]any {
	w.t.Helper()
	r := w.buyerCall("GET", "/v1/events?limit=200&"+query, "")
	var page struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil || r.status != 200 {
		w.t.Fatalf("events: %d %s", r.status, r.body)
	}
	out := make([]map[string]any, 0, len(page.Data))
	for i := len(page.Data) - 1; i >= 0; i-- {
		out = append(out, page.Data[i])
	}
	return out
}

func types(evs []map[string]any) string {
	var out []string
	for _, e := range evs {
		out = append(out, e["type"].(string))
	}
	return strings.Join(out, ",")
}

// dropAtSim has the simulator's supplier send the buyer an invoice through
// the simulator's admin API (no denar serve involved).
// jobsFinished reads denar_jobs_finished_total of kind and outcome from the
// server's /metrics (0 before the first).
func (w *inboxWorld) jobsFinished(kind, outcome string) int {
	w.t.Helper()
	r := call(w.t, "GET", w.srv.einvoice+"/metrics", "", nil, "")
	if r.status != 200 {
		w.t.Fatalf("metrics: %d", r.status)
	}
	prefix := `denar_jobs_finished_total{kind="` + kind + `",outcome="` + outcome + `"} `
	for line := range strings.Lines(string(r.body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				w.t.Fatalf("metrics line %q: %v", line, err)
			}
			return int(n)
		}
	}
	return 0
}

func (w *inboxWorld) dropAtSim() string {
	w.t.Helper()
	r := call(w.t, "POST", w.sim.url+"/_sim/buyers/"+ujpsim.TaxBuyer+"/incoming", simToken, nil, `{}`)
	var d struct{ EUID string }
	if err := json.Unmarshal(r.body, &d); err != nil || r.status != 200 || d.EUID == "" {
		w.t.Fatalf("drop at the simulator: %d %s", r.status, r.body)
	}
	return d.EUID
}

// restart stops denar serve and denar ujp-sim and starts both again on
// their stores and addresses, with the clock at `at` (DENAR_CLOCK_OFFSET).
func (w *inboxWorld) restartAt(at time.Time) {
	w.t.Helper()
	w.srv.stop(w.t)
	if err := w.sim.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		w.t.Fatal(err)
	}
	_ = w.sim.cmd.Wait()
	offset := "DENAR_CLOCK_OFFSET=" + time.Until(at).Round(time.Second).String()
	w.sim = startSimProcessAt(w.t, w.sim.dbURL, w.sim.addr, offset)
	env := make([]string, 0, len(w.srv.env)+1)
	for _, kv := range w.srv.env {
		if !strings.HasPrefix(kv, "DENAR_CLOCK_OFFSET=") {
			env = append(env, kv)
		}
	}
	w.srv = startServer(w.t, append(env, offset))
}

// TestInboxEndToEnd runs the real denar serve against the real denar
// ujp-sim on both stores, with the SDK worker signing for two sandbox
// companies of one account: what the seller issues appears in the buyer's
// inbox with its deadline and UJP's payload byte for byte; the buyer
// rejects one with O-2 (the worker signs the decision) and the seller's
// e-invoice becomes rejected, accepts another, and a third passes its
// deadline (auto_accepted; a later accept is 409 decision_deadline_passed).
// Documents sent while denar serve is down and during a UJP outage appear
// once each. Then, on a controlled clock (both processes restarted with
// DENAR_CLOCK_OFFSET), reminders fire once each at 5, 2 and 1 days left and
// the document is auto-accepted after the 10th.
func TestInboxEndToEnd(t *testing.T) {
	t.Parallel()
	storetest.EachURL(t, func(t *testing.T, dbURL string) {
		w := newInboxWorld(t, dbURL)
		ids := map[string]string{}
		for _, n := range []string{"reject", "accept", "deadline"} {
			ids[n] = w.issue("INB-" + n)
		}
		euids := map[string]string{}
		for n, id := range ids {
			euids[n] = w.waitStatus(id, "delivered", 20*time.Second)["euid"].(string)
		}
		docs := w.waitInbox([]string{euids["reject"], euids["accept"], euids["deadline"]}, 30*time.Second)
		today := time.Now().In(ujpdoc.Skopje)
		wantBy := einvoice.DecideBy(today).Format(time.DateOnly)
		inboxIDs := map[string]string{}
		for n, e := range euids {
			d := docs[e]
			inboxIDs[n] = d["id"].(string)
			seller, _ := d["seller"].(map[string]any)
			if d["decideBy"] != wantBy || d["number"] != "INB-"+n || seller["taxNumber"] != ujpsim.TaxSeller || d["daysLeft"] != float64(einvoice.DaysLeft(time.Now(), einvoice.DecideBy(today))) {
				t.Fatalf("%s in the inbox: decideBy %v (want %s), number %v, seller %v, daysLeft %v", n, d["decideBy"], wantBy, d["number"], seller["taxNumber"], d["daysLeft"])
			}
		}

		// The payload, byte for byte as the simulator stored it.
		r := call(t, "GET", w.sim.url+"/_sim/documents/"+euids["reject"], simToken, nil, "")
		var stored struct {
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(r.body, &stored); err != nil || r.status != 200 {
			t.Fatalf("sim document: %d %v", r.status, err)
		}
		p := w.buyerCall("GET", "/v1/inbox/"+inboxIDs["reject"]+"/payload", "")
		if p.status != 200 || !bytes.Equal(p.body, stored.Payload) || p.header.Get("Content-Type") != "application/json" {
			t.Fatalf("payload: %d, %d bytes, equal %v", p.status, len(p.body), bytes.Equal(p.body, stored.Payload))
		}

		// Reject with O-2, accept, let the third pass its deadline.
		if r := w.buyerCall("POST", "/v1/inbox/"+inboxIDs["reject"]+"/reject", `{"reasonCode":"O-2","comment":"погрешна количина"}`); r.status != 202 {
			t.Fatalf("reject: %d %s", r.status, r.body)
		}
		if r := w.buyerCall("POST", "/v1/inbox/"+inboxIDs["accept"]+"/accept", ""); r.status != 202 {
			t.Fatalf("accept: %d %s", r.status, r.body)
		}
		if r := w.buyerCall("POST", "/v1/sandbox/inbox/"+inboxIDs["deadline"]+"/simulate", `{"action":"deadline_passes"}`); r.status != 202 {
			t.Fatalf("deadline_passes: %d %s", r.status, r.body)
		}
		w.waitDoc(inboxIDs["reject"], 30*time.Second, "rejected", decisionIs("rejected"))
		w.waitDoc(inboxIDs["accept"], 30*time.Second, "accepted", decisionIs("accepted"))
		w.waitDoc(inboxIDs["deadline"], 30*time.Second, "auto_accepted", decisionIs("auto_accepted"))
		if r := w.buyerCall("POST", "/v1/inbox/"+inboxIDs["deadline"]+"/accept", ""); r.status != 409 || !strings.Contains(string(r.body), `"code":"decision_deadline_passed"`) {
			t.Fatalf("accept after the deadline: %d %s", r.status, r.body)
		}
		w.waitStatus(ids["reject"], "rejected", 30*time.Second)
		w.waitStatus(ids["accept"], "accepted", 30*time.Second)
		w.waitStatus(ids["deadline"], "auto_accepted", 30*time.Second)
		if got := types(w.buyerEvents("objectId=" + inboxIDs["reject"])); got != "inbox.received,inbox.signature_required,inbox.rejected" {
			t.Fatalf("events of the rejected document: %s", got)
		}
		// The worker signed the decision: its request is a signed one of purpose decision.
		w.mu.Lock()
		signed := len(w.signed)
		w.mu.Unlock()
		if signed == 0 {
			t.Fatal("the worker signed nothing")
		}

		// Documents sent while denar serve is down, and during an outage.
		all := []string{euids["reject"], euids["accept"], euids["deadline"]}
		w.srv.stop(t)
		all = append(all, w.dropAtSim(), w.dropAtSim())
		w.srv = startServer(t, w.srv.env)
		w.waitInbox(all, 30*time.Second)
		w.sim.faults(t, `{"outage":true}`)
		all = append(all, w.dropAtSim(), w.dropAtSim())
		// The polls go on (UJP's time unread, by our clock); their reads
		// fail meanwhile and are retried (two, so that a retry fails too).
		failedReads := func() int {
			return w.jobsFinished(einvoicing.KindUJPQuery, "retryable")
		}
		before := failedReads()
		for deadline := time.Now().Add(30 * time.Second); failedReads() < before+2; {
			if time.Now().After(deadline) {
				t.Fatalf("reads failed %d times during the outage, want 2", failedReads()-before)
			}
			time.Sleep(50 * time.Millisecond)
		}
		w.sim.faults(t, `{"outage":false}`)
		got := w.waitInbox(all, 30*time.Second)
		if len(got) != len(all) {
			t.Fatalf("%d documents in the inbox, want %d", len(got), len(all))
		}
		if n := len(w.buyerEvents("type=inbox.received")); n != len(all) {
			t.Fatalf("%d inbox.received events for %d documents", n, len(all))
		}

		// The deadline on a controlled clock.
		r = w.buyerCall("POST", "/v1/sandbox/inbox", `{"transactionDate":"`+today.Format(time.DateOnly)+`"}`)
		var drop struct {
			EUID     string `json:"euid"`
			DecideBy string `json:"decideBy"`
		}
		if err := json.Unmarshal(r.body, &drop); err != nil || r.status != 202 || drop.DecideBy != wantBy {
			t.Fatalf("drop: %d %s", r.status, r.body)
		}
		id := w.waitInbox([]string{drop.EUID}, 30*time.Second)[drop.EUID]["id"].(string)
		by, _ := time.ParseInLocation(time.DateOnly, drop.DecideBy, ujpdoc.Skopje)
		reminders := func() string {
			var out []string
			for _, e := range w.buyerEvents("type=inbox.deadline_approaching&objectId=" + id) {
				obj := e["data"].(map[string]any)["object"].(map[string]any)
				out = append(out, fmt.Sprint(obj["daysLeft"]))
			}
			return strings.Join(out, ",")
		}
		for _, step := range []struct {
			at   time.Time
			want string
		}{
			{by.AddDate(0, 0, -5).Add(10 * time.Hour), "5"},
			{by.AddDate(0, 0, -2).Add(10 * time.Hour), "5,2"},
			{by.AddDate(0, 0, -2).Add(11 * time.Hour), "5,2"},
			{by.AddDate(0, 0, -1).Add(10 * time.Hour), "5,2,1"},
		} {
			w.restartAt(step.at)
			deadline := time.Now().Add(30 * time.Second)
			for reminders() != step.want {
				if time.Now().After(deadline) {
					t.Fatalf("at %s: reminders %q, want %q\n%s", step.at, reminders(), step.want, tail(w.srv.stderr.String(), 3000))
				}
				time.Sleep(100 * time.Millisecond)
			}
			// Five more runs of the deadline job: nothing more.
			runs := w.jobsFinished(inbox.KindDeadlines, "completed")
			deadline = time.Now().Add(30 * time.Second)
			for w.jobsFinished(inbox.KindDeadlines, "completed") < runs+5 {
				if time.Now().After(deadline) {
					t.Fatalf("the deadline job did not run five more times (%d runs)", w.jobsFinished(inbox.KindDeadlines, "completed")-runs)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got := reminders(); got != step.want {
				t.Fatalf("at %s: reminders %q after more runs, want %q", step.at, got, step.want)
			}
		}
		w.restartAt(by.AddDate(0, 0, 1).Add(30 * time.Minute))
		d := w.waitDoc(id, 30*time.Second, "auto_accepted", decisionIs("auto_accepted"))
		if d["daysLeft"] != float64(-1) {
			t.Fatalf("daysLeft after the deadline: %v", d["daysLeft"])
		}
		if r := w.buyerCall("POST", "/v1/inbox/"+id+"/reject", `{"reasonCode":"O-1"}`); r.status != 409 || !strings.Contains(string(r.body), `"code":"decision_deadline_passed"`) {
			t.Fatalf("reject after the deadline: %d %s", r.status, r.body)
		}
		// UJP's own auto-acceptance (04) arrives too; the event is not repeated.
		w.waitDoc(id, 60*time.Second, "confirmed by UJP's 04", func(d map[string]any) bool {
			st, _ := d["ujpStatus"].(map[string]any)
			return st["code"] == "04"
		})
		if got := types(w.buyerEvents("objectId=" + id)); got != "inbox.received,inbox.deadline_approaching,inbox.deadline_approaching,inbox.deadline_approaching,inbox.auto_accepted" {
			t.Fatalf("events: %s", got)
		}
		w.srv.stop(t)
	})
}
