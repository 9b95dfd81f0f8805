// Package payroll is the monthly gross/net engine for North Macedonian
// payroll: the statutory tables (contribution rates, personal allowance,
// contribution bases), versioned by effective date with the source of every
// figure; the hours model (premium, overtime, sick and unpaid hours); the
// rules R1–R12 of the payroll service; and the inversion from an agreed net
// to the statutory gross.
//
// The engine computes in money.Amount, denar's one exact decimal type:
// money at two decimals, hours and percentages as given (up to four). It
// computes at two decimal places with half-up rounding, as the tax
// authority's МПИН client does, and rounds each reported figure to whole
// denars only when producing the Result, whose money fields are typed
// amounts. docs/payroll.md explains every rule with worked examples.
//
// The package is pure: no I/O, no clock (callers pass "today").
package payroll
