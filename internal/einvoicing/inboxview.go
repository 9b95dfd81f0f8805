package einvoicing

// The public view of an incoming e-invoice. The inbox room
// (internal/einvoicing/inbox) makes it; it stays here because the event
// catalogue (EventResources) and the signing summary name its types.

import (
	"encoding/json"
	"time"

	"github.com/denar-mk/denar/einvoice"
)

// InboxDocument is the public incoming e-invoice (spec, InboxDocument).
// kind, originalEuid, problems and updatedAt, and decision.requested and
// decision.signingRequestId, are additions to the spec's fields (docs/inbox.md).
type InboxDocument struct {
	ID              string          `json:"id" doc:"Prefix inbd_."`
	Object          string          `json:"object" enum:"inbox_document" example:"inbox_document" doc:"Always inbox_document."`
	CompanyID       string          `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The buying company, yours (cmp_…)."`
	EUID            string          `json:"euid" doc:"UJP's id of the document."`
	Kind            string          `json:"kind" enum:"invoice,storno,correction" doc:"From the seller's docStorno: a storno voids and a correction replaces the document originalEuid names."`
	OriginalEUID    *string         `json:"originalEuid" doc:"The EUID a storno or correction refers to (its SYS reference); null for an invoice."`
	DocumentType    string          `json:"documentType" doc:"UJP document-types code (100 invoice, …)."`
	Number          string          `json:"number" doc:"The seller's document number."`
	IssueDate       string          `json:"issueDate" format:"date" example:"2026-05-04" doc:"The seller's issue date (docDate)."`
	TransactionDate string          `json:"transactionDate" format:"date" doc:"docTurnoverDate (docDate when the seller left it empty); decideBy follows from it."`
	Seller          InboxSeller     `json:"seller" doc:"The seller as its document states it."`
	Totals          einvoice.Totals `json:"totals" doc:"net (after discounts), vat, gross, in the document currency, as the seller's document states them."`
	UJPStatus       UJPStatus       `json:"ujpStatus" doc:"The document's status at UJP."`
	Decision        InboxDecision   `json:"decision" doc:"Your company's decision on the document: accept (POST …/accept) or reject (POST …/reject) by decideBy, or UJP accepts it for you."`
	DecideBy        string          `json:"decideBy" format:"date" doc:"The last day to decide (inclusive, Europe/Skopje): the 10th of the month after transactionDate, never moved for weekends or holidays."`
	DaysLeft        int             `json:"daysLeft" doc:"Days from today (Europe/Skopje, when the response is made) to decideBy: 0 on decideBy, negative after it."`
	Problems        json.RawMessage `json:"problems" doc:"Why the last decision did not reach UJP: [{code, message, reason, signingRequestId}] (refused or expired signature, UJP's refusal with its own code, the deadline)."`
	ReceivedAt      time.Time       `json:"receivedAt" doc:"When the service found the document at UJP."`
	UpdatedAt       time.Time       `json:"updatedAt" example:"2026-05-04T09:20:00Z" doc:"When anything of the document last changed."`
	Links           InboxLinks      `json:"links" doc:"Relative paths of the document's contents."`
}

// Path is the document's path in the API.
func (d InboxDocument) Path() string { return "/v1/inbox/" + d.ID }

// InboxSeller is the seller as its document states it.
type InboxSeller struct {
	Country        string       `json:"country" doc:"Countries codebook code (MK)."`
	TaxNumber      string       `json:"taxNumber" example:"4030000000044" doc:"The seller's ЕДБ (13 digits), or its foreign tax number."`
	VatNumber      *string      `json:"vatNumber" example:"МК4030000000044" doc:"The seller's VAT number; null when it is not a VAT payer."`
	Name           string       `json:"name" example:"Тест Добавувач ДООЕЛ Тетово" doc:"The seller's name."`
	Address        InboxAddress `json:"address" doc:"The seller's address."`
	SubsidiaryCode *string      `json:"subsidiaryCode" example:"01" doc:"The seller's branch code, if the document names one."`
	SubsidiaryName *string      `json:"subsidiaryName" example:"Магацин Тетово" doc:"The seller's branch name."`
	Contact        *string      `json:"contact" example:"Петар Петровски" doc:"The seller's contact person or phone."`
	Email          *string      `json:"email" example:"faktura@example.mk" doc:"The seller's e-mail address."`
}

// InboxAddress is the seller's address.
type InboxAddress struct {
	Street     string `json:"street" example:"ул. Илинденска" doc:"Street name."`
	Number     string `json:"number" example:"5" doc:"House number."`
	PostalCode string `json:"postalCode" example:"1200" doc:"Postal code."`
	City       string `json:"city" example:"Тетово" doc:"City."`
}

// UJPStatus is the document's status at UJP.
type UJPStatus struct {
	Code string    `json:"code" doc:"Two digits: 01 sent (awaiting the buyer), 03 accepted, 04 auto-accepted, 05 rejected, 07 voided by storno, 09 corrected, …"`
	Name string    `json:"name" doc:"UJP's name of the status."`
	At   time.Time `json:"at" doc:"When the service learnt it: UJP's time of the change when UJP gives one."`
}

// InboxDecision is the company's decision on the document.
type InboxDecision struct {
	State            string     `json:"state" enum:"pending,accepted,auto_accepted,rejected" example:"pending" doc:"pending: not decided yet; accepted or rejected: by your company; auto_accepted: by UJP, when decideBy passed without a decision."`
	Requested        *string    `json:"requested" enum:"accept,reject" doc:"A decision on its way: waiting for its signature, or for UJP. null when none."`
	ReasonCode       *string    `json:"reasonCode" doc:"The reject reason (UJP's code, in UJP's spelling), of the decision made or on its way."`
	Comment          *string    `json:"comment" example:"Погрешна цена" doc:"The comment sent with the decision."`
	DecidedAt        *time.Time `json:"decidedAt" doc:"When the decision took effect: UJP's time when it reports one, else when the service learnt it; for an auto-acceptance the service records itself, the end of decideBy. null until decided."`
	SigningRequestID *string    `json:"signingRequestId" doc:"The signing request the decision on its way waits on."`
}

// InboxLinks are the relative paths of the document's contents.
type InboxLinks struct {
	Payload string `json:"payload" example:"/v1/inbox/inbd_01jv8k2n3p4q5r6s7t8v9w0xyz/payload" doc:"GET this path for UJP's document JSON, unmodified."`
	PDF     string `json:"pdf" example:"/v1/inbox/inbd_01jv8k2n3p4q5r6s7t8v9w0xyz/pdf" doc:"GET this path for UJP's PDF of the document."`
}
