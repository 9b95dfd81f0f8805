package ujpsim

import (
	"fmt"

	"github.com/denar-mk/denar/money"
)

// The totals formulas of api-specification.txt:72-92, checked on what the
// sender wrote: each computed field against the formula applied to the
// sender's own inputs, so one wrong figure is reported once, where it is.
//
// Rounding tolerance. UJP publishes the formulas, not the rounding; its
// examples carry four decimals on unit amounts (docItemUnitPriceWoVat,
// docItemUnitVat) and two on totals (api-specification.txt:927-931, and the
// JSON examples). A figure passes when it is within half a unit of its last
// decimal of the exact result: 0.00005 for unit amounts, 0.005 for totals,
// so a sender may round half up or half even, but not carry a cent of
// error. A sum of products (docDiscountAmount) may have been rounded per
// line, so its tolerance is 0.005 per line. docGrossAmountR ("R": rounded)
// is docGrossAmount at two decimals or rounded to whole denars.

var (
	hundred  = money.FromInt(100)
	tolUnit  = money.New(5, 5) // 0.00005
	tolTotal = money.New(5, 3) // 0.005
)

func near(got, want, tol money.Amount) bool { return got.Sub(want).Abs().Cmp(tol) <= 0 }

type groupKey struct{ group, indicator string }

// checkTotals adds the totals problems of d to c: E10203 for a line,
// E10201 for docTotals, E10202 for vatTotals. Lines whose group or
// indicator is unknown have been reported already and are skipped in the
// groups (their amounts still count in the document totals).
func (c *checker) checkTotals(d *document) {
	type group struct {
		impact                string
		percent               money.Amount
		taxable, vat, withVat money.Amount
		lines                 int
		note                  string
	}
	groups := map[groupKey]*group{}
	var order []groupKey
	var net, disc, vat money.Amount
	storno := d.Header.DocStorno == stornoVoid
	for i := range d.DocItems {
		it := &d.DocItems[i]
		p := fmt.Sprintf("docItems[%d].", i)
		item := func(field, format string, args ...any) { c.add("E10203", p+field, "", format, args...) }
		qty, orig, discount := it.DocItemQty.V, it.DocItemUnitOriginalPriceWoVat.V, it.DocItemUnitDiscountAmount.V
		_, percent, gok := c.cl.taxGroup(it.DocItemVatGroup)
		impact := ""
		note := ""
		if tis := c.cl.indicator(it.DocItemTaxIndicator); len(tis) > 0 {
			impact, note = tis[0].VatImpact, tis[0].Note
		}
		if gok && !it.DocItemVat.V.Equal(percent) {
			item("docItemVat", "is %s; the rate of %s is %s", it.DocItemVat.V, it.DocItemVatGroup, percent)
		}
		// docItemUnitPriceWoVat = docItemUnitOriginalPriceWoVat - docItemUnitDiscountAmount
		if want := orig.Sub(discount); !near(it.DocItemUnitPriceWoVat.V, want, tolUnit) {
			item("docItemUnitPriceWoVat", "is %s; docItemUnitOriginalPriceWoVat - docItemUnitDiscountAmount is %s", it.DocItemUnitPriceWoVat.V, want)
		}
		unit := it.DocItemUnitPriceWoVat.V
		// docItemUnitVat = docItemUnitPriceWoVat * docItemVat / 100 for
		// STANDARD; NULA, OSLOBODEN and PRENESEN carry no VAT on the line
		// (api-specification.txt:98).
		switch impact {
		case impactStandard:
			if want := unit.Mul(it.DocItemVat.V).Div(hundred, 12); !near(it.DocItemUnitVat.V, want, tolUnit) {
				item("docItemUnitVat", "is %s; docItemUnitPriceWoVat * docItemVat / 100 is %s", it.DocItemUnitVat.V, want.Round(4))
			}
		case impactNula, impactOsloboden, impactPrenesen:
			if !it.DocItemUnitVat.V.IsZero() {
				item("docItemUnitVat", "is %s; a line with a %s tax indicator carries no VAT (0)", it.DocItemUnitVat.V, impact)
			}
			if !it.DocItemTotalVat.V.IsZero() {
				item("docItemTotalVat", "is %s; a line with a %s tax indicator carries no VAT (0)", it.DocItemTotalVat.V, impact)
			}
		}
		// docItemTotalOriginalPriceWoVat = docItemQty * docItemUnitOriginalPriceWoVat
		if want := qty.Mul(orig); !near(it.DocItemTotalOriginalPriceWoVat.V, want, tolTotal) {
			item("docItemTotalOriginalPriceWoVat", "is %s; docItemQty * docItemUnitOriginalPriceWoVat is %s", it.DocItemTotalOriginalPriceWoVat.V, want)
		}
		// docItemTotalPriceWoVat = docItemQty * docItemUnitPriceWoVat
		if want := qty.Mul(unit); !near(it.DocItemTotalPriceWoVat.V, want, tolTotal) {
			item("docItemTotalPriceWoVat", "is %s; docItemQty * docItemUnitPriceWoVat is %s", it.DocItemTotalPriceWoVat.V, want)
		}
		// docItemTotalVat = docItemQty * docItemUnitVat
		if want := qty.Mul(it.DocItemUnitVat.V); impact == impactStandard && !near(it.DocItemTotalVat.V, want, tolTotal) {
			item("docItemTotalVat", "is %s; docItemQty * docItemUnitVat is %s", it.DocItemTotalVat.V, want)
		}
		// docItemTotalPriceWVat = docItemTotalPriceWoVat + docItemTotalVat
		if want := it.DocItemTotalPriceWoVat.V.Add(it.DocItemTotalVat.V); !near(it.DocItemTotalPriceWVat.V, want, tolTotal) {
			item("docItemTotalPriceWVat", "is %s; docItemTotalPriceWoVat + docItemTotalVat is %s", it.DocItemTotalPriceWVat.V, want)
		}
		net = net.Add(it.DocItemTotalOriginalPriceWoVat.V)
		disc = disc.Add(qty.Mul(discount))
		vat = vat.Add(it.DocItemTotalVat.V)

		if !gok || impact == "" {
			continue
		}
		k := groupKey{it.DocItemVatGroup, it.DocItemTaxIndicator}
		g, ok := groups[k]
		if !ok {
			g = &group{impact: impact, percent: percent, note: note}
			groups[k] = g
			order = append(order, k)
		}
		g.taxable = g.taxable.Add(it.DocItemTotalPriceWoVat.V)
		g.vat = g.vat.Add(it.DocItemTotalVat.V)
		g.withVat = g.withVat.Add(it.DocItemTotalPriceWVat.V)
		g.lines++
	}

	t := d.DocTotals
	tot := func(field string, got Num, want money.Amount, tol money.Amount, formula string) {
		if !near(got.V, want, tol) {
			c.add("E10201", "docTotals."+field, "", "is %s; %s is %s", got.V, formula, want)
		}
	}
	lines := money.FromInt(int64(max(len(d.DocItems), 1)))
	tot("docNetAmount", t.DocNetAmount, net, tolTotal, "Σ docItemTotalOriginalPriceWoVat")
	tot("docDiscountAmount", t.DocDiscountAmount, disc, tolTotal.Mul(lines), "Σ docItemQty * docItemUnitDiscountAmount")
	tot("docNetAmountDisc", t.DocNetAmountDisc, t.DocNetAmount.V.Sub(t.DocDiscountAmount.V), tolTotal, "docNetAmount - docDiscountAmount")
	tot("docVatAmount", t.DocVatAmount, vat, tolTotal, "Σ docItemTotalVat")
	base := t.DocNetAmountDisc.V
	if t.DocDiscountAmount.V.IsZero() && !t.DocNetAmountDisc.Set {
		base = t.DocNetAmount.V // "или docNetAmount ако нема попуст" (api-specification.txt:86)
	}
	tot("docGrossAmount", t.DocGrossAmount, base.Add(t.DocVatAmount.V), tolTotal, "docNetAmountDisc + docVatAmount")
	gross := t.DocGrossAmount.V
	if r := t.DocGrossAmountR.V; !near(r, gross, tolTotal) && !r.Equal(gross.Round(0)) {
		c.add("E10201", "docTotals.docGrossAmountR", "", "is %s; docGrossAmount rounded is %s (or %s in whole denars)", r, gross.Round(2), gross.Round(0))
	}
	tot("docFinalAmount", t.DocFinalAmount, t.DocGrossAmountR.V.Sub(t.DocAvansAmount.V), tolTotal, "docGrossAmountR - docAvansAmount")
	if !storno && (t.DocAvansAmount.V.IsNegative() || t.DocAvansAmount.V.GreaterThan(t.DocGrossAmountR.V.Abs())) {
		c.add("E10201", "docTotals.docAvansAmount", "", "an advance is between 0 and docGrossAmountR")
	}

	// VatTotals, grouped by docItemVatGroup and docItemTaxIndicator
	// (api-specification.txt:88-91): one group per pair, none more.
	seen := map[groupKey]bool{}
	for j, v := range d.VatTotals {
		p := fmt.Sprintf("vatTotals[%d].", j)
		k := groupKey{v.VatCode, v.VatTaxIndicator}
		g, ok := groups[k]
		switch {
		case !ok:
			c.add("E10202", fmt.Sprintf("vatTotals[%d]", j), "", "no line has tax group %q and tax indicator %q", v.VatCode, v.VatTaxIndicator)
			continue
		case seen[k]:
			c.add("E10202", fmt.Sprintf("vatTotals[%d]", j), "", "tax group %s with tax indicator %s is listed twice", v.VatCode, v.VatTaxIndicator)
			continue
		}
		seen[k] = true
		vt := func(field string, got Num, want, tol money.Amount, formula string) {
			if !near(got.V, want, tol) {
				c.add("E10202", p+field, "", "is %s; %s is %s", got.V, formula, want)
			}
		}
		if !v.VatPercent.V.Equal(g.percent) {
			c.add("E10202", p+"vatPercent", "tax-groups", "is %s; the rate of %s is %s", v.VatPercent.V, v.VatCode, g.percent)
		}
		vt("vatTaxableAmount", v.VatTaxableAmount, g.taxable, tolTotal, "Σ docItemTotalPriceWoVat of the group")
		switch g.impact {
		case impactPrenesen:
			// Not computed on the lines, shown on the group
			// (api-specification.txt:98): the VAT the recipient owes.
			want := v.VatTaxableAmount.V.Mul(g.percent).Div(hundred, 12)
			vt("vatAmount", v.VatAmount, want, tolTotal.Mul(money.FromInt(int64(g.lines))), "vatTaxableAmount * vatPercent / 100 (reverse charge)")
			if deref(v.VatTaxIndicatorNote) == "" {
				c.add("E1032", p+"vatTaxIndicatorNote", "tax-indicators", "a reverse-charge group carries the indicator's note %q", g.note)
			}
		default:
			vt("vatAmount", v.VatAmount, g.vat, tolTotal, "Σ docItemTotalVat of the group")
		}
		vt("vatTotalAmount", v.VatTotalAmount, v.VatTaxableAmount.V.Add(v.VatAmount.V), tolTotal, "vatTaxableAmount + vatAmount")
		if n := deref(v.VatTaxIndicatorNote); n != "" && n != g.note {
			c.add("E1032", p+"vatTaxIndicatorNote", "tax-indicators", "is not the note of %s: %q", v.VatTaxIndicator, g.note)
		}
	}
	for _, k := range order {
		if !seen[k] {
			c.add("E10202", "vatTotals", "", "no group for tax group %s and tax indicator %s", k.group, k.indicator)
		}
	}
}

// compute fills the computed fields of a document the simulator makes
// itself (DropIncoming, SellerStorno) by the same formulas, rounding unit
// amounts to 4 decimals and totals to 2, half away from zero.
func compute(d *document, cl *codeLists) {
	type acc struct {
		percent, taxable, vat money.Amount
		impact, note          string
	}
	groups := map[groupKey]*acc{}
	var order []groupKey
	var net, disc, vat money.Amount
	for i := range d.DocItems {
		it := &d.DocItems[i]
		_, percent, _ := cl.taxGroup(it.DocItemVatGroup)
		impact, note := "", ""
		if tis := cl.indicator(it.DocItemTaxIndicator); len(tis) > 0 {
			impact, note = tis[0].VatImpact, tis[0].Note
		}
		qty := it.DocItemQty.V
		if !it.DocItemUnitDiscountAmount.Set {
			it.DocItemUnitDiscountAmount = num(money.Amount{})
		}
		it.DocItemVat = num(percent)
		unit := it.DocItemUnitOriginalPriceWoVat.V.Sub(it.DocItemUnitDiscountAmount.V).Round(4)
		it.DocItemUnitPriceWoVat = num(unit)
		uv := money.Amount{}
		if impact == impactStandard {
			uv = unit.MulDiv(percent, hundred, 4)
		}
		it.DocItemUnitVat = num(uv)
		it.DocItemTotalOriginalPriceWoVat = num(qty.Mul(it.DocItemUnitOriginalPriceWoVat.V).Round(2))
		it.DocItemTotalPriceWoVat = num(qty.Mul(unit).Round(2))
		it.DocItemTotalVat = num(qty.Mul(uv).Round(2))
		it.DocItemTotalPriceWVat = num(it.DocItemTotalPriceWoVat.V.Add(it.DocItemTotalVat.V))
		net = net.Add(it.DocItemTotalOriginalPriceWoVat.V)
		disc = disc.Add(qty.Mul(it.DocItemUnitDiscountAmount.V).Round(2))
		vat = vat.Add(it.DocItemTotalVat.V)
		k := groupKey{it.DocItemVatGroup, it.DocItemTaxIndicator}
		g, ok := groups[k]
		if !ok {
			g = &acc{percent: percent, impact: impact, note: note}
			groups[k] = g
			order = append(order, k)
		}
		g.taxable = g.taxable.Add(it.DocItemTotalPriceWoVat.V)
		g.vat = g.vat.Add(it.DocItemTotalVat.V)
	}
	d.VatTotals = nil
	for _, k := range order {
		g := groups[k]
		v := g.vat
		if g.impact == impactPrenesen {
			v = g.taxable.MulDiv(g.percent, hundred, 2)
		}
		vt := vatTotal{VatTaxIndicator: k.indicator, VatCode: k.group, VatPercent: num(g.percent), VatTaxableAmount: num(g.taxable),
			VatAmount: num(v), VatTotalAmount: num(g.taxable.Add(v))}
		if g.note != "" {
			vt.VatTaxIndicatorNote = strp(g.note)
		}
		d.VatTotals = append(d.VatTotals, vt)
	}
	t := &d.DocTotals
	t.DocNetAmount, t.DocDiscountAmount, t.DocNetAmountDisc = num(net), num(disc), num(net.Sub(disc))
	t.DocVatAmount = num(vat)
	t.DocGrossAmount = num(net.Sub(disc).Add(vat))
	t.DocGrossAmountR = t.DocGrossAmount
	if !t.DocAvansAmount.Set {
		t.DocAvansAmount = num(money.Amount{})
	}
	t.DocFinalAmount = num(t.DocGrossAmountR.V.Sub(t.DocAvansAmount.V))
}
