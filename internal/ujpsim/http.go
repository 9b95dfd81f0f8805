package ujpsim

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Handler returns the simulator's HTTP handler: UJP's API under
// /einvoice_api and /JSONReceiver, and the admin API under /_sim (which
// requires Options.ControlToken).
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, s.withFaults(h)) }

	api("GET "+ujp.PathServerTime, s.serverTime)
	api("GET "+ujp.PathCompanies+"{tax}", s.companyLookup)
	for path, key := range ujp.CodeListPaths() {
		api("GET "+path, s.codeList(key))
	}
	api("GET "+ujp.PathDocTypeTaxIndicators+"{docType}", s.docTypeTaxIndicators)
	api("POST "+ujp.PathSend, s.signed(s.send))
	api("POST "+ujp.PathSalesCurrentStatus, s.signed(s.currentStatus(false)))
	api("POST "+ujp.PathSalesStatusHistory, s.signed(s.statusHistory))
	api("POST "+ujp.PathSalesChanges, s.signed(s.changes(false)))
	api("POST "+ujp.PathSalesPDF, s.signed(s.pdf(false)))
	api("POST "+ujp.PathSalesIDs, s.signed(s.ids(false)))
	api("POST "+ujp.PathSalesInvoicesStatus, s.signed(s.invoicesStatus))
	api("POST "+ujp.PathSalesPayloadList, s.signed(s.salesPayloadList))
	api("POST "+ujp.PathPurchaseIDs, s.signed(s.ids(true)))
	api("POST "+ujp.PathPurchaseCurrentStatus, s.signed(s.currentStatus(true)))
	api("POST "+ujp.PathPurchasePayload, s.signed(s.payload))
	api("POST "+ujp.PathPurchasePayloadList, s.signed(s.payloadList))
	api("POST "+ujp.PathPurchaseChanges, s.signed(s.changes(true)))
	api("POST "+ujp.PathPurchasePDF, s.signed(s.pdf(true)))
	api("POST "+ujp.PathAcceptReject, s.signed(s.acceptReject))
	s.adminRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, &simError{status: 404, code: "E4004", msg: "No handler found for " + r.Method + " " + r.URL.Path})
	})
	return mux
}

// withFaults applies the injected faults before a UJP call is handled. It
// reads the faults and the clock once (one query) and hands the clock on in
// the request's context.
func (s *Sim) withFaults(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		arrived := s.opts.Now() // the rate limit judges the arrival
		st, err := s.db.Reader().GetUJPSimState(ctx, lookupKey(r.Header.Get("X-EDB")))
		if err != nil {
			s.fail(w, r, s.internal("read faults", err))
			return
		}
		limited := false
		if st.RateLimit {
			user := r.Header.Get("X-EUJP-ID")
			if user == "" {
				user = r.RemoteAddr
			}
			// One slot per user in the store: the limit holds across every
			// simulator (process) sharing it.
			n, err := s.db.Writer().TakeUJPSimRateSlot(ctx, dbq.TakeUJPSimRateSlotParams{EujpID: lookupKey(user),
				NextAt: dbTime(arrived.Add(s.opts.Window)), Now: dbTime(arrived)})
			if err != nil {
				s.fail(w, r, s.internal("rate limit", err))
				return
			}
			limited = n == 0
		}
		if st.LatencyNs > 0 {
			select {
			case <-time.After(time.Duration(st.LatencyNs)):
			case <-ctx.Done():
				return
			}
		}
		switch {
		case st.Outage || st.SellerOutage:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "<html><body>503 Service Temporarily Unavailable</body></html>")
		case st.ErrorRate > 0 && rand.Float64() < st.ErrorRate:
			s.fail(w, r, &simError{status: 500, code: "E5000", msg: "Internal server error"})
		case limited:
			w.Header().Set("Retry-After", "1")
			s.fail(w, r, &simError{status: http.StatusTooManyRequests, code: ujp.CodeRateLimited, msg: "Rate limit exceeded"})
		default:
			h(w, r.WithContext(context.WithValue(ctx, callKey{}, callState{clockOffset: time.Duration(st.ClockOffsetNs),
				pendingRejects: st.RejectCount > 0 || st.SellerRejectCount > 0})))
		}
	})
}

// internal logs a failure of the store and answers UJP's E5001.
func (s *Sim) internal(op string, err error) *simError {
	s.log.Error("ujpsim: "+op, "err", err)
	return &simError{status: 500, code: "E5001", msg: "Internal error occurred while processing the request"}
}

// asSimError turns an error of the simulator's own methods into an answer.
func (s *Sim) asSimError(op string, err error) *simError {
	var se *simError
	if errors.As(err, &se) {
		return se
	}
	return s.internal(op, err)
}

func (s *Sim) createdDate(ctx context.Context) string {
	now, err := s.now(ctx)
	if err != nil {
		now = s.opts.Now() // the answer is an error already; the offset is a detail
	}
	return ujpdoc.FormatTimestamp(now)
}

// ok writes a success envelope with the given fields.
func (s *Sim) ok(w http.ResponseWriter, r *http.Request, fields map[string]any) {
	body := map[string]any{"success": true, "createdDate": s.createdDate(r.Context()), "errorStatus": nil}
	for k, v := range fields {
		body[k] = v
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Sim) fail(w http.ResponseWriter, r *http.Request, e *simError) {
	st := ujp.ErrorStatus{ErrorCode: e.code, ErrorMessage: e.msg, ErrorList: e.items}
	if e.prop != "" {
		st.ErrorPropertyMap = map[string]string{e.prop: e.msg}
		if len(st.ErrorList) == 0 {
			st.ErrorList = []ujp.ErrorItem{{ErrorCode: e.code, ErrorMessage: e.msg, Property: e.prop, Codebook: e.codebook}}
		}
	}
	for _, it := range e.items {
		if it.Property != "" {
			if st.ErrorPropertyMap == nil {
				st.ErrorPropertyMap = map[string]string{}
			}
			st.ErrorPropertyMap[it.Property] = it.ErrorCode + ": " + it.ErrorMessage
		}
	}
	writeJSON(w, e.status, map[string]any{"success": false, "createdDate": s.createdDate(r.Context()), "errorStatus": st})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serverTime is the clock requestTimestamp is judged by: the real one, not
// the advanced business clock.
func (s *Sim) serverTime(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"timestamp": ujpdoc.FormatTimestamp(s.opts.Now())})
}

func requireCaller(r *http.Request) *simError {
	if r.Header.Get("X-EUJP-ID") == "" || r.Header.Get("X-EDB") == "" {
		return &simError{status: 400, code: "E4016", msg: "Missing required request headers: X-EUJP-ID and X-EDB"}
	}
	return nil
}

func (s *Sim) companyLookup(w http.ResponseWriter, r *http.Request) {
	if e := requireCaller(r); e != nil {
		s.fail(w, r, e)
		return
	}
	tax := r.PathValue("tax")
	if tax == TaxNoAnswer {
		// The registry that never answers: hold the request until the
		// caller gives up.
		<-r.Context().Done()
		return
	}
	if tax == TaxSlowRegistry {
		select {
		case <-time.After(s.opts.SlowRegistryDelay):
		case <-r.Context().Done():
			return
		}
	}
	c, ok, err := s.company(r.Context(), tax)
	if err != nil {
		s.fail(w, r, s.internal("registry", err))
		return
	}
	if !ok {
		s.fail(w, r, &simError{status: 404, code: "E1000", msg: "Company not found", prop: "tax_number"})
		return
	}
	s.ok(w, r, map[string]any{"company": c})
}

func (s *Sim) codeList(key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if e := requireCaller(r); e != nil {
			s.fail(w, r, e)
			return
		}
		items, err := encodeCodeList(s.cb, key)
		if err != nil {
			s.fail(w, r, &simError{status: 500, code: "E5001", msg: err.Error()})
			return
		}
		s.ok(w, r, map[string]any{key: items})
	}
}

// docTypeTaxIndicators serves doc-type-x-tax-indicator/{docType}.
func (s *Sim) docTypeTaxIndicators(w http.ResponseWriter, r *http.Request) {
	if e := requireCaller(r); e != nil {
		s.fail(w, r, e)
		return
	}
	items, ok := docTypeIndicators(s.cb, r.PathValue("docType"))
	if !ok {
		s.fail(w, r, &simError{status: 404, code: "E1017", msg: "Document type not found", prop: "docTypeCode"})
		return
	}
	s.ok(w, r, map[string]any{"docTypeXTaxIndicatorList": items})
}

// call is a verified signed request.
type call struct {
	id      ujp.Identity
	payload []byte // the verified JWS payload
	r       *http.Request
	now     time.Time // the business clock when the call arrived
}

// signed verifies a signed call (headers, envelope, certificate, JWS,
// requestTimestamp) before handing it to h.
func (s *Sim) signed(h func(c *call) (map[string]any, *simError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, e := s.verify(r)
		if e == nil {
			var fields map[string]any
			fields, e = h(c)
			if e == nil {
				if raw, ok := fields["_raw"]; ok {
					writeJSON(w, http.StatusOK, raw)
					return
				}
				s.ok(w, r, fields)
				return
			}
		}
		s.fail(w, r, e)
	}
}

func (s *Sim) verify(r *http.Request) (*call, *simError) {
	ctx := r.Context()
	id := ujp.Identity{EUJPID: r.Header.Get("X-EUJP-ID"), EDB: r.Header.Get("X-EDB"), SerialNumber: r.Header.Get("X-SERIAL-NUMBER")}
	if id.EUJPID == "" || id.EDB == "" || id.SerialNumber == "" {
		return nil, &simError{status: 400, code: "E4016", msg: "Missing required request headers: X-EUJP-ID, X-EDB and X-SERIAL-NUMBER"}
	}
	if !storable(id.EUJPID) || !storable(id.EDB) || !storable(id.SerialNumber) {
		return nil, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request: X-EUJP-ID, X-EDB and X-SERIAL-NUMBER are UTF-8 text"}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil, &simError{status: 400, code: "E4011", msg: "Required request body is missing"}
	}
	var body ujp.SignedBody
	if err := json.Unmarshal(raw, &body); err != nil || body.JWS == "" {
		return nil, &simError{status: 400, code: "E4024", msg: "Invalid request body: want {requestTimestamp, jws}"}
	}
	// The replay window is judged on the real clock, not the advanced one:
	// advancing the clock is for deadlines, and callers keep signing with
	// their own clocks.
	now := s.opts.Now()
	if e := checkTimestamp(body.RequestTimestamp, now); e != nil {
		return nil, e
	}
	certs, err := s.db.Reader().ListUJPSimCertificatesBySerial(ctx, id.SerialNumber)
	if err != nil {
		return nil, s.internal("certificate", err)
	}
	var cert *dbq.UjpsimCertificate
	otherCompany := false
	for i := range certs {
		if certs[i].Edb == id.EDB {
			cert = &certs[i]
		} else {
			otherCompany = true
		}
	}
	switch {
	case cert == nil && otherCompany:
		return nil, &simError{status: 403, code: "E1013", msg: "User is not authorized to sign documents for this company"}
	case cert == nil:
		return nil, &simError{status: 401, code: "E1012", msg: "Certificate not found", prop: "X-SERIAL-NUMBER"}
	case cert.EujpID != id.EUJPID:
		return nil, &simError{status: 403, code: "E1013", msg: "User is not authorized to sign documents for this company", prop: "X-EUJP-ID"}
	}
	x, err := x509.ParseCertificate(cert.Der)
	if err != nil {
		return nil, s.internal("stored certificate", err)
	}
	switch {
	case now.After(x.NotAfter):
		return nil, &simError{status: 401, code: "E5002", msg: "Certificate has expired."}
	case now.Before(x.NotBefore):
		return nil, &simError{status: 401, code: "E5004", msg: "Certificate validation failed: not yet valid"}
	}
	// Only RS256 is accepted: an allow-list, so "none" or an HMAC keyed
	// with the public key can never pass.
	obj, err := jose.ParseSignedCompact(body.JWS, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, &simError{status: 401, code: "E5005", msg: "JWS validation failed: " + err.Error()}
	}
	if serial, ok := x5cSerial(body.JWS); ok && serial != id.SerialNumber {
		return nil, &simError{status: 401, code: "E5012", msg: "Certificate serial mismatch", prop: "X-SERIAL-NUMBER"}
	}
	pub, ok := x.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, &simError{status: 401, code: "E5004", msg: "Certificate validation failed: not an RSA key"}
	}
	payload, err := obj.Verify(pub)
	if err != nil {
		return nil, &simError{status: 401, code: "E4015", msg: "Invalid signature"}
	}
	var inner struct {
		RequestTimestamp string `json:"requestTimestamp"`
	}
	if err := json.Unmarshal(payload, &inner); err != nil {
		return nil, &simError{status: 400, code: "E40131", msg: "Badly formatted JSON in JWS"}
	}
	if e := checkTimestamp(inner.RequestTimestamp, now); e != nil {
		return nil, e
	}
	if inner.RequestTimestamp != body.RequestTimestamp {
		return nil, &simError{status: 400, code: "E4012", msg: "Request timestamp validation failed: the body's requestTimestamp differs from the signed one", prop: "requestTimestamp"}
	}
	business, err := s.now(ctx)
	if err != nil {
		return nil, s.internal("clock", err)
	}
	return &call{id: id, payload: payload, r: r, now: business}, nil
}

func checkTimestamp(ts string, now time.Time) *simError {
	t, err := ujpdoc.ParseTimestamp(ts)
	if err != nil {
		return &simError{status: 400, code: "E40121", msg: "Problem parsing requestTimestamp", prop: "requestTimestamp"}
	}
	if d := t.Sub(now); d > ujpdoc.TimestampWindow || d < -ujpdoc.TimestampWindow {
		return &simError{status: 400, code: "E40122", msg: "The requestTimestamp difference is greater than 5 minutes", prop: "requestTimestamp"}
	}
	return nil
}

func decodeInto(c *call, v any) *simError {
	dec := json.NewDecoder(bytes.NewReader(c.payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &simError{status: 400, code: "E4013", msg: "JSON schema validation failed: " + err.Error()}
	}
	return nil
}

// referenceProblem is why a storno or correction cannot replace a
// document in status, or nil when it can (01, 03, 04, 05).
func referenceProblem(status string) *ujp.ErrorItem {
	item := func(code, msg string) *ujp.ErrorItem {
		return &ujp.ErrorItem{ErrorCode: code, ErrorMessage: msg, Property: "docReferences"}
	}
	switch status {
	case ujp.StatusSent, ujp.StatusAccepted, ujp.StatusAutoAccepted, ujp.StatusRejected:
		return nil
	case ujp.StatusVoided:
		return item("E1026", "Referenced document is voided")
	case ujp.StatusCorrected:
		return item("E1028", "Referenced document is corrected")
	}
	return item("E1022", "Document status cannot be changed")
}

// movedError rolls a send back when its original was voided or corrected
// by another call between validation and the write.
type movedError struct{ item ujp.ErrorItem }

func (e *movedError) Error() string { return "ujpsim: referenced document: " + e.item.ErrorCode }

func (s *Sim) send(c *call) (map[string]any, *simError) {
	ctx := c.r.Context()
	req, err := ujpdoc.Decode(c.payload)
	if err != nil {
		return nil, &simError{status: 400, code: "E4013", msg: "JSON schema validation failed: " + err.Error()}
	}
	doc := &req.Document
	if dt := c.r.Header.Get("X-DOC-TYPE-CODE"); dt != "" && dt != doc.Header.DocType {
		return nil, &simError{status: 400, code: "E50079", msg: "Document type mismatch", prop: "X-DOC-TYPE-CODE"}
	}
	if doc.Seller.SellerTin != c.id.EDB {
		return nil, &simError{status: 403, code: "E4023", msg: "Invalid X-EDB: it is not the seller's tax number", prop: "seller.sellerTin"}
	}
	for prop, v := range map[string]string{"header.docId": doc.Header.DocID, "header.docType": doc.Header.DocType, "buyer.buyerTin": doc.Buyer.BuyerTin} {
		if !storable(v) {
			return nil, &simError{status: 400, code: "E4013", msg: "JSON schema validation failed: " + prop + " holds a NUL character", prop: prop}
		}
	}
	if err := s.sweep(ctx, c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	q := s.db.Reader()
	if euid, err := q.GetUJPSimDocumentByDocID(ctx, dbq.GetUJPSimDocumentByDocIDParams{SellerTin: doc.Seller.SellerTin, DocID: doc.Header.DocID}); err == nil {
		return nil, duplicate(euid)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return nil, s.internal("docId", err)
	}
	var items []ujp.ErrorItem
	add := func(code, prop, msg, codebook string) {
		items = append(items, ujp.ErrorItem{ErrorCode: code, ErrorMessage: msg, Property: prop, Codebook: codebook})
	}
	for _, p := range ujpdoc.Validate(doc, s.cb) {
		add(p.Code, p.Path, p.Message, p.Codebook)
	}
	// Parties against the registry, under the same name and tax number.
	parties, err := s.companies(ctx, doc.Seller.SellerTin, doc.Buyer.BuyerTin)
	if err != nil {
		return nil, s.internal("registry", err)
	}
	if co, ok := parties[doc.Seller.SellerTin]; !ok {
		add("E1000", "seller.sellerTin", "Company not found", "")
	} else if strings.TrimSpace(doc.Seller.SellerName) != co.Name {
		add("E10002", "seller.sellerName", fmt.Sprintf("An incorrect company name was provided; the registry has %q", co.Name), "")
	}
	buyerRegistered := false
	if doc.Buyer.BuyerCCode == "MK" && doc.Buyer.BuyerTin != "" {
		if co, ok := parties[doc.Buyer.BuyerTin]; !ok {
			add("E1014", "buyer.buyerTin", "Tax payer not found", "")
		} else {
			buyerRegistered = true
			if strings.TrimSpace(doc.Buyer.BuyerName) != co.Name {
				add("E10006", "buyer.buyerName", fmt.Sprintf("An incorrect company name was provided; the registry has %q", co.Name), "")
			}
		}
	}
	var original *dbq.UjpsimDocument
	if doc.Header.DocStorno != ujpdoc.StornoNone {
		ref := ujpdoc.SystemReference(doc)
		var o dbq.UjpsimDocument
		found := false
		if ref != "" && storable(ref) {
			o, err = q.GetUJPSimDocument(ctx, ref)
			switch {
			case err == nil:
				found = true
			case !errors.Is(err, sql.ErrNoRows):
				return nil, s.internal("referenced document", err)
			}
		}
		switch {
		case ref == "":
			// ujpdoc.Validate already reported the missing reference.
		case !found || o.SellerTin != doc.Seller.SellerTin:
			code := "E1021"
			if doc.Header.DocStorno == ujpdoc.StornoCorrection {
				code = "E1030"
			}
			add(code, "docReferences", "Document reference not found: "+ref, ujpdoc.CBRefDocumentTypes)
		case referenceProblem(o.Status) != nil:
			p := referenceProblem(o.Status)
			add(p.ErrorCode, p.Property, p.ErrorMessage, "")
		default:
			original = &o
			if doc.Header.DocStorno == ujpdoc.StornoVoid {
				var od ujpdoc.Request
				if json.Unmarshal(o.Payload, &od) == nil && !doc.DocTotals.DocGrossAmount.Equal(od.Document.DocTotals.DocGrossAmount.Neg()) {
					add("E1025", "docTotals.docGrossAmount", "Invalid void request: a storno negates the whole original, gross "+od.Document.DocTotals.DocGrossAmount.String(), "")
				}
			}
		}
	}
	if len(items) > 0 {
		head := items[0].ErrorCode
		for _, it := range items {
			if strings.HasPrefix(it.ErrorCode, "E1020") {
				head = "E1020" // UJP's umbrella code for totals
				break
			}
		}
		return nil, &simError{status: http.StatusUnprocessableEntity, code: head, msg: "Document validation failed", items: items}
	}

	id, err := uuid.NewV7()
	if err != nil {
		return nil, &simError{status: 500, code: "E5001", msg: "generate EUID: " + err.Error()}
	}
	now := c.now
	d := dbq.InsertUJPSimDocumentParams{Euid: id.String(), SellerTin: doc.Seller.SellerTin, DocID: doc.Header.DocID, DocType: doc.Header.DocType,
		DocStorno: int32(doc.Header.DocStorno), BuyerTin: doc.Buyer.BuyerTin, Status: ujp.StatusSent, QrLink: s.opts.QRBase + "/euid/" + id.String(),
		ReceivedAt: dbTime(now), DecideBy: dbTime(decideByFor(doc, now)), Payload: c.payload, CreatedAt: dbTime(s.opts.Now())}
	if original != nil {
		d.ReferencesEuid = original.Euid
	}
	// A forced rejection is consumed, or the document stored with its
	// history and the original's move, in one transaction: a rejection
	// is never spent on a document that is also stored, and two calls
	// with one docId store one document (the unique key), whichever
	// process they reach.
	// (A send looks for a forced rejection only when the call saw one
	// waiting as it arrived.)
	st, known := ctx.Value(callKey{}).(callState)
	lookForRejection := !known || st.pendingRejects
	var forced *simError
	var dup string
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		forced, dup = nil, ""
		if lookForRejection {
			if r, err := tx.TakeUJPSimSellerRejectSend(ctx, c.id.EDB); err == nil {
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
		if _, err := tx.InsertUJPSimDocument(ctx, d); errors.Is(err, sql.ErrNoRows) {
			// Another call stored this docId since the check above.
			dup, err = tx.GetUJPSimDocumentByDocID(ctx, dbq.GetUJPSimDocumentByDocIDParams{SellerTin: d.SellerTin, DocID: d.DocID})
			return err
		} else if err != nil {
			return err
		}
		ref := docRef{d.Euid, d.SellerTin, d.BuyerTin}
		if err := s.record(ctx, tx, ref, "", ujp.StatusSent, now, ujp.StatusChange{}); err != nil {
			return err
		}
		if original == nil {
			return nil
		}
		ch := ujp.StatusChange{}
		to := ujp.StatusCorrected
		if doc.Header.DocStorno == ujpdoc.StornoVoid {
			to = ujp.StatusVoided
			ch.VoidReasonCode = doc.Header.VoidReasonCode
			if r, ok := s.cb.Lookup(ujpdoc.CBVoidReasons, deref(doc.Header.VoidReasonCode)); ok {
				ch.VoidReason = strp(r.Name)
			}
			ch.VoidComment = doc.Header.VoidComment
		} else {
			ch.Comment = doc.Header.CorrectionComment
		}
		// The original moves from the status it has now: if a decision
		// or the deadline moved it since validation, it is read again.
		from := original.Status
		for range 3 {
			moved, err := s.move(ctx, tx, docRef{original.Euid, original.SellerTin, original.BuyerTin}, from, to, now, ch)
			if err != nil || moved {
				return err
			}
			o, err := tx.GetUJPSimDocument(ctx, original.Euid)
			if err != nil {
				return err
			}
			if p := referenceProblem(o.Status); p != nil {
				return &movedError{*p}
			}
			from = o.Status
		}
		return &movedError{ujp.ErrorItem{ErrorCode: "E1022", ErrorMessage: "Document status cannot be changed", Property: "docReferences"}}
	})
	var moved *movedError
	switch {
	case errors.As(err, &moved):
		return nil, &simError{status: http.StatusUnprocessableEntity, code: moved.item.ErrorCode, msg: "Document validation failed",
			items: []ujp.ErrorItem{moved.item}}
	case err != nil:
		return nil, s.internal("store document", err)
	case forced != nil:
		return nil, forced
	case dup != "":
		return nil, duplicate(dup)
	}
	s.log.Debug("ujpsim: document accepted", "euid", d.Euid, "docId", d.DocID, "seller", d.SellerTin)
	return map[string]any{"_raw": ujp.SendResult{EUID: d.Euid, Message: "Фактура успешно зачувана", QRLink: d.QrLink, Status: 200,
		EInvoiceUser: buyerRegistered, Timestamp: now.UTC().Format("2006-01-02T15:04:05.000Z")}}, nil
}

func duplicate(euid string) *simError {
	return &simError{status: 409, code: "E1023", msg: "Invoice already exists for that ID: " + euid, prop: "header.docId"}
}

func forcedRejection(code, msg string) *simError {
	if msg == "" {
		msg = "Document validation failed (forced by the simulator)"
	}
	return &simError{status: http.StatusUnprocessableEntity, code: code, msg: msg}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// own finds a document the caller may read: as seller for sales calls, as
// buyer for purchase calls.
func (s *Sim) own(c *call, euid string, purchase bool) (Document, *simError) {
	notFound := &simError{status: 404, code: "E4008", msg: "The requested resource could not be found", prop: "euid"}
	d, err := s.document(c.r.Context(), s.db.Reader(), euid)
	if errors.Is(err, ErrNotFound) {
		return Document{}, notFound
	}
	if err != nil {
		return Document{}, s.internal("document", err)
	}
	if (!purchase && d.SellerTin != c.id.EDB) || (purchase && d.BuyerTin != c.id.EDB) {
		return Document{}, notFound
	}
	return d, nil
}

func (s *Sim) docStatus(d *Document) ujp.DocStatus {
	var req ujpdoc.Request
	_ = json.Unmarshal(d.Payload, &req)
	h, t := req.Document.Header, req.Document.DocTotals
	return ujp.DocStatus{EUID: d.EUID, StatusCode: d.Status, StatusName: s.statusName(d.Status), DocNumber: h.DocNumber, DocDate: h.DocDate,
		DocDeliveryDate: deref(h.DocDeliveryDate), DocNetAmount: t.DocNetAmount, DocVatAmount: t.DocVatAmount, DocGrossAmountR: t.DocGrossAmountR,
		DocAvansAmount: t.DocAvansAmount, DocFinalAmount: t.DocFinalAmount, SellerTin: d.SellerTin, BuyerTin: d.BuyerTin}
}

func (s *Sim) currentStatus(purchase bool) func(c *call) (map[string]any, *simError) {
	return func(c *call) (map[string]any, *simError) {
		var req ujp.EUIDRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		if err := s.sweep(c.r.Context(), c.now); err != nil {
			return nil, s.internal("sweep", err)
		}
		d, e := s.own(c, req.EUID, purchase)
		if e != nil {
			return nil, e
		}
		return map[string]any{"docStatus": s.docStatus(&d)}, nil
	}
}

func (s *Sim) statusHistory(c *call) (map[string]any, *simError) {
	var req ujp.StatusHistoryRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	if err := s.sweep(c.r.Context(), c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	d, e := s.own(c, req.EUID, false)
	if e != nil {
		return nil, e
	}
	var from time.Time
	if req.DateFrom != nil && *req.DateFrom != "" {
		var err error
		if from, err = parseDateOrTimestamp(*req.DateFrom); err != nil {
			return nil, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request", prop: "dateFrom"}
		}
	}
	out := []ujp.StatusChange{}
	for _, h := range d.History {
		if t, _ := ujpdoc.ParseTimestamp(h.Timestamp); !t.Before(from) {
			out = append(out, h)
		}
	}
	return map[string]any{"statusHistory": out}, nil
}

func parseDateOrTimestamp(s string) (time.Time, error) {
	if t, err := time.ParseInLocation(time.DateOnly, s, ujpdoc.Skopje); err == nil {
		return t, nil
	}
	return ujpdoc.ParseTimestamp(s)
}

// endOfFeed stands for "no upper bound" in the change-feed queries.
var endOfFeed = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// changes serves the change feeds. A date (YYYY-MM-DD) asks for that Skopje
// day's changes; a timestamp asks for every change at or after it, which is
// what a poller wants.
func (s *Sim) changes(purchase bool) func(c *call) (map[string]any, *simError) {
	return func(c *call) (map[string]any, *simError) {
		var req ujp.ChangesRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		from, err := parseDateOrTimestamp(req.Date)
		if err != nil {
			return nil, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request", prop: "date"}
		}
		to := endOfFeed
		if len(req.Date) == len(time.DateOnly) {
			to = from.AddDate(0, 0, 1)
		}
		ctx := c.r.Context()
		if err := s.sweep(ctx, c.now); err != nil {
			return nil, s.internal("sweep", err)
		}
		var rows []dbq.UjpsimHistory
		if purchase {
			rows, err = s.db.Reader().UJPSimPurchaseChanges(ctx, dbq.UJPSimPurchaseChangesParams{BuyerTin: c.id.EDB, FromAt: dbTime(from), UntilAt: dbTime(to)})
		} else {
			rows, err = s.db.Reader().UJPSimSalesChanges(ctx, dbq.UJPSimSalesChangesParams{SellerTin: c.id.EDB, FromAt: dbTime(from), UntilAt: dbTime(to)})
		}
		if err != nil {
			return nil, s.internal("changes", err)
		}
		out := make([]ujp.StatusChange, 0, len(rows))
		for _, h := range rows {
			ch, err := toChange(h)
			if err != nil {
				return nil, s.internal("changes", err)
			}
			out = append(out, ch)
		}
		return map[string]any{"statusHistory": out}, nil
	}
}

func (s *Sim) ids(purchase bool) func(c *call) (map[string]any, *simError) {
	return func(c *call) (map[string]any, *simError) {
		var req ujp.DateRangeRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		from, err1 := time.ParseInLocation(time.DateOnly, req.DateFrom, ujpdoc.Skopje)
		to, err2 := time.ParseInLocation(time.DateOnly, req.DateTo, ujpdoc.Skopje)
		if err1 != nil || err2 != nil || to.Before(from) {
			return nil, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request: dateFrom, dateTo are YYYY-MM-DD, from ≤ to"}
		}
		if to.After(from.AddDate(0, 1, 0)) {
			return nil, &simError{status: 400, code: "E4014", msg: "The allowed date range is 1 month."}
		}
		to = to.AddDate(0, 0, 1)
		ctx := c.r.Context()
		var out []string
		var err error
		// EUIDs are UUIDv7: their order is their time order.
		if purchase {
			out, err = s.db.Reader().UJPSimPurchaseIDs(ctx, dbq.UJPSimPurchaseIDsParams{BuyerTin: c.id.EDB, FromAt: dbTime(from), UntilAt: dbTime(to)})
		} else {
			out, err = s.db.Reader().UJPSimSalesIDs(ctx, dbq.UJPSimSalesIDsParams{SellerTin: c.id.EDB, FromAt: dbTime(from), UntilAt: dbTime(to)})
		}
		if err != nil {
			return nil, s.internal("ids", err)
		}
		return map[string]any{"euids": out}, nil
	}
}

// invoicesStatus lists the seller's documents received in a date range
// (at most a month), each with its current status.
func (s *Sim) invoicesStatus(c *call) (map[string]any, *simError) {
	res, e := s.ids(false)(c)
	if e != nil {
		return nil, e
	}
	ctx := c.r.Context()
	if err := s.sweep(ctx, c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	out := []ujp.DocStatus{}
	for _, euid := range res["euids"].([]string) {
		d, e := s.own(c, euid, false)
		if e != nil {
			return nil, e
		}
		out = append(out, s.docStatus(&d))
	}
	return map[string]any{"invoices": out}, nil
}

// salesPayloadList answers the payloads of the caller's issued documents
// among the EUIDs asked for.
func (s *Sim) salesPayloadList(c *call) (map[string]any, *simError) {
	var req ujp.EUIDsRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	if len(req.EUIDs) == 0 || len(req.EUIDs) > maxPayloadList {
		return nil, &simError{status: 400, code: "E4010", msg: fmt.Sprintf("Invalid value type provided in request: 1 to %d euids", maxPayloadList), prop: "euids"}
	}
	out := make([]ujp.Payload, 0, len(req.EUIDs))
	for _, euid := range req.EUIDs {
		d, e := s.own(c, euid, false)
		if e != nil && e.code == "E4008" {
			continue
		}
		if e != nil {
			return nil, e
		}
		out = append(out, ujp.Payload{EUID: d.EUID, Payload: string(d.Payload)})
	}
	return map[string]any{"invoices": out}, nil
}

func (s *Sim) payload(c *call) (map[string]any, *simError) {
	var req ujp.EUIDRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	d, e := s.own(c, req.EUID, true)
	if e != nil {
		return nil, e
	}
	return map[string]any{"payload": string(d.Payload)}, nil
}

// maxPayloadList bounds the EUIDs of one payload/list call (UJP publishes
// no limit; one answer of this many documents stays a few megabytes).
const maxPayloadList = 100

// payloadList answers the payloads of the caller's received documents
// among the EUIDs asked for; others are left out, as a list read does.
func (s *Sim) payloadList(c *call) (map[string]any, *simError) {
	var req ujp.EUIDsRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	if len(req.EUIDs) == 0 || len(req.EUIDs) > maxPayloadList {
		return nil, &simError{status: 400, code: "E4010", msg: fmt.Sprintf("Invalid value type provided in request: 1 to %d euids", maxPayloadList), prop: "euids"}
	}
	out := make([]ujp.Payload, 0, len(req.EUIDs))
	for _, euid := range req.EUIDs {
		d, e := s.own(c, euid, true)
		if e != nil && e.code == "E4008" {
			continue
		}
		if e != nil {
			return nil, e
		}
		out = append(out, ujp.Payload{EUID: d.EUID, Payload: string(d.Payload)})
	}
	return map[string]any{"invoices": out}, nil
}

func (s *Sim) acceptReject(c *call) (map[string]any, *simError) {
	var req ujp.AcceptRejectRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	ctx := c.r.Context()
	if err := s.sweep(ctx, c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	if err := s.decide(ctx, c.now, req.EUID, c.id.EDB, req.IsAccepted, deref(req.RejectReasonCode), deref(req.Comment)); err != nil {
		return nil, s.asSimError("decide", err)
	}
	return map[string]any{}, nil
}

func (s *Sim) pdf(purchase bool) func(c *call) (map[string]any, *simError) {
	return func(c *call) (map[string]any, *simError) {
		var req ujp.EUIDRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		d, e := s.own(c, req.EUID, purchase)
		if e != nil {
			return nil, e
		}
		b, err := renderPDF(&d, s.statusName(d.Status))
		if err != nil {
			return nil, &simError{status: 500, code: "E5001", msg: "render PDF: " + err.Error()}
		}
		return map[string]any{"pdfBase64": base64.StdEncoding.EncodeToString(b)}, nil
	}
}

// x5cSerial reads the serial of the leaf certificate a JWS header carries in
// x5c (as the live integration sends it), without trusting it: the signature
// is verified against the registered certificate, and a different x5c only
// means the caller named the wrong certificate.
func x5cSerial(compact string) (string, bool) {
	head, _, ok := strings.Cut(compact, ".")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return "", false
	}
	var h struct {
		X5C []string `json:"x5c"`
	}
	if json.Unmarshal(b, &h) != nil || len(h.X5C) == 0 {
		return "", false
	}
	der, err := base64.StdEncoding.DecodeString(h.X5C[0])
	if err != nil {
		return "", false
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return "", false
	}
	return c.SerialNumber.String(), true
}
