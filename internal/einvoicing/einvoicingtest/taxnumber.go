package einvoicingtest

import (
	"fmt"

	"github.com/denar-mk/denar/ident"
)

// TaxNumber returns the i-th test ЕДБ of a run under prefix: prefix, i
// zero-padded to twelve digits in all, and the check digit of ident.EDB,
// so that tests and benchmarks making many companies get numbers that
// onboarding and UJP's document checks accept. Distinct prefixes give
// disjoint runs. It panics when prefix is not digits or i does not fit:
// a test's own mistake.
func TaxNumber(prefix string, i int) string {
	n := 12 - len(prefix)
	if n < 1 || i < 0 {
		panic(fmt.Sprintf("einvoicingtest.TaxNumber(%q, %d): no room for the index", prefix, i))
	}
	p := fmt.Sprintf("%s%0*d", prefix, n, i)
	d, err := ident.EDBCheckDigit(p)
	if err != nil {
		panic(fmt.Sprintf("einvoicingtest.TaxNumber(%q, %d): %v", prefix, i, err))
	}
	return p + d
}
