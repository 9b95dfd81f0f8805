// Package signing is the signing room of the e-invoicing application: what
// signers do. Agents are paired with a single-use code, authenticated,
// followed online and offline, revoked, and register their certificates;
// signers list, get, claim, sign and refuse signing requests, one at a time
// or in batches (one transaction, a savepoint per item); and its jobs
// expire the requests nobody answered in time (issuing an e-invoice's
// replacement) and ask again for a document whose signer refused for a
// passing reason. Asking for a signature, and what a recorded signature or
// a refusal sets off, stay in internal/einvoicing (RequestSignature,
// AfterSigned, the signed-links registry), which every room that needs a
// signature calls. It imports internal/einvoicing, never the reverse, and
// knows no HTTP server: the API and the job runner call it, and cmd/denar
// wires it.
package signing
