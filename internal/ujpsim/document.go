package ujpsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	_ "time/tzdata"
	"unicode/utf8" // Skopje's zone resolves on hosts without tzdata

	"github.com/denar-mk/denar/money"
)

// The simulator's model of a sent document, with UJP's field names
// (api-specification.txt:55-98, sifrarnici-field-codebook.txt). It is
// decoded strictly: a field UJP does not know fails its JSON schema (E4013).
// Required strings are plain strings (null reads as ""), optional ones are
// pointers, so a document the simulator makes itself writes null for what it
// leaves out.

// Num is a decimal amount written as a bare JSON number, as UJP's examples
// write amounts. A JSON null leaves it unset.
type Num struct {
	V   money.Amount
	Set bool
}

// N returns the Num of a decimal literal; it panics on a malformed one and is
// for constants and tests.
func N(s string) Num { return Num{V: money.MustParse(s), Set: true} }

func num(a money.Amount) Num { return Num{V: a, Set: true} }

// MarshalJSON writes the amount as a JSON number without trailing zeros, or
// null when unset.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Set {
		return []byte("null"), nil
	}
	return n.V.Trim().Append(nil), nil
}

// maxNum bounds amounts: nothing on an invoice reaches 10^18, and a bound
// keeps every product small.
var maxNum = money.MustParse("1000000000000000000")

// UnmarshalJSON reads a JSON number (a string is a type error, E4013).
func (n *Num) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*n = Num{}
		return nil
	}
	if len(b) == 0 || !(b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		return errors.New("an amount is a JSON number")
	}
	if len(b) > 40 {
		return errors.New("an amount has at most 40 characters")
	}
	a, err := money.Parse(string(b))
	if err != nil {
		return fmt.Errorf("amount %s: %w", b, err)
	}
	if a.Trim().Scale() > 12 || a.Abs().GreaterThan(maxNum) {
		return fmt.Errorf("amount %s: out of range", b)
	}
	*n = Num{V: a, Set: true}
	return nil
}

// sendRequest is the signed payload of a send.
type sendRequest struct {
	RequestTimestamp string   `json:"requestTimestamp"`
	Document         document `json:"document"`
}

type document struct {
	Header        header      `json:"header"`
	DocReferences []reference `json:"docReferences"`
	Seller        seller      `json:"seller"`
	Buyer         buyer       `json:"buyer"`
	Sender        *sender     `json:"sender,omitempty"`
	DocPayment    payment     `json:"docPayment"`
	DocItems      []item      `json:"docItems"`
	DocTotals     totals      `json:"docTotals"`
	VatTotals     []vatTotal  `json:"vatTotals"`
}

type header struct {
	DocStorno            int     `json:"docStorno"`
	DocType              string  `json:"docType"`
	DocTypeName          string  `json:"docTypeName"`
	DocDate              string  `json:"docDate"`
	DocTurnoverDate      *string `json:"docTurnoverDate"`
	DocNumber            string  `json:"docNumber"`
	DocID                string  `json:"docId"`
	DocNotes             *string `json:"docNotes"`
	DocHeader            *string `json:"docHeader"`
	DocFooter            *string `json:"docFooter"`
	DocDeliveryDate      *string `json:"docDeliveryDate"`
	DocDelivery          *string `json:"docDelivery"`
	DocPeriodStartDate   *string `json:"docPeriodStartDate"`
	DocPeriodEndDate     *string `json:"docPeriodEndDate"`
	VoidReasonCode       *string `json:"voidReasonCode,omitempty"`
	VoidComment          *string `json:"voidComment,omitempty"`
	CorrectionReasonCode *string `json:"correctionReasonCode,omitempty"`
	CorrectionComment    *string `json:"correctionComment,omitempty"`
}

type reference struct {
	DocTypeRef   string  `json:"docTypeRef"`
	DocNameRef   string  `json:"docNameRef"`
	DocNumberRef string  `json:"docNumberRef"`
	DocDateRef   *string `json:"docDateRef"`
}

type address struct {
	StreetAddress string `json:"streetAddress"`
	StreetNumber  string `json:"streetNumber"`
	PostalCode    string `json:"postalCode"`
	City          string `json:"city"`
}

type seller struct {
	SellerCCode             string  `json:"sellerCCode"`
	SellerCName             string  `json:"sellerCName"`
	SellerTin               string  `json:"sellerTin"`
	SellerForeignTin        *string `json:"sellerForeignTin"`
	SellerVatNumber         *string `json:"sellerVatNumber"`
	SellerName              string  `json:"sellerName"`
	SellerAddress           address `json:"sellerAddress"`
	SellerSubsidiaryCode    *string `json:"sellerSubsidiaryCode"`
	SellerSubsidiaryName    *string `json:"sellerSubsidiaryName"`
	SellerSubsidiaryAddress *string `json:"sellerSubsidiaryAddress"`
	SellerContact           *string `json:"sellerContact"`
	SellerEmail             *string `json:"sellerEmail"`
}

type buyer struct {
	BuyerCCode             string  `json:"buyerCCode"`
	BuyerCName             string  `json:"buyerCName"`
	BuyerTin               string  `json:"buyerTin"`
	BuyerForeignTin        *string `json:"buyerForeignTin"`
	BuyerVatNumber         *string `json:"buyerVatNumber"`
	BuyerName              string  `json:"buyerName"`
	BuyerAddress           address `json:"buyerAddress"`
	BuyerSubsidiaryCode    *string `json:"buyerSubsidiaryCode"`
	BuyerSubsidiaryName    *string `json:"buyerSubsidiaryName"`
	BuyerSubsidiaryAddress *string `json:"buyerSubsidiaryAddress"`
	BuyerContact           *string `json:"buyerContact"`
	BuyerEmail             *string `json:"buyerEmail"`
}

type sender struct {
	SenderCCode             string  `json:"senderCCode"`
	SenderCName             string  `json:"senderCName"`
	SenderTin               string  `json:"senderTin"`
	SenderVatNumber         *string `json:"senderVatNumber"`
	SenderName              string  `json:"senderName"`
	SenderAddress           address `json:"senderAddress"`
	SenderSubsidiaryCode    *string `json:"senderSubsidiaryCode"`
	SenderSubsidiaryName    *string `json:"senderSubsidiaryName"`
	SenderSubsidiaryAddress *string `json:"senderSubsidiaryAddress"`
}

type payment struct {
	DocPaymentTypeCode    string  `json:"docPaymentTypeCode"`
	DocPaymentTypeDesc    string  `json:"docPaymentTypeDesc"`
	DocPaymentTypeDueDays *int    `json:"docPaymentTypeDueDays"`
	DocPaymentTypeDueDate *string `json:"docPaymentTypeDueDate"`
	DocPaymentTerms       *string `json:"docPaymentTerms"`
	DocPaymentNote        *string `json:"docPaymentNote"`
	DocCurrency           *string `json:"docCurrency"`
	DocCurrencyCode       *string `json:"docCurrencyCode"`
	DocCurrencyDate       *string `json:"docCurrencyDate"`
	DocCurrencyExchRate   Num     `json:"docCurrencyExchRate"`
}

type item struct {
	DocItemLineNo                  int     `json:"docItemLineNo"`
	DocItemSku                     *string `json:"docItemSku"`
	DocItemSenderCode              *string `json:"docItemSenderCode"`
	DocItemReceiverCode            *string `json:"docItemReceiverCode"`
	DocItemDesc                    string  `json:"docItemDesc"`
	DocItemMUnit                   *string `json:"docItemMUnit"`
	DocItemQty                     Num     `json:"docItemQty"`
	DocItemUnitOriginalPriceWoVat  Num     `json:"docItemUnitOriginalPriceWoVat"`
	DocItemUnitDiscountAmount      Num     `json:"docItemUnitDiscountAmount"`
	DocItemUnitPriceWoVat          Num     `json:"docItemUnitPriceWoVat"`
	DocItemUnitVat                 Num     `json:"docItemUnitVat"`
	DocItemVat                     Num     `json:"docItemVat"`
	DocItemVatGroup                string  `json:"docItemVatGroup"`
	DocItemTaxIndicator            string  `json:"docItemTaxIndicator"`
	DocItemTotalOriginalPriceWoVat Num     `json:"docItemTotalOriginalPriceWoVat"`
	DocItemTotalPriceWoVat         Num     `json:"docItemTotalPriceWoVat"`
	DocItemTotalVat                Num     `json:"docItemTotalVat"`
	DocItemTotalPriceWVat          Num     `json:"docItemTotalPriceWVat"`
	DocItemDomesticProduct         *string `json:"docItemDomesticProduct"`
}

type totals struct {
	DocNetAmount      Num     `json:"docNetAmount"`
	DocDiscountAmount Num     `json:"docDiscountAmount"`
	DocNetAmountDisc  Num     `json:"docNetAmountDisc"`
	DocVatAmount      Num     `json:"docVatAmount"`
	DocGrossAmount    Num     `json:"docGrossAmount"`
	DocGrossAmountR   Num     `json:"docGrossAmountR"`
	DocAvansDate      *string `json:"docAvansDate"`
	DocAvansDesc      *string `json:"docAvansDesc"`
	DocAvansAmount    Num     `json:"docAvansAmount"`
	DocFinalAmount    Num     `json:"docFinalAmount"`
}

type vatTotal struct {
	VatTaxIndicator     string  `json:"vatTaxIndicator"`
	VatTaxIndicatorNote *string `json:"vatTaxIndicatorNote"`
	VatCode             string  `json:"vatCode"`
	VatPercent          Num     `json:"vatPercent"`
	VatTaxableAmount    Num     `json:"vatTaxableAmount"`
	VatAmount           Num     `json:"vatAmount"`
	VatTotalAmount      Num     `json:"vatTotalAmount"`
}

// Storno kinds (header.docStorno, api-specification.txt:803-806).
const (
	stornoNone       = 0
	stornoVoid       = 1
	stornoCorrection = 2
)

// refSystem is the reference type whose number is an EUID of the system
// (api-specification.txt:578-586): a storno and a correction name their
// original with it.
const refSystem = "SYS"

// maxItems bounds the lines of a document the simulator reads.
const maxItems = 10000

// decodeSend parses a send payload strictly (unknown fields, trailing data
// and wrong types fail: E4013).
func decodeSend(b []byte) (*sendRequest, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("the payload is not UTF-8 text")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r sendRequest
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	if len(r.Document.DocItems) > maxItems {
		return nil, fmt.Errorf("more than %d docItems", maxItems)
	}
	return &r, nil
}

// systemReference returns the EUID a document names through a SYS
// reference, or "".
func (d *document) systemReference() string {
	for _, r := range d.DocReferences {
		if r.DocTypeRef == refSystem && r.DocNumberRef != "" {
			return r.DocNumberRef
		}
	}
	return ""
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func strp(s string) *string { return &s }

// Skopje time: every UJP timestamp and date is Skopje's
// (api-specification.txt:21).
var skopje = mustZone("Europe/Skopje")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("ujpsim: load %s: %v", name, err))
	}
	return loc
}

// timestampLayout is requestTimestamp's format, "2026-01-05T12:00:00" in
// Skopje time (api-specification.txt:21).
const timestampLayout = "2006-01-02T15:04:05"

// timestampWindow is how far a requestTimestamp may be from the server's
// clock (api-specification.txt:28-30, 790; E40122).
const timestampWindow = 5 * time.Minute

// FormatTimestamp writes t as UJP writes times: Skopje wall clock, seconds.
func FormatTimestamp(t time.Time) string { return t.In(skopje).Format(timestampLayout) }

// parseTimestamp reads a requestTimestamp: exactly the documented layout in
// Skopje time. The examples' trailing Z (api-specification.txt:1200) is
// accepted as UTC, its literal meaning; fractions of a second too.
func parseTimestamp(s string) (time.Time, error) {
	if len(s) > 40 {
		return time.Time{}, errors.New("too long")
	}
	if len(s) > 0 && s[len(s)-1] == 'Z' {
		return time.Parse(timestampLayout+".999999999", s[:len(s)-1])
	}
	return time.ParseInLocation(timestampLayout+".999999999", s, skopje)
}

// parseDate reads a date YYYY-MM-DD as the start of that Skopje day.
func parseDate(s string) (time.Time, bool) {
	t, err := time.ParseInLocation(time.DateOnly, s, skopje)
	return t, err == nil
}

// decideBy is the end of the buyer's time to decide: the end of the 10th of
// the month after the supply (docTurnoverDate, else docDate), Skopje time.
// UJP does not publish its rule; this is the service specification's.
func decideBy(d *document, received time.Time) time.Time {
	day := deref(d.Header.DocTurnoverDate)
	if day == "" {
		day = d.Header.DocDate
	}
	t, ok := parseDate(day)
	if !ok {
		t = received.In(skopje)
	}
	y, m, _ := t.Date()
	return time.Date(y, m+1, 11, 0, 0, 0, 0, skopje)
}
