// Package money is the one exact decimal type of denar: salaries,
// contributions, taxes, invoice totals, and the hours and rates they are
// computed from.
//
// An Amount is a coefficient and a scale — the value is coefficient ×
// 10^-scale — in the spirit of gobl's num.Amount: 36037.50 is (3603750, 2).
// Arithmetic runs on int64 (products and quotients on 128 bits) whenever
// the values fit, which is every payroll and invoice figure, and falls back
// to math/big otherwise, so no operation ever overflows or loses a digit.
// Rounding is never implicit: Add, Sub and Mul are exact, and only Round,
// Div and MulDiv round, half away from zero (half-up for the positive
// amounts of a payroll, and symmetric for corrections), to the number of
// places the caller names. Amounts are values: copying one is cheap and no
// operation changes its operands.
//
// In JSON an Amount is a decimal string ("36037.50"); Text gives the
// service's money format (whole denars without decimals, otherwise at least
// two decimals).
package money

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// Amount is an exact decimal number. The zero value is 0.
type Amount struct {
	v     int64    // the coefficient, when b is nil
	b     *big.Int // the coefficient when it does not fit int64; never mutated
	scale int32    // decimal places, ≥ 0
}

// maxScale bounds the places an Amount carries: far beyond any money or
// rate, small enough that 10^scale computations stay cheap.
const maxScale = 40

var pow10 = func() (p [19]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return
}()

// New returns coef × 10^-scale (New(3603750, 2) is 36037.50). A negative
// scale multiplies: New(5, -3) is 5000.
func New(coef int64, scale int32) Amount {
	if scale < 0 {
		return fromBig(new(big.Int).Mul(big.NewInt(coef), bigPow10(-scale)), 0)
	}
	return Amount{v: coef, scale: scale}
}

// FromInt returns the integer v.
func FromInt(v int64) Amount { return Amount{v: v} }

// fromBig returns c × 10^-scale, normalised to int64 when it fits.
func fromBig(c *big.Int, scale int32) Amount {
	if c.IsInt64() {
		return Amount{v: c.Int64(), scale: scale}
	}
	return Amount{b: c, scale: scale}
}

// Scale is the number of decimal places the amount carries.
func (a Amount) Scale() int32 { return a.scale }

func (a Amount) bigCoef() *big.Int {
	if a.b != nil {
		return a.b
	}
	return big.NewInt(a.v)
}

func bigPow10(n int32) *big.Int {
	if n < int32(len(pow10)) {
		return new(big.Int).SetUint64(pow10[n])
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// Sign returns -1, 0 or +1.
func (a Amount) Sign() int {
	if a.b != nil {
		return a.b.Sign()
	}
	switch {
	case a.v < 0:
		return -1
	case a.v > 0:
		return 1
	}
	return 0
}

// IsZero reports whether a is 0.
func (a Amount) IsZero() bool { return a.Sign() == 0 }

// IsNegative reports whether a < 0.
func (a Amount) IsNegative() bool { return a.Sign() < 0 }

// IsPositive reports whether a > 0.
func (a Amount) IsPositive() bool { return a.Sign() > 0 }

// mulPow10 returns v × 10^n when it fits int64.
func mulPow10(v int64, n int32) (int64, bool) {
	if n == 0 {
		return v, true
	}
	if n >= int32(len(pow10)) {
		return 0, v == 0
	}
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	hi, lo := bits.Mul64(u, pow10[n])
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}

// align returns the coefficients of a and b at the larger of their scales,
// as int64 when both fit.
func align(a, b Amount) (x, y int64, scale int32, ok bool) {
	if a.b != nil || b.b != nil {
		return 0, 0, 0, false
	}
	switch {
	case a.scale == b.scale:
		return a.v, b.v, a.scale, true
	case a.scale < b.scale:
		x, ok = mulPow10(a.v, b.scale-a.scale)
		return x, b.v, b.scale, ok
	default:
		y, ok = mulPow10(b.v, a.scale-b.scale)
		return a.v, y, a.scale, ok
	}
}

func alignBig(a, b Amount) (x, y *big.Int, scale int32) {
	x, y = a.bigCoef(), b.bigCoef()
	switch {
	case a.scale < b.scale:
		x = new(big.Int).Mul(x, bigPow10(b.scale-a.scale))
		return x, y, b.scale
	case a.scale > b.scale:
		y = new(big.Int).Mul(y, bigPow10(a.scale-b.scale))
	}
	return x, y, a.scale
}

// Add returns a + b, exactly, at the larger scale.
func (a Amount) Add(b Amount) Amount {
	if z := a.v + b.v; a.scale == b.scale && a.b == nil && b.b == nil && (a.v^z)&(b.v^z) >= 0 {
		return Amount{v: z, scale: a.scale}
	}
	return a.addSlow(b)
}

func (a Amount) addSlow(b Amount) Amount {
	// Adding a zero of no more places (a zero value, say) keeps a as it is.
	if b.b == nil && b.v == 0 && b.scale <= a.scale {
		return a
	}
	if a.b == nil && a.v == 0 && a.scale <= b.scale {
		return b
	}
	if x, y, s, ok := align(a, b); ok {
		if z := x + y; (z > x) == (y > 0) {
			return Amount{v: z, scale: s}
		}
	}
	x, y, s := alignBig(a, b)
	return fromBig(new(big.Int).Add(x, y), s)
}

// Sub returns a − b, exactly, at the larger scale.
func (a Amount) Sub(b Amount) Amount {
	if z := a.v - b.v; a.scale == b.scale && a.b == nil && b.b == nil && (a.v^b.v)&(a.v^z) >= 0 {
		return Amount{v: z, scale: a.scale}
	}
	return a.subSlow(b)
}

func (a Amount) subSlow(b Amount) Amount {
	if b.b == nil && b.v == 0 && b.scale <= a.scale {
		return a
	}
	if x, y, s, ok := align(a, b); ok {
		if z := x - y; (z < x) == (y > 0) {
			return Amount{v: z, scale: s}
		}
	}
	x, y, s := alignBig(a, b)
	return fromBig(new(big.Int).Sub(x, y), s)
}

// Neg returns −a.
func (a Amount) Neg() Amount {
	if a.b == nil && a.v != math.MinInt64 {
		return Amount{v: -a.v, scale: a.scale}
	}
	return fromBig(new(big.Int).Neg(a.bigCoef()), a.scale)
}

// Abs returns |a|.
func (a Amount) Abs() Amount {
	if a.Sign() < 0 {
		return a.Neg()
	}
	return a
}

// Mul returns a × b, exactly; the scale is the sum of the scales.
func (a Amount) Mul(b Amount) Amount {
	s := a.scale + b.scale
	if a.b == nil && b.b == nil {
		if hi, lo, neg := mul128(a.v, b.v); hi == 0 && lo <= math.MaxInt64 {
			if neg {
				return Amount{v: -int64(lo), scale: s}
			}
			return Amount{v: int64(lo), scale: s}
		}
	}
	return fromBig(new(big.Int).Mul(a.bigCoef(), b.bigCoef()), s)
}

// mul128 returns |x × y| as 128 bits and whether the product is negative.
func mul128(x, y int64) (hi, lo uint64, neg bool) {
	ux, uy := uint64(x), uint64(y)
	if x < 0 {
		ux = -ux
	}
	if y < 0 {
		uy = -uy
	}
	hi, lo = bits.Mul64(ux, uy)
	return hi, lo, (x < 0) != (y < 0)
}

// Cmp returns -1, 0 or +1 as a is less than, equal to or greater than b.
func (a Amount) Cmp(b Amount) int {
	if a.scale == b.scale && a.b == nil && b.b == nil {
		return cmpInt(a.v, b.v)
	}
	return a.cmpSlow(b)
}

func cmpInt(x, y int64) int {
	if x < y {
		return -1
	}
	if x > y {
		return 1
	}
	return 0
}

func (a Amount) cmpSlow(b Amount) int {
	if x, y, _, ok := align(a, b); ok {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	x, y, _ := alignBig(a, b)
	return x.Cmp(y)
}

// Equal reports whether a and b are the same number (1.5 equals 1.50).
func (a Amount) Equal(b Amount) bool { return a.Cmp(b) == 0 }

// GreaterThan reports whether a > b.
func (a Amount) GreaterThan(b Amount) bool { return a.Cmp(b) > 0 }

// LessThan reports whether a < b.
func (a Amount) LessThan(b Amount) bool { return a.Cmp(b) < 0 }

// Min returns the smaller of a and b.
func Min(a, b Amount) Amount {
	if b.LessThan(a) {
		return b
	}
	return a
}

// Max returns the larger of a and b.
func Max(a, b Amount) Amount {
	if b.GreaterThan(a) {
		return b
	}
	return a
}

// divRound returns n / d rounded half away from zero, for d > 0.
func divRound(n, d int64) int64 {
	q, r := n/d, n%d
	if r < 0 {
		r = -r
	}
	if uint64(r)*2 >= uint64(d) {
		if n < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

// bigDivRound returns n / d rounded half away from zero, for d > 0.
func bigDivRound(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(d) >= 0 {
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// Round returns a rounded half away from zero to places decimals, with
// exactly that scale (Round(2) of 7.5 is 7.50).
func (a Amount) Round(places int32) Amount {
	places = min(max(places, 0), maxScale)
	switch {
	case places == a.scale:
		return a
	case places > a.scale:
		if a.b == nil {
			if v, ok := mulPow10(a.v, places-a.scale); ok {
				return Amount{v: v, scale: places}
			}
		}
		return fromBig(new(big.Int).Mul(a.bigCoef(), bigPow10(places-a.scale)), places)
	}
	n := a.scale - places
	if a.b == nil && n < int32(len(pow10)) {
		return Amount{v: divRound(a.v, int64(pow10[n])), scale: places}
	}
	return fromBig(bigDivRound(a.bigCoef(), bigPow10(n)), places)
}

// Floor returns the largest amount with places decimals not above a.
func (a Amount) Floor(places int32) Amount {
	places = min(max(places, 0), maxScale)
	if places >= a.scale {
		return a.Round(places)
	}
	n := a.scale - places
	if a.b == nil && n < int32(len(pow10)) {
		d := int64(pow10[n])
		q := a.v / d
		if a.v%d < 0 {
			q--
		}
		return Amount{v: q, scale: places}
	}
	q, m := new(big.Int).DivMod(a.bigCoef(), bigPow10(n), new(big.Int))
	_ = m // DivMod floors for a positive divisor
	return fromBig(q, places)
}

// Trim returns a with trailing fractional zeros removed (7.50 → 7.5).
func (a Amount) Trim() Amount {
	if a.b != nil {
		c := new(big.Int).Set(a.b)
		s := a.scale
		ten, m := big.NewInt(10), new(big.Int)
		for s > 0 {
			q, r := new(big.Int).QuoRem(c, ten, m)
			if r.Sign() != 0 {
				break
			}
			c, s = q, s-1
		}
		return fromBig(c, s)
	}
	for a.scale > 0 && a.v%10 == 0 {
		a.v /= 10
		a.scale--
	}
	return a
}

// Div returns a / b rounded half away from zero to places decimals. It
// panics when b is 0: a division by zero is a bug of the caller.
func (a Amount) Div(b Amount, places int32) Amount {
	return FromInt(1).MulDiv(a, b, places)
}

// MulDiv returns a × b / c rounded half away from zero to places decimals,
// with one rounding: the product is exact (128 bits, or math/big). It
// panics when c is 0.
func (a Amount) MulDiv(b, c Amount, places int32) Amount {
	if c.IsZero() {
		panic("money: division by zero")
	}
	places = min(max(places, 0), maxScale)
	// Result coefficient = round(A·B·10^k / C), k = places + sc − sa − sb.
	k := places + c.scale - a.scale - b.scale
	if a.b == nil && b.b == nil && c.b == nil && c.v != math.MinInt64 {
		hi, lo, neg := mul128(a.v, b.v)
		cu := uint64(c.v)
		if c.v < 0 {
			cu, neg = -cu, !neg
		}
		ok := true
		if k > 0 {
			hi, lo, ok = mulPow128(hi, lo, k)
		} else if k < 0 {
			var chi uint64
			if -k < int32(len(pow10)) {
				chi, cu = bits.Mul64(cu, pow10[-k])
			}
			ok = -k < int32(len(pow10)) && chi == 0
		}
		if ok && hi < cu {
			q, r := bits.Div64(hi, lo, cu)
			if r >= cu-r { // 2r ≥ c, without overflow
				q++
			}
			if q <= math.MaxInt64 {
				if neg {
					return Amount{v: -int64(q), scale: places}
				}
				return Amount{v: int64(q), scale: places}
			}
		}
	}
	n := new(big.Int).Mul(a.bigCoef(), b.bigCoef())
	d := c.bigCoef()
	if k > 0 {
		n.Mul(n, bigPow10(k))
	} else if k < 0 {
		d = new(big.Int).Mul(d, bigPow10(-k))
	}
	if d.Sign() < 0 {
		n.Neg(n)
		d = new(big.Int).Neg(d)
	}
	return fromBig(bigDivRound(n, d), places)
}

// mulPow128 returns (hi, lo) × 10^k when it fits 128 bits.
func mulPow128(hi, lo uint64, k int32) (uint64, uint64, bool) {
	for k > 0 {
		step := min(k, int32(len(pow10)-1))
		p := pow10[step]
		h1, l1 := bits.Mul64(lo, p)
		h2, l2 := bits.Mul64(hi, p)
		if h2 != 0 {
			return 0, 0, false
		}
		var carry uint64
		hi, carry = bits.Add64(h1, l2, 0)
		if carry != 0 {
			return 0, 0, false
		}
		lo = l1
		k -= step
	}
	return hi, lo, true
}

// Int64 returns a as an int64 when it is a whole number that fits.
func (a Amount) Int64() (int64, bool) {
	t := a.Trim()
	if t.b != nil || t.scale != 0 {
		return 0, false
	}
	return t.v, true
}

// Whole returns a rounded half away from zero to an integer, saturated at
// the int64 range: for figures already bounded far inside it (the payroll
// engine's). A figure written to a file must use RoundInt64, which says
// when it does not fit instead of writing another number.
func (a Amount) Whole() int64 {
	v, ok := a.RoundInt64()
	switch {
	case ok:
		return v
	case a.IsNegative():
		return math.MinInt64
	}
	return math.MaxInt64
}

// RoundInt64 returns a rounded half away from zero to an integer, and
// whether that integer fits an int64; when it does not, the result is 0.
func (a Amount) RoundInt64() (int64, bool) {
	r := a.Round(0)
	if r.b != nil {
		return 0, false
	}
	return r.v, true
}

// errSyntax is returned by Parse for text that is not a decimal number.
var errSyntax = errors.New("not a decimal number")

// Parse reads a decimal number: an optional minus sign, digits, an optional
// fraction and an optional exponent ("36037", "-12.50", "7.25e1"). The
// scale is the number of fractional digits written (less the exponent), so
// "7.50" keeps two places.
func Parse(s string) (Amount, error) {
	if s == "" || len(s) > 400 {
		return Amount{}, errSyntax
	}
	i, neg := 0, false
	if s[0] == '-' {
		neg, i = true, 1
	}
	var coef uint64
	fits := true
	digits, frac := 0, int32(0)
	start := i
	seenDot := false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if seenDot {
				return Amount{}, errSyntax
			}
			seenDot = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if seenDot {
			frac++
		}
		if fits {
			hi, lo := bits.Mul64(coef, 10)
			lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
			if hi != 0 || carry != 0 || lo > math.MaxInt64 {
				fits = false
			} else {
				coef = lo
			}
		}
	}
	if digits == 0 || (seenDot && (s[i-1] == '.' || s[start] == '.')) {
		return Amount{}, errSyntax
	}
	exp := int64(0)
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return Amount{}, errSyntax
		}
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil || s[i+1:] == "" || e > 400 || e < -400 {
			return Amount{}, errSyntax
		}
		exp = e
	}
	scale := int64(frac) - exp
	switch {
	case scale > maxScale:
		return Amount{}, errors.New("has too many decimal places")
	case scale < -maxScale:
		return Amount{}, errors.New("is out of range")
	}
	var a Amount
	if fits {
		v := int64(coef)
		if neg {
			v = -v
		}
		a = Amount{v: v}
	} else {
		c, ok := new(big.Int).SetString(digitsOnly(s[start:i]), 10)
		if !ok {
			return Amount{}, errSyntax
		}
		if neg {
			c.Neg(c)
		}
		a = fromBig(c, 0)
	}
	if scale >= 0 {
		a.scale = int32(scale)
		return a, nil
	}
	return fromBig(new(big.Int).Mul(a.bigCoef(), bigPow10(int32(-scale))), 0), nil
}

func digitsOnly(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '.' {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// MustParse is Parse for constants and tests; it panics on bad input.
func MustParse(s string) Amount {
	a, err := Parse(s)
	if err != nil {
		panic("money: " + strconv.Quote(s) + ": " + err.Error())
	}
	return a
}

// Append appends a in decimal notation at its own scale ("7.50" stays
// "7.50"; see String for the trimmed form).
func (a Amount) Append(b []byte) []byte {
	if a.b != nil {
		return appendDigits(b, a.b.String(), a.scale)
	}
	if a.scale == 0 {
		return strconv.AppendInt(b, a.v, 10)
	}
	var buf [24]byte
	return appendDigits(b, string(strconv.AppendInt(buf[:0], a.v, 10)), a.scale)
}

// appendDigits writes the integer text s with scale decimals.
func appendDigits(b []byte, s string, scale int32) []byte {
	if scale == 0 {
		return append(b, s...)
	}
	if s[0] == '-' {
		b = append(b, '-')
		s = s[1:]
	}
	n := int(scale)
	if len(s) <= n {
		b = append(b, '0', '.')
		for range n - len(s) {
			b = append(b, '0')
		}
		return append(b, s...)
	}
	b = append(b, s[:len(s)-n]...)
	b = append(b, '.')
	return append(b, s[len(s)-n:]...)
}

// String returns a in decimal notation without trailing fractional zeros
// ("36037", "7.5", "-0.005").
func (a Amount) String() string { return string(a.Trim().Append(nil)) }

// StringFixed returns a rounded half away from zero to places decimals,
// written with exactly that many.
func (a Amount) StringFixed(places int32) string { return string(a.Round(places).Append(nil)) }

// AppendText appends the money format of a: a whole number without
// decimals ("11111"), otherwise the exact amount with at least two
// decimals ("11110.99", "11110.50", "0.005").
func (a Amount) AppendText(b []byte) []byte {
	t := a.Trim()
	if t.scale == 1 {
		t = t.Round(2)
	}
	return t.Append(b)
}

// Text returns the money format of a (see AppendText).
func (a Amount) Text() string { return string(a.AppendText(nil)) }

// MarshalJSON writes a as a JSON string in the money format.
func (a Amount) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 24)
	b = append(b, '"')
	b = a.AppendText(b)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a JSON string holding a decimal number.
func (a *Amount) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return errors.New("must be a decimal string such as \"1234.50\"")
	}
	v, err := Parse(string(data[1 : len(data)-1]))
	if err != nil {
		return errors.New("must be a decimal string such as \"1234.50\"")
	}
	*a = v
	return nil
}

// MarshalText writes a in the money format.
func (a Amount) MarshalText() ([]byte, error) { return a.AppendText(nil), nil }

// UnmarshalText reads a decimal number.
func (a *Amount) UnmarshalText(data []byte) error {
	v, err := Parse(string(data))
	if err != nil {
		return err
	}
	*a = v
	return nil
}
