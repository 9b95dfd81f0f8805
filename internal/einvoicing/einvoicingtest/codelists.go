package einvoicingtest

import (
	"slices"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// ChangedLists are UJP's lists after the change the strict simulator's
// fault makes: a new tax indicator for document type 100 only, payment
// type P13 gone, document type 100 renamed.
func ChangedLists() *ujpdoc.Codebooks {
	cb := ujpdoc.Snapshot()
	cb.DocumentTypes[0].Name = "Општа Фактура"
	cb.PaymentTypes = slices.DeleteFunc(cb.PaymentTypes, func(c ujpdoc.Code) bool { return c.Code == "P13" })
	cb.TaxIndicators = append(cb.TaxIndicators, ujpdoc.TaxIndicator{Code: "DDV-14-3-10", CategoryName: "Промет на услуги по 10%",
		VatImpact: ujpdoc.ImpactStandard, TaxGroupCodes: []string{"DDV-V"}})
	cb.DocTypeTaxIndicators = map[string][]string{}
	for _, d := range cb.DocumentTypes {
		for _, t := range cb.TaxIndicators {
			if t.Code != "DDV-14-3-10" || d.Code == "100" {
				cb.DocTypeTaxIndicators[d.Code] = append(cb.DocTypeTaxIndicators[d.Code], t.Code)
			}
		}
	}
	return cb
}
