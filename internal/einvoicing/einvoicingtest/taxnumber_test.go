package einvoicingtest

import (
	"testing"

	"github.com/denar-mk/denar/ident"
)

func TestTaxNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix string
		i      int
		want   string
	}{
		{"4030000000", 1, "4030000000010"},
		{"4030000000", 4, "4030000000044"},
		{"40350000", 1, "4035000000011"},
	} {
		if got := TaxNumber(tc.prefix, tc.i); got != tc.want {
			t.Errorf("TaxNumber(%q, %d) = %s, want %s", tc.prefix, tc.i, got, tc.want)
		}
	}
	seen := map[string]bool{}
	for i := range 1000 {
		n := TaxNumber("4031", i)
		if err := ident.EDB(n); err != nil || seen[n] {
			t.Fatalf("TaxNumber(4031, %d) = %s: %v, seen before %v", i, n, err, seen[n])
		}
		seen[n] = true
	}
	for _, bad := range []struct {
		prefix string
		i      int
	}{{"4030000000", 100}, {"4030a", 0}, {"403", -1}, {"403000000000", 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("TaxNumber(%q, %d) did not panic", bad.prefix, bad.i)
				}
			}()
			TaxNumber(bad.prefix, bad.i)
		}()
	}
}
