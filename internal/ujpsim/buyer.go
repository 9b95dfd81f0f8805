package ujpsim

// The buyer's side of the sandbox: documents the simulator makes itself, as
// if a seller had sent them, so that a sandbox company's inbox can be tried
// without a second company and its signer — an incoming invoice from a
// fictitious supplier with a chosen transaction date, and the seller's
// storno of a document the buyer received. Both are stored like a sent
// document (status 01, history, deadline), so every purchase-side read
// sees them as it sees any other.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// TaxSupplier is the fictitious supplier whose invoices DropIncoming makes
// (docs/sandbox.md).
const TaxSupplier = "4030000000044"

// Incoming describes an invoice DropIncoming puts in a buyer's inbox.
type Incoming struct {
	// BuyerTin is the receiving company's tax number; it must be in the
	// registry (E1014 otherwise).
	BuyerTin string
	// TransactionDate (docTurnoverDate, YYYY-MM-DD) decides the deadline:
	// the 10th of the following month. Default: today (business clock).
	TransactionDate string
	// IssueDate (docDate); default TransactionDate.
	IssueDate string
	// DocID is the supplier's docId; the same DocID again answers the
	// document already made (what makes a retried drop happen once).
	// Default: a new one.
	DocID string
}

// DropIncoming stores a realistic invoice from the fictitious supplier
// (TaxSupplier) to in.BuyerTin, as if the supplier had sent it now: three
// lines at 18% and 5% VAT, totals by UJP's formulas, status 01 and the
// deadline of its transaction date. It returns the stored document.
func (s *Sim) DropIncoming(ctx context.Context, in Incoming) (Document, error) {
	now, err := s.now(ctx)
	if err != nil {
		return Document{}, err
	}
	today := now.In(ujpdoc.Skopje).Format(time.DateOnly)
	if in.TransactionDate == "" {
		in.TransactionDate = today
	}
	if in.IssueDate == "" {
		in.IssueDate = in.TransactionDate
	}
	for _, d := range []string{in.TransactionDate, in.IssueDate} {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return Document{}, badRequest("transactionDate and issueDate are dates YYYY-MM-DD")
		}
	}
	if in.DocID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return Document{}, err
		}
		in.DocID = "drop-" + id.String()
	}
	if !storable(in.DocID) || len(in.DocID) > 100 || !storable(in.BuyerTin) {
		return Document{}, badRequest("docId and buyer are text without NUL, docId at most 100 characters")
	}
	parties, err := s.companies(ctx, TaxSupplier, in.BuyerTin)
	if err != nil {
		return Document{}, err
	}
	supplier, buyer := parties[TaxSupplier], parties[in.BuyerTin]
	if buyer.TaxNumber == "" {
		return Document{}, &simError{status: 404, code: "E1014", msg: "Tax payer not found", prop: "buyerTin"}
	}
	doc, err := incomingInvoice(supplier, buyer, in, s.cb)
	if err != nil {
		return Document{}, err
	}
	return s.storeMade(ctx, now, doc, "")
}

// incomingInvoice builds the supplier's invoice with einvoice's builder, so
// its totals and codes are exactly what UJP would accept from a seller.
func incomingInvoice(supplier, buyer ujp.Company, in Incoming, cb *ujpdoc.Codebooks) (*ujpdoc.Document, error) {
	str := func(v string) *string { return &v }
	dueDays := 15
	sum := sha256.Sum256([]byte(in.DocID))
	req := einvoice.Request{
		Number:     "ТД-" + strings.ToUpper(hex.EncodeToString(sum[:4])),
		IssueDate:  in.IssueDate,
		SupplyDate: &in.TransactionDate,
		Buyer: einvoice.Party{TaxNumber: buyer.TaxNumber, VatNumber: buyer.VatNumber, Name: buyer.Name,
			Address: einvoice.PartyAddress{Street: str(buyer.Address.Street), Number: str(buyer.Address.Number),
				PostalCode: str(buyer.Address.Zip), City: str(buyer.Address.City)}},
		References: []einvoice.Reference{},
		Payment:    einvoice.Payment{TypeCode: "P12", DueDays: &dueDays, Currency: "MKD"},
		Lines: []einvoice.Line{
			{Sku: str("KM-100"), Description: "Канцелариски материјал (хартија А4, 5 пакети)", Unit: str("пак"), Quantity: "5", UnitPrice: "310.00", VatPercent: "18", TaxIndicator: "DDV-A"},
			{Sku: str("TR-1"), Description: "Транспорт и достава", Quantity: "1", UnitPrice: "1200.00", UnitDiscount: "200.00", VatPercent: "18", TaxIndicator: "DDV-A"},
			{Sku: str("KN-7"), Description: "Стручна литература", Quantity: "2", UnitPrice: "850.00", VatPercent: "5", TaxIndicator: "DDV-B"},
		},
	}
	seller := ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: supplier.TaxNumber, SellerVatNumber: supplier.VatNumber,
		SellerName: supplier.Name, SellerAddress: ujpdoc.Address{StreetAddress: supplier.Address.Street, StreetNumber: supplier.Address.Number,
			PostalCode: supplier.Address.Zip, City: supplier.Address.City}, SellerEmail: str("fakturi@dobavuvac.example.mk")}
	if c, ok := cb.Lookup(ujpdoc.CBCountries, "MK"); ok {
		seller.SellerCName = c.Name
	}
	doc, err := req.Build(seller, in.DocID, cb)
	if err != nil {
		return nil, badRequest("the incoming invoice cannot be built: " + err.Error())
	}
	return doc, nil
}

// SellerStorno voids a document as its seller would: it stores the storno
// (docStorno 1, the original's lines negated, void reason reason or the
// first of the void-reasons list, a SYS reference to the original) and
// moves the original to 07, in one transaction. Allowed from 01, 03, 04 and
// 05 (E1026 once voided by another storno, E1028 once corrected). Asking
// again for a document this method voided answers the same storno.
func (s *Sim) SellerStorno(ctx context.Context, euid, reason string) (Document, error) {
	now, err := s.now(ctx)
	if err != nil {
		return Document{}, err
	}
	if err := s.sweep(ctx, now); err != nil {
		return Document{}, err
	}
	orig, err := s.document(ctx, s.db.Reader(), euid)
	if err != nil {
		return Document{}, err
	}
	stornoID := orig.DocID + "/S"
	if prev, err := s.db.Reader().GetUJPSimDocumentByDocID(ctx, dbq.GetUJPSimDocumentByDocIDParams{SellerTin: orig.SellerTin, DocID: stornoID}); err == nil {
		return s.document(ctx, s.db.Reader(), prev)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return Document{}, err
	}
	if p := referenceProblem(orig.Status); p != nil {
		return Document{}, &simError{status: 409, code: p.ErrorCode, msg: p.ErrorMessage, prop: p.Property}
	}
	if reason == "" && len(s.cb.VoidReasons) > 0 {
		reason = s.cb.VoidReasons[0].Code
	}
	if _, ok := s.cb.Lookup(ujpdoc.CBVoidReasons, reason); !ok {
		return Document{}, &simError{status: 400, code: "E1002", msg: "Void reason not found", prop: "voidReasonCode", codebook: ujpdoc.CBVoidReasons}
	}
	var od ujpdoc.Request
	if err := json.Unmarshal(orig.Payload, &od); err != nil {
		return Document{}, fmt.Errorf("ujpsim: stored payload of %s: %w", euid, err)
	}
	comment := "Сторно од продавачот (sandbox)"
	doc, err := ujpdoc.Storno(&od.Document, orig.EUID, stornoID, od.Document.Header.DocNumber+"/S", reason, &comment,
		now.In(ujpdoc.Skopje).Format(time.DateOnly), s.cb)
	if err != nil {
		return Document{}, err
	}
	return s.storeMade(ctx, now, doc, orig.EUID)
}

// storeMade stores a document the simulator made (no signature: it stands
// for one a seller sent) with its 01 history and, for a storno, the
// original's move to 07, in one transaction. A docId the seller already
// used answers the document stored under it.
func (s *Sim) storeMade(ctx context.Context, now time.Time, doc *ujpdoc.Document, original string) (Document, error) {
	payload, err := json.Marshal(ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(s.opts.Now()), Document: *doc})
	if err != nil {
		return Document{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Document{}, err
	}
	d := dbq.InsertUJPSimDocumentParams{Euid: id.String(), SellerTin: doc.Seller.SellerTin, DocID: doc.Header.DocID, DocType: doc.Header.DocType,
		DocStorno: int32(doc.Header.DocStorno), BuyerTin: doc.Buyer.BuyerTin, Status: ujp.StatusSent, QrLink: s.opts.QRBase + "/euid/" + id.String(),
		ReceivedAt: dbTime(now), DecideBy: dbTime(decideByFor(doc, now)), ReferencesEuid: original, Payload: payload, CreatedAt: dbTime(s.opts.Now())}
	euid := d.Euid
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.InsertUJPSimDocument(ctx, d); errors.Is(err, sql.ErrNoRows) {
			euid, err = tx.GetUJPSimDocumentByDocID(ctx, dbq.GetUJPSimDocumentByDocIDParams{SellerTin: d.SellerTin, DocID: d.DocID})
			return err
		} else if err != nil {
			return err
		}
		if err := s.record(ctx, tx, docRef{d.Euid, d.SellerTin, d.BuyerTin}, "", ujp.StatusSent, now, ujp.StatusChange{}); err != nil {
			return err
		}
		if original == "" {
			return nil
		}
		o, err := tx.GetUJPSimDocument(ctx, original)
		if err != nil {
			return err
		}
		if p := referenceProblem(o.Status); p != nil {
			return &simError{status: 409, code: p.ErrorCode, msg: p.ErrorMessage, prop: p.Property}
		}
		ch := ujp.StatusChange{VoidReasonCode: doc.Header.VoidReasonCode, VoidComment: doc.Header.VoidComment}
		if r, ok := s.cb.Lookup(ujpdoc.CBVoidReasons, deref(doc.Header.VoidReasonCode)); ok {
			ch.VoidReason = strp(r.Name)
		}
		moved, err := s.move(ctx, tx, docRef{o.Euid, o.SellerTin, o.BuyerTin}, o.Status, ujp.StatusVoided, now, ch)
		if err == nil && !moved {
			err = &simError{status: 409, code: "E1022", msg: "Document status cannot be changed", prop: "docReferences"}
		}
		return err
	})
	if err != nil {
		return Document{}, err
	}
	return s.document(ctx, s.db.Reader(), euid)
}

// SendToBuyer is DropIncoming for the sandbox endpoint of the e-invoicing
// API (einvoicing.SandboxUJP): the EUID of the invoice dropped into
// buyerTin's inbox. A refusal has a UJPCode method.
func (s *Sim) SendToBuyer(ctx context.Context, buyerTin, docID, transactionDate, issueDate string) (string, error) {
	d, err := s.DropIncoming(ctx, Incoming{BuyerTin: buyerTin, DocID: docID, TransactionDate: transactionDate, IssueDate: issueDate})
	return d.EUID, err
}

// VoidBySeller is SellerStorno for the sandbox endpoint of the e-invoicing
// API (einvoicing.SandboxUJP): the EUID of the storno. A refusal has a
// UJPCode method.
func (s *Sim) VoidBySeller(ctx context.Context, euid, reason string) (string, error) {
	d, err := s.SellerStorno(ctx, euid, reason)
	return d.EUID, err
}
