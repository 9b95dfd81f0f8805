package ujpsim

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// send is POST /JSONReceiver/api/v1/sales-invoices/send
// (api-specification.txt:778-806): validation of everything, then the
// document stored in 01 with its EUID.
func (s *Sim) send(w http.ResponseWriter, c *call) (map[string]any, *simError) {
	ctx := c.r.Context()
	req, err := decodeSend(c.payload)
	if err != nil {
		return nil, &simError{status: 400, code: "E4013", msg: "JSON schema validation failed: " + err.Error()}
	}
	doc := &req.Document
	h := doc.Header
	// X-DOC-TYPE-CODE is a header of the send (api-specification.txt:787).
	switch dt := c.r.Header.Get("X-DOC-TYPE-CODE"); {
	case dt == "":
		return nil, &simError{status: 400, code: "E4016", msg: "Missing required request headers: X-DOC-TYPE-CODE"}
	case dt != h.DocType:
		return nil, &simError{status: 400, code: "E50079", msg: "Document type mismatch: X-DOC-TYPE-CODE is not header.docType", prop: "X-DOC-TYPE-CODE"}
	}
	// X-EDB is the company performing the supply (api-specification.txt:108).
	if doc.Seller.SellerTin != c.edb {
		return nil, &simError{status: 400, code: "E4020", msg: "Request header mismatch: X-EDB is not seller.sellerTin", prop: "seller.sellerTin"}
	}
	for prop, v := range map[string]string{"header.docId": h.DocID, "header.docType": h.DocType, "buyer.buyerTin": doc.Buyer.BuyerTin,
		"header.docNumber": h.DocNumber} {
		if !storable(v) {
			return nil, &simError{status: 400, code: "E4013", msg: "JSON schema validation failed: " + prop + " is not text", prop: prop}
		}
	}
	if err := s.sweep(ctx, c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	q := s.db.Reader()
	if _, err := q.GetUJPSimDocumentByDocID(ctx, dbq.GetUJPSimDocumentByDocIDParams{SellerTin: doc.Seller.SellerTin, DocID: h.DocID}); err == nil {
		return nil, duplicate()
	} else if !errors.Is(err, sql.ErrNoRows) {
		return nil, s.internal("docId", err)
	}

	reg, err := s.companies(ctx, doc.Seller.SellerTin, doc.Buyer.BuyerTin)
	if err != nil {
		return nil, s.internal("registry", err)
	}
	if doc.Sender != nil && doc.Sender.SenderTin != "" {
		if co, ok, err := s.company(ctx, doc.Sender.SenderTin); err != nil {
			return nil, s.internal("registry", err)
		} else if ok {
			reg[co.TaxNumber] = co
		}
	}
	cl := s.listsFor(ctx)
	items := validate(doc, cl, reg)
	original, more, err := s.checkReference(ctx, doc)
	if err != nil {
		return nil, s.internal("referenced document", err)
	}
	items = append(items, more...)
	if len(items) > 0 {
		return nil, invalid(items)
	}

	id, err := uuid.NewV7()
	if err != nil {
		return nil, s.internal("EUID", err)
	}
	now := c.now
	row := dbq.InsertUJPSimDocumentParams{Euid: id.String(), SellerTin: doc.Seller.SellerTin, DocID: h.DocID, DocType: h.DocType,
		DocStorno: int32(h.DocStorno), BuyerTin: doc.Buyer.BuyerTin, Status: statusSent, QrLink: s.opts.QRBase + "/euid/" + id.String(),
		ReceivedAt: dbTime(now), DecideBy: dbTime(decideBy(doc, now)), Payload: c.payload, CreatedAt: dbTime(s.opts.Now())}
	if original != nil {
		row.ReferencesEuid = original.Euid
	}
	st, known := stateOf(ctx)
	lookForRejection := !known || st.pendingRejects
	var forced *simError
	dup := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		forced, dup = nil, false
		if lookForRejection {
			if r, err := tx.TakeUJPSimSellerRejectSend(ctx, c.edb); err == nil {
				forced = forcedRejection(r.RejectCode, r.RejectMessage)
				return nil
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if r, err := tx.TakeUJPSimRejectSend(ctx); err == nil {
				forced = forcedRejection(r.RejectCode, r.RejectMessage)
				return nil
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		return s.store(ctx, tx, row, doc, original, &dup)
	})
	var moved *movedError
	switch {
	case errors.As(err, &moved):
		return nil, invalid([]ErrorItem{moved.item})
	case err != nil:
		return nil, s.internal("store document", err)
	case forced != nil:
		return nil, forced
	case dup:
		return nil, duplicate()
	}
	s.log.Debug("ujpsim: document accepted", "euid", row.Euid, "docId", row.DocID, "seller", row.SellerTin)

	// The lost-response faults: the document is stored, the answer never
	// arrives.
	if known {
		lost, err := s.takeCallFault(ctx, c.edb, c.r.URL.Path, s.callFaultOf(ctx, c.edb), FaultLost, FaultLostHang)
		if err != nil {
			return nil, s.internal("call fault", err)
		}
		if lost != nil {
			if lost.Kind == FaultLostHang {
				<-ctx.Done()
				return nil, nil
			}
			panic(http.ErrAbortHandler) // the server drops the connection
		}
	}
	_, buyerKnown := reg[doc.Buyer.BuyerTin]
	writeJSON(w, http.StatusOK, sendResult{EUID: row.Euid, Message: "Фактура успешно зачувана", QRLink: row.QrLink, Status: 200,
		EInvoiceUser: buyerKnown, Timestamp: now.UTC().Format("2006-01-02T15:04:05.000Z")})
	return nil, nil
}

// callFaultOf reads the caller's call fault again (after the store).
func (s *Sim) callFaultOf(ctx context.Context, edb string) callFaultView {
	st, err := s.db.Reader().GetUJPSimState(ctx, lookupKey(edb))
	if err != nil {
		return callFaultView{}
	}
	return callFaultView{st.CallCount, st.CallPath, st.CallKind}
}

// store writes a validated document, its 01 history and, for a correction,
// the original's move to 09, in tx. *dup is set when another call stored
// the docId first.
func (s *Sim) store(ctx context.Context, tx *store.Tx, row dbq.InsertUJPSimDocumentParams, doc *document, original *dbq.UjpsimDocument, dup *bool) error {
	if original != nil {
		// First the original's row lock: two replacements of one
		// original (one at each simulator) are stored one after the
		// other, and the second reads what the first committed
		// (PostgreSQL reads committed data per statement).
		if _, err := tx.LockUJPSimDocument(ctx, original.Euid); err != nil {
			return err
		}
	}
	if _, err := tx.InsertUJPSimDocument(ctx, row); errors.Is(err, sql.ErrNoRows) {
		*dup = true
		return nil
	} else if err != nil {
		return err
	}
	if err := s.record(ctx, tx, docRef{row.Euid, row.SellerTin, row.BuyerTin}, "", statusSent, row.ReceivedAt, StatusChange{}); err != nil {
		return err
	}
	if original == nil {
		return nil
	}
	// Read the original again inside the transaction: a storno or
	// correction that reached it meanwhile wins.
	o, err := tx.GetUJPSimDocument(ctx, original.Euid)
	if err != nil {
		return err
	}
	others, err := tx.UJPSimStornosOf(ctx, o.Euid)
	if err != nil {
		return err
	}
	for _, x := range others {
		if x.Euid != row.Euid && x.DocStorno == stornoVoid && x.Status == statusSent {
			return &movedError{ErrorItem{ErrorCode: "E1022", ErrorMessage: "Document already has been refrenced: a storno awaits the buyer", Property: "docReferences"}}
		}
	}
	if p := referenceProblem(o.Status, doc.Header.DocStorno); p != nil {
		return &movedError{*p}
	}
	if doc.Header.DocStorno != stornoCorrection {
		return nil // a storno voids its original when the buyer confirms it
	}
	moved, err := s.move(ctx, tx, refOf(o), o.Status, statusCorrected, row.ReceivedAt, StatusChange{Comment: doc.Header.CorrectionComment})
	if err != nil {
		return err
	}
	if !moved {
		// Moved meanwhile (the lock makes this a defence only): report
		// what it is now.
		if now, err := tx.GetUJPSimDocument(ctx, o.Euid); err == nil {
			if p := referenceProblem(now.Status, doc.Header.DocStorno); p != nil {
				return &movedError{*p}
			}
		}
		return &movedError{ErrorItem{ErrorCode: "E1022", ErrorMessage: "Document status cannot be changed", Property: "docReferences"}}
	}
	return nil
}

// referenceProblem is why a storno or correction cannot reference an
// original in status, or nil. A storno is accepted only for an original
// still in 01 (error-codes.txt:82, E1016 "Document is not saved as NEW.
// Cannot be cancelled."); a correction for one in 01, 03, 04 or 05.
func referenceProblem(status string, storno int) *ErrorItem {
	item := func(code, msg string) *ErrorItem {
		return &ErrorItem{ErrorCode: code, ErrorMessage: msg, Property: "docReferences"}
	}
	switch status {
	case statusVoided:
		return item("E1026", "Referenced document is voided")
	case statusCorrected:
		return item("E1028", "Referenced document is corrected")
	case statusSent:
		return nil
	case statusAccepted, statusAutoAccepted, statusRejected:
		if storno == stornoVoid {
			return item("E1016", "Document is not saved as NEW. Cannot be cancelled.")
		}
		return nil
	}
	return item("E1022", "Document status cannot be changed")
}

// checkReference finds the original of a storno or correction and reports
// what keeps it from being referenced.
func (s *Sim) checkReference(ctx context.Context, doc *document) (*dbq.UjpsimDocument, []ErrorItem, error) {
	if doc.Header.DocStorno != stornoVoid && doc.Header.DocStorno != stornoCorrection {
		return nil, nil, nil
	}
	ref := doc.systemReference()
	if ref == "" {
		return nil, nil, nil // reported by validate (E1024, E1027)
	}
	notFound := []ErrorItem{{ErrorCode: "E1021", ErrorMessage: "Document reference not found: " + ref, Property: "docReferences"}}
	if doc.Header.DocStorno == stornoCorrection {
		notFound[0] = ErrorItem{ErrorCode: "E1030", ErrorMessage: "Correction documents must reference an existing document: " + ref, Property: "docReferences"}
	}
	if !storable(ref) {
		return nil, notFound, nil
	}
	o, err := s.db.Reader().GetUJPSimDocument(ctx, ref)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if o.SellerTin != doc.Seller.SellerTin {
		return nil, notFound, nil
	}
	if p := referenceProblem(o.Status, doc.Header.DocStorno); p != nil {
		return nil, []ErrorItem{*p}, nil
	}
	others, err := s.db.Reader().UJPSimStornosOf(ctx, o.Euid)
	if err != nil {
		return nil, nil, err
	}
	for _, x := range others {
		if x.DocStorno == stornoVoid && x.Status == statusSent {
			return nil, []ErrorItem{{ErrorCode: "E1022", ErrorMessage: "Document already has been refrenced: a storno awaits the buyer", Property: "docReferences"}}, nil
		}
	}
	if o.DocStorno == stornoVoid {
		return nil, []ErrorItem{{ErrorCode: "E1025", ErrorMessage: "Invalid void request: a storno is not voided or corrected", Property: "docReferences"}}, nil
	}
	if doc.Header.DocStorno == stornoVoid {
		var od sendRequest
		if json.Unmarshal(o.Payload, &od) == nil {
			want := od.Document.DocTotals.DocGrossAmount.V.Neg()
			if !doc.DocTotals.DocGrossAmount.V.Equal(want) {
				return nil, []ErrorItem{{ErrorCode: "E1025", Property: "docTotals.docGrossAmount",
					ErrorMessage: fmt.Sprintf("Invalid void request: a storno negates the whole original, docGrossAmount %s", want)}}, nil
			}
		}
	}
	return &o, nil, nil
}

// movedError rolls a send back when its original changed between the
// checks and the write.
type movedError struct{ item ErrorItem }

func (e *movedError) Error() string { return "ujpsim: referenced document: " + e.item.ErrorCode }

// invalid is the answer to a document that fails validation: every problem
// in errorList, the head code E1020 when any is a totals problem
// (error-codes.txt:86-89), else the first problem's.
func invalid(items []ErrorItem) *simError {
	head, msg := items[0].ErrorCode, items[0].ErrorMessage
	for _, it := range items {
		if strings.HasPrefix(it.ErrorCode, "E1020") {
			head, msg = "E1020", "Invalid calculated totals"
			break
		}
	}
	return &simError{status: http.StatusBadRequest, code: head, msg: msg, items: items}
}

// duplicate is E1023 with the reference's text (error-codes.txt:93) and
// nothing else: no EUID anywhere in the answer.
func duplicate() *simError {
	return &simError{status: http.StatusConflict, code: "E1023", msg: "Invoice already exists for that ID", prop: "header.docId"}
}

func forcedRejection(code, msg string) *simError {
	if msg == "" {
		msg = "Document validation failed (forced by the simulator)"
	}
	return &simError{status: http.StatusUnprocessableEntity, code: code, msg: msg}
}
