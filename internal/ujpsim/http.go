package ujpsim

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
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
	"golang.org/x/time/rate"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/ujp"
)

// Handler returns the simulator's HTTP handler: UJP's API under
// /einvoice_api and /JSONReceiver, and the admin API under /_sim.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, s.withFaults(h)) }

	api("GET "+ujp.PathServerTime, s.serverTime)
	api("GET "+ujp.PathCompanies+"{tax}", s.companyLookup)
	for path, key := range ujp.CodeListPaths() {
		api("GET "+path, s.codeList(key))
	}
	api("POST "+ujp.PathSend, s.signed(s.send))
	api("POST "+ujp.PathSalesCurrentStatus, s.signed(s.currentStatus(false)))
	api("POST "+ujp.PathSalesStatusHistory, s.signed(s.statusHistory))
	api("POST "+ujp.PathSalesChanges, s.signed(s.changes(false)))
	api("POST "+ujp.PathSalesPDF, s.signed(s.pdf(false)))
	api("POST "+ujp.PathSalesIDs, s.signed(s.ids(false)))
	api("POST "+ujp.PathPurchaseIDs, s.signed(s.ids(true)))
	api("POST "+ujp.PathPurchaseCurrentStatus, s.signed(s.currentStatus(true)))
	api("POST "+ujp.PathPurchasePayload, s.signed(s.payload))
	api("POST "+ujp.PathPurchaseChanges, s.signed(s.changes(true)))
	api("POST "+ujp.PathPurchasePDF, s.signed(s.pdf(true)))
	api("POST "+ujp.PathAcceptReject, s.signed(s.acceptReject))
	s.adminRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, &simError{status: 404, code: "E4004", msg: "No handler found for " + r.Method + " " + r.URL.Path})
	})
	return mux
}

// withFaults applies the injected faults before a UJP call is handled.
func (s *Sim) withFaults(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		f := s.faults
		limited := false
		if f.RateLimit {
			user := r.Header.Get("X-EUJP-ID")
			if user == "" {
				user = r.RemoteAddr
			}
			l, ok := s.limiters[user]
			if !ok {
				l = rate.NewLimiter(rate.Every(time.Second), 1)
				s.limiters[user] = l
			}
			limited = !l.AllowN(time.Now(), 1)
		}
		s.mu.Unlock()
		if f.Latency > 0 {
			select {
			case <-time.After(f.Latency):
			case <-r.Context().Done():
				return
			}
		}
		switch {
		case f.Outage || f.OutageSellers[r.Header.Get("X-EDB")]:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "<html><body>503 Service Temporarily Unavailable</body></html>")
		case f.ErrorRate > 0 && rand.Float64() < f.ErrorRate:
			s.fail(w, &simError{status: 500, code: "E5000", msg: "Internal server error"})
		case limited:
			w.Header().Set("Retry-After", "1")
			s.fail(w, &simError{status: http.StatusTooManyRequests, code: ujp.CodeRateLimited, msg: "Rate limit exceeded"})
		default:
			h(w, r)
		}
	})
}

func (s *Sim) createdDate() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ujpdoc.FormatTimestamp(s.now())
}

// ok writes a success envelope with the given fields.
func (s *Sim) ok(w http.ResponseWriter, fields map[string]any) {
	body := map[string]any{"success": true, "createdDate": s.createdDate(), "errorStatus": nil}
	for k, v := range fields {
		body[k] = v
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Sim) fail(w http.ResponseWriter, e *simError) {
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
	writeJSON(w, e.status, map[string]any{"success": false, "createdDate": s.createdDate(), "errorStatus": st})
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
		s.fail(w, e)
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
	s.mu.Lock()
	c, ok := s.company(tax)
	s.mu.Unlock()
	if !ok {
		s.fail(w, &simError{status: 404, code: "E1000", msg: "Company not found", prop: "tax_number"})
		return
	}
	s.ok(w, map[string]any{"company": c})
}

func (s *Sim) codeList(key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if e := requireCaller(r); e != nil {
			s.fail(w, e)
			return
		}
		items, err := ujp.EncodeCodeList(s.cb, key)
		if err != nil {
			s.fail(w, &simError{status: 500, code: "E5001", msg: err.Error()})
			return
		}
		s.ok(w, map[string]any{key: items})
	}
}

// call is a verified signed request.
type call struct {
	id      ujp.Identity
	payload []byte // the verified JWS payload
	r       *http.Request
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
				s.ok(w, fields)
				return
			}
		}
		s.fail(w, e)
	}
}

func (s *Sim) verify(r *http.Request) (*call, *simError) {
	id := ujp.Identity{EUJPID: r.Header.Get("X-EUJP-ID"), EDB: r.Header.Get("X-EDB"), SerialNumber: r.Header.Get("X-SERIAL-NUMBER")}
	if id.EUJPID == "" || id.EDB == "" || id.SerialNumber == "" {
		return nil, &simError{status: 400, code: "E4016", msg: "Missing required request headers: X-EUJP-ID, X-EDB and X-SERIAL-NUMBER"}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil, &simError{status: 400, code: "E4011", msg: "Required request body is missing"}
	}
	var body ujp.SignedBody
	if err := json.Unmarshal(raw, &body); err != nil || body.JWS == "" {
		return nil, &simError{status: 400, code: "E4024", msg: "Invalid request body: want {requestTimestamp, jws}"}
	}
	s.mu.Lock()
	// The replay window is judged on the real clock, not the advanced one:
	// advancing the clock is for deadlines, and callers keep signing with
	// their own clocks.
	now := s.opts.Now()
	var cert *certificate
	var otherCompany bool
	for _, c := range s.st.Certs {
		if c.Serial == id.SerialNumber {
			if c.EDB == id.EDB {
				cert = c
			} else {
				otherCompany = true
			}
		}
	}
	s.mu.Unlock()
	if e := checkTimestamp(body.RequestTimestamp, now); e != nil {
		return nil, e
	}
	switch {
	case cert == nil && otherCompany:
		return nil, &simError{status: 403, code: "E1013", msg: "User is not authorized to sign documents for this company"}
	case cert == nil:
		return nil, &simError{status: 401, code: "E1012", msg: "Certificate not found", prop: "X-SERIAL-NUMBER"}
	case cert.EUJPID != id.EUJPID:
		return nil, &simError{status: 403, code: "E1013", msg: "User is not authorized to sign documents for this company", prop: "X-EUJP-ID"}
	case now.After(cert.cert.NotAfter):
		return nil, &simError{status: 401, code: "E5002", msg: "Certificate has expired."}
	case now.Before(cert.cert.NotBefore):
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
	pub, ok := cert.cert.PublicKey.(*rsa.PublicKey)
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
	return &call{id: id, payload: payload, r: r}, nil
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

func (s *Sim) send(c *call) (map[string]any, *simError) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	key := doc.Seller.SellerTin + "|" + doc.Header.DocID
	if euid, dup := s.st.ByDocID[key]; dup {
		return nil, &simError{status: 409, code: "E1023", msg: "Invoice already exists for that ID: " + euid, prop: "header.docId"}
	}
	var items []ujp.ErrorItem
	add := func(code, prop, msg, codebook string) {
		items = append(items, ujp.ErrorItem{ErrorCode: code, ErrorMessage: msg, Property: prop, Codebook: codebook})
	}
	for _, p := range ujpdoc.Validate(doc, s.cb) {
		add(p.Code, p.Path, p.Message, p.Codebook)
	}
	// Parties against the registry, under the same name and tax number.
	if co, ok := s.company(doc.Seller.SellerTin); !ok {
		add("E1000", "seller.sellerTin", "Company not found", "")
	} else if strings.TrimSpace(doc.Seller.SellerName) != co.Name {
		add("E10002", "seller.sellerName", fmt.Sprintf("An incorrect company name was provided; the registry has %q", co.Name), "")
	}
	buyerRegistered := false
	if doc.Buyer.BuyerCCode == "MK" && doc.Buyer.BuyerTin != "" {
		if co, ok := s.company(doc.Buyer.BuyerTin); !ok {
			add("E1014", "buyer.buyerTin", "Tax payer not found", "")
		} else {
			buyerRegistered = true
			if strings.TrimSpace(doc.Buyer.BuyerName) != co.Name {
				add("E10006", "buyer.buyerName", fmt.Sprintf("An incorrect company name was provided; the registry has %q", co.Name), "")
			}
		}
	}
	var original *Document
	if doc.Header.DocStorno != ujpdoc.StornoNone {
		ref := ujpdoc.SystemReference(doc)
		o, ok := s.st.Documents[ref]
		switch {
		case ref == "":
			// ujpdoc.Validate already reported the missing reference.
		case !ok || o.SellerTin != doc.Seller.SellerTin:
			code := "E1021"
			if doc.Header.DocStorno == ujpdoc.StornoCorrection {
				code = "E1030"
			}
			add(code, "docReferences", "Document reference not found: "+ref, ujpdoc.CBRefDocumentTypes)
		case o.Status == ujp.StatusVoided:
			add("E1026", "docReferences", "Referenced document is voided", "")
		case o.Status == ujp.StatusCorrected:
			add("E1028", "docReferences", "Referenced document is corrected", "")
		case o.Status != ujp.StatusSent && o.Status != ujp.StatusAccepted && o.Status != ujp.StatusAutoAccepted && o.Status != ujp.StatusRejected:
			add("E1022", "docReferences", "Document status cannot be changed", "")
		default:
			original = o
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
	if f, ok := s.faults.RejectSellers[c.id.EDB]; ok && f.Count > 0 {
		m := make(map[string]ForcedRejection, len(s.faults.RejectSellers))
		for k, v := range s.faults.RejectSellers {
			m[k] = v
		}
		if f.Count == 1 {
			delete(m, c.id.EDB)
		} else {
			f.Count--
			m[c.id.EDB] = f
		}
		s.faults.RejectSellers = m
		msg := f.Message
		if msg == "" {
			msg = "Document validation failed (forced by the simulator)"
		}
		return nil, &simError{status: http.StatusUnprocessableEntity, code: f.Code, msg: msg}
	}
	if f := s.faults.RejectSends; f != nil && f.Count > 0 {
		rest := *f // a copy: the caller's value is not ours to change
		rest.Count--
		s.faults.RejectSends = &rest
		if rest.Count == 0 {
			s.faults.RejectSends = nil
		}
		code, msg := f.Code, f.Message
		if msg == "" {
			msg = "Document validation failed (forced by the simulator)"
		}
		return nil, &simError{status: http.StatusUnprocessableEntity, code: code, msg: msg}
	}

	id, err := uuid.NewV7()
	if err != nil {
		return nil, &simError{status: 500, code: "E5001", msg: "generate EUID: " + err.Error()}
	}
	now := s.now()
	d := &Document{EUID: id.String(), DocID: doc.Header.DocID, DocType: doc.Header.DocType, DocStorno: doc.Header.DocStorno,
		SellerTin: doc.Seller.SellerTin, BuyerTin: doc.Buyer.BuyerTin, QRLink: s.opts.QRBase + "/euid/" + id.String(),
		ReceivedAt: now, DecideBy: decideByFor(doc, now), Payload: append(json.RawMessage(nil), c.payload...)}
	s.move(d, ujp.StatusSent, ujp.StatusChange{})
	if original != nil {
		d.References = original.EUID
		ch := ujp.StatusChange{}
		if doc.Header.DocStorno == ujpdoc.StornoVoid {
			ch.VoidReasonCode = doc.Header.VoidReasonCode
			if r, ok := s.cb.Lookup(ujpdoc.CBVoidReasons, deref(doc.Header.VoidReasonCode)); ok {
				ch.VoidReason = strp(r.Name)
			}
			ch.VoidComment = doc.Header.VoidComment
			s.move(original, ujp.StatusVoided, ch)
		} else {
			ch.Comment = doc.Header.CorrectionComment
			s.move(original, ujp.StatusCorrected, ch)
		}
	}
	s.st.Documents[d.EUID] = d
	s.st.ByDocID[key] = d.EUID
	s.persist()
	return map[string]any{"_raw": ujp.SendResult{EUID: d.EUID, Message: "Фактура успешно зачувана", QRLink: d.QRLink, Status: 200,
		EInvoiceUser: buyerRegistered, Timestamp: now.UTC().Format("2006-01-02T15:04:05.000Z")}}, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// own finds a document the caller may read: as seller for sales calls, as
// buyer for purchase calls. Called with s.mu held.
func (s *Sim) own(c *call, euid string, purchase bool) (*Document, *simError) {
	d, ok := s.st.Documents[euid]
	if !ok || (!purchase && d.SellerTin != c.id.EDB) || (purchase && d.BuyerTin != c.id.EDB) {
		return nil, &simError{status: 404, code: "E4008", msg: "The requested resource could not be found", prop: "euid"}
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
		s.mu.Lock()
		defer s.mu.Unlock()
		s.sweep()
		d, e := s.own(c, req.EUID, purchase)
		if e != nil {
			return nil, e
		}
		return map[string]any{"docStatus": s.docStatus(d)}, nil
	}
}

func (s *Sim) statusHistory(c *call) (map[string]any, *simError) {
	var req ujp.StatusHistoryRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
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
		to := time.Time{}
		if len(req.Date) == len(time.DateOnly) {
			to = from.AddDate(0, 0, 1)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.sweep()
		out := []ujp.StatusChange{}
		for _, d := range s.st.Documents {
			if (!purchase && d.SellerTin != c.id.EDB) || (purchase && d.BuyerTin != c.id.EDB) {
				continue
			}
			for _, h := range d.History {
				t, _ := ujpdoc.ParseTimestamp(h.Timestamp)
				if !t.Before(from) && (to.IsZero() || t.Before(to)) {
					out = append(out, h)
				}
			}
		}
		sortChanges(out)
		return map[string]any{"statusHistory": out}, nil
	}
}

func sortChanges(cs []ujp.StatusChange) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].ID < cs[j-1].ID; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
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
		s.mu.Lock()
		defer s.mu.Unlock()
		var found []*Document
		for _, d := range s.st.Documents {
			if (!purchase && d.SellerTin != c.id.EDB) || (purchase && d.BuyerTin != c.id.EDB) {
				continue
			}
			if !d.ReceivedAt.Before(from) && d.ReceivedAt.Before(to) {
				found = append(found, d)
			}
		}
		// EUIDs are UUIDv7: their string order is their time order.
		out := make([]string, 0, len(found))
		for _, d := range found {
			out = append(out, d.EUID)
		}
		sortStrings(out)
		return map[string]any{"euids": out}, nil
	}
}

func sortStrings(ss []string) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j] < ss[j-1]; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

func (s *Sim) payload(c *call) (map[string]any, *simError) {
	var req ujp.EUIDRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, e := s.own(c, req.EUID, true)
	if e != nil {
		return nil, e
	}
	return map[string]any{"payload": string(d.Payload)}, nil
}

func (s *Sim) acceptReject(c *call) (map[string]any, *simError) {
	var req ujp.AcceptRejectRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	err := s.decide(req.EUID, c.id.EDB, req.IsAccepted, deref(req.RejectReasonCode), deref(req.Comment))
	var se *simError
	if errors.As(err, &se) {
		return nil, se
	}
	s.persist()
	return map[string]any{}, nil
}

func (s *Sim) pdf(purchase bool) func(c *call) (map[string]any, *simError) {
	return func(c *call) (map[string]any, *simError) {
		var req ujp.EUIDRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		s.mu.Lock()
		d, e := s.own(c, req.EUID, purchase)
		var snapshot Document
		if e == nil {
			snapshot = *d
			snapshot.Status = d.Status
		}
		name := s.statusName(snapshot.Status)
		s.mu.Unlock()
		if e != nil {
			return nil, e
		}
		b, err := renderPDF(&snapshot, name)
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
