package einvoiceapi

import (
	"reflect"
	"strings"
	"testing"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/einvoicing"
)

// TestStatusEnumsAreTheDomains: the status enums the API documents (an
// e-invoice's status, the list's status filter) are einvoice.Statuses, in
// its order: a status added to the domain and not to a tag, or the other
// way round, fails here.
func TestStatusEnumsAreTheDomains(t *testing.T) {
	t.Parallel()
	want := make([]string, len(einvoice.Statuses))
	for i, s := range einvoice.Statuses {
		want[i] = string(s)
	}
	for _, tc := range []struct {
		name  string
		typ   reflect.Type
		field string
	}{
		{"EInvoice.status", reflect.TypeFor[einvoicing.EInvoice](), "Status"},
		{"GET /v1/einvoices ?status", reflect.TypeFor[listEInvoicesInput](), "Status"},
	} {
		f, ok := tc.typ.FieldByName(tc.field)
		if !ok {
			t.Fatalf("%s: no field %s", tc.name, tc.field)
		}
		if got := strings.Split(f.Tag.Get("enum"), ","); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: enum %v, einvoice.Statuses %v", tc.name, got, want)
		}
	}
}
