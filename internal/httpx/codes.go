package httpx

import (
	"net/http"
	"sync"

	"github.com/denar-mk/denar"
)

// Where a code appears.
const (
	// InProblem: the code member of a problem+json response, with its
	// HTTP status.
	InProblem = "problem"
	// InEInvoiceProblems: the code of an item of an e-invoice's problems
	// (the e-invoice is invalid or failed, or waits after a refusal); UJP's
	// own codes (E…) appear there too, unrenamed.
	InEInvoiceProblems = "einvoice.problems"
	// InArchiveFailure: the code of a failed archive export's failure.
	InArchiveFailure = "archiveExport.failure"
	// InInboxProblems: the code of an item of an inbox document's problems
	// (why the last decision did not reach UJP); UJP's own codes (E1016,
	// …) appear there too, unrenamed.
	InInboxProblems = "inbox_document.problems"
	// InCompanyProblems: the code of an item of a company's problems (what
	// UJP refuses the service for the company: access or a privilege).
	InCompanyProblems = "company.problems"
	// InReconciliationProblems: the code of an item of a reconciliation's
	// problems (what a run could not settle).
	InReconciliationProblems = "reconciliation.problems"
	// InOAuth: the error member of an RFC 6749 §5.2 answer of POST
	// /v1/oauth/token.
	InOAuth = "oauth"
)

// Services that answer a code.
const (
	ServiceBoth     = ""
	ServicePayroll  = "payroll"
	ServiceEInvoice = "einvoice"
)

// Code documents one stable code: where it appears, its HTTP status (for
// problems and OAuth errors), the services that answer it, a title and
// what it means. docs/errors.md lists the same codes; a test keeps the
// two, and the codes the source uses, in step.
type Code struct {
	Code    string `json:"code"`
	In      string `json:"in"`
	Status  int    `json:"status,omitempty"`
	Service string `json:"-"`
	Title   string `json:"title"`
	Meaning string `json:"meaning"`
}

// Codes is the one table of codes. Spec marks the codes of the e-invoicing
// specification's error table; every other one is ours.
func Codes() []Code {
	p := func(code string, status int, service, title, meaning string) Code {
		return Code{Code: code, In: InProblem, Status: status, Service: service, Title: title, Meaning: meaning}
	}
	return []Code{
		// Both services.
		p("unauthenticated", http.StatusUnauthorized, ServiceBoth, "Authentication required", "Missing, malformed or expired credentials (API key, access token or agent credentials). A credential of the other service (a payroll key sent to the e-invoicing service, or the reverse) is answered so, with the detail naming the service it belongs to and where that service listens."),
		p("key_revoked", http.StatusUnauthorized, ServiceBoth, "API key revoked", "The API key, the OAuth client of the access token, or the signing agent was revoked (denar admin key|client|agent revoke, POST /v1/agents/{id}/revoke)."),
		p("insufficient_scope", http.StatusForbidden, ServiceBoth, "Insufficient scope", "The credential lacks the scope the operation needs (x-required-scope)."),
		p("company_not_allowed", http.StatusForbidden, ServiceBoth, "Company not allowed", "The company is outside the credential's allow-list (a signing agent's: the companies of its pairing code), or not one of the account's; a credential limited to an allow-list cannot onboard companies, nor revoke an agent that may act for companies outside its list."),
		p("environment_mismatch", http.StatusForbidden, ServiceBoth, "Environment mismatch", "A sandbox credential on a production company or the reverse, X-Company-Id and list filters included."),
		p("production_not_enabled", http.StatusForbidden, ServiceBoth, "Production not enabled", "A production key of an account without an active production plan."),
		p("company_required", http.StatusBadRequest, ServiceBoth, "Company required", "The credential reaches several companies and the request names none in X-Company-Id; the detail lists their ids when there are at most five, else says where to find them (GET /v1/companies)."),
		p("idempotency_key_required", http.StatusBadRequest, ServiceEInvoice, "Idempotency-Key required", "A POST without Idempotency-Key (every e-invoicing POST but /v1/oauth/token)."),
		p("invalid_idempotency_key", http.StatusBadRequest, ServiceBoth, "Invalid Idempotency-Key", "The Idempotency-Key header is longer than 255 characters, or contains NUL or invalid UTF-8."),
		p("bad_request", http.StatusBadRequest, ServiceBoth, "Bad request", "The request body could not be read (the connection broke while sending it)."),
		p("idempotency_conflict", http.StatusConflict, ServiceBoth, "Idempotency key reused with another request", "The Idempotency-Key was used with another method, path, X-Company-Id or body."),
		p("idempotency_in_progress", http.StatusConflict, ServiceBoth, "Request with this idempotency key still in progress", "A request with this Idempotency-Key is still running; retry after a moment."),
		p(denar.ECodeValidation, http.StatusUnprocessableEntity, ServiceBoth, "Validation failed", "Field errors: malformed JSON, unknown fields, a member given twice in one object (names compared regardless of case), NUL, another control character than tab, line feed and carriage return, U+FFFE/U+FFFF, or invalid UTF-8 (an unpaired surrogate escape included) in a string, values of the wrong JSON type or beyond what the field holds (a number too large for an integer), schema and business rules; each in errors[] with the path of the request field (and codebook when the rule is UJP's). Malformed JSON is one error at the root (path \"\") with the byte offset where reading failed (\"malformed JSON at byte 25: …\", \"malformed JSON: the body is empty\"), on every operation of both services."),
		p("rate_limited", http.StatusTooManyRequests, ServiceBoth, "Too many requests", "Over the credential's rate (shared by all processes on PostgreSQL), or, on the unauthenticated routes, over the client address's rate; Retry-After says when to retry."),
		p(denar.ECodeNotFound, http.StatusNotFound, ServiceBoth, "Not found", "No such resource for this caller (also ids of other accounts), or no such path."),
		p("method_not_allowed", http.StatusMethodNotAllowed, ServiceBoth, "Method not allowed", "The path exists for other methods, listed in Allow."),
		p("payload_too_large", http.StatusRequestEntityTooLarge, ServiceBoth, "Payload too large", "The body is larger than the operation accepts (x-body-limit; 64 KiB unless documented otherwise). A declared Content-Length over it is refused before the body is read or the credential checked; the connection is closed. Earlier versions answered request_too_large."),
		p("request_timeout", http.StatusRequestTimeout, ServiceBoth, "Request timeout", "The body did not arrive within DENAR_HTTP_READ_TIMEOUT of the request's first byte; the connection is closed."),
		p("unsupported_media_type", http.StatusUnsupportedMediaType, ServiceBoth, "Unsupported media type", "The body's Content-Type is not one the operation reads."),
		p("not_acceptable", http.StatusNotAcceptable, ServiceBoth, "Not acceptable", "Accept names no media type the operation can answer with."),
		p(denar.ECodeInternal, http.StatusInternalServerError, ServiceBoth, "Internal error", "A bug or an outage on our side; logged with the request id (instance)."),

		// Payroll.
		p("mpin_validation_failed", http.StatusUnprocessableEntity, ServicePayroll, "МПИН checks failed", "The МПИН file has blocking issues (listed in issues); pass force to write it anyway."),
		p("server_busy", http.StatusServiceUnavailable, ServicePayroll, "Server busy", "The service already works on DENAR_HEAVY_CONCURRENCY file and batch requests; Retry-After says when to retry. The body is not read."),

		// E-invoicing: the specification's table.
		p("client_reference_conflict", http.StatusConflict, ServiceEInvoice, "clientReference reused with another body", "The clientReference names an e-invoice of this company issued with another body."),
		p("period_closed", http.StatusConflict, ServiceEInvoice, "Period closed", "Storno or correction of a document of a year whose annual account is filed."),
		p("already_claimed", http.StatusConflict, ServiceEInvoice, "Signing request claimed by another signer", "Another agent (or key) claimed the signing request first."),
		p("pdf_not_ready", http.StatusConflict, ServiceEInvoice, "PDF not ready", "UJP's PDF of the document is not fetched yet (not delivered, or its read not signed)."),
		p("signature_expired", http.StatusGone, ServiceEInvoice, "Signing request expired", "The signing request expired; replacedBy names the request to sign instead (null when none could be issued)."),
		p("signature_invalid", http.StatusUnprocessableEntity, ServiceEInvoice, "Signature invalid", "Not a compact RS256 JWS, or the signature does not verify with the request's certificate."),
		p("payload_mismatch", http.StatusUnprocessableEntity, ServiceEInvoice, "Payload mismatch", "The JWS payload or protected header differs from the request's."),
		p("certificate_mismatch", http.StatusUnprocessableEntity, ServiceEInvoice, "Certificate mismatch", "The JWS x5c leaf is not the request's certificate (claim first: the claim issues the header for your certificate)."),
		p("totals_mismatch", http.StatusUnprocessableEntity, ServiceEInvoice, "Totals mismatch", "expectedTotals differ from the totals computed by UJP's formulas."),
		p("ujp_unavailable", http.StatusServiceUnavailable, ServiceEInvoice, "UJP unavailable", "UJP's registry did not answer the company pre-flight in time; nothing was created."),
		p("decision_deadline_passed", http.StatusConflict, ServiceEInvoice, "Decision deadline passed", "An accept or reject after the inbox document's decideBy (Europe/Skopje, inclusive) or once UJP reported it auto-accepted (04); decideBy in the problem."),

		// E-invoicing: ours.
		p("einvoice_state_conflict", http.StatusConflict, ServiceEInvoice, "E-invoice not in a state that allows this", "The e-invoice's status does not allow the operation (storno or correction before delivery, a decision on an undelivered document, a move another worker made first)."),
		p("supersede_pending", http.StatusConflict, ServiceEInvoice, "Storno or correction already on its way", "A storno or correction of this e-invoice is still on its way to UJP."),
		p("inbox_state_conflict", http.StatusConflict, ServiceEInvoice, "Inbox document not in a state that allows this", "An accept or reject of an inbox document already decided, with a decision on its way, or no longer in status 01 at UJP (voided or corrected by its seller); a sandbox action the simulator refuses (with UJP's code)."),
		p("sandbox_only", http.StatusForbidden, ServiceEInvoice, "Sandbox only", "A sandbox-only operation for a production company: POST /v1/sandbox/… (simulate, an incoming invoice, a mandate link); the simulations also need a sandbox that is the UJP simulator."),
		p("mandate_pending", http.StatusConflict, ServiceEInvoice, "Mandate not accepted", "The company is pending_mandate: its representative has not accepted the mandate, so the service does not act for it at UJP (issue, storno, correction, inbox decisions) until they do."),
		p("signer_not_ready", http.StatusConflict, ServiceEInvoice, "No signer", "The company has no valid signing certificate; pair an agent and register one."),
		p("company_exists", http.StatusConflict, ServiceEInvoice, "Company already onboarded", "The account already has a company with this ЕДБ in this environment (its id in companyId)."),
		p("mandate_already_accepted", http.StatusConflict, ServiceEInvoice, "Mandate already accepted", "A sandbox mandate link asked for a company that is active: its mandate is accepted, there is nothing to accept."),
		p("signing_request_finished", http.StatusConflict, ServiceEInvoice, "Signing request already finished", "The signing request is signed, refused or expired; a request is answered once."),
		p("self_signed_certificate", http.StatusUnprocessableEntity, ServiceEInvoice, "Self-signed certificate", "A self-signed certificate (such as denar-agent run --sandbox-self-signed makes) registered for a production company; production needs the qualified certificate a certification authority issued. errors[] names certificateDer."),
		p("secret_already_shown", http.StatusConflict, ServiceEInvoice, "Secret already shown", "An Idempotency-Key replay of an answer that carried a secret shown once (a pairing code, an agent's credentials, a webhook endpoint's secret, a sandbox mandate link): the secret is not kept, so the replay cannot show it. object and objectId name what was created; pair again with a new code, rotate the endpoint's secret, or ask for another mandate link."),
		p("pairing_code_invalid", http.StatusUnprocessableEntity, ServiceEInvoice, "Pairing code invalid", "The pairing code is unknown, used or expired."),
		p("einvoice_external", http.StatusConflict, ServiceEInvoice, "E-invoice issued outside the service", "A storno or correction of an e-invoice of kind external: UJP holds it but the service never issued it (UJP's portal, other software); void or correct it where it was issued."),
		p("archive_export_not_ready", http.StatusConflict, ServiceEInvoice, "Archive export not ready", "Download of an archive export that is pending or failed."),
		p("archive_export_expired", http.StatusGone, ServiceEInvoice, "Archive export expired", "The archive export is past its expiresAt (DENAR_ARCHIVE_RETENTION); ask for a new one."),

		// Failures of archive exports.
		{Code: "archive_build_failed", In: InArchiveFailure, Service: ServiceEInvoice, Title: "Archive build failed",
			Meaning: "Building the zip failed on every attempt (the blob store or the database kept failing); message says how."},
		{Code: "archive_content_missing", In: InArchiveFailure, Service: ServiceEInvoice, Title: "Archive content missing",
			Meaning: "A document of the range lacks what the archive must hold (its signature, a readable JWS or PDF); message names it."},
		{Code: "archive_store_missing", In: InArchiveFailure, Service: ServiceEInvoice, Title: "No blob store",
			Meaning: "The server runs without a blob store for archives."},
		p("webhook_url_refused", http.StatusUnprocessableEntity, ServiceEInvoice, "Webhook URL refused", "The endpoint URL is not https in production, carries credentials, a fragment or an IPv6 zone, does not resolve, or resolves to a loopback, private, shared, link-local, metadata, multicast or reserved address (errors[].path url)."),
		p("webhook_endpoint_disabled", http.StatusConflict, ServiceEInvoice, "Webhook endpoint disabled", "Replay to, or recovery of, a disabled endpoint: enable it first (PATCH with enabled: true)."),
		p("webhook_endpoint_limit", http.StatusConflict, ServiceEInvoice, "Too many webhook endpoints", "The account has 20 webhook endpoints in this environment, the most it may have."),
		p("webhooks_unavailable", http.StatusServiceUnavailable, ServiceEInvoice, "Webhooks unavailable", "The service has no DENAR_WEBHOOK_SECRET_KEY to seal endpoint secrets with (denar serve always has one)."),

		// Items of an e-invoice's problems.
		{Code: "signature_refused", In: InEInvoiceProblems, Service: ServiceEInvoice, Title: "Signature refused",
			Meaning: "The signer refused (reason: user_declined, policy or payload_invalid fail the e-invoice; token_missing, pin_locked or unattended keep it waiting and ask again after the refusal backoff). Carries reason, message and signingRequestId."},
		{Code: "hold_window_exceeded", In: InEInvoiceProblems, Service: ServiceEInvoice, Title: "Hold window exceeded",
			Meaning: "UJP stayed unreachable for longer than the hold window (DENAR_EINVOICE_HOLD_WINDOW) and never received the document; the document failed undelivered. A document UJP may hold (a send without an answer) is never failed by the window: it is looked up in UJP's records."},
		{Code: "ujp_unexpected_answer", In: InEInvoiceProblems, Service: ServiceEInvoice, Title: "UJP answered in an unknown shape",
			Meaning: "UJP (or something in front of it) refused the document with a 4xx whose body is not UJP's error shape (a proxy's page, a framework's default error JSON); message holds the HTTP status and the body, truncated. A 5xx of that shape holds the document instead."},
		{Code: "ujp_missing", In: InEInvoiceProblems, Service: ServiceEInvoice, Title: "Not at UJP",
			Meaning: "Reconciliation found that UJP does not know the document (its current-status answers not found) though the service shows it delivered or later (event einvoice.missing_at_ujp). Nothing is sent again by itself; the flag goes when a later reconciliation finds the document at UJP."},

		// Items of a company's problems.
		{Code: "ujp_access_missing", In: InCompanyProblems, Service: ServiceEInvoice, Title: "UJP refuses the signer",
			Meaning: "UJP refused the company's signer: the user is unknown (E1010), the certificate is not registered (E1012), the user may not sign for the company (E1013), or an identity header's value (E4021, E4022, E4023). Documents wait in queued and are sent again; cleared by the next call UJP accepts."},
		{Code: "ujp_privilege_missing", In: InCompanyProblems, Service: ServiceEInvoice, Title: "UJP portal privilege missing",
			Meaning: "UJP refused a call for a portal privilege the signer's user lacks for the company (E1011); privilege names it: DP for UJP's PDFs, RD for document JSON (incoming documents; finding a send whose answer was lost), DA for archives. No document fails for it; cleared by the next call of that privilege UJP accepts."},

		// Items of an inbox document's problems.
		{Code: "decision_refused", In: InInboxProblems, Service: ServiceEInvoice, Title: "Decision refused by the signer",
			Meaning: "The signer refused the decision's signing request (any reason); nothing reached UJP and the decision is pending again. Carries reason and signingRequestId."},
		{Code: "decision_expired", In: InInboxProblems, Service: ServiceEInvoice, Title: "Decision not signed in time",
			Meaning: "The decision's signing request expired unsigned (it is not replaced); nothing reached UJP and the decision is pending again."},
		{Code: "decision_late", In: InInboxProblems, Service: ServiceEInvoice, Title: "Deadline passed before the decision reached UJP",
			Meaning: "The deadline passed, or UJP auto-accepted the document, while the decision waited for its signature or for UJP."},
		{Code: "decided_elsewhere", In: InInboxProblems, Service: ServiceEInvoice, Title: "Decided elsewhere",
			Meaning: "UJP reports another decision (made in its portal or by another system) before ours reached it; UJP's decision is recorded."},
		{Code: "decision_signer_missing", In: InInboxProblems, Service: ServiceEInvoice, Title: "No signer to sign the decision again",
			Meaning: "The signed decision was too old for UJP (its 5-minute window) and the company has no valid certificate to sign it again."},
		{Code: "payload_unreadable", In: InInboxProblems, Service: ServiceEInvoice, Title: "Payload unreadable",
			Meaning: "UJP's payload of the document is not a UJP document; it is kept unmodified (GET …/payload) but its fields could not be read."},

		// Items of a reconciliation's problems.
		{Code: "status_unknown", In: InReconciliationProblems, Service: ServiceEInvoice, Title: "Status not known",
			Meaning: "UJP reports a document status the service does not know, or lists a document and then does not give its status; the document is left as it is (and a document the service never issued is not imported)."},
		{Code: "status_conflict", In: InReconciliationProblems, Service: ServiceEInvoice, Title: "Status conflict",
			Meaning: "The service shows a document in a status UJP's status cannot lead to (or holds another EUID for its docId); it is left as it is. Compare it with UJP's portal."},
		{Code: "ambiguous_match", In: InReconciliationProblems, Service: ServiceEInvoice, Title: "Several documents match",
			Meaning: "Without the document's payload (no RD privilege), several of the service's documents match UJP's number, date, gross amount and buyer; none was changed and nothing was imported. Grant RD and reconcile the day again."},
		{Code: "payload_missing", In: InReconciliationProblems, Service: ServiceEInvoice, Title: "Payload not given",
			Meaning: "UJP lists an incoming document for the day but gave no payload for it; it is not in the inbox. Reconcile the day again later."},
		{Code: "privilege_missing", In: InReconciliationProblems, Service: ServiceEInvoice, Title: "RD privilege missing",
			Meaning: "The signer's user lacks the RD privilege for the company: sales documents were matched by number, date, gross amount and buyer instead of their docId, and incoming documents missing from the inbox could not be read. Grant RD in UJP's portal and reconcile the day again."},
		{Code: "access_refused", In: InReconciliationProblems, Service: ServiceEInvoice, Title: "UJP refuses the signer",
			Meaning: "UJP refused the company's signer (E1010, E1012, E1013, E4021–E4023); the run waits, asks again hourly, and resumes once the company's access is set right (the company's problems say how)."},

		// OAuth token endpoint (RFC 6749 §5.2).
		{Code: "invalid_request", In: InOAuth, Status: http.StatusBadRequest, Service: ServiceEInvoice, Title: "Invalid request",
			Meaning: "Not a form body, a parameter missing or repeated, or credentials both in Basic and in the body."},
		{Code: "invalid_client", In: InOAuth, Status: http.StatusBadRequest, Service: ServiceEInvoice, Title: "Invalid client",
			Meaning: "Unknown client, wrong or missing secret, or revoked client; 401 with WWW-Authenticate: Basic when the client authenticated with HTTP Basic."},
		{Code: "invalid_scope", In: InOAuth, Status: http.StatusBadRequest, Service: ServiceEInvoice, Title: "Invalid scope",
			Meaning: "A requested scope the client was not granted."},
		{Code: "unsupported_grant_type", In: InOAuth, Status: http.StatusBadRequest, Service: ServiceEInvoice, Title: "Unsupported grant type",
			Meaning: "grant_type other than client_credentials."},
		{Code: "server_error", In: InOAuth, Status: http.StatusInternalServerError, Service: ServiceEInvoice, Title: "Server error",
			Meaning: "An internal error while issuing the token; logged."},
	}
}

// problemCodes indexes the problem codes of Codes.
var problemCodes = sync.OnceValue(func() map[string]Code {
	m := map[string]Code{}
	for _, c := range Codes() {
		if c.In == InProblem {
			m[c.Code] = c
		}
	}
	return m
})

// codesOf returns the codes a service answers, for its OpenAPI document.
func codesOf(service string) []Code {
	var out []Code
	for _, c := range Codes() {
		if c.Service == ServiceBoth || c.Service == service {
			out = append(out, c)
		}
	}
	return out
}
