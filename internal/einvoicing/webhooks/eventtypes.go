package webhooks

import "slices"

// Event types. Each is written in the transaction of the change that
// causes it, with the resource as GET returns it after the change, and is
// listed in the catalogue (EventKinds).
const (
	EventValidatedFailed    = "einvoice.validated_failed"
	EventSignatureRequired  = "einvoice.signature_required"
	EventSubmitted          = "einvoice.submitted"
	EventAccepted           = "einvoice.accepted"
	EventAutoAccepted       = "einvoice.auto_accepted"
	EventRejected           = "einvoice.rejected"
	EventCancelledByStorno  = "einvoice.cancelled_by_storno"
	EventCorrected          = "einvoice.corrected"
	EventFailed             = "einvoice.failed"
	EventHeld               = "einvoice.held"
	EventSigningAgentOnline = "signing_agent.online"
	EventSigningAgentOff    = "signing_agent.offline"
	// EventSigningAgentOffline is EventSigningAgentOff by its full name.
	EventSigningAgentOffline = EventSigningAgentOff
	// Emitted by the archive when an export is ready or failed for good.
	EventArchiveExportReady  = "archive.export_ready"
	EventArchiveExportFailed = "archive.export_failed"
	// EventWebhookTest is the sample event of POST
	// /v1/webhook-endpoints/{id}/test; it is never stored as an event.
	EventWebhookTest = "webhook_endpoint.test"
)

// Events of the inbox. The first three are the spec's; the others tell
// what happened to a decision and to a document the seller replaced.
const (
	EventInboxReceived            = "inbox.received"
	EventInboxDeadlineApproaching = "inbox.deadline_approaching"
	EventInboxAutoAccepted        = "inbox.auto_accepted"
	EventInboxSignatureRequired   = "inbox.signature_required"
	EventInboxAccepted            = "inbox.accepted"
	EventInboxRejected            = "inbox.rejected"
	EventInboxDecisionFailed      = "inbox.decision_failed"
	EventInboxCancelledByStorno   = "inbox.cancelled_by_storno"
	EventInboxCorrected           = "inbox.corrected"
)

// Event types of reconciliation.
const (
	EventDiscovered              = "einvoice.discovered"
	EventMissingAtUJP            = "einvoice.missing_at_ujp"
	EventReconciliationCompleted = "reconciliation.completed"
	EventReconciliationMismatch  = "reconciliation.mismatch"
)

// EventCodeListsChanged is written to every company of an environment
// when UJP's code lists of that environment change.
const EventCodeListsChanged = "codelists.changed"

// Resources an event's data.object can be: the object names GET returns.
const (
	ResourceEInvoice        = "einvoice"
	ResourceInboxDocument   = "inbox_document"
	ResourceSigningAgent    = "signing_agent"
	ResourceArchiveExport   = "archive_export"
	ResourceWebhookEndpoint = "webhook_endpoint"
	ResourceReconciliation  = "reconciliation"
	// ResourceCodeListChange has no endpoint of its own: GET
	// /v1/codebooks shows the lists as they are after it.
	ResourceCodeListChange = "codelist_change"
)

// EventKind is one type of the event catalogue (GET /v1/event-types).
type EventKind struct {
	Object      string `json:"object" enum:"event_type" example:"event_type" doc:"Always event_type."`
	Type        string `json:"type" doc:"The event's type, as in Event.type and in a webhook endpoint's events."`
	Resource    string `json:"resource" enum:"einvoice,inbox_document,signing_agent,archive_export,webhook_endpoint,codelist_change,reconciliation" doc:"What data.object is: the resource as GET returns it right after the change."`
	Description string `json:"description" doc:"When the event is sent."`
}

// EventKinds is the catalogue: every type of event the service writes, in
// the order the documentation lists them. A new kind is one line here (and
// its constant); Publish refuses a type that is not in it, and the
// OpenAPI document describes each kind's payload from its Resource.
func EventKinds() []EventKind {
	k := func(typ, resource, desc string) EventKind {
		return EventKind{Object: "event_type", Type: typ, Resource: resource, Description: desc}
	}
	return []EventKind{
		k(EventValidatedFailed, ResourceEInvoice, "Issuance or validation failed the tax authority rules: the e-invoice is invalid, see its problems."),
		k(EventSignatureRequired, ResourceEInvoice, "A signing request for the e-invoice waits for the company's signing agent (issued, or issued again)."),
		k(EventSubmitted, ResourceEInvoice, "The tax authority assigned an EUID: the e-invoice is delivered."),
		k(EventAccepted, ResourceEInvoice, "The buyer accepted the e-invoice explicitly."),
		k(EventAutoAccepted, ResourceEInvoice, "The buyer's decision deadline passed in silence: accepted by the tax authority."),
		k(EventRejected, ResourceEInvoice, "The buyer rejected the e-invoice, with a reason (in problems)."),
		k(EventCancelledByStorno, ResourceEInvoice, "A storno of the e-invoice was submitted: the original is cancelled_by_storno."),
		k(EventCorrected, ResourceEInvoice, "A correction of the e-invoice was submitted: the original is corrected."),
		k(EventFailed, ResourceEInvoice, "The e-invoice failed for good (terminal error); see problems."),
		k(EventHeld, ResourceEInvoice, "The tax authority is unavailable: the e-invoice is held and will be resubmitted within the legal window."),
		k(EventDiscovered, ResourceEInvoice, "Reconciliation found a document UJP holds for the company that the service never issued (issued in UJP's portal or by other software): it is imported as an e-invoice of kind external."),
		k(EventMissingAtUJP, ResourceEInvoice, "Reconciliation found that UJP does not know a document the service shows delivered (or later): it is flagged with problem ujp_missing; nothing is sent again by itself."),
		k(EventInboxReceived, ResourceInboxDocument, "A new incoming e-invoice arrived in the inbox."),
		k(EventInboxDeadlineApproaching, ResourceInboxDocument, "5, 2 or 1 days are left before the incoming e-invoice's decision deadline."),
		k(EventInboxAutoAccepted, ResourceInboxDocument, "The incoming e-invoice's deadline passed without a decision: auto-accepted."),
		k(EventInboxSignatureRequired, ResourceInboxDocument, "A decision on the incoming e-invoice waits for the company's signing agent."),
		k(EventInboxAccepted, ResourceInboxDocument, "The company's acceptance of the incoming e-invoice reached UJP."),
		k(EventInboxRejected, ResourceInboxDocument, "The company's rejection of the incoming e-invoice reached UJP."),
		k(EventInboxDecisionFailed, ResourceInboxDocument, "A decision on the incoming e-invoice did not reach UJP (refused, not signed in time, or too late); see its problems."),
		k(EventInboxCancelledByStorno, ResourceInboxDocument, "The seller cancelled the incoming e-invoice with a storno."),
		k(EventInboxCorrected, ResourceInboxDocument, "The seller corrected the incoming e-invoice."),
		k(EventSigningAgentOffline, ResourceSigningAgent, "A signing agent of the company stopped answering (one event per company it signs for)."),
		k(EventSigningAgentOnline, ResourceSigningAgent, "A signing agent of the company is reachable again (one event per company it signs for)."),
		k(EventArchiveExportReady, ResourceArchiveExport, "A bulk archive export finished and can be downloaded."),
		k(EventArchiveExportFailed, ResourceArchiveExport, "A bulk archive export failed for good; its failure says why. Ask for a new one."),
		k(EventCodeListsChanged, ResourceCodeListChange, "UJP changed its code lists of the environment (a new tax indicator, a removed payment type, a renamed document type, a changed rate…): requests are checked against the new lists from now on. One event per company of the environment; data.object says what changed."),
		k(EventReconciliationCompleted, ResourceReconciliation, "A reconciliation of a company's day with UJP's records finished; its figures say what it found. One with nothing to fix and no problems (clean) proves that the day's sync was complete."),
		k(EventReconciliationMismatch, ResourceReconciliation, "A reconciliation found something to fix: a document repaired to UJP's status, discovered, missing at UJP, or an incoming document added to the inbox (sent with reconciliation.completed)."),
		k(EventWebhookTest, ResourceWebhookEndpoint, "Sent only by POST /v1/webhook-endpoints/{id}/test, to that endpoint; never listed in GET /v1/events."),
	}
}

// eventKindOf returns the catalogue entry of typ.
func eventKindOf(typ string) (EventKind, bool) {
	kinds := EventKinds()
	i := slices.IndexFunc(kinds, func(k EventKind) bool { return k.Type == typ })
	if i < 0 {
		return EventKind{}, false
	}
	return kinds[i], true
}
