package ujpdoc

import (
	"fmt"

	"github.com/denar-mk/denar/money"
)

// Rounding. UJP publishes the formulas but not the rounding; its examples
// carry four decimals on unit amounts and two on totals. This package rounds
// so, half away from zero (half-up on the magnitude, so a storno's negated
// amounts round to the exact negation of the original's):
//
//	docItemUnitPriceWoVat = round4(docItemUnitOriginalPriceWoVat - docItemUnitDiscountAmount)
//	docItemUnitVat        = round4(docItemUnitPriceWoVat * docItemVat / 100)     STANDARD only, else 0
//	docItemTotalOriginalPriceWoVat = round2(docItemQty * docItemUnitOriginalPriceWoVat)
//	docItemTotalPriceWoVat         = round2(docItemQty * docItemUnitPriceWoVat)
//	docItemTotalVat                = round2(docItemQty * docItemUnitVat)
//	docItemTotalPriceWVat          = docItemTotalPriceWoVat + docItemTotalVat
//	docNetAmount      = Σ docItemTotalOriginalPriceWoVat
//	docDiscountAmount = Σ round2(docItemQty * docItemUnitDiscountAmount)
//	docNetAmountDisc  = docNetAmount - docDiscountAmount
//	docVatAmount      = Σ docItemTotalVat
//	docGrossAmount    = docNetAmountDisc + docVatAmount
//	docGrossAmountR   = docGrossAmount (already at 2 decimals; see CheckTotals)
//	docFinalAmount    = docGrossAmountR - docAvansAmount
//	vatTotals, grouped by (docItemVatGroup, docItemTaxIndicator) in order of first line:
//	  vatTaxableAmount = Σ docItemTotalPriceWoVat
//	  vatAmount        = Σ docItemTotalVat, or for PRENESEN round2(vatTaxableAmount * vatPercent / 100)
//	  vatTotalAmount   = vatTaxableAmount + vatAmount
//
// Sums are of already rounded values, so every total is exactly the sum of
// the numbers printed on the document.
const (
	UnitScale  = 4
	TotalScale = 2
	// QtyScale is the most decimals a quantity (docItemQty) carries. UJP
	// publishes none (its field codebook lists no docItemQty precision and
	// its examples use whole quantities); 4, as on unit amounts, keeps a
	// quantity × unit price product exact at 8 decimals, and a smaller
	// quantity would round every line total to 0.00.
	QtyScale = 4
)

var hundred = money.FromInt(100)

func round(d money.Amount, places int32) Amount { return Amount{d.Round(places)} }

// MKD converts an amount in the document currency to denars at the
// document's exchange rate, rounded to two decimals. For a document in MKD
// (rate nil) it returns the amount unchanged.
func MKD(a Amount, rate *Amount) Amount {
	if rate == nil {
		return a
	}
	return round(a.Mul(rate.Amount), TotalScale)
}

// ComputeTotals fills every computed field of the document from the lines'
// inputs (quantity, unit price, unit discount, rate, group, indicator) and
// the advance amount: line amounts, docTotals and vatTotals. Rates come from
// the tax group, so docItemVat is overwritten with the group's percent. It
// fails when a line names a group or indicator the codebooks do not know.
func ComputeTotals(d *Document, cb *Codebooks) error {
	type key struct{ group, indicator string }
	var order []key
	groups := map[key]*VatTotal{}
	impacts := map[key]VatImpact{}
	var net, disc, vat money.Amount
	for i := range d.DocItems {
		it := &d.DocItems[i]
		g, ok := cb.TaxGroup(it.DocItemVatGroup)
		if !ok {
			return fmt.Errorf("docItems[%d].docItemVatGroup: unknown tax group %q", i, it.DocItemVatGroup)
		}
		ti, ok := cb.TaxIndicator(it.DocItemTaxIndicator)
		if !ok {
			return fmt.Errorf("docItems[%d].docItemTaxIndicator: unknown tax indicator %q", i, it.DocItemTaxIndicator)
		}
		computeLine(it, g, ti)
		net = net.Add(it.DocItemTotalOriginalPriceWoVat.Amount)
		disc = disc.Add(it.DocItemQty.Mul(it.DocItemUnitDiscountAmount.Amount).Round(TotalScale))
		vat = vat.Add(it.DocItemTotalVat.Amount)

		k := key{g.Code, ti.Code}
		vt, ok := groups[k]
		if !ok {
			vt = &VatTotal{VatTaxIndicator: ti.Code, VatCode: g.Code, VatPercent: Amount{money.FromInt(int64(g.Percent))}}
			if ti.Note != "" {
				note := ti.Note
				vt.VatTaxIndicatorNote = &note
			}
			groups[k] = vt
			impacts[k] = ti.VatImpact
			order = append(order, k)
		}
		vt.VatTaxableAmount = Amount{vt.VatTaxableAmount.Add(it.DocItemTotalPriceWoVat.Amount)}
		vt.VatAmount = Amount{vt.VatAmount.Add(it.DocItemTotalVat.Amount)}
	}
	d.VatTotals = d.VatTotals[:0]
	for _, k := range order {
		vt := groups[k]
		if impacts[k] == ImpactPrenesen {
			vt.VatAmount = Amount{vt.VatTaxableAmount.MulDiv(vt.VatPercent.Amount, hundred, TotalScale)}
		}
		vt.VatTotalAmount = Amount{vt.VatTaxableAmount.Add(vt.VatAmount.Amount)}
		d.VatTotals = append(d.VatTotals, *vt)
	}
	t := &d.DocTotals
	t.DocNetAmount = Amount{net}
	t.DocDiscountAmount = Amount{disc}
	t.DocNetAmountDisc = Amount{net.Sub(disc)}
	t.DocVatAmount = Amount{vat}
	t.DocGrossAmount = Amount{t.DocNetAmountDisc.Add(vat)}
	t.DocGrossAmountR = t.DocGrossAmount
	t.DocAvansAmount = round(t.DocAvansAmount.Amount, TotalScale)
	t.DocFinalAmount = Amount{t.DocGrossAmountR.Sub(t.DocAvansAmount.Amount)}
	return nil
}

func computeLine(it *Item, g TaxGroup, ti TaxIndicator) {
	rate := money.FromInt(int64(g.Percent))
	it.DocItemVat = Amount{rate}
	it.DocItemUnitPriceWoVat = round(it.DocItemUnitOriginalPriceWoVat.Sub(it.DocItemUnitDiscountAmount.Amount), UnitScale)
	it.DocItemUnitVat = Amount{}
	if ti.VatImpact == ImpactStandard {
		it.DocItemUnitVat = Amount{it.DocItemUnitPriceWoVat.MulDiv(rate, hundred, UnitScale)}
	}
	q := it.DocItemQty.Amount
	it.DocItemTotalOriginalPriceWoVat = round(q.Mul(it.DocItemUnitOriginalPriceWoVat.Amount), TotalScale)
	it.DocItemTotalPriceWoVat = round(q.Mul(it.DocItemUnitPriceWoVat.Amount), TotalScale)
	it.DocItemTotalVat = round(q.Mul(it.DocItemUnitVat.Amount), TotalScale)
	it.DocItemTotalPriceWVat = Amount{it.DocItemTotalPriceWoVat.Add(it.DocItemTotalVat.Amount)}
}

// Negate turns a copy of an original document's lines and totals into a
// storno's: every quantity and total negated, unit prices kept. Call
// ComputeTotals afterwards to be sure the figures agree with the formulas.
func Negate(d *Document) {
	for i := range d.DocItems {
		d.DocItems[i].DocItemQty = Amount{d.DocItems[i].DocItemQty.Neg()}
	}
	d.DocTotals.DocAvansAmount = Amount{d.DocTotals.DocAvansAmount.Neg()}
}
