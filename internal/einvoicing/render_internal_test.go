package einvoicing

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// TestRenderedView: an e-invoice rendered once (renderedView) is written
// exactly as encoding/json writes its fields, with HTML characters
// unescaped (the API's JSON format) and escaped (json.Marshal, event
// data), and the event data the publisher makes of its rendering is the
// event data json.Marshal makes.
func TestRenderedView(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 7, 51, 4, 27234607, time.UTC)
	type eventData struct {
		Object any `json:"object"`
	}
	events := eventsOn(nil)
	for _, r := range []dbq.Einvoice{
		{ID: "einv_1", CompanyID: "cmp_1", Environment: "sandbox", Kind: "invoice", Status: "awaiting_signature",
			DocumentType: "100", Number: "F-1", IssueDate: "2026-11-23", Document: `{"a":1}`, UjpDocID: "einv_1",
			TotalNet: "1.00", TotalVat: "0.18", TotalGross: "1.18", Currency: "MKD", Problems: "[]", CreatedAt: at, UpdatedAt: at},
		{ID: "einv_2", CompanyID: "cmp_1", Environment: "production", Kind: "correction", Status: "validating",
			DocumentType: "100", Number: "F<2>&\u2028", IssueDate: "2026-11-23",
			Document: `{"docNotes": "a <b> & c", "x": [1, 2.50, null], "y": "\u2029"}`, UjpDocID: "einv_2",
			TotalNet: "1.00", TotalVat: "0.18", TotalGross: "1.18", Currency: "MKD", Problems: `[{"message":"<>"}]`,
			ClientReference: sql.NullString{String: "ref&1", Valid: true}, OriginalID: sql.NullString{String: "einv_1", Valid: true},
			CreatedAt: at, UpdatedAt: at.Add(time.Second), DeliveredAt: sql.NullTime{Time: at, Valid: true}},
	} {
		type plain EInvoice // the fields, encoded by reflection
		want := EInvoiceView(r)
		var api bytes.Buffer
		enc := json.NewEncoder(&api)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(plain(want)); err != nil {
			t.Fatal(err)
		}
		v, err := renderedView(r)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		enc = json.NewEncoder(&got)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if got.String() != api.String() {
			t.Errorf("%s, API rendering:\n got %s\nwant %s", r.ID, got.Bytes(), api.Bytes())
		}
		data, err := json.Marshal(eventData{Object: plain(want)})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []EInvoice{v, want} {
			got, err := json.Marshal(eventData{Object: e})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%s, json.Marshal:\n got %s\nwant %s", r.ID, got, data)
			}
		}
		d, err := einvoiceDraft("acct_1", webhooks.EventSubmitted, v)
		if err != nil {
			t.Fatal(err)
		}
		d.At = at
		ev, err := events.Prepare(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.Payload(); got != string(data) {
			t.Errorf("%s, event data:\n got %s\nwant %s", r.ID, got, data)
		}
	}
}
