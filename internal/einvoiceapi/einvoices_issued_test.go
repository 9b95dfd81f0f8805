package einvoiceapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestIssuedAsStored: the issue path builds the e-invoice it answers with,
// and the einvoice.signature_required event's object, from the values it
// writes instead of reading the row back. Both must be the e-invoice as
// GET returns it afterwards, byte for byte, on both stores (PostgreSQL
// keeps microseconds).
func TestIssuedAsStored(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := newBenchWorld(t, db)
		req, _ := http.NewRequest("POST", w.srv.URL+"/v1/einvoices", bytes.NewReader([]byte(w.invoiceBody())))
		req.Header.Set("Authorization", "Bearer "+w.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Company-Id", w.company)
		req.Header.Set("Idempotency-Key", "issued-as-stored")
		resp, err := w.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		posted, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 202 {
			t.Fatalf("POST: %d %s", resp.StatusCode, posted)
		}
		var inv struct{ ID string }
		if err := json.Unmarshal(posted, &inv); err != nil {
			t.Fatal(err)
		}
		req, _ = http.NewRequest("GET", w.srv.URL+"/v1/einvoices/"+inv.ID, nil)
		req.Header.Set("Authorization", "Bearer "+w.key)
		req.Header.Set("X-Company-Id", w.company)
		resp, err = w.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET: %d %s", resp.StatusCode, got)
		}
		// GET alone says where the document stands in its signer's
		// queue (the last member); the rest is the document as stored.
		got, queue, found := bytes.Cut(bytes.TrimSpace(got), []byte(`,"queue":`))
		if !found || !bytes.HasPrefix(queue, []byte(`{"position":0,`)) {
			t.Errorf("GET: queue %q, want position 0", queue)
		}
		got = append(got, "}\n"...)
		if !bytes.Equal(posted, got) {
			t.Errorf("POST answered\n%s\nGET answers\n%s", posted, got)
		}
		var payload string
		if err := db.ReadDB().QueryRow("SELECT payload FROM events WHERE object_id = $1 AND type = $2",
			inv.ID, webhooks.EventSignatureRequired).Scan(&payload); err != nil {
			t.Fatal(err)
		}
		if want := `{"object":` + string(bytes.TrimSpace(got)) + `}`; payload != want {
			t.Errorf("event data\n%s\nGET answers\n%s", payload, want)
		}
	})
}

// TestSigningRequestAsStored: a new signing request is answered from the
// values written; it is the request as read back.
func TestSigningRequestAsStored(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newSignEnv(t, db)
		e.pair(newTestCert(t))
		made := e.request(einvoicing.PurposeQuery, `{"q":1}`)
		read, err := einvoicing.GetSigningRequest(t.Context(), db.Reader(), made.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(made, read) {
			t.Errorf("made %+v\nread %+v", made, read)
		}
	})
}
