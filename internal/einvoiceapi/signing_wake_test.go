package einvoiceapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar/internal/einvoiceapi"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestSigningWakeUp: an agent's WebSocket learns of a signing request when
// the transaction that created it commits, not at its periodic look (an
// hour here, so a request seen within the test came by the wake-up):
// created by this process, by another process sharing the store
// (PostgreSQL: another store on the same database), and by issuing an
// e-invoice (on PostgreSQL, the one statement that writes its rows).
func TestSigningWakeUp(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		e := newSignEnv(t, db)
		// Another process: on SQLite there is one (the store's wake-up is
		// in-process), on PostgreSQL another store with its own connections.
		other := db
		if db.Dialect() == store.Postgres {
			other = storetest.Open(t, url)
		}
		c := newTestCert(t)
		agent, authz := e.pair(c)
		slow := httptest.NewServer(newAPIPolling(db, time.Hour))
		t.Cleanup(slow.Close)
		create := func(on *store.DB, payload string) einvoicing.SigningRequest {
			t.Helper()
			var r einvoicing.SigningRequest
			if err := on.InTx(t.Context(), func(tx *store.Tx) error {
				var err error
				r, err = einvoicing.RequestSignature(t.Context(), tx, e.company, einvoicing.PurposeQuery, []byte(payload), einvoicing.SigningLink{Type: "einvoice", ID: "inv_1"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return r
		}

		polled := create(db, `{"n":1}`)

		// The WebSocket (batches): what is pending comes first, then each
		// request as it is committed.
		conn, _, err := websocket.Dial(t.Context(), wsURL(slow.URL, agent)+"?batch=10", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		if m := readMsg(t, conn); m.Type != "hello" || m.Batch != 10 {
			t.Fatalf("hello: %+v", m)
		}
		if m := readMsg(t, conn); m.Type != "signing_requests" || len(m.Requests) != 1 || m.Requests[0].ID != polled.ID {
			t.Fatalf("pending at connection: %+v", m)
		}
		finish := func(id string) {
			t.Helper()
			for _, op := range []struct {
				name string
				body any
			}{
				{"claim", map[string]any{"ids": []string{id}}},
				{"refusals", map[string]any{"items": []map[string]string{{"id": id, "reason": "user_declined"}}}},
			} {
				if res, _ := wsSend(t, conn, op.name, op.name+"-"+id, op.body); res.Status != 200 {
					t.Fatalf("%s %s: %d %s", op.name, id, res.Status, res.Body)
				}
			}
		}
		finish(polled.ID)
		pushed := func(what string, id string, created time.Time) {
			t.Helper()
			m := readMsg(t, conn) // within 5 s
			if m.Type != "signing_requests" || len(m.Requests) != 1 || m.Requests[0].ID != id {
				t.Fatalf("%s: %+v, want %s", what, m, id)
			}
			t.Logf("%s pushed %s after the commit", what, time.Since(created).Round(time.Microsecond))
			// The agent finishes it: a batch is pushed once the one
			// before it is finished.
			finish(id)
		}
		here := create(db, `{"n":2}`)
		pushed("a request of this process", here.ID, time.Now())
		there := create(other, `{"n":3}`)
		pushed("a request of another process", there.ID, time.Now())

		// Issuing an e-invoice.
		key := e.issuingKey()
		st, m := e.doRaw("POST", "/v1/einvoices", "Bearer "+key, strings.Replace(issueBody, "%s", "", 1))
		issued := time.Now()
		if st != 202 || m["status"] != "awaiting_signature" {
			t.Fatalf("issue: %d %v", st, m)
		}
		var srID string
		if err := db.ReadDB().QueryRowContext(t.Context(), "SELECT id FROM signing_requests WHERE link_id = $1", m["id"]).Scan(&srID); err != nil {
			t.Fatal(err)
		}
		pushed("an issued e-invoice's request", srID, issued)
	})
}

// newAPIPolling is newAPI's HTTP service whose agents' sockets look for
// requests every poll besides their wake-ups.
func newAPIPolling(db *store.DB, poll time.Duration) http.Handler {
	_, api := newApp(db, einvoicing.Deps{}, appConfig{SigningPoll: poll}, webhooks.Deps{}, webhooks.Config{})
	return api.Handler()
}

// TestSocketPushesOneBatchAtATime: in batch mode the socket pushes the
// next batch once the agent has finished the one it holds, so requests
// committed meanwhile reach it as one batch, not one message each.
func TestSocketPushesOneBatchAtATime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		c := newTestCert(t)
		agent, authz := e.pair(c)
		srv := httptest.NewServer(newAPIPolling(db, time.Hour))
		t.Cleanup(srv.Close)
		create := func(n int) string {
			t.Helper()
			var r einvoicing.SigningRequest
			if err := db.InTx(t.Context(), func(tx *store.Tx) error {
				var err error
				r, err = einvoicing.RequestSignature(t.Context(), tx, e.company, einvoicing.PurposeQuery, []byte(fmt.Sprintf(`{"n":%d}`, n)), einvoicing.SigningLink{Type: "einvoice", ID: "inv_1"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		conn, _, err := websocket.Dial(t.Context(), wsURL(srv.URL, agent)+"?batch=10", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {authz}}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		if m := readMsg(t, conn); m.Type != "hello" {
			t.Fatalf("hello: %+v", m)
		}
		first := create(1)
		if m := readMsg(t, conn); m.Type != "signing_requests" || len(m.Requests) != 1 || m.Requests[0].ID != first {
			t.Fatalf("first: %+v", m)
		}
		// Committed while the agent holds the first: each wakes the
		// socket, none is pushed yet.
		later := []string{create(2), create(3), create(4)}
		if res, _ := wsSend(t, conn, "claim", "claim-1", map[string]any{"ids": []string{first}}); res.Status != 200 {
			t.Fatalf("claim: %d %s", res.Status, res.Body)
		}
		res, pushes := wsSend(t, conn, "refusals", "refuse-1", map[string]any{"items": []map[string]string{{"id": first, "reason": "user_declined"}}})
		if res.Status != 200 {
			t.Fatalf("refusals: %d %s", res.Status, res.Body)
		}
		var m einvoiceapi.WSMessage
		if len(pushes) > 0 {
			m = pushes[0]
		} else {
			m = readMsg(t, conn)
		}
		got := map[string]bool{}
		for _, r := range m.Requests {
			got[r.ID] = true
		}
		if m.Type != "signing_requests" || len(m.Requests) != len(later) || !got[later[0]] || !got[later[1]] || !got[later[2]] {
			t.Fatalf("after the first was finished: %+v, want the %d later requests in one batch", m, len(later))
		}
	})
}
