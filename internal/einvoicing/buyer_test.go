package einvoicing

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// countingRegistry knows every number and counts the look-ups.
type countingRegistry struct{ calls atomic.Int64 }

func (r *countingRegistry) LookupCompany(context.Context, string, string, string) (RegistryCompany, error) {
	r.calls.Add(1)
	return RegistryCompany{Name: "Купувач"}, nil
}

// TestCheckBuyerAsksOnlyAboutAnEDB: a Macedonian buyer's number that is
// not an ЕДБ (wrong length or check digit) is reported by building the
// document; the registry is not asked about it, which spends no UJP call.
func TestCheckBuyerAsksOnlyAboutAnEDB(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		party einvoice.Party
		asks  bool
	}{
		{einvoice.Party{TaxNumber: "4030000000010", Name: "Купувач"}, true},
		{einvoice.Party{Country: "MK", TaxNumber: "4030000375897", Name: "Купувач"}, true},
		{einvoice.Party{TaxNumber: "4030000000002", Name: "Купувач"}, false}, // wrong check digit
		{einvoice.Party{TaxNumber: "403000000001", Name: "Купувач"}, false},
		{einvoice.Party{Country: "DE", TaxNumber: "DE123456789", Name: "Käufer"}, false},
	} {
		reg := &countingRegistry{}
		s := New(withEvents(Deps{Registry: reg}), Config{})
		seller := func() (string, error) { return "4030000000001", nil }
		fe, err := s.checkBuyer(t.Context(), "sandbox", seller, tc.party, time.Second)
		if fe != nil || err != nil {
			t.Errorf("%s: %v, %v", tc.party.TaxNumber, fe, err)
		}
		if got := reg.calls.Load() == 1; got != tc.asks {
			t.Errorf("%s: registry asked %d times", tc.party.TaxNumber, reg.calls.Load())
		}
	}
}

// addressRegistry answers one VAT payer with a full address.
type addressRegistry struct{}

func (addressRegistry) LookupCompany(context.Context, string, string, string) (RegistryCompany, error) {
	return RegistryCompany{Name: "Купувач", VATNumber: "МК4030000000010",
		Address: Address{Street: "ул. Македонија", Number: "2", City: "Скопје", Zip: "1000"}}, nil
}

// TestBuyerAddressAsTheRegistry: UJP compares the buyer's city and postal
// code with its registry (E10004, E10005); a city or postal code given
// otherwise is a field error now, and the parts of the address left out
// (with the VAT number) are taken from the registry, so that the document
// the gateway sends passes.
func TestBuyerAddressAsTheRegistry(t *testing.T) {
	t.Parallel()
	sp := func(v string) *string { return &v }
	s := New(withEvents(Deps{Registry: addressRegistry{}}), Config{})
	seller := func() (string, error) { return "4030000000001", nil }
	for _, tc := range []struct {
		addr  einvoice.PartyAddress
		paths []string
	}{
		{einvoice.PartyAddress{Street: sp("Широк сокак"), City: sp("Скопје")}, nil},
		{einvoice.PartyAddress{Street: sp("Широк сокак"), City: sp("Скопје"), PostalCode: sp("1000")}, nil},
		{einvoice.PartyAddress{Street: sp("Широк сокак"), City: sp("Skopje"), PostalCode: sp("1000")}, []string{"buyer.address.city"}},
		{einvoice.PartyAddress{Street: sp("Широк сокак"), City: sp("Скопје"), PostalCode: sp("1010")}, []string{"buyer.address.postalCode"}},
		{einvoice.PartyAddress{Street: sp("Широк сокак"), City: sp("Битола"), PostalCode: sp("7000")}, []string{"buyer.address.city", "buyer.address.postalCode"}},
	} {
		fe, err := s.checkBuyer(t.Context(), "sandbox", seller, einvoice.Party{TaxNumber: "4030000000010", Name: "Купувач", Address: tc.addr}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range fe {
			paths = append(paths, f.Path)
			if f.Codebook != CBRegistry {
				t.Errorf("%s: codebook %q", f.Path, f.Codebook)
			}
		}
		if fmt.Sprint(paths) != fmt.Sprint(tc.paths) {
			t.Errorf("%+v: errors at %v, want %v", tc.addr, paths, tc.paths)
		}
	}

	d := &ujpdoc.Document{Buyer: ujpdoc.Buyer{BuyerCCode: "MK", BuyerTin: "4030000000010", BuyerName: "Купувач",
		BuyerAddress: ujpdoc.Address{StreetAddress: "Широк сокак", City: "Скопје"}}}
	s.fillBuyer("sandbox", d)
	if a := d.Buyer.BuyerAddress; a.StreetAddress != "Широк сокак" || a.StreetNumber != "2" || a.PostalCode != "1000" || a.City != "Скопје" ||
		d.Buyer.BuyerVatNumber == nil || *d.Buyer.BuyerVatNumber != "МК4030000000010" {
		t.Fatalf("filled buyer: %+v", d.Buyer)
	}
}
