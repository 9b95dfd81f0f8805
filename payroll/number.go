package payroll

import (
	"errors"
	"strings"

	"github.com/denar-mk/denar/money"
)

// Bounds of the input. They are far above any real payroll.
const (
	maxMoneyDenars = 1_000_000_000 // a salary, bonus or deduction
	numberPlaces   = 4             // decimals of hours and percentages
	maxNumber      = 100_000       // hours or percentages above this are surely typos
)

var (
	maxMoney = money.FromInt(maxMoneyDenars)
	hundred  = money.FromInt(100)
)

// Number is an exact decimal with up to four decimal places, written in JSON
// as a number: hours, premium rates, seniority percentages. It never passes
// through float64, so 7.3 stays 7.3.
type Number struct {
	a   money.Amount
	set bool
}

// NewNumber returns the whole number n.
func NewNumber(whole int64) Number { return Number{a: money.FromInt(whole), set: true} }

// ParseNumber parses a decimal text such as "176" or "7.25".
func ParseNumber(s string) (Number, error) {
	a, err := money.Parse(s)
	if err != nil {
		return Number{}, errors.New("not a decimal number")
	}
	if a.Trim().Scale() > numberPlaces {
		return Number{}, errors.New("has more than 4 decimal places")
	}
	if a.Abs().GreaterThan(money.FromInt(1e14)) {
		return Number{}, errors.New("is too large")
	}
	return Number{a: a.Trim(), set: true}, nil
}

// IsSet reports whether the number was given.
func (n Number) IsSet() bool { return n.set }

// Amount returns the number's value.
func (n Number) Amount() money.Amount { return n.a }

// Whole returns the number rounded to an integer, half away from zero (as
// МПИН writes hours).
func (n Number) Whole() int64 { return n.a.Whole() }

// String writes the number without trailing zeros.
func (n Number) String() string { return n.a.String() }

// MarshalJSON writes a JSON number.
func (n Number) MarshalJSON() ([]byte, error) { return n.appendTo(nil), nil }

// appendTo writes the number as JSON without allocating.
func (n Number) appendTo(b []byte) []byte { return n.a.Trim().Append(b) }

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

// parseMoney parses a money string ("30000", "30000.5", "30000.50") into
// an amount at two decimals. Negative, over-precise or exponent amounts are
// errors.
func parseMoney(s string) (money.Amount, error) {
	if strings.ContainsAny(s, "eE") {
		return money.Amount{}, errors.New("must be a plain decimal such as \"30000\" or \"30000.50\"")
	}
	a, err := money.Parse(strings.TrimSpace(s))
	if err != nil {
		return money.Amount{}, errors.New("must be a decimal string such as \"30000\" or \"30000.50\"")
	}
	if a.Trim().Scale() > 2 {
		return money.Amount{}, errors.New("must be a decimal string with at most 2 decimal places")
	}
	if a.IsNegative() {
		return money.Amount{}, errors.New("must not be negative")
	}
	if a.GreaterThan(maxMoney) {
		return money.Amount{}, errors.New("exceeds 1,000,000,000 denars")
	}
	return a.Round(2), nil
}

// denars returns the whole amount x at two decimals, the scale of every
// money figure the engine adds: equal scales add without rescaling.
func denars(x int64) money.Amount { return money.New(x*100, 2) }

// cents returns a in hundredths of a denar, rounded: the unit the net
// solver steps in.
func cents(a money.Amount) int64 { return a.Mul(hundred).Whole() }
