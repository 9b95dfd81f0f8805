package einvoicing

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/einvoicingtest"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestEInvoiceFilterNumberAndBuyer: the dashboard's filters by document
// number (exact) and buyer ЕДБ (as the stored UJP request states it).
func TestEInvoiceFilterNumberAndBuyer(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := t.Context()
		c, err := einvoicingtest.NewCompany(ctx, db, "", "business", auth.EnvSandbox, "4030000000001")
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]string{}
		for _, d := range []struct{ number, buyer string }{
			{"F-1", "4030000000010"}, {"F-2", "4030000000010"}, {"F-3", "4030000000028"}, {"F-10", "40300000000101"},
		} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				id := denar.NewID("einv")
				ids[d.number] = id
				doc := fmt.Sprintf(`{"requestTimestamp":"x","document":{"buyer":{"buyerTin":%q,"buyerName":"Купувач"}}}`, d.buyer)
				_, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: id, AccountID: c.AccountID, CompanyID: c.CompanyID,
					Environment: auth.EnvSandbox, Kind: "invoice", Status: "delivered", DocumentType: "100", Number: d.number,
					IssueDate: "2026-03-02", Document: doc, UjpDocID: id, TotalNet: "1", TotalVat: "0", TotalGross: "1",
					Currency: "MKD", Problems: "[]", Fingerprint: "f", CreatedAt: tx.Now, UpdatedAt: tx.Now})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		svc := New(withEvents(Deps{DB: db, Log: slog.New(slog.DiscardHandler)}), Config{})
		p := &auth.Principal{AccountID: c.AccountID, Environment: auth.EnvSandbox, Kind: auth.KindUser}
		for _, tc := range []struct {
			f    EInvoiceFilter
			want []string
		}{
			{EInvoiceFilter{Number: "F-1"}, []string{"F-1"}},
			{EInvoiceFilter{BuyerTaxNumber: "4030000000010"}, []string{"F-1", "F-2"}},
			{EInvoiceFilter{BuyerTaxNumber: "4030000000010", Number: "F-2"}, []string{"F-2"}},
			{EInvoiceFilter{BuyerTaxNumber: "403000000001"}, nil},
			{EInvoiceFilter{}, []string{"F-1", "F-10", "F-2", "F-3"}},
		} {
			rows, err := svc.EInvoices(ctx, p, c.CompanyID, tc.f, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.Number)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%+v: %v, want %v", tc.f, got, tc.want)
			}
		}
		_, err = svc.EInvoices(ctx, p, c.CompanyID, EInvoiceFilter{BuyerTaxNumber: "40%"}, "", 10)
		var de *denar.Error
		if !errors.As(err, &de) || de.Code != denar.ECodeValidation || de.Fields[0].Path != "buyerTaxNumber" {
			t.Fatalf("a buyer filter with a wildcard: %v", err)
		}
	})
}
