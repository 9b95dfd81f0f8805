// Package ujpdoc is UJP's e-Faktura document format: the JSON that an issuer
// signs as a compact JWS and sends to the tax authority, its totals formulas,
// and the checks the authority applies (required fields, codebook codes,
// totals). It is a pure domain package: it knows nothing of HTTP, SQL or the
// service's own API, so the service, the UJP client and the sandbox simulator
// all share one definition of what a valid document is.
//
// Field names are UJP's, unrenamed: a renamed field fails at UJP with an
// opaque schema error (E4013). Amounts are money.Amount values and travel as
// JSON numbers, as in UJP's examples.
//
// Where UJP's published texts leave a choice open, this package decides, and
// docs/einvoice-totals.md records the decision:
//
//   - Storno and correction reasons sit inside header (voidReasonCode,
//     voidComment, correctionReasonCode, correctionComment), the names UJP's
//     own change feed uses; research §6.5 found both this and a placement
//     beside document.
//   - The referenced original is a docReferences entry of type SYS whose
//     docNumberRef is the original's EUID.
package ujpdoc
