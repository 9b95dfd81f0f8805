package ujpsim

// UJP's wire shapes as the simulator reads and writes them, with UJP's JSON
// field names (api-specification.txt). They are the simulator's own: the
// gateway (internal/ujp) has its reading, and a difference between the two
// is a finding for a test, not something to share away.

// Paths. The JSON Receiver and the einvoice_api are two prefixes of one
// host (api-specification.txt:101-105).
const (
	apiPrefix = "/einvoice_api/api/v1"
	// PathSend is the JSON Receiver's send endpoint.
	PathSend = "/JSONReceiver/api/v1/sales-invoices/send"

	pathServerTime     = apiPrefix + "/server-time"
	pathCompanies      = apiPrefix + "/companies/"
	pathSubsidiary     = apiPrefix + "/subsidiary/"
	pathExchangeRate   = apiPrefix + "/currency-exchange/rate"
	pathCountriesList  = apiPrefix + "/countries/list"
	pathDocTypeTax     = apiPrefix + "/doc-type-x-tax-indicator/"
	pathDocTypeTaxList = apiPrefix + "/doc-type-x-tax-indicator/list"
	pathCorrectionDate = apiPrefix + "/correction-reason/"
	pathPurchaseTaxDay = apiPrefix + "/purchase-tax-indicators/"

	pathSales    = apiPrefix + "/documents/sales-invoice/"
	pathPurchase = apiPrefix + "/documents/purchase-invoice/"
	pathASiC     = apiPrefix + "/documents/invoice"
)

// Company is the registry's company (api-specification.txt:641-657).
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

// CompanyAddress is the registry's address (api-specification.txt:646-651).
type CompanyAddress struct {
	Street string `json:"street"`
	Number string `json:"number"`
	City   string `json:"city"`
	Zip    string `json:"zip"`
}

// subsidiary is an entry of /subsidiary/{tax} (api-specification.txt:672-687).
type subsidiary struct {
	TaxPayerID             int    `json:"taxPayerId"`
	TaxNumber              string `json:"taxNumber"`
	SubsidiaryCode         string `json:"subsidiaryCode"`
	SubsidiaryName         string `json:"subsidiaryName"`
	SubsidiaryStreet       string `json:"subsidiaryStreet"`
	SubsidiaryNumber       string `json:"subsidiaryNumber"`
	SubsidiaryCity         string `json:"subsidiaryCity"`
	CountryID              int    `json:"countryId"`
	Zip                    string `json:"zip"`
	TaxpayerSubsidiaryCode string `json:"taxpayerSubsidiaryCode"`
	TaxpayerSubsidiaryType string `json:"taxpayerSubsidiaryType"`
	CountryCode            string `json:"countryCode"`
}

// ErrorStatus is UJP's errorStatus. ErrorList is the simulator's addition:
// every problem found, each with its code and field, where UJP's envelope
// has room for one code and a property map.
type ErrorStatus struct {
	ErrorCode        string            `json:"errorCode"`
	ErrorMessage     string            `json:"errorMessage"`
	ErrorPropertyMap map[string]string `json:"errorPropertyMap,omitempty"`
	ErrorList        []ErrorItem       `json:"errorList,omitempty"`
}

// ErrorItem is one problem of ErrorStatus.ErrorList.
type ErrorItem struct {
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
	Property     string `json:"property,omitempty"`
	Codebook     string `json:"codebook,omitempty"`
}

// StatusRef is a status in a history (api-specification.txt:891-898).
type StatusRef struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// StatusChange is one move of a document, in UJP's history and change-feed
// shape (api-specification.txt:887-906, 954-974).
type StatusChange struct {
	ID               int64     `json:"id,omitempty"`
	EUID             string    `json:"euid"`
	OldStatus        StatusRef `json:"oldStatus"`
	NewStatus        StatusRef `json:"newStatus"`
	Timestamp        string    `json:"timestamp"`
	Comment          *string   `json:"comment"`
	CancelComment    *string   `json:"cancelComment"`
	VoidComment      *string   `json:"voidComment"`
	VoidReasonCode   *string   `json:"voidReasonCode"`
	VoidReason       *string   `json:"voidReason"`
	RejectReasonCode *string   `json:"rejectReasonCode"`
	RejectReason     *string   `json:"rejectReason"`
}

// docStatus is a document's status with its headline amounts
// (api-specification.txt:920-936).
type docStatus struct {
	EUID            string `json:"euid"`
	StatusCode      string `json:"statusCode"`
	StatusName      string `json:"statusName"`
	DocNumber       string `json:"docNumber"`
	DocDate         string `json:"docDate"`
	DocDeliveryDate string `json:"docDeliveryDate"`
	DocNetAmount    Num    `json:"docNetAmount"`
	DocVatAmount    Num    `json:"docVatAmount"`
	DocGrossAmountR Num    `json:"docGrossAmountR"`
	DocAvansAmount  Num    `json:"docAvansAmount"`
	DocFinalAmount  Num    `json:"docFinalAmount"`
	SellerTin       string `json:"sellerTin"`
	BuyerTin        string `json:"buyerTin"`
	SenderTin       string `json:"senderTin"`
	ReceiverTin     string `json:"receiverTin"`
}

// sendResult is the JSON Receiver's answer to an accepted document
// (api-specification.txt:794-801).
type sendResult struct {
	EUID         string `json:"euid"`
	Message      string `json:"message"`
	QRLink       string `json:"qr_link"`
	Status       int    `json:"status"`
	EInvoiceUser bool   `json:"e_invoice_user"`
	Timestamp    string `json:"timestamp"`
}

// signedBody is the body of a signed call: the requestTimestamp and the
// compact JWS (api-specification.txt:789-792).
type signedBody struct {
	RequestTimestamp string `json:"requestTimestamp"`
	JWS              string `json:"jws"`
}

// Payloads of the signed reads and of accept-reject.
type (
	euidRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		EUID             string `json:"euid"`
	}
	euidsRequest struct {
		RequestTimestamp string   `json:"requestTimestamp"`
		EUIDs            []string `json:"euids"`
	}
	statusHistoryRequest struct {
		RequestTimestamp string  `json:"requestTimestamp"`
		EUID             string  `json:"euid"`
		DateFrom         *string `json:"dateFrom"`
	}
	changesRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		Date             string `json:"date"`
	}
	dateRangeRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		DateFrom         string `json:"dateFrom"`
		DateTo           string `json:"dateTo"`
	}
	acceptRejectRequest struct {
		RequestTimestamp string  `json:"requestTimestamp"`
		EUID             string  `json:"euid"`
		IsAccepted       *bool   `json:"isAccepted"`
		RejectReasonCode *string `json:"rejectReasonCode"`
		Comment          *string `json:"comment"`
	}
	pageRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		Page             *int   `json:"page"`
		Size             *int   `json:"size"`
		SortBy           string `json:"sortBy"`
		SortDirection    string `json:"sortDirection"`
	}
	exchangeRateRequest struct {
		RequestTimestamp string `json:"requestTimestamp"`
		CurrencyName     string `json:"currencyName"`
		Date             string `json:"date"`
	}
)

type payloadEntry struct {
	EUID    string `json:"euid"`
	Payload string `json:"payload"`
}

// Status codes (statuses.txt).
const (
	statusSent         = "01"
	statusAccepted     = "03"
	statusAutoAccepted = "04"
	statusRejected     = "05"
	statusVoided       = "07"
	statusCorrected    = "09"
)
