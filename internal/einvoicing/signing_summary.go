package einvoicing

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// SigningSummary is what a signer is shown before signing: the payload is
// UJP's JSON in base64url, which no person reads. It is written where the
// request is created, from the object the request signs for.
type SigningSummary struct {
	CompanyName    string  `json:"companyName" doc:"The company the signature is made for."`
	Purpose        string  `json:"purpose" doc:"What the signature does, in words: issue an e-invoice, accept or reject an incoming one, or read from UJP."`
	DocumentNumber *string `json:"documentNumber" doc:"The document's number (an e-invoice of the company, or an incoming one)."`
	BuyerName      *string `json:"buyerName" doc:"The buyer of an e-invoice the company issues."`
	SellerName     *string `json:"sellerName" doc:"The seller of an incoming e-invoice the company decides on."`
	GrossTotal     *string `json:"grossTotal" doc:"The document's gross total, a decimal string, in currency."`
	Currency       *string `json:"currency" doc:"ISO 4217 code of grossTotal."`
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// documentSummary is the summary of signing e-invoice number of company,
// to buyer, for gross in currency.
func documentSummary(company, kind, number, buyer, gross, currency string) SigningSummary {
	what := "e-invoice"
	switch kind {
	case "storno":
		what = "storno"
	case "correction":
		what = "correction"
	}
	return SigningSummary{CompanyName: company, Purpose: "issue " + what + " " + number,
		DocumentNumber: strp(number), BuyerName: strp(buyer), GrossTotal: strp(gross), Currency: strp(currency)}
}

// encodeSummary is s as the row keeps it.
func encodeSummary(s SigningSummary) string {
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return string(b)
}

// decodeSummary is the row's summary; nil for a request made before
// summaries were kept.
func decodeSummary(raw string) *SigningSummary {
	if raw == "" {
		return nil
	}
	var s SigningSummary
	if json.Unmarshal([]byte(raw), &s) != nil {
		return nil
	}
	return &s
}

// summaryFor works out the summary of a request of company co for link,
// reading the object it signs for (and, for a decision, the payload, which
// says accept or reject). An object that cannot be read leaves the company
// and the purpose: the request is made all the same.
func summaryFor(ctx context.Context, tx *store.Tx, co dbq.Company, purpose string, link SigningLink, payload []byte) (SigningSummary, error) {
	s := SigningSummary{CompanyName: co.Name}
	switch link.Type {
	case LinkEInvoice:
		inv, err := tx.GetEInvoiceByID(ctx, link.ID)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return s, fmt.Errorf("signing summary: einvoice %s: %w", link.ID, err)
		}
		buyer := ""
		if doc, err := StoredDocument(inv); err == nil {
			buyer = doc.Buyer.BuyerName
		}
		return documentSummary(co.Name, inv.Kind, inv.Number, buyer, inv.TotalGross, inv.Currency), nil
	case LinkInboxDecision, LinkInboxStatus, LinkInboxPDF:
		d, err := tx.GetInboxDocument(ctx, link.ID)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return s, fmt.Errorf("signing summary: inbox document %s: %w", link.ID, err)
		}
		var seller InboxSeller
		_ = json.Unmarshal([]byte(d.Seller), &seller)
		s.DocumentNumber, s.SellerName = strp(d.Number), strp(seller.Name)
		s.GrossTotal, s.Currency = strp(d.TotalGross), strp(d.Currency)
		switch link.Type {
		case LinkInboxDecision:
			s.Purpose = "decide on incoming invoice " + d.Number
			var req ujp.AcceptRejectRequest
			if json.Unmarshal(payload, &req) == nil {
				switch {
				case req.IsAccepted:
					s.Purpose = "accept incoming invoice " + d.Number
				case req.RejectReasonCode != nil:
					s.Purpose = "reject incoming invoice " + d.Number + " (" + *req.RejectReasonCode + ")"
				default:
					s.Purpose = "reject incoming invoice " + d.Number
				}
			}
		case LinkInboxStatus:
			s.Purpose = "read from UJP the status of incoming invoice " + d.Number
		default:
			s.Purpose = "read from UJP the PDF of incoming invoice " + d.Number
		}
		return s, nil
	case LinkPDF:
		inv, err := tx.GetEInvoiceByID(ctx, link.ID)
		if err == nil {
			s.DocumentNumber, s.GrossTotal, s.Currency = strp(inv.Number), strp(inv.TotalGross), strp(inv.Currency)
			s.Purpose = "read from UJP the PDF of e-invoice " + inv.Number
			return s, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return s, fmt.Errorf("signing summary: einvoice %s: %w", link.ID, err)
		}
	case LinkPurchaseIDs, LinkPurchasePayloads, LinkPurchaseChanges:
		s.Purpose = "read from UJP the incoming invoices"
		return s, nil
	case LinkChanges:
		s.Purpose = "read from UJP the buyers' decisions on the company's e-invoices"
		return s, nil
	case LinkUJPCheck:
		s.Purpose = "check the company's access to UJP (go-live check): read a document no one issued"
	case LinkReconciliation:
		s.Purpose = "read from UJP the company's documents of a day, to reconcile them"
		if id, _, ok := strings.Cut(link.ID, "/"); ok {
			if r, err := tx.GetReconciliation(ctx, id); err == nil {
				s.Purpose = "read from UJP the company's documents of " + r.Day + ", to reconcile them"
			}
		}
		return s, nil
	}
	switch purpose {
	case PurposeDocument:
		s.Purpose = "issue a document"
	case PurposeDecision:
		s.Purpose = "decide on an incoming invoice"
	default:
		s.Purpose = "read from UJP"
	}
	return s, nil
}

// ReplacementSummary is the summary of the request replacing expired
// request r: r's, or worked out afresh for a request made before
// summaries were kept.
func ReplacementSummary(ctx context.Context, tx *store.Tx, r dbq.SigningRequest) (SigningSummary, error) {
	if s := decodeSummary(r.Summary); s != nil {
		return *s, nil
	}
	co, err := tx.GetCompany(ctx, r.CompanyID)
	if err != nil {
		return SigningSummary{}, fmt.Errorf("signing summary: company %s: %w", r.CompanyID, err)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(r.Payload)
	return summaryFor(ctx, tx, co, r.Purpose, SigningLink{Type: r.LinkType, ID: r.LinkID}, payload)
}
