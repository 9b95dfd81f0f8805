package einvoicing

// Signing-link types: what a signing request is for. Each room handles its
// own (signedlinks.go: HandleLink, and CheckLinks finds one left without a
// handler); an e-invoice's document is LinkEInvoice (signing.go). What the
// rooms share about UJP's answers and reads is the pipeline room's
// (internal/einvoicing/pipeline, ujpanswers.go).
const (
	// The pipeline's signed reads of UJP's sales side.
	LinkChanges = "ujp_changes" // id: companyID + "/" + YYYY-MM-DD
	LinkPDF     = "einvoice_pdf"
	// The look-up's reads; their id is the e-invoice's.
	LinkSalesLookup         = "ujp_sales_lookup"
	LinkSalesLookupPayloads = "ujp_sales_lookup_payloads"
	// The inbox: the decision itself (purpose decision) and the signed
	// reads (purpose query).
	LinkInboxDecision    = "inbox_decision"        // id: the inbox document
	LinkInboxStatus      = "inbox_status"          // id: the inbox document (current-status after E1016)
	LinkInboxPDF         = "inbox_pdf"             // id: the inbox document
	LinkPurchaseIDs      = "ujp_purchase_ids"      // id: the company
	LinkPurchasePayloads = "ujp_purchase_payloads" // id: company/to/started (unix ms)
	LinkPurchaseChanges  = "ujp_purchase_changes"  // id: the company
	// A reconciliation run's reads; the id is "<reconciliation id>/<seq>".
	LinkReconciliation = "ujp_reconciliation"
	// The go-live check's requests: no job follows their signature; the
	// check makes the read itself.
	LinkUJPCheck = "ujp_check"
)
