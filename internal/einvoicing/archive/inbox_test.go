package archive

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestInboxHistory(t *testing.T) {
	t.Parallel()
	at := func(h int) time.Time { return time.Date(2026, 11, 2, h, 0, 0, 0, time.UTC) }
	base := dbq.InboxDocument{ReceivedAt: at(8), UjpStatus: "01", UjpStatusName: "sent", UjpStatusAt: at(8), DecisionState: "pending"}
	decided := base
	decided.DecisionState, decided.DecidedAt = "accepted", sql.NullTime{Time: at(10), Valid: true}
	decided.UjpStatus, decided.UjpStatusName, decided.UjpStatusAt = "03", "accepted", at(11)
	for _, tt := range []struct {
		name string
		d    dbq.InboxDocument
		asOf time.Time
		want []string
	}{
		{"arrived only", base, at(12), []string{"received"}},
		{"decided and confirmed", decided, at(12), []string{"received", "accepted", "accepted"}},
		{"as of before the decision", decided, at(9), []string{"received"}},
		{"as of between decision and status", decided, at(10), []string{"received", "accepted"}},
	} {
		h := inboxHistory(tt.d, tt.asOf)
		var got []string
		for i, c := range h {
			got = append(got, c.To)
			if i > 0 && (c.From == nil || *c.From != h[i-1].To || c.At.Before(h[i-1].At)) {
				t.Errorf("%s: row %d does not follow row %d: %+v", tt.name, i, i-1, c)
			}
		}
		if len(got) != len(tt.want) || (len(got) > 0 && got[len(got)-1] != tt.want[len(tt.want)-1]) {
			t.Errorf("%s: history %v, want %v", tt.name, got, tt.want)
		}
		if c := h[len(h)-1]; c.Cause == "ujp_status" && (c.UJPCode == nil || *c.UJPCode != "03") {
			t.Errorf("%s: UJP's code missing from %+v", tt.name, c)
		}
	}
}

// TestInboxArchiveFiles: the archive reads an incoming document as UJP
// gave it, its PDF only when it was fetched by the export's moment, and a
// document inserted by two reads counts once in the usage ledger.
func TestInboxArchiveFiles(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		acct, err := (&auth.Store{DB: db}).CreateAccount(ctx, "inbox archive", "sandbox")
		if err != nil {
			t.Fatal(err)
		}
		payload := []byte(`{"document":{"header":{"docType":"100","docNumber":"IN-7","docDate":"2026-11-02"}}}`)
		pdf := []byte("%PDF-1.7 UJP")
		var doc dbq.InboxDocument
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			co, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: acct.ID, Name: "Купувач",
				TaxNumber: "4030000000010", VatNumber: "МК4030000000010", Status: "active", SigningMode: "bridge",
				Environment: auth.EnvSandbox, Address: `{}`, CreatedAt: tx.Now})
			if err != nil {
				return err
			}
			// The row as the inbox writes it for this payload.
			if doc, err = tx.InsertInboxDocument(ctx, dbq.InsertInboxDocumentParams{ID: denar.NewID("inbd"), AccountID: co.AccountID,
				CompanyID: co.ID, Environment: co.Environment, Euid: "euid-7", Kind: "invoice", DocumentType: "100", Number: "IN-7",
				IssueDate: "2026-11-02", TransactionDate: "2026-11-02", Seller: "{}", TotalNet: "0.00", TotalVat: "0.00",
				TotalGross: "0.00", UjpStatus: "01", UjpStatusName: "sent", UjpStatusAt: tx.Now, DecisionState: "pending",
				Problems: "[]", DecideBy: "2026-11-17", Payload: payload, ReceivedAt: tx.Now}); err != nil {
				return err
			}
			for range 2 {
				if _, err := einvoicing.CountReceived(ctx, tx, einvoicing.ReceivedDocument{ID: doc.ID, AccountID: doc.AccountID, CompanyID: doc.CompanyID,
					Environment: doc.Environment, ReceivedAt: doc.ReceivedAt}); err != nil {
					return err
				}
			}
			return tx.PutInboxPDF(ctx, dbq.PutInboxPDFParams{DocumentID: doc.ID, Pdf: base64.StdEncoding.EncodeToString(pdf), CreatedAt: tx.Now.Add(time.Hour)})
		}); err != nil {
			t.Fatal(err)
		}
		var counted int
		if err := db.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM usage_documents WHERE document_id = $1", doc.ID).Scan(&counted); err != nil || counted != 1 {
			t.Fatalf("ledger rows of the document: %d (%v), want 1", counted, err)
		}
		for _, tt := range []struct {
			asOf    time.Time
			wantPDF bool
		}{{doc.ReceivedAt, false}, {doc.ReceivedAt.Add(2 * time.Hour), true}} {
			rf, err := inboxArchive{}.ReceivedFiles(ctx, db.Reader(), doc.ID, tt.asOf)
			if err != nil {
				t.Fatal(err)
			}
			if rf.EUID != "euid-7" || rf.Number != "IN-7" || rf.DocumentType != "100" || !bytes.Equal(rf.Document, payload) {
				t.Fatalf("files %+v", rf)
			}
			if (rf.PDF != nil) != tt.wantPDF || (tt.wantPDF && !bytes.Equal(rf.PDF, pdf)) {
				t.Fatalf("as of %s: PDF %q, want one: %v", tt.asOf, rf.PDF, tt.wantPDF)
			}
			if len(rf.History) != 1 || rf.History[0].To != "received" {
				t.Fatalf("history %+v", rf.History)
			}
		}
	})
}
