package einvoice

import "github.com/denar-mk/denar/einvoice/ujpdoc"

// RequestOf is the request that builds d again: the inverse of
// Request.Build for every field the request carries. It is the starting
// point of a correction (a complete replacement document) made from the
// original: the caller changes what needs correcting and builds anew.
// The storno/correction reference (SYS) and the seller (the company's,
// filled by Build) are left out; the document's computed totals are not
// carried over (Build computes them again), nor is ExpectedTotals set.
func RequestOf(d *ujpdoc.Document) Request {
	h := d.Header
	r := Request{DocumentType: h.DocType, Number: h.DocNumber, IssueDate: h.DocDate, Notes: h.DocNotes}
	if h.DocTurnoverDate != "" && h.DocTurnoverDate != h.DocDate {
		v := h.DocTurnoverDate
		r.SupplyDate = &v
	}
	b := d.Buyer
	r.Buyer = Party{Country: b.BuyerCCode, TaxNumber: b.BuyerTin, ForeignTaxNumber: b.BuyerForeignTin, VatNumber: b.BuyerVatNumber,
		Name: b.BuyerName, Address: partyAddress(b.BuyerAddress), SubsidiaryCode: b.BuyerSubsidiaryCode,
		SubsidiaryName: b.BuyerSubsidiaryName, Contact: b.BuyerContact, Email: b.BuyerEmail}
	if s := d.Sender; s != nil {
		r.Sender = &Party{Country: s.SenderCCode, TaxNumber: s.SenderTin, VatNumber: s.SenderVatNumber, Name: s.SenderName,
			Address: partyAddress(s.SenderAddress), SubsidiaryCode: s.SenderSubsidiaryCode, SubsidiaryName: s.SenderSubsidiaryName}
	}
	r.References = []Reference{}
	for _, ref := range d.DocReferences {
		if ref.DocTypeRef == ujpdoc.RefTypeSystem {
			continue
		}
		r.References = append(r.References, Reference{Type: ref.DocTypeRef, Number: ref.DocNumberRef, Date: ref.DocDateRef})
	}
	p := d.DocPayment
	r.Payment = Payment{TypeCode: p.DocPaymentTypeCode, DueDate: p.DocPaymentTypeDueDate, DueDays: p.DocPaymentTypeDueDays,
		Terms: p.DocPaymentTerms, Note: p.DocPaymentNote, Currency: p.DocCurrencyCode, ExchangeRateDate: p.DocCurrencyDate}
	if p.DocCurrencyExchRate != nil {
		v := p.DocCurrencyExchRate.String()
		r.Payment.ExchangeRate = &v
	}
	for _, it := range d.DocItems {
		l := Line{Sku: it.DocItemSku, Description: it.DocItemDesc, Unit: it.DocItemMUnit, Quantity: it.DocItemQty.String(),
			UnitPrice: it.DocItemUnitOriginalPriceWoVat.String(), VatPercent: it.DocItemVat.String(), TaxIndicator: it.DocItemTaxIndicator}
		if !it.DocItemUnitDiscountAmount.IsZero() {
			l.UnitDiscount = it.DocItemUnitDiscountAmount.String()
		}
		r.Lines = append(r.Lines, l)
	}
	t := d.DocTotals
	if !t.DocAvansAmount.IsZero() || t.DocAvansDate != nil || t.DocAvansDesc != nil {
		r.Advance = &Advance{Amount: t.DocAvansAmount.String(), Date: t.DocAvansDate, Description: t.DocAvansDesc}
	}
	return r
}

// partyAddress turns UJP's address (empty strings for absent parts) into
// the request's (null for absent parts).
func partyAddress(a ujpdoc.Address) PartyAddress {
	s := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	return PartyAddress{Street: s(a.StreetAddress), Number: s(a.StreetNumber), PostalCode: s(a.PostalCode), City: s(a.City)}
}
