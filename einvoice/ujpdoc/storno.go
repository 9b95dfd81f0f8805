package ujpdoc

import "fmt"

// Storno builds the storno (docStorno 1) of an accepted original: the same
// parties, lines and prices, quantities and advance negated, totals
// recomputed, the void reason and comment in the header, and a SYS reference
// to the original's EUID. docID and docNumber are the storno's own; the
// original is not modified.
func Storno(orig *Document, origEUID, docID, docNumber, voidReason string, comment *string, docDate string, cb *Codebooks) (*Document, error) {
	d := *orig
	d.DocItems = append([]Item(nil), orig.DocItems...)
	d.VatTotals = nil
	d.Header.DocStorno = StornoVoid
	d.Header.DocID, d.Header.DocNumber, d.Header.DocDate = docID, docNumber, docDate
	d.Header.VoidReasonCode, d.Header.VoidComment = &voidReason, comment
	d.Header.CorrectionReasonCode, d.Header.CorrectionComment = nil, nil
	d.DocReferences = []Reference{systemRef(orig, origEUID, cb)}
	Negate(&d)
	if err := ComputeTotals(&d, cb); err != nil {
		return nil, fmt.Errorf("storno of %s: %w", origEUID, err)
	}
	return &d, nil
}

// MarkCorrection turns a complete replacement document into the correction
// (docStorno 2) of the original with EUID origEUID: reason and comment in
// the header and a SYS reference first among its references.
func MarkCorrection(d *Document, origEUID, origDocDate, reason string, comment *string, cb *Codebooks) {
	d.Header.DocStorno = StornoCorrection
	d.Header.CorrectionReasonCode, d.Header.CorrectionComment = &reason, comment
	d.Header.VoidReasonCode, d.Header.VoidComment = nil, nil
	ref := systemRef(&Document{Header: Header{DocDate: origDocDate}}, origEUID, cb)
	refs := []Reference{ref}
	for _, r := range d.DocReferences {
		if r.DocTypeRef != RefTypeSystem {
			refs = append(refs, r)
		}
	}
	d.DocReferences = refs
}

func systemRef(orig *Document, euid string, cb *Codebooks) Reference {
	name := "Од систем"
	if c, ok := cb.Lookup(CBRefDocumentTypes, RefTypeSystem); ok {
		name = c.Name
	}
	r := Reference{DocTypeRef: RefTypeSystem, DocNameRef: name, DocNumberRef: euid}
	if orig.Header.DocDate != "" {
		date := orig.Header.DocDate
		r.DocDateRef = &date
	}
	return r
}
