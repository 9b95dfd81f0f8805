package money_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/denar-mk/denar/money"
)

// rat is the exact value of a, the oracle of every test.
func rat(t testing.TB, a money.Amount) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(a.String())
	if !ok {
		t.Fatalf("%q does not parse as a rational", a.String())
	}
	return r
}

// roundRat rounds r half away from zero to places decimals.
func roundRat(r *big.Rat, places int32) *big.Rat {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	num, den := x.Num(), x.Denom()
	q, m := new(big.Int).QuoRem(new(big.Int).Abs(num), den, new(big.Int))
	if m.Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if num.Sign() < 0 {
		q.Neg(q)
	}
	return new(big.Rat).SetFrac(q, scale)
}

func TestParseAndFormat(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, str, text string }{
		{"36037", "36037", "36037"},
		{"36037.50", "36037.5", "36037.50"},
		{"-12.345", "-12.345", "-12.345"},
		{"0.005", "0.005", "0.005"},
		{"7.25e1", "72.5", "72.50"},
		{"1e3", "1000", "1000"},
		{"12.5E-3", "0.0125", "0.0125"},
		{"-0.00", "0", "0"},
		{"000123.4500", "123.45", "123.45"},
		{"99999999999999999999.5", "99999999999999999999.5", "99999999999999999999.50"},
		{"-9223372036854775808", "-9223372036854775808", "-9223372036854775808"},
		{"9223372036854775808", "9223372036854775808", "9223372036854775808"},
	}
	for _, tt := range tests {
		a, err := money.Parse(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if a.String() != tt.str || a.Text() != tt.text {
			t.Errorf("%s: String %s Text %s, want %s %s", tt.in, a.String(), a.Text(), tt.str, tt.text)
		}
	}
	for _, bad := range []string{"", "-", ".5", "5.", "1.2.3", "abc", "1e", "1e999", "+5", " 5", "5 ", "1,5", "0x10", "1e-50"} {
		if _, err := money.Parse(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
}

func TestRoundHalfAwayFromZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		places int32
		want   string
	}{
		{"1501.46", 0, "1501"}, {"1501.5", 0, "1502"}, {"-1501.5", 0, "-1502"}, {"2.5", 0, "3"}, {"-0.5", 0, "-1"},
		{"0.49", 0, "0"}, {"10781.97", 0, "10782"}, {"123.455", 2, "123.46"}, {"123.454", 2, "123.45"},
		{"7.5", 2, "7.50"}, {"99999999999999999999.995", 2, "100000000000000000000.00"},
	}
	for _, tt := range tests {
		if got := money.MustParse(tt.in).StringFixed(tt.places); got != tt.want {
			t.Errorf("%s rounded to %d: %s, want %s", tt.in, tt.places, got, tt.want)
		}
	}
}

// TestRoundInt64: a whole number that does not fit int64 is reported, not
// replaced by the nearest one that does (Whole's saturation).
func TestRoundInt64(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"36037.5", 36038, true}, {"-1501.5", -1502, true}, {"0", 0, true},
		{"9223372036854775807", math.MaxInt64, true}, {"9223372036854775807.4", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775807.5", 0, false}, {"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false}, {"9999999999999999999999999", 0, false},
	} {
		got, ok := money.MustParse(tt.in).RoundInt64()
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMulDiv(t *testing.T) {
	t.Parallel()
	m := money.MustParse
	tests := []struct {
		a, b, c string
		places  int32
		want    string
	}{
		// 16 night hours at 135 % of 30,000 over 176 hours: 3,681.818… → 3,681.82.
		{"30000", "2160", "17600", 2, "3681.82"},
		// 1,106,256 × 84 / 168.
		{"1106256", "84", "168", 2, "553128.00"},
		{"1", "2", "3", 4, "0.6667"},
		{"-1", "2", "3", 4, "-0.6667"},
		{"1", "1", "-8", 2, "-0.13"},
		{"10", "10", "0.003", 0, "33333"},
		{"1e30", "1e10", "7", 2, "1428571428571428571428571428571428571428.57"},
	}
	for _, tt := range tests {
		if got := m(tt.a).MulDiv(m(tt.b), m(tt.c), tt.places).StringFixed(tt.places); got != tt.want {
			t.Errorf("%s × %s / %s: %s, want %s", tt.a, tt.b, tt.c, got, tt.want)
		}
	}
}

// randomAmount covers small values, values at the int64 edges, values
// beyond int64, and scales from 0 to 12.
func randomAmount(rng *rand.Rand) money.Amount {
	var coef string
	switch rng.IntN(5) {
	case 0:
		coef = fmt.Sprint(rng.Int64N(1000) - 500)
	case 1:
		coef = fmt.Sprint(rng.Int64N(1e12) - 5e11)
	case 2:
		coef = fmt.Sprint(math.MaxInt64 - rng.Int64N(100))
	case 3:
		coef = fmt.Sprint(math.MinInt64 + rng.Int64N(100))
	default:
		coef = fmt.Sprint(rng.Int64()) + fmt.Sprint(rng.Int64N(1e9))
	}
	if rng.IntN(2) == 0 && !strings.HasPrefix(coef, "-") {
		coef = "-" + coef
	}
	scale := rng.IntN(13)
	neg := strings.HasPrefix(coef, "-")
	digits := strings.TrimPrefix(coef, "-")
	for len(digits) <= scale {
		digits = "0" + digits
	}
	s := digits[:len(digits)-scale]
	if scale > 0 {
		s += "." + digits[len(digits)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return money.MustParse(s)
}

// TestArithmeticMatchesRationals: every operation, on the int64 path and
// on the math/big path, equals exact rational arithmetic.
func TestArithmeticMatchesRationals(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := randomAmount(rng), randomAmount(rng)
		ra, rb := rat(t, a), rat(t, b)
		check := func(op string, got money.Amount, want *big.Rat) {
			t.Helper()
			if rat(t, got).Cmp(want) != 0 {
				t.Fatalf("%s %s %s = %s, want %s", a, op, b, got, want.FloatString(20))
			}
		}
		check("+", a.Add(b), new(big.Rat).Add(ra, rb))
		check("-", a.Sub(b), new(big.Rat).Sub(ra, rb))
		check("×", a.Mul(b), new(big.Rat).Mul(ra, rb))
		check("neg", a.Neg(), new(big.Rat).Neg(ra))
		if a.Cmp(b) != ra.Cmp(rb) {
			t.Fatalf("Cmp(%s, %s) = %d", a, b, a.Cmp(b))
		}
		places := int32(rng.IntN(8))
		check("round", a.Round(places), roundRat(ra, places))
		if !b.IsZero() {
			check("div", a.Div(b, places), roundRat(new(big.Rat).Quo(ra, rb), places))
			c := randomAmount(rng)
			check("muldiv", c.MulDiv(a, b, places), roundRat(new(big.Rat).Quo(new(big.Rat).Mul(rat(t, c), ra), rb), places))
		}
		f := a.Floor(places)
		if rat(t, f).Cmp(ra) > 0 || new(big.Rat).Sub(ra, rat(t, f)).Cmp(new(big.Rat).SetFrac64(1, int64(math.Pow10(int(places))))) >= 0 {
			t.Fatalf("Floor(%s, %d) = %s", a, places, f)
		}
		if back := money.MustParse(a.String()); !back.Equal(a) {
			t.Fatalf("%s does not read back", a)
		}
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	var v struct {
		Gross money.Amount `json:"gross"`
		Net   money.Amount `json:"net"`
	}
	if err := json.Unmarshal([]byte(`{"gross":"11110.99","net":"10000.0"}`), &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	if string(out) != `{"gross":"11110.99","net":"10000"}` {
		t.Errorf("JSON %s", out)
	}
	for _, bad := range []string{`{"gross":11110}`, `{"gross":"x"}`, `{"gross":null}`} {
		if json.Unmarshal([]byte(bad), &v) == nil {
			t.Errorf("%s decodes", bad)
		}
	}
}

// TestNoAllocation: the int64 path of the operations a payroll runs
// allocates nothing.
func TestNoAllocation(t *testing.T) {
	a, b := money.MustParse("36037.50"), money.MustParse("0.188")
	buf := make([]byte, 0, 64)
	n := testing.AllocsPerRun(100, func() {
		c := a.Mul(b).Round(2).Add(a).Sub(b).MulDiv(a, b, 2)
		_ = c.Cmp(a)
		buf = c.AppendText(buf[:0])
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"36037.50", "-0.005", "1e3", "99999999999999999999.5", "12.5E-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := money.Parse(s)
		if err != nil {
			return
		}
		want, ok := new(big.Rat).SetString(s)
		if !ok || rat(t, a).Cmp(want) != 0 {
			t.Fatalf("%q parsed as %s", s, a)
		}
		if back := money.MustParse(a.String()); !back.Equal(a) {
			t.Fatalf("%q: %s does not read back", s, a)
		}
	})
}

func ExampleAmount_MulDiv() {
	gross := money.MustParse("30000")
	// 16 night hours at 135 % of the hourly rate of a 176-hour month, in
	// one rounding to two decimals.
	pay := gross.MulDiv(money.MustParse("16").Mul(money.MustParse("1.35")), money.MustParse("176"), 2)
	fmt.Println(pay, pay.Round(0))
	// Output: 3681.82 3682
}

func ExampleAmount_Text() {
	for _, s := range []string{"11111.00", "11110.5", "0.005"} {
		fmt.Println(money.MustParse(s).Text())
	}
	// Output:
	// 11111
	// 11110.50
	// 0.005
}
