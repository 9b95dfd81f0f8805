package store

import (
	"strconv"
	"strings"
)

// Args collects the parameters of a hand-written statement (a multi-row
// write or a read by a list of ids, which the generated queries cannot
// express) and writes their placeholders in the order the text is built:
// $1, $2, … on PostgreSQL; ? on SQLite, whose driver matches a ? to its
// argument by position, while it matches each $n by comparing names with
// every argument, a cost that grows with the square of their number.
type Args struct {
	dialect Dialect
	list    []any
}

// NewArgs returns an empty parameter list for the dialect's statements.
func NewArgs(d Dialect) *Args { return &Args{dialect: d} }

// Add appends v and returns its placeholder.
func (a *Args) Add(v any) string {
	a.list = append(a.list, v)
	if a.dialect == SQLite {
		return "?"
	}
	return "$" + strconv.Itoa(len(a.list))
}

// Cast is Add written CAST(… AS typ), which both engines read alike: for a
// parameter in a VALUES list outside an INSERT, which PostgreSQL would
// otherwise take as text.
func (a *Args) Cast(v any, typ string) string { return "CAST(" + a.Add(v) + " AS " + typ + ")" }

// Row appends a parenthesised list of placeholders, one per value: a row
// of a VALUES list, or the list of an IN.
func (a *Args) Row(b *strings.Builder, vs ...any) {
	b.WriteByte('(')
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Add(v))
	}
	b.WriteByte(')')
}

// List returns the parameters in order.
func (a *Args) List() []any { return a.list }
