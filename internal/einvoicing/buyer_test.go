package einvoicing

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice"
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
		s := New(Deps{Registry: reg}, Config{})
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
