package payroll

import (
	"errors"
	"math/bits"
	"strconv"
	"strings"
)

// Scales of the fixed-point representations.
const (
	centsPerDenar       = 100             // money
	numScale            = 10_000          // hours and percentages (Number)
	rateScale           = 1_000_000       // contribution rates as fractions: 18.8% = 188000
	maxMoneyCents int64 = 100_000_000_000 // 1,000,000,000 denars: far above any salary, far below overflow
	maxNumber           = 100_000         // hours or percentages above this are surely typos
)

// Number is an exact decimal with up to four decimal places, written in JSON
// as a number: hours, premium rates, seniority percentages. It never passes
// through float64, so 7.3 stays 7.3.
type Number struct {
	v   int64 // value × numScale
	set bool
}

// NewNumber returns the Number n/numScale... for tests and callers: n whole units.
func NewNumber(whole int64) Number { return Number{v: whole * numScale, set: true} }

// ParseNumber parses a decimal text such as "176" or "7.25".
func ParseNumber(s string) (Number, error) {
	v, err := parseFixed(s, 4)
	if err != nil {
		return Number{}, err
	}
	return Number{v: v, set: true}, nil
}

// IsSet reports whether the number was given.
func (n Number) IsSet() bool { return n.set }

// Whole returns the number rounded to an integer, half away from zero (as
// МПИН writes hours).
func (n Number) Whole() int64 { return divRound(n.v, numScale) }

// String writes the number without trailing zeros.
func (n Number) String() string { return formatFixed(n.v, 4) }

// MarshalJSON writes a JSON number.
func (n Number) MarshalJSON() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalJSON reads a JSON number token exactly. null leaves it unset.
func (n *Number) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*n = Number{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		return errors.New("must be a JSON number, not a string")
	}
	v, err := ParseNumber(s)
	if err != nil {
		return err
	}
	*n = v
	return nil
}

var errNotDecimal = errors.New("not a decimal number")

// parseFixed parses a plain decimal (optional sign, digits, optional
// fraction, optional JSON exponent) into an integer scaled by 10^places. More
// significant decimals than places are an error rather than a silent
// rounding.
func parseFixed(s string, places int) (int64, error) {
	if s == "" {
		return 0, errNotDecimal
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 20 || e < -20 {
			return 0, errNotDecimal
		}
		mant, exp = s[:i], e
	}
	neg := false
	if strings.HasPrefix(mant, "-") {
		neg, mant = true, mant[1:]
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" || (hasDot && frac == "") {
		return 0, errNotDecimal
	}
	digits := intPart + frac
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, errNotDecimal
		}
	}
	scale := places + exp - len(frac) // power of ten to multiply digits by
	digits = strings.TrimLeft(digits, "0")
	if scale < 0 {
		cut := len(digits) + scale
		if cut < 0 {
			cut = 0
		}
		if strings.Trim(digits[cut:], "0") != "" {
			return 0, errors.New("has more than " + strconv.Itoa(places) + " decimal places")
		}
		digits = digits[:cut]
		scale = 0
	}
	if len(digits)+scale > 18 {
		return 0, errors.New("is too large")
	}
	v := int64(0)
	for _, c := range digits {
		v = v*10 + int64(c-'0')
	}
	for range scale {
		v *= 10
	}
	if neg {
		v = -v
	}
	return v, nil
}

func formatFixed(v int64, places int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	for len(s) <= places {
		s = "0" + s
	}
	ip, fp := s[:len(s)-places], strings.TrimRight(s[len(s)-places:], "0")
	out := ip
	if fp != "" {
		out += "." + fp
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out
}

// parseMoney parses a money string ("30000", "30000.5", "30000.50") into
// cents. Negative or over-precise amounts are errors.
func parseMoney(s string) (int64, error) {
	if strings.ContainsAny(s, "eE") {
		return 0, errors.New("must be a plain decimal such as \"30000\" or \"30000.50\"")
	}
	v, err := parseFixed(strings.TrimSpace(s), 2)
	if err != nil {
		if err == errNotDecimal {
			return 0, errors.New("must be a decimal string such as \"30000\" or \"30000.50\"")
		}
		return 0, errors.New("must be a decimal string with at most 2 decimal places; it " + err.Error())
	}
	if v < 0 {
		return 0, errors.New("must not be negative")
	}
	if v > maxMoneyCents {
		return 0, errors.New("exceeds 1,000,000,000 denars")
	}
	return v, nil
}

// divRound returns n/d rounded half away from zero (d > 0).
func divRound(n, d int64) int64 {
	if n >= 0 {
		return (n + d/2) / d
	}
	return -((-n + d/2) / d)
}

// wholeDenars rounds cents to whole denars, half-up, as a string.
func wholeDenars(cents int64) string {
	return strconv.FormatInt(divRound(cents, centsPerDenar), 10)
}

// saturated is what mulDivRound returns when the exact result does not fit:
// far above maxMoneyCents, so a month that reaches it fails the gross bound
// instead of wrapping around.
const saturated = maxMoneyCents * 1000

// mulDivRound returns a×b×c/d rounded half-up, for non-negative a, b, c and
// positive d, with a 128-bit product; results that do not fit saturate.
func mulDivRound(a, b, c, d int64) int64 {
	if a <= 0 || b <= 0 || c <= 0 {
		return 0
	}
	hi1, lo1 := bits.Mul64(uint64(a), uint64(b))
	// (hi1,lo1) × c, keeping 128 bits and detecting overflow beyond them.
	hiLo, lo := bits.Mul64(lo1, uint64(c))
	hiHi, hiLow := bits.Mul64(hi1, uint64(c))
	hi, carry := bits.Add64(hiLo, hiLow, 0)
	if hiHi != 0 || carry != 0 {
		return saturated
	}
	lo, carry = bits.Add64(lo, uint64(d/2), 0)
	hi += carry
	if hi >= uint64(d) {
		return saturated
	}
	q, _ := bits.Div64(hi, lo, uint64(d))
	if q > uint64(saturated) {
		return saturated
	}
	return int64(q)
}
