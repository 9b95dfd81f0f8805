// Package ujp is the service's one door to the tax authority (UJP
// e-Faktura): the Gateway interface naming everything the service asks of
// UJP, an HTTP client that speaks UJP's documented API (paths, X-EUJP-ID /
// X-EDB / X-SERIAL-NUMBER headers, {requestTimestamp, jws} bodies, the
// {success, createdDate, errorStatus, …} envelopes), its typed errors, and
// how UJP's code lists are merged with the previous ones (MergeCodebooks).
//
// The gateway never signs. Every document-level call, reads included, must
// carry a compact JWS made on the company's own device (the service never
// holds signing keys), so those methods take the signed JWS and the identity
// of whoever signed it. The payload types to sign (EUIDRequest,
// DateRangeRequest, …) live here so that the service and the simulator agree
// on them.
//
// Errors are judged by UJP's code first (error-codes.txt), whatever the
// HTTP status, and only when the body is not UJP's by the status. They fall
// into four kinds the caller must treat differently:
//   - *UnavailableError (errors.Is(err, ErrUnavailable)): no answer, a
//     timeout, one of UJP's "try again" codes, or a 5xx whose body is not
//     UJP's. Whether a send landed is unknown: read UJP's records before
//     sending the same docId again.
//   - *RateLimitedError (E4007): UJP allows one request per second per
//     user; retry after RetryAfter.
//   - *BusyError: the user had no turn free soon (Turns); nothing was sent.
//   - *RejectedError: UJP answered and refused. Terminal for this payload;
//     Code is UJP's own error code, never renamed. AccessProblem picks out
//     the refusals of the caller's access (user, privilege, certificate),
//     which are configuration, not a fault of the payload.
//
// Every call waits for a turn of its UJP user (Config.Turns) before it is
// sent, at the priority of what it is (sends first, code lists last).
package ujp

import (
	"context"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// Identity is who makes a call: the user's EUJP-ID (X-EUJP-ID), the tax
// number of the company making the supply (X-EDB), and, on signed calls, the
// serial number of the certificate that signed, in decimal (the client
// writes X-SERIAL-NUMBER in its configured format). UJP wants X-EUJP-ID and
// X-EDB on every service (api-specification.txt:106-110).
type Identity struct {
	EUJPID       string
	EDB          string
	SerialNumber string
}

// Gateway is everything the service asks of UJP. The HTTP Client implements
// it against UJP or the sandbox simulator (internal/ujpsim); tests may
// implement it in memory.
type Gateway interface {
	// ServerTime is UJP's clock, to source requestTimestamp when ours drifts.
	ServerTime(ctx context.Context, caller Identity) (time.Time, error)
	// Company looks a tax number up in UJP's registry (GET
	// /api/v1/companies/{tax}). An unknown number is a *RejectedError with
	// IsNotFound true.
	Company(ctx context.Context, caller Identity, taxNumber string) (*Company, error)
	// Codebooks fetches every code list UJP serves, as one set.
	Codebooks(ctx context.Context, caller Identity) (*ujpdoc.Codebooks, error)

	// Send submits a signed document (payload ujpdoc.Request) to the JSON
	// Receiver. docType goes in X-DOC-TYPE-CODE.
	Send(ctx context.Context, caller Identity, docType, jws string) (*SendResult, error)
	// CurrentStatus of an issued document (payload EUIDRequest).
	CurrentStatus(ctx context.Context, caller Identity, jws string) (*DocStatus, error)
	// StatusHistory of an issued document (payload StatusHistoryRequest).
	StatusHistory(ctx context.Context, caller Identity, jws string) ([]StatusChange, error)
	// SalesChanges lists status changes of issued documents on a day
	// (payload ChangesRequest); UJP has no push, so the service polls it.
	SalesChanges(ctx context.Context, caller Identity, jws string) ([]StatusChange, error)
	// SalesIDs lists EUIDs of documents issued in a date range (payload
	// DateRangeRequest).
	SalesIDs(ctx context.Context, caller Identity, jws string) ([]string, error)
	// SalesInvoicesStatus lists the documents issued in a date range, each
	// with its status, number, date and amounts (payload DateRangeRequest,
	// at most a month: E4014); what a send whose answer was lost is looked
	// for in.
	SalesInvoicesStatus(ctx context.Context, caller Identity, jws string) ([]DocStatus, error)
	// SalesPayloads is the document JSON of issued documents (payload
	// EUIDsRequest); it needs the RD privilege.
	SalesPayloads(ctx context.Context, caller Identity, jws string) ([]Payload, error)
	// SalesPDF is UJP's rendering of an issued document (payload EUIDRequest).
	SalesPDF(ctx context.Context, caller Identity, jws string) ([]byte, error)

	// PurchaseIDs lists EUIDs of documents received in a date range
	// (payload DateRangeRequest).
	PurchaseIDs(ctx context.Context, caller Identity, jws string) ([]string, error)
	// PurchaseInvoicesStatus lists the documents received in a date range,
	// each with its status, number, date and amounts (payload
	// DateRangeRequest, at most a month: E4014).
	PurchaseInvoicesStatus(ctx context.Context, caller Identity, jws string) ([]DocStatus, error)
	// PurchaseCurrentStatus of a received document (payload EUIDRequest).
	PurchaseCurrentStatus(ctx context.Context, caller Identity, jws string) (*DocStatus, error)
	// PurchasePayload is the seller's document JSON, unmodified (payload
	// EUIDRequest).
	PurchasePayload(ctx context.Context, caller Identity, jws string) ([]byte, error)
	// PurchasePayloads is the seller's document JSON of several received
	// documents at once, each unmodified (payload EUIDsRequest). A document
	// UJP does not hold for the caller is left out of the answer.
	PurchasePayloads(ctx context.Context, caller Identity, jws string) ([]Payload, error)
	// PurchaseChanges lists status changes of received documents on a day
	// (payload ChangesRequest).
	PurchaseChanges(ctx context.Context, caller Identity, jws string) ([]StatusChange, error)
	// PurchasePDF is UJP's rendering of a received document.
	PurchasePDF(ctx context.Context, caller Identity, jws string) ([]byte, error)
	// AcceptReject records the buyer's decision (payload AcceptRejectRequest);
	// only from status 01, else E1016.
	AcceptReject(ctx context.Context, caller Identity, jws string) error
	// Archive is a document, issued or received, in electronic form: an
	// ASiC-S container (payload EUIDRequest); it needs the DA privilege
	// (api-specification.txt:1395-1407).
	Archive(ctx context.Context, caller Identity, jws string) ([]byte, error)

	// Turn takes the caller's next turn now, at priority pri, and returns
	// a context whose next call as caller uses it instead of waiting for
	// another: for work that must know it has its turn before it commits
	// to the call. No turn soon is a *BusyError.
	Turn(ctx context.Context, caller Identity, pri Priority) (context.Context, error)
}

// Company is a registry entry.
type Company struct {
	TaxNumber          string         `json:"taxNumber"`
	VatNumber          *string        `json:"vatNumber"`
	RegistrationNumber string         `json:"registrationNumber"`
	Name               string         `json:"name"`
	Address            CompanyAddress `json:"address"`
	CountryID          *int           `json:"countryId"`
	ChangeDate         *string        `json:"changeDate"`
	Municipality       *string        `json:"municipality"`
	Golemina           string         `json:"golemina"`
	CountryCode        string         `json:"countryCode"`
}

// CompanyAddress is the registry's address shape (not the document's).
type CompanyAddress struct {
	Street string `json:"street"`
	Number string `json:"number"`
	City   string `json:"city"`
	Zip    string `json:"zip"`
}

// SendResult is UJP's answer to an accepted document. QRLink must be printed
// on the document (as a QR code) with the EUID.
type SendResult struct {
	EUID         string `json:"euid"`
	Message      string `json:"message"`
	QRLink       string `json:"qr_link"`
	Status       int    `json:"status"`
	EInvoiceUser bool   `json:"e_invoice_user"`
	Timestamp    string `json:"timestamp"`
}

// DocStatus is a document's current status with its headline amounts.
type DocStatus struct {
	EUID            string        `json:"euid"`
	StatusCode      string        `json:"statusCode"`
	StatusName      string        `json:"statusName"`
	DocNumber       string        `json:"docNumber"`
	DocDate         string        `json:"docDate"`
	DocDeliveryDate string        `json:"docDeliveryDate"`
	DocNetAmount    ujpdoc.Amount `json:"docNetAmount"`
	DocVatAmount    ujpdoc.Amount `json:"docVatAmount"`
	DocGrossAmountR ujpdoc.Amount `json:"docGrossAmountR"`
	DocAvansAmount  ujpdoc.Amount `json:"docAvansAmount"`
	DocFinalAmount  ujpdoc.Amount `json:"docFinalAmount"`
	SellerTin       string        `json:"sellerTin"`
	BuyerTin        string        `json:"buyerTin"`
	SenderTin       string        `json:"senderTin"`
	ReceiverTin     string        `json:"receiverTin"`
}

// StatusRef is a status as UJP writes it in histories.
type StatusRef struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// StatusChange is one move of a document, from a history or a change feed.
type StatusChange struct {
	ID               int64     `json:"id,omitempty"`
	EUID             string    `json:"euid"`
	OldStatus        StatusRef `json:"oldStatus"`
	NewStatus        StatusRef `json:"newStatus"`
	Timestamp        string    `json:"timestamp"`
	UserID           *int64    `json:"userId,omitempty"`
	Comment          *string   `json:"comment"`
	CancelComment    *string   `json:"cancelComment"`
	VoidComment      *string   `json:"voidComment"`
	VoidReasonCode   *string   `json:"voidReasonCode"`
	VoidReason       *string   `json:"voidReason"`
	RejectReasonCode *string   `json:"rejectReasonCode"`
	RejectReason     *string   `json:"rejectReason"`
}

// Status codes UJP assigns (document-statuses code list).
const (
	StatusDraft        = "00"
	StatusSent         = "01"
	StatusAccepted     = "03"
	StatusAutoAccepted = "04"
	StatusRejected     = "05"
	StatusVoided       = "07"
	StatusCorrected    = "09"
	StatusRegistered   = "10"
)

// Payloads of the signed read and decision calls. Each carries
// requestTimestamp (Skopje time, ujpdoc.FormatTimestamp) inside the
// signature, which is UJP's replay defence.
type (
	// EUIDRequest names one document.
	EUIDRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		EUID             string `json:"euid"`
	}
	// StatusHistoryRequest asks for a document's history from a moment on.
	StatusHistoryRequest struct {
		RequestTimestamp string  `json:"requestTimestamp"`
		EUID             string  `json:"euid"`
		DateFrom         *string `json:"dateFrom,omitempty"`
	}
	// DateRangeRequest spans at most one month (E4014), dates YYYY-MM-DD.
	DateRangeRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		DateFrom         string `json:"dateFrom"`
		DateTo           string `json:"dateTo"`
	}
	// EUIDsRequest names several documents.
	EUIDsRequest struct {
		RequestTimestamp string   `json:"requestTimestamp"`
		EUIDs            []string `json:"euids"`
	}
	// ChangesRequest asks for the changes of one day (YYYY-MM-DD, or a
	// timestamp whose date part counts).
	ChangesRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		Date             string `json:"date"`
	}
	// AcceptRejectRequest is the buyer's decision; a rejection needs a
	// reject-reason code.
	AcceptRejectRequest struct {
		RequestTimestamp string  `json:"requestTimestamp"`
		EUID             string  `json:"euid"`
		IsAccepted       bool    `json:"isAccepted"`
		RejectReasonCode *string `json:"rejectReasonCode"`
		Comment          *string `json:"comment"`
	}
)

// Payload is one document of a payload list: its EUID and the seller's
// document JSON, as UJP gives it (a JSON string on the wire).
type Payload struct {
	EUID    string `json:"euid"`
	Payload string `json:"payload"`
}

// SignedBody is the HTTP body of every signed call: the compact JWS and,
// outside it, the same requestTimestamp.
type SignedBody struct {
	RequestTimestamp string `json:"requestTimestamp"`
	JWS              string `json:"jws"`
}

// ErrorStatus is UJP's error object. ErrorList is read when present (UJP's
// own /send error body is unpublished; the reference says a failed
// validation names every problem, api-specification.txt:54).
type ErrorStatus struct {
	ErrorCode        string            `json:"errorCode"`
	ErrorMessage     string            `json:"errorMessage"`
	ErrorPropertyMap map[string]string `json:"errorPropertyMap,omitempty"`
	ErrorList        []ErrorItem       `json:"errorList,omitempty"`
}

// ErrorItem is one problem: UJP's code, its message, and the field.
type ErrorItem struct {
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
	Property     string `json:"property,omitempty"`
	Codebook     string `json:"codebook,omitempty"`
}

// Paths of UJP's API. The JSON Receiver and the einvoice_api live under
// different prefixes of the same host.
const (
	APIPrefix      = "/einvoice_api/api/v1"
	PathSend       = "/JSONReceiver/api/v1/sales-invoices/send"
	PathServerTime = APIPrefix + "/server-time"
	PathCompanies  = APIPrefix + "/companies/" // + tax number

	PathSalesCurrentStatus     = APIPrefix + "/documents/sales-invoice/current-status"
	PathSalesStatusHistory     = APIPrefix + "/documents/sales-invoice/status"
	PathSalesChanges           = APIPrefix + "/documents/sales-invoice/changes"
	PathSalesPDF               = APIPrefix + "/documents/sales-invoice/pdf"
	PathSalesIDs               = APIPrefix + "/documents/sales-invoice/ids"
	PathSalesInvoicesStatus    = APIPrefix + "/documents/sales-invoice/invoices-status"
	PathSalesPayloadList       = APIPrefix + "/documents/sales-invoice/payload/list"
	PathPurchaseIDs            = APIPrefix + "/documents/purchase-invoice/ids"
	PathPurchaseCurrentStatus  = APIPrefix + "/documents/purchase-invoice/current-status"
	PathPurchasePayload        = APIPrefix + "/documents/purchase-invoice/payload"
	PathPurchasePayloadList    = APIPrefix + "/documents/purchase-invoice/payload/list"
	PathPurchaseChanges        = APIPrefix + "/documents/purchase-invoice/changes"
	PathPurchasePDF            = APIPrefix + "/documents/purchase-invoice/pdf"
	PathAcceptReject           = APIPrefix + "/documents/purchase-invoice/accept-reject"
	PathArchive                = APIPrefix + "/documents/invoice"
	PathPurchaseInvoicesStatus = APIPrefix + "/documents/purchase-invoice/invoices-status"
	// PathDocTypeTaxIndicators + a document-type code: the tax indicators
	// of that document type (api-specification.txt:445).
	PathDocTypeTaxIndicators = APIPrefix + "/doc-type-x-tax-indicator/"
)

// Keys of the lists in code-list answers that are read specially.
const (
	keyTaxIndicators        = "taxIndicators"
	keyDocTypeTaxIndicators = "docTypeXTaxIndicatorList"
)

// Code-list paths and the key of the list in each response.
var codeListPaths = []struct{ path, key string }{
	{APIPrefix + "/document-types", "documentTypesList"},
	{APIPrefix + "/ref-document-types", "refDocumentTypes"},
	{APIPrefix + "/payment-types", "paymentTypeList"},
	{APIPrefix + "/currency", "currencyList"},
	{APIPrefix + "/countries", "countryList"},
	{APIPrefix + "/void-reasons", "voidReasonList"},
	{APIPrefix + "/correction-reason", "correctionReasonList"},
	{APIPrefix + "/reject-reason", "rejectReasonList"},
	{APIPrefix + "/tax-groups", "taxGroupList"},
	{APIPrefix + "/tax-indicators", keyTaxIndicators},
	{APIPrefix + "/document-statuses", "statusList"},
}

// CodeListPaths returns the code-list endpoints the client reads (besides
// PathDocTypeTaxIndicators) and the response key of each list.
func CodeListPaths() map[string]string {
	m := make(map[string]string, len(codeListPaths))
	for _, p := range codeListPaths {
		m[p.path] = p.key
	}
	return m
}
