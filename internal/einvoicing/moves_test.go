package einvoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func seedEInvoice(t *testing.T, ctx context.Context, tx *store.Tx, acct, co, ref string) dbq.Einvoice {
	t.Helper()
	inv, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: denar.NewID("einv"), AccountID: acct, CompanyID: co,
		Environment: "sandbox", Kind: "invoice", Status: string(einvoice.AwaitingSignature), DocumentType: "100",
		Number: "F-1", IssueDate: "2026-11-20", Document: "{}", UjpDocID: denar.NewID("doc"), TotalNet: "100.00",
		TotalVat: "18.00", TotalGross: "118.00", Currency: "MKD", Problems: "[]",
		ClientReference: sql.NullString{String: ref, Valid: ref != ""}, Fingerprint: "fp", CreatedAt: tx.Now, UpdatedAt: tx.Now})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: inv.ID,
		ToStatus: inv.Status, Cause: "issued", At: tx.Now}); err != nil {
		t.Fatal(err)
	}
	return inv
}

// TestEInvoiceMoves: every move writes the row, its history and its event
// together; a move the domain forbids or a stale from-status changes
// nothing; the clientReference is unique per company; list filters work.
func TestEInvoiceMoves(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		acct, co := denar.NewID("acct"), denar.NewID("co")
		svc := New(withEvents(Deps{DB: db}), Config{})
		var inv dbq.Einvoice
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.CreateAccount(ctx, dbq.CreateAccountParams{ID: acct, Name: "Биро", Plan: "test", CreatedAt: tx.Now}); err != nil {
				return err
			}
			if _, err := tx.CreateCompany(ctx, dbq.CreateCompanyParams{ID: co, AccountID: acct, Name: "Продавач", TaxNumber: "4030000000001",
				Status: "active", SigningMode: "bridge", Environment: "sandbox", Address: "{}", CreatedAt: tx.Now}); err != nil {
				return err
			}
			inv = seedEInvoice(t, ctx, tx, acct, co, "order-1")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		move := func(m StatusMove) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				cur, err := tx.GetEInvoice(ctx, dbq.GetEInvoiceParams{ID: inv.ID, AccountID: acct, Environment: "sandbox",
					AllCompanies: true, CompanyID: co})
				if err != nil {
					return err
				}
				inv, err = svc.MoveEInvoice(ctx, tx, cur, m)
				return err
			})
		}
		for _, m := range []StatusMove{
			{To: einvoice.Queued, Cause: "signed"},
			{To: einvoice.Submitting, Cause: "submission"},
			{To: einvoice.Held, Cause: "ujp_outage"},
			{To: einvoice.Queued, Cause: "retry"},
			{To: einvoice.Submitting, Cause: "submission"},
			{To: einvoice.Delivered, Cause: "submitted", UJPCode: "01", EUID: "MK-EUID-1", QRLink: "https://e-faktura.example/q/1"},
			{To: einvoice.Accepted, Cause: "ujp_status", UJPCode: "03"},
		} {
			if err := move(m); err != nil {
				t.Fatalf("move to %s: %v", m.To, err)
			}
		}
		var de *denar.Error
		if err := move(StatusMove{To: einvoice.Rejected, Cause: "ujp_status"}); !errors.As(err, &de) || de.Code != einvoice.CodeStateConflict {
			t.Fatalf("accepted → rejected: %v", err)
		}
		// A stale from-status: the row moved meanwhile.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			stale := inv
			stale.Status = string(einvoice.Delivered)
			_, err := svc.MoveEInvoice(ctx, tx, stale, StatusMove{To: einvoice.Rejected, Cause: "ujp_status"})
			return err
		})
		if !errors.As(err, &de) || de.Code != "einvoice_state_conflict" {
			t.Fatalf("stale move: %v", err)
		}

		r := db.Reader()
		hist, err := r.ListEInvoiceStatus(ctx, inv.ID)
		if err != nil || len(hist) != 8 {
			t.Fatalf("history %d rows, %v", len(hist), err)
		}
		if h := hist[6]; h.ToStatus != "delivered" || h.FromStatus.String != "submitting" || h.UjpCode.String != "01" {
			t.Errorf("delivered row %+v", h)
		}
		evs, err := r.ListEvents(ctx, dbq.ListEventsParams{AccountID: acct, Environment: "sandbox", AllCompanies: true, Lim: 50})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, e := range evs {
			types = append(types, e.Type)
		}
		// Newest first: accepted, submitted, held.
		if len(types) != 3 || types[0] != "einvoice.accepted" || types[1] != "einvoice.submitted" || types[2] != "einvoice.held" {
			t.Fatalf("events %v", types)
		}
		// The event carries the e-invoice as GET shows it after the move.
		var data struct{ Object EInvoice }
		if err := json.Unmarshal([]byte(evs[1].Payload), &data); err != nil || data.Object.EUID == nil || *data.Object.EUID != "MK-EUID-1" ||
			data.Object.Status != "delivered" || data.Object.DeliveredAt == nil {
			t.Errorf("submitted payload %s (%v)", evs[1].Payload, err)
		}
		only, _ := r.ListEvents(ctx, dbq.ListEventsParams{AccountID: acct, Environment: "sandbox", AllCompanies: true, Type: sql.NullString{String: "einvoice.held", Valid: true}, Lim: 50})
		if len(only) != 1 {
			t.Errorf("type filter: %d events", len(only))
		}

		// clientReference unique per company.
		err = db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: denar.NewID("einv"), AccountID: acct, CompanyID: co,
				Environment: "sandbox", Kind: "invoice", Status: "awaiting_signature", DocumentType: "100", Number: "F-2",
				IssueDate: "2026-11-21", Document: "{}", UjpDocID: denar.NewID("doc"), TotalNet: "0", TotalVat: "0", TotalGross: "0",
				Currency: "MKD", Problems: "[]", ClientReference: sql.NullString{String: "order-1", Valid: true}, Fingerprint: "x",
				CreatedAt: tx.Now, UpdatedAt: tx.Now})
			return err
		})
		if err == nil {
			t.Fatal("a second einvoice with clientReference order-1 was stored")
		}

		// List filters.
		_ = db.InTx(ctx, func(tx *store.Tx) error { seedEInvoice(t, ctx, tx, acct, co, ""); return nil })
		for _, tc := range []struct {
			name string
			p    dbq.ListEInvoicesParams
			want int
		}{
			{"all", dbq.ListEInvoicesParams{}, 2},
			{"status", dbq.ListEInvoicesParams{Status: sql.NullString{String: "accepted", Valid: true}}, 1},
			{"euid", dbq.ListEInvoicesParams{Euid: sql.NullString{String: "MK-EUID-1", Valid: true}}, 1},
			{"clientReference", dbq.ListEInvoicesParams{ClientReference: sql.NullString{String: "order-1", Valid: true}}, 1},
			{"issuedFrom", dbq.ListEInvoicesParams{IssuedFrom: sql.NullString{String: "2026-11-21", Valid: true}}, 0},
			{"issuedTo", dbq.ListEInvoicesParams{IssuedTo: sql.NullString{String: "2026-11-20", Valid: true}}, 2},
			{"documentType", dbq.ListEInvoicesParams{DocumentType: sql.NullString{String: "110", Valid: true}}, 0},
			{"after", dbq.ListEInvoicesParams{AfterID: "einv_zzzzzzzzzzzzzzzzzzzzzzzzzz"}, 2},
			// The credential's reach (tenancy.go): another environment, or
			// an allow-list without the company, sees nothing.
			{"allow-list with the company", dbq.ListEInvoicesParams{AllCompanies: false, Allowed: "co_other " + co}, 2},
			{"allow-list without it", dbq.ListEInvoicesParams{AllCompanies: false, Allowed: "co_other"}, 0},
			{"production", dbq.ListEInvoicesParams{Environment: "production"}, 0},
		} {
			tc.p.AccountID, tc.p.CompanyID, tc.p.Lim = acct, co, 200
			if tc.p.Environment == "" {
				tc.p.Environment = "sandbox"
			}
			if tc.p.Allowed == "" {
				tc.p.AllCompanies = true
			}
			rows, err := r.ListEInvoices(ctx, tc.p)
			if err != nil || len(rows) != tc.want {
				t.Errorf("%s: %d rows, %v; want %d", tc.name, len(rows), err, tc.want)
			}
		}
		// Another company sees nothing.
		if _, err := r.GetEInvoice(ctx, dbq.GetEInvoiceParams{ID: inv.ID, AccountID: acct, Environment: "sandbox",
			AllCompanies: true, CompanyID: "co_other"}); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("other company: %v", err)
		}
	})
}
