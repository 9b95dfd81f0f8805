package ujpsim

// The buyer's side of the sandbox: documents the simulator makes itself, as
// if a seller had sent them, so that a sandbox company's inbox can be tried
// without a second company and its signer — an invoice from a fictitious
// supplier, and the seller's storno of a document the buyer received. The
// supplier is a registered user with a certificate of its own, and every
// document made here passes the simulator's own validation before it is
// stored like a sent one (status 01, history, deadline).

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// TaxSupplier is the fictitious supplier whose invoices DropIncoming makes.
const TaxSupplier = "4030000000044"

// SupplierEUJPID is the fictitious supplier's user.
const SupplierEUJPID = "ujpsim-supplier"

// Incoming describes an invoice DropIncoming puts in a buyer's inbox.
type Incoming struct {
	// BuyerTin is the receiving company's tax number; it must be in the
	// registry (E1014 otherwise).
	BuyerTin string
	// TransactionDate (docTurnoverDate, YYYY-MM-DD) decides the deadline:
	// the 10th of the following month. Default: today (business clock).
	TransactionDate string
	// IssueDate (docDate); default TransactionDate. It may not be before
	// the transaction date (E50072).
	IssueDate string
	// DocID is the supplier's docId; the same DocID again answers the
	// document already made. Default: a new one.
	DocID string
}

// supplierOnce registers the fictitious supplier (user and certificate)
// once per simulator; the registration is idempotent across simulators.
type supplierOnce struct {
	once sync.Once
	err  error
}

func (s *Sim) ensureSupplier(ctx context.Context) error {
	so := &s.supplier
	so.once.Do(func() {
		signer, err := NewSandboxSigner(SupplierEUJPID, TaxSupplier)
		if err == nil {
			_, err = s.RegisterCertificate(ctx, SupplierEUJPID, TaxSupplier, signer.Cert.Raw)
		}
		so.err = err
	})
	return so.err
}

// DropIncoming stores an invoice from the fictitious supplier (TaxSupplier)
// to in.BuyerTin, as if the supplier had sent it now: three lines at 18%
// and 5% VAT, totals by the formulas, status 01 and the deadline of its
// transaction date.
func (s *Sim) DropIncoming(ctx context.Context, in Incoming) (Document, error) {
	now, err := s.now(ctx)
	if err != nil {
		return Document{}, err
	}
	if in.TransactionDate == "" {
		in.TransactionDate = now.In(skopje).Format(time.DateOnly)
	}
	if in.IssueDate == "" {
		in.IssueDate = in.TransactionDate
	}
	for _, d := range []string{in.TransactionDate, in.IssueDate} {
		if _, ok := parseDate(d); !ok {
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
	if err := s.ensureSupplier(ctx); err != nil {
		return Document{}, fmt.Errorf("ujpsim: the fictitious supplier: %w", err)
	}
	parties, err := s.companies(ctx, TaxSupplier, in.BuyerTin)
	if err != nil {
		return Document{}, err
	}
	sup, ok1 := parties[TaxSupplier]
	b, ok2 := parties[in.BuyerTin]
	if !ok1 || !ok2 {
		return Document{}, &simError{status: 404, code: "E1014", msg: "Tax payer not found", prop: "buyerTin"}
	}
	doc := s.madeInvoice(sup, b, in.DocID, "ТД-", in.IssueDate, in.TransactionDate, "fakturi@dobavuvac.example.mk")
	return s.storeMade(ctx, now, doc, nil, parties)
}

// Portal describes an invoice IssuedInPortal stores.
type Portal struct {
	// SellerTin is the issuing company's tax number; it must be in the
	// registry (E1014 otherwise).
	SellerTin string
	// BuyerTin is the buyer's; default TaxBuyer (TaxSupplier when the
	// seller is TaxBuyer).
	BuyerTin string
	// DocID is the seller's docId; the same DocID again answers the
	// document already stored. Default: a new one.
	DocID string
	// IssueDate (docDate, and the transaction date); default today
	// (business clock).
	IssueDate string
}

// IssuedInPortal stores an invoice of p.SellerTin as if the seller had
// issued it in UJP's portal (or with software other than the service's)
// now: the same three lines as DropIncoming's, validated like a send, in
// status 01 with its deadline. The service learns of it only from UJP's
// lists (sales-invoice/ids, invoices-status, payload/list).
func (s *Sim) IssuedInPortal(ctx context.Context, p Portal) (Document, error) {
	now, err := s.now(ctx)
	if err != nil {
		return Document{}, err
	}
	if p.IssueDate == "" {
		p.IssueDate = now.In(skopje).Format(time.DateOnly)
	}
	if _, ok := parseDate(p.IssueDate); !ok {
		return Document{}, badRequest("issueDate is a date YYYY-MM-DD")
	}
	if p.BuyerTin == "" {
		p.BuyerTin = TaxBuyer
		if p.SellerTin == TaxBuyer {
			p.BuyerTin = TaxSupplier
		}
	}
	if p.DocID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return Document{}, err
		}
		p.DocID = "portal-" + id.String()
	}
	if !storable(p.DocID) || len(p.DocID) > 100 || !storable(p.SellerTin) || !storable(p.BuyerTin) {
		return Document{}, badRequest("docId, seller and buyer are text without NUL, docId at most 100 characters")
	}
	parties, err := s.companies(ctx, p.SellerTin, p.BuyerTin)
	if err != nil {
		return Document{}, err
	}
	sel, ok := parties[p.SellerTin]
	if !ok {
		return Document{}, &simError{status: 404, code: "E1014", msg: "Tax payer not found", prop: "sellerTin"}
	}
	b, ok := parties[p.BuyerTin]
	if !ok {
		return Document{}, &simError{status: 404, code: "E1014", msg: "Tax payer not found", prop: "buyerTin"}
	}
	doc := s.madeInvoice(sel, b, p.DocID, "ПОРТАЛ-", p.IssueDate, p.IssueDate, "")
	return s.storeMade(ctx, now, doc, nil, parties)
}

// LoseDocument deletes a stored document with its history, as if UJP had
// lost it: its lists, reads and feeds no longer show it, and its docId is
// free again. A document the simulator does not hold is ErrNotFound.
func (s *Sim) LoseDocument(ctx context.Context, euid string) error {
	if !storable(euid) {
		return errNotFound()
	}
	var n int64
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteUJPSimHistoryOf(ctx, euid); err != nil {
			return err
		}
		var err error
		n, err = tx.DeleteUJPSimDocument(ctx, euid)
		return err
	})
	if err != nil {
		return fmt.Errorf("ujpsim: lose %s: %w", euid, err)
	}
	if n == 0 {
		return errNotFound()
	}
	return nil
}

func countryName(cl *codeLists, code string) string {
	c, _ := cl.country(code)
	return c.Name
}

// madeInvoice is an invoice of sup to b that the simulator makes itself:
// three lines at 18% and 5% VAT, numbered prefix + a hash of docID.
func (s *Sim) madeInvoice(sup, b Company, docID, prefix, issueDate, transactionDate, email string) *document {
	sum := sha256.Sum256([]byte(docID))
	var mail *string
	if email != "" {
		mail = strp(email)
	}
	pt, _ := s.lists.paymentType("P12")
	dt, _ := s.lists.docType("100")
	cur, _ := s.lists.currency("MKD")
	due := 15
	addr := func(c Company) address {
		return address{StreetAddress: c.Address.Street, StreetNumber: c.Address.Number, PostalCode: c.Address.Zip, City: c.Address.City}
	}
	line := func(no int, sku, desc, unit, qty, price, discount, group, indicator string) item {
		it := item{DocItemLineNo: no, DocItemSku: strp(sku), DocItemDesc: desc, DocItemQty: N(qty), DocItemUnitOriginalPriceWoVat: N(price),
			DocItemUnitDiscountAmount: N(discount), DocItemVatGroup: group, DocItemTaxIndicator: indicator}
		if unit != "" {
			it.DocItemMUnit = strp(unit)
		}
		return it
	}
	d := &document{
		Header: header{DocType: dt.Code, DocTypeName: dt.Name, DocDate: issueDate, DocTurnoverDate: strp(transactionDate),
			DocNumber: prefix + strings.ToUpper(hex.EncodeToString(sum[:4])), DocID: docID},
		DocReferences: []reference{},
		Seller: seller{SellerCCode: "MK", SellerCName: countryName(s.lists, "MK"), SellerTin: sup.TaxNumber, SellerVatNumber: sup.VatNumber,
			SellerName: sup.Name, SellerAddress: addr(sup), SellerEmail: mail},
		Buyer: buyer{BuyerCCode: "MK", BuyerCName: countryName(s.lists, "MK"), BuyerTin: b.TaxNumber, BuyerVatNumber: b.VatNumber,
			BuyerName: b.Name, BuyerAddress: addr(b)},
		DocPayment: payment{DocPaymentTypeCode: pt.Code, DocPaymentTypeDesc: pt.Description, DocPaymentTypeDueDays: &due,
			DocCurrency: strp(cur.Name), DocCurrencyCode: strp(cur.Code)},
		DocItems: []item{
			line(1, "KM-100", "Канцелариски материјал (хартија А4, 5 пакети)", "пак", "5", "310.00", "0", "DDV-A", "DDV-A"),
			line(2, "TR-1", "Транспорт и достава", "", "1", "1200.00", "200.00", "DDV-A", "DDV-A"),
			line(3, "KN-7", "Стручна литература", "", "2", "850.00", "0", "DDV-B", "DDV-B"),
		},
	}
	compute(d, s.lists)
	return d
}

// SellerStorno voids a document as its seller would: it stores the storno
// (docStorno 1, the original's lines negated, void reason reason or the
// first of the void-reasons list, a SYS reference to the original) in 01.
// As for any storno, the original moves to 07 when the buyer accepts the
// storno (or it is auto-accepted), and only an original in 01 can be
// voided (E1016). Asking again for a document this method voided answers
// the same storno.
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
	if reason == "" && len(s.lists.VoidReasons) > 0 {
		reason = s.lists.VoidReasons[0].Code
	}
	var od sendRequest
	if err := json.Unmarshal(orig.Payload, &od); err != nil {
		return Document{}, fmt.Errorf("ujpsim: stored payload of %s: %w", euid, err)
	}
	d := od.Document
	d.DocItems = append([]item(nil), od.Document.DocItems...)
	for i := range d.DocItems {
		d.DocItems[i].DocItemQty = num(d.DocItems[i].DocItemQty.V.Neg())
	}
	d.DocTotals = totals{DocAvansAmount: num(od.Document.DocTotals.DocAvansAmount.V.Neg())}
	d.Header.DocStorno = stornoVoid
	d.Header.DocID, d.Header.DocNumber = stornoID, od.Document.Header.DocNumber+"/S"
	d.Header.DocDate = now.In(skopje).Format(time.DateOnly)
	d.Header.DocDeliveryDate = nil
	if t := deref(d.Header.DocTurnoverDate); t > d.Header.DocDate {
		d.Header.DocTurnoverDate = strp(d.Header.DocDate)
	}
	d.Header.VoidReasonCode, d.Header.VoidComment = strp(reason), strp("Сторно од продавачот (sandbox)")
	d.Header.CorrectionReasonCode, d.Header.CorrectionComment = nil, nil
	sys, _ := s.lists.refType(refSystem)
	d.DocReferences = []reference{{DocTypeRef: sys.Code, DocNameRef: sys.Name, DocNumberRef: orig.EUID, DocDateRef: strp(od.Document.Header.DocDate)}}
	if od.Document.Header.DocDate > d.Header.DocDate {
		d.DocReferences[0].DocDateRef = strp(d.Header.DocDate)
	}
	compute(&d, s.lists)
	parties, err := s.companies(ctx, d.Seller.SellerTin, d.Buyer.BuyerTin)
	if err != nil {
		return Document{}, err
	}
	row, err := s.db.Reader().GetUJPSimDocument(ctx, orig.EUID)
	if err != nil {
		return Document{}, err
	}
	return s.storeMade(ctx, now, &d, &row, parties)
}

// storeMade validates a document the simulator made, as a send is
// validated, and stores it with its 01 history. A docId the seller already
// used answers the document stored under it.
func (s *Sim) storeMade(ctx context.Context, now time.Time, doc *document, original *dbq.UjpsimDocument, reg registry) (Document, error) {
	payload, err := json.Marshal(sendRequest{RequestTimestamp: FormatTimestamp(s.opts.Now()), Document: *doc})
	if err != nil {
		return Document{}, err
	}
	if prev, err := s.db.Reader().GetUJPSimDocumentByDocID(ctx, dbq.GetUJPSimDocumentByDocIDParams{SellerTin: doc.Seller.SellerTin, DocID: doc.Header.DocID}); err == nil {
		return s.document(ctx, s.db.Reader(), prev)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return Document{}, err
	}
	// What is stored is what a seller would have sent: read it back and
	// validate it like a send.
	back, err := decodeSend(payload)
	if err != nil {
		return Document{}, fmt.Errorf("ujpsim: a made document does not decode: %w", err)
	}
	items := validate(&back.Document, s.lists, reg)
	_, more, err := s.checkReference(ctx, &back.Document)
	if err != nil {
		return Document{}, err
	}
	if items = append(items, more...); len(items) > 0 {
		return Document{}, invalid(items)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Document{}, err
	}
	row := dbq.InsertUJPSimDocumentParams{Euid: id.String(), SellerTin: doc.Seller.SellerTin, DocID: doc.Header.DocID, DocType: doc.Header.DocType,
		DocStorno: int32(doc.Header.DocStorno), BuyerTin: doc.Buyer.BuyerTin, Status: statusSent, QrLink: s.opts.QRBase + "/euid/" + id.String(),
		ReceivedAt: dbTime(now), DecideBy: dbTime(decideBy(doc, now)), Payload: payload, CreatedAt: dbTime(s.opts.Now())}
	if original != nil {
		row.ReferencesEuid = original.Euid
	}
	dup := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return s.store(ctx, tx, row, doc, original, &dup) })
	var moved *movedError
	switch {
	case errors.As(err, &moved):
		return Document{}, invalid([]ErrorItem{moved.item})
	case err != nil:
		return Document{}, err
	}
	euid := row.Euid
	if dup {
		prev, err := s.db.Reader().GetUJPSimDocumentByDocID(ctx, dbq.GetUJPSimDocumentByDocIDParams{SellerTin: row.SellerTin, DocID: row.DocID})
		if err != nil {
			return Document{}, err
		}
		euid = prev
	}
	return s.document(ctx, s.db.Reader(), euid)
}

// SendToBuyer is DropIncoming for the sandbox endpoint of the e-invoicing
// API: the EUID of the invoice dropped into buyerTin's inbox. A refusal has
// a UJPCode method.
func (s *Sim) SendToBuyer(ctx context.Context, buyerTin, docID, transactionDate, issueDate string) (string, error) {
	d, err := s.DropIncoming(ctx, Incoming{BuyerTin: buyerTin, DocID: docID, TransactionDate: transactionDate, IssueDate: issueDate})
	return d.EUID, err
}

// VoidBySeller is SellerStorno for the sandbox endpoint of the e-invoicing
// API: the EUID of the storno. A refusal has a UJPCode method.
func (s *Sim) VoidBySeller(ctx context.Context, euid, reason string) (string, error) {
	d, err := s.SellerStorno(ctx, euid, reason)
	return d.EUID, err
}
