package ujpdoc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/denar-mk/denar/money"
)

// Amount is a money.Amount that marshals as a bare JSON number, as UJP's
// examples write amounts, and unmarshals from a number or a numeric string.
type Amount struct{ money.Amount }

// A returns the Amount of a decimal string; it panics on a malformed literal
// and is meant for tests and constants.
func A(s string) Amount { return Amount{money.MustParse(s)} }

// Dec wraps a money amount.
func Dec(d money.Amount) Amount { return Amount{d} }

// MarshalJSON writes the amount as a JSON number, without trailing zeros.
func (a Amount) MarshalJSON() ([]byte, error) { return a.Amount.Trim().Append(nil), nil }

// UnmarshalJSON reads a JSON number or a numeric string; null leaves zero.
func (a *Amount) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		a.Amount = money.Amount{}
		return nil
	}
	if len(b) > 64 {
		return fmt.Errorf("amount %s: too long", truncate(b))
	}
	text := string(b)
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		text = text[1 : len(text)-1]
	}
	d, err := money.Parse(text)
	if err != nil {
		return fmt.Errorf("amount %s: %w", truncate(b), err)
	}
	// An amount with more than 18 decimals, or beyond 10^38, is no invoice
	// amount: refusing it keeps every later product small.
	if d.Trim().Scale() > 18 || d.Abs().GreaterThan(maxAmount) {
		return fmt.Errorf("amount %s: out of range", truncate(b))
	}
	a.Amount = d
	return nil
}

var maxAmount = money.New(1, -38)

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// Storno kinds carried in header.docStorno.
const (
	StornoNone       = 0 // an ordinary document
	StornoVoid       = 1 // storno: negative quantities and totals, with a void reason
	StornoCorrection = 2 // correction: a full replacement, with a correction reason
)

// RefTypeSystem is the reference document type whose number is the EUID of
// an e-invoice issued through the system; storno and correction documents
// point at their original with it.
const RefTypeSystem = "SYS"

// Request is the payload an issuer signs: the document plus the request
// timestamp that makes a replayed signature detectable.
type Request struct {
	RequestTimestamp string   `json:"requestTimestamp"`
	Document         Document `json:"document"`
}

// Document is UJP's e-invoice document.
type Document struct {
	Header        Header      `json:"header"`
	DocReferences []Reference `json:"docReferences"`
	Seller        Seller      `json:"seller"`
	Buyer         Buyer       `json:"buyer"`
	Sender        *Sender     `json:"sender,omitempty"`
	DocPayment    Payment     `json:"docPayment"`
	DocItems      []Item      `json:"docItems"`
	DocTotals     Totals      `json:"docTotals"`
	VatTotals     []VatTotal  `json:"vatTotals"`
}

// Header identifies the document. DocID is the issuer's own unique id; UJP
// refuses a second document with the same one (E1023), which is what makes a
// resubmission after a lost response safe.
type Header struct {
	DocStorno          int     `json:"docStorno"`
	DocType            string  `json:"docType"`
	DocTypeName        string  `json:"docTypeName"`
	DocDate            string  `json:"docDate"`
	DocTurnoverDate    string  `json:"docTurnoverDate"`
	DocNumber          string  `json:"docNumber"`
	DocID              string  `json:"docId"`
	DocNotes           *string `json:"docNotes"`
	DocHeader          *string `json:"docHeader"`
	DocFooter          *string `json:"docFooter"`
	DocDeliveryDate    *string `json:"docDeliveryDate"`
	DocDelivery        *string `json:"docDelivery"`
	DocPeriodStartDate *string `json:"docPeriodStartDate"`
	DocPeriodEndDate   *string `json:"docPeriodEndDate"`
	// Storno (docStorno 1) and correction (docStorno 2) reasons.
	VoidReasonCode       *string `json:"voidReasonCode,omitempty"`
	VoidComment          *string `json:"voidComment,omitempty"`
	CorrectionReasonCode *string `json:"correctionReasonCode,omitempty"`
	CorrectionComment    *string `json:"correctionComment,omitempty"`
}

// Reference points at a related document (order, contract, or for SYS the
// EUID of another e-invoice).
type Reference struct {
	DocTypeRef   string  `json:"docTypeRef"`
	DocNameRef   string  `json:"docNameRef"`
	DocNumberRef string  `json:"docNumberRef"`
	DocDateRef   *string `json:"docDateRef"`
}

// Address is a party's address; UJP's lengths: street 60, number 10, postal
// code 5, city 60.
type Address struct {
	StreetAddress string `json:"streetAddress"`
	StreetNumber  string `json:"streetNumber"`
	PostalCode    string `json:"postalCode"`
	City          string `json:"city"`
}

// Seller is the supplier, with UJP's flat seller-prefixed names.
type Seller struct {
	SellerCCode             string  `json:"sellerCCode"`
	SellerCName             string  `json:"sellerCName"`
	SellerTin               string  `json:"sellerTin"`
	SellerForeignTin        *string `json:"sellerForeignTin"`
	SellerVatNumber         *string `json:"sellerVatNumber"`
	SellerName              string  `json:"sellerName"`
	SellerAddress           Address `json:"sellerAddress"`
	SellerSubsidiaryCode    *string `json:"sellerSubsidiaryCode"`
	SellerSubsidiaryName    *string `json:"sellerSubsidiaryName"`
	SellerSubsidiaryAddress *string `json:"sellerSubsidiaryAddress"`
	SellerContact           *string `json:"sellerContact"`
	SellerEmail             *string `json:"sellerEmail"`
}

// Buyer is the customer. BuyerTin is required when the buyer is resident
// (country MK).
type Buyer struct {
	BuyerCCode             string  `json:"buyerCCode"`
	BuyerCName             string  `json:"buyerCName"`
	BuyerTin               string  `json:"buyerTin"`
	BuyerForeignTin        *string `json:"buyerForeignTin"`
	BuyerVatNumber         *string `json:"buyerVatNumber"`
	BuyerName              string  `json:"buyerName"`
	BuyerAddress           Address `json:"buyerAddress"`
	BuyerSubsidiaryCode    *string `json:"buyerSubsidiaryCode"`
	BuyerSubsidiaryName    *string `json:"buyerSubsidiaryName"`
	BuyerSubsidiaryAddress *string `json:"buyerSubsidiaryAddress"`
	BuyerContact           *string `json:"buyerContact"`
	BuyerEmail             *string `json:"buyerEmail"`
}

// Sender is the party that sends the document on the seller's behalf, when
// it is not the seller (UJP04 fields); absent otherwise.
type Sender struct {
	SenderCCode             string  `json:"senderCCode"`
	SenderCName             string  `json:"senderCName"`
	SenderTin               string  `json:"senderTin"`
	SenderVatNumber         *string `json:"senderVatNumber"`
	SenderName              string  `json:"senderName"`
	SenderAddress           Address `json:"senderAddress"`
	SenderSubsidiaryCode    *string `json:"senderSubsidiaryCode"`
	SenderSubsidiaryName    *string `json:"senderSubsidiaryName"`
	SenderSubsidiaryAddress *string `json:"senderSubsidiaryAddress"`
}

// Payment carries the payment terms and the document currency. Amounts in
// the document are in DocCurrencyCode; for a currency other than MKD,
// DocCurrencyExchRate (denars per unit, NBRM middle rate) and
// DocCurrencyDate are required.
type Payment struct {
	DocPaymentTypeCode    string  `json:"docPaymentTypeCode"`
	DocPaymentTypeDesc    string  `json:"docPaymentTypeDesc"`
	DocPaymentTypeDueDays *int    `json:"docPaymentTypeDueDays"`
	DocPaymentTypeDueDate *string `json:"docPaymentTypeDueDate"`
	DocPaymentTerms       *string `json:"docPaymentTerms"`
	DocPaymentNote        *string `json:"docPaymentNote"`
	DocCurrency           string  `json:"docCurrency"`
	DocCurrencyCode       string  `json:"docCurrencyCode"`
	DocCurrencyDate       *string `json:"docCurrencyDate"`
	DocCurrencyExchRate   *Amount `json:"docCurrencyExchRate"`
}

// Item is one line. The caller supplies quantity, unit price, discount, rate,
// group and indicator; ComputeTotals fills the computed fields.
type Item struct {
	DocItemLineNo                  int     `json:"docItemLineNo"`
	DocItemSku                     *string `json:"docItemSku"`
	DocItemSenderCode              *string `json:"docItemSenderCode"`
	DocItemReceiverCode            *string `json:"docItemReceiverCode"`
	DocItemDesc                    string  `json:"docItemDesc"`
	DocItemMUnit                   *string `json:"docItemMUnit"`
	DocItemQty                     Amount  `json:"docItemQty"`
	DocItemUnitOriginalPriceWoVat  Amount  `json:"docItemUnitOriginalPriceWoVat"`
	DocItemUnitDiscountAmount      Amount  `json:"docItemUnitDiscountAmount"`
	DocItemUnitPriceWoVat          Amount  `json:"docItemUnitPriceWoVat"`
	DocItemUnitVat                 Amount  `json:"docItemUnitVat"`
	DocItemVat                     Amount  `json:"docItemVat"`
	DocItemVatGroup                string  `json:"docItemVatGroup"`
	DocItemTaxIndicator            string  `json:"docItemTaxIndicator"`
	DocItemTotalOriginalPriceWoVat Amount  `json:"docItemTotalOriginalPriceWoVat"`
	DocItemTotalPriceWoVat         Amount  `json:"docItemTotalPriceWoVat"`
	DocItemTotalVat                Amount  `json:"docItemTotalVat"`
	DocItemTotalPriceWVat          Amount  `json:"docItemTotalPriceWVat"`
	DocItemDomesticProduct         *string `json:"docItemDomesticProduct"`
}

// Totals are the document totals. DocAvansAmount is an advance already paid
// and invoiced; DocFinalAmount is what remains to pay.
type Totals struct {
	DocNetAmount      Amount  `json:"docNetAmount"`
	DocDiscountAmount Amount  `json:"docDiscountAmount"`
	DocNetAmountDisc  Amount  `json:"docNetAmountDisc"`
	DocVatAmount      Amount  `json:"docVatAmount"`
	DocGrossAmount    Amount  `json:"docGrossAmount"`
	DocGrossAmountR   Amount  `json:"docGrossAmountR"`
	DocAvansDate      *string `json:"docAvansDate"`
	DocAvansDesc      *string `json:"docAvansDesc"`
	DocAvansAmount    Amount  `json:"docAvansAmount"`
	DocFinalAmount    Amount  `json:"docFinalAmount"`
}

// VatTotal is one (vatCode = tax group, vatTaxIndicator) group of lines.
type VatTotal struct {
	VatTaxIndicator     string  `json:"vatTaxIndicator"`
	VatTaxIndicatorNote *string `json:"vatTaxIndicatorNote"`
	VatCode             string  `json:"vatCode"`
	VatPercent          Amount  `json:"vatPercent"`
	VatTaxableAmount    Amount  `json:"vatTaxableAmount"`
	VatAmount           Amount  `json:"vatAmount"`
	VatTotalAmount      Amount  `json:"vatTotalAmount"`
}

// Decode parses a signed payload strictly: unknown fields are an error, as
// they would fail UJP's JSON schema check (E4013).
func Decode(b []byte) (*Request, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode UJP document: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode UJP document: trailing data after the JSON object")
	}
	return &r, nil
}
