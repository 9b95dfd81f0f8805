package ujpdoc

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"testing"

	"github.com/denar-mk/denar/money"
)

// plainNumber is a JSON number in plain decimal notation: no exponent, no
// leading zeros, no plus sign. Every amount of a UJP document is one: a
// tax document must not read "1e-07".
var plainNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// checkPlainNumbers fails t for any number in the JSON text b that is not
// plainNumber, and returns how many numbers it read.
func checkPlainNumbers(t *testing.T, b []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("%v in %s", err, b)
		}
		if num, ok := tok.(json.Number); ok {
			n++
			if !plainNumber.MatchString(string(num)) {
				t.Fatalf("number %s is not in plain decimal notation", num)
			}
		}
	}
}

// FuzzAmountJSON: whatever its size and scale, an amount is written in
// plain decimal notation and reads back as the same value.
func FuzzAmountJSON(f *testing.F) {
	f.Add(int64(1), uint8(7), uint8(0))   // 0.0000001, which float64 text writes 1e-07
	f.Add(int64(-5), uint8(0), uint8(30)) // -5 × 10^30, beyond int64
	f.Add(int64(9223372036854775807), uint8(40), uint8(0))
	f.Add(int64(-120), uint8(2), uint8(21))
	f.Fuzz(func(t *testing.T, coef int64, scale, exp uint8) {
		a := money.New(coef, int32(scale%41))
		if exp%39 > 0 {
			a = a.Mul(money.New(1, -int32(exp%39)))
		}
		b, err := Dec(a).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !plainNumber.Match(b) {
			t.Fatalf("%v written as %s", a, b)
		}
		var back Amount
		if err := back.UnmarshalJSON(b); err == nil && !back.Equal(a) {
			t.Fatalf("%s read back as %v", b, back)
		}
	})
}

// FuzzDocumentNumbers: a document built from any quantity, unit price and
// discount, with its totals computed and an advance, has only plain
// decimal numbers in its JSON.
func FuzzDocumentNumbers(f *testing.F) {
	f.Add("0.0000001", "1000", "0", "0")
	f.Add("3", "1000", "100", "100")
	f.Add("123456789012345678901234567890", "0.0001", "0.00005", "0.5")
	f.Add("2.5", "123.4567", "10.1234", "1e-9")
	cb := Snapshot()
	f.Fuzz(func(t *testing.T, qty, price, disc, avans string) {
		var in [4]money.Amount
		for i, s := range []string{qty, price, disc, avans} {
			v, err := money.Parse(s)
			if err != nil || len(s) > 40 {
				return
			}
			in[i] = v
		}
		d := testDoc(line{"1", "1", "0", "DDV-A", "DDV-A"}, line{"2", "10", "", "DDV-B", "DDV-B"})
		d.DocItems[0].DocItemQty, d.DocItems[0].DocItemUnitOriginalPriceWoVat, d.DocItems[0].DocItemUnitDiscountAmount = Dec(in[0]), Dec(in[1]), Dec(in[2])
		d.DocTotals.DocAvansAmount = Dec(in[3])
		if err := ComputeTotals(d, cb); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(Request{RequestTimestamp: "2026-01-05T12:00:00", Document: *d})
		if err != nil {
			t.Fatal(err)
		}
		if n := checkPlainNumbers(t, b); n < 30 {
			t.Fatalf("only %d numbers in %s", n, b)
		}
	})
}

// TestCodebookNames: every codebook name a field error carries is a plural
// noun, and names an embedded snapshot file (Snapshot reads them by name).
func TestCodebookNames(t *testing.T) {
	for _, n := range []string{CBDocumentTypes, CBRefDocumentTypes, CBPaymentTypes, CBCurrencies, CBCountries, CBVoidReasons,
		CBCorrectionReasons, CBRejectReasons, CBTaxGroups, CBTaxIndicators, CBDocumentStatuses} {
		if !regexp.MustCompile(`^[a-z-]+s$`).MatchString(n) {
			t.Errorf("codebook %q is not a plural name", n)
		}
	}
	_ = Snapshot()
}
