// Package ujp is the service's one door to the tax authority (UJP
// e-Faktura): the Gateway interface naming everything the service asks of
// UJP, an HTTP client that speaks UJP's documented API (paths, X-EUJP-ID /
// X-EDB / X-SERIAL-NUMBER headers, {requestTimestamp, jws} bodies, the
// {success, createdDate, errorStatus, …} envelopes), its typed errors, and a
// cache of UJP's code lists that falls back to ujpdoc's embedded snapshot.
//
// The gateway never signs. Every document-level call, reads included, must
// carry a compact JWS made on the company's own device (the service never
// holds signing keys), so those methods take the signed JWS and the identity
// of whoever signed it. The payload types to sign (EUIDRequest,
// DateRangeRequest, …) live here so that the service and the simulator agree
// on them.
//
// Errors fall into three kinds the caller must treat differently:
//   - *UnavailableError (errors.Is(err, ErrUnavailable)): no answer, a
//     timeout or a 5xx. Nothing is known; retry later with the same docId.
//   - *RateLimitedError (E4007): UJP allows one request per second per
//     user; retry after RetryAfter.
//   - *RejectedError: UJP answered and refused. Terminal for this payload;
//     Code is UJP's own error code, never renamed.
package ujp

import (
	"context"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
)

// Identity is who makes a call: the signer's EUJP-ID (X-EUJP-ID), the tax
// number of the company making the supply (X-EDB), and, on signed calls, the
// serial number of the certificate that signed (X-SERIAL-NUMBER, as the
// certificate's serial in decimal).
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
	ServerTime(ctx context.Context) (time.Time, error)
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
	// DateRangeRequest), to reconcile after a lost response.
	SalesIDs(ctx context.Context, caller Identity, jws string) ([]string, error)
	// SalesPDF is UJP's rendering of an issued document (payload EUIDRequest).
	SalesPDF(ctx context.Context, caller Identity, jws string) ([]byte, error)

	// PurchaseIDs lists EUIDs of documents received in a date range
	// (payload DateRangeRequest).
	PurchaseIDs(ctx context.Context, caller Identity, jws string) ([]string, error)
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

	// RegisterCertificate registers a signing certificate (DER) for the
	// caller's EUJP-ID and EDB and returns its serial for X-SERIAL-NUMBER.
	// Sandbox only: on the real UJP this is done in its portal, and the
	// call is refused there (a *RejectedError).
	RegisterCertificate(ctx context.Context, caller Identity, certDER []byte) (serial string, err error)
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

// ErrorStatus is UJP's error object. ErrorList is the simulator's addition
// (UJP's own /send error body is unpublished) carrying every problem found.
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

	PathSalesCurrentStatus    = APIPrefix + "/documents/sales-invoice/current-status"
	PathSalesStatusHistory    = APIPrefix + "/documents/sales-invoice/status"
	PathSalesChanges          = APIPrefix + "/documents/sales-invoice/changes"
	PathSalesPDF              = APIPrefix + "/documents/sales-invoice/pdf"
	PathSalesIDs              = APIPrefix + "/documents/sales-invoice/ids"
	PathPurchaseIDs           = APIPrefix + "/documents/purchase-invoice/ids"
	PathPurchaseCurrentStatus = APIPrefix + "/documents/purchase-invoice/current-status"
	PathPurchasePayload       = APIPrefix + "/documents/purchase-invoice/payload"
	PathPurchasePayloadList   = APIPrefix + "/documents/purchase-invoice/payload/list"
	PathPurchaseChanges       = APIPrefix + "/documents/purchase-invoice/changes"
	PathPurchasePDF           = APIPrefix + "/documents/purchase-invoice/pdf"
	PathAcceptReject          = APIPrefix + "/documents/purchase-invoice/accept-reject"

	// PathSandboxCertificates is the simulator's stand-in for UJP's
	// certificate-registration portal.
	PathSandboxCertificates = "/_sim/certificates"
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
	{APIPrefix + "/tax-indicators", "taxIndicators"},
	{APIPrefix + "/document-statuses", "statusList"},
}

// CodeListPaths returns the code-list endpoints and the response key of each
// list, for the simulator to serve the same shapes.
func CodeListPaths() map[string]string {
	m := make(map[string]string, len(codeListPaths))
	for _, p := range codeListPaths {
		m[p.path] = p.key
	}
	return m
}
