package einvoiceapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/denar-mk/denar/internal/auth"
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
		pushed := func(what string, id string, created time.Time) {
			t.Helper()
			m := readMsg(t, conn) // within 5 s
			if m.Type != "signing_requests" || len(m.Requests) != 1 || m.Requests[0].ID != id {
				t.Fatalf("%s: %+v, want %s", what, m, id)
			}
			t.Logf("%s pushed %s after the commit", what, time.Since(created).Round(time.Microsecond))
		}
		here := create(db, `{"n":2}`)
		pushed("a request of this process", here.ID, time.Now())
		there := create(other, `{"n":3}`)
		pushed("a request of another process", there.ID, time.Now())

		// Issuing an e-invoice.
		_, key, err := (&auth.Store{DB: db}).CreateKey(t.Context(), auth.KeyParams{AccountID: e.account, Service: auth.ServiceEInvoice,
			Environment: auth.EnvSandbox, Scopes: []string{"einvoices:write", "einvoices:read"}, CompanyIDs: []string{e.company}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.WriteDB().ExecContext(t.Context(), "UPDATE companies SET address = $1 WHERE id = $2",
			`{"street":"Партизанска","number":"1","city":"Скопје","zip":"1000"}`, e.company); err != nil {
			t.Fatal(err)
		}
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
