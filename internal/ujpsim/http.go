package ujpsim

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"

	"github.com/denar-mk/denar/internal/store/dbq"
)

// Handler returns the simulator's HTTP handler: UJP's API under
// /einvoice_api and /JSONReceiver, and the control API under /_sim (which
// requires Options.ControlToken).
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	api := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, s.api(h)) }

	api("GET "+pathServerTime, s.serverTime)
	api("GET "+pathCompanies+"{tax}", s.companyLookup)
	api("GET "+pathSubsidiary+"{tax}", s.subsidiaries)
	api("POST "+pathExchangeRate, s.exchangeRate)
	for _, f := range codeListFiles {
		if f.path != "" {
			api("GET "+apiPrefix+f.path, s.codeList(f.file))
		}
	}
	api("GET "+pathCorrectionDate+"{date}", s.correctionReasonsOn)
	api("GET "+pathPurchaseTaxDay+"{date}", s.purchaseTaxOn)
	api("POST "+pathCountriesList, s.countriesPage)
	api("GET "+pathDocTypeTax+"{docType}", s.docTypeTax)
	api("POST "+pathDocTypeTaxList, s.docTypeTaxPage)

	api("POST "+PathSend, s.signed("", s.send))
	for _, side := range []struct {
		prefix   string
		purchase bool
	}{{pathSales, false}, {pathPurchase, true}} {
		p := side.purchase
		api("POST "+side.prefix+"ids", s.signed("", s.ids(p)))
		api("POST "+side.prefix+"invoices-status", s.signed("", s.invoicesStatus(p)))
		api("POST "+side.prefix+"current-status", s.signed("", s.currentStatus(p)))
		api("POST "+side.prefix+"changes", s.signed("", s.changes(p)))
		api("POST "+side.prefix+"pdf", s.signed(PrivilegePDF, s.pdf(p)))
		api("POST "+side.prefix+"payload", s.signed(PrivilegePayload, s.payload(p)))
		api("POST "+side.prefix+"payload/list", s.signed(PrivilegePayload, s.payloadList(p)))
		api("POST "+side.prefix+"payload/date-range", s.signed(PrivilegePayload, s.payloadRange(p)))
	}
	api("POST "+pathSales+"status", s.signed("", s.statusHistory))
	api("POST "+pathPurchase+"accept-reject", s.signed("", s.acceptReject))
	api("POST "+pathASiC, s.signed(PrivilegeASiC, s.asic))
	s.adminRoutes(mux)
	mux.Handle("/", s.api(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, &simError{status: 404, code: "E4004", msg: "No handler found for HTTP method and URL: " + r.Method + " " + r.URL.Path})
	}))
	return mux
}

// api wraps every UJP endpoint: it stamps the arrival time first thing,
// then applies the injected faults (what happens in front of UJP's
// application), the identity headers every service requires
// (api-specification.txt:106-108), the per-user rate limit (one request
// per Options.Window, api-specification.txt:111) and the user's
// registration (E1010).
func (s *Sim) api(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := s.opts.Now()
		ctx := r.Context()
		user, edb := r.Header.Get("X-EUJP-ID"), r.Header.Get("X-EDB")
		st, err := s.db.Reader().GetUJPSimState(ctx, lookupKey(edb))
		if err != nil {
			s.fail(w, r, s.internal("read faults", err))
			return
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
			return
		case st.ErrorRate > 0 && rand.Float64() < st.ErrorRate:
			s.fail(w, r, &simError{status: 500, code: "E5000", msg: "Internal server error"})
			return
		}
		cf, err := s.takeCallFault(ctx, lookupKey(edb), r.URL.Path, callFaultView{st.CallCount, st.CallPath, st.CallKind}, FaultStatus, FaultHang)
		if err != nil {
			s.fail(w, r, s.internal("call fault", err))
			return
		}
		if cf != nil {
			if cf.Kind == FaultHang {
				<-ctx.Done()
				return
			}
			s.writeFault(w, r, cf)
			return
		}

		switch {
		case user == "" || edb == "":
			s.fail(w, r, &simError{status: 400, code: "E4016", msg: "Missing required request headers: X-EUJP-ID and X-EDB"})
			return
		case !edbRE.MatchString(edb):
			s.fail(w, r, &simError{status: 400, code: "E4023", msg: "Invalid X-EDB", prop: "X-EDB"})
			return
		case !validEUJPID(user):
			s.fail(w, r, &simError{status: 400, code: "E4022", msg: "Invalid X-EUJP-ID", prop: "X-EUJP-ID"})
			return
		}
		q := s.db.Writer()
		if n, err := q.TakeUJPSimBurst(ctx, user); err != nil {
			s.fail(w, r, s.internal("rate limit", err))
			return
		} else if n > 0 {
			s.rateLimited(w, r, user)
			return
		}
		// One slot per user in the store: the limit holds across every
		// simulator (process) sharing it, judged on arrival times (also
		// when the store applies two calls in another order than they
		// arrived).
		n, err := q.TakeUJPSimRateSlot(ctx, dbq.TakeUJPSimRateSlotParams{EujpID: user, NextAt: dbTime(arrived.Add(s.opts.Window)), Now: dbTime(arrived),
			Early: dbTime(arrived.Add(2 * s.opts.Window))})
		if err != nil {
			s.fail(w, r, s.internal("rate limit", err))
			return
		}
		if n == 0 {
			s.rateLimited(w, r, user)
			return
		}
		if known, err := s.userKnown(ctx, user); err != nil {
			s.fail(w, r, s.internal("user", err))
			return
		} else if !known {
			s.fail(w, r, &simError{status: 401, code: "E1010", msg: "User not found", prop: "X-EUJP-ID"})
			return
		}
		h(w, r.WithContext(context.WithValue(ctx, callKey{}, callState{arrived: arrived, skew: time.Duration(st.ClockSkewNs), clockOffset: time.Duration(st.ClockOffsetNs),
			pendingRejects: st.RejectCount > 0 || st.SellerRejectCount > 0, changedLists: st.CodelistsChanged})))
	})
}

// rateLimited answers UJP's E4007 with Retry-After in whole seconds, and
// counts the refusal against the user (RateLimited).
func (s *Sim) rateLimited(w http.ResponseWriter, r *http.Request, user string) {
	if err := s.db.Writer().CountUJPSimRefusal(r.Context(), user); err != nil {
		s.log.Error("ujpsim: count a refusal", "err", err)
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(s.opts.Window.Seconds())))))
	s.fail(w, r, &simError{status: http.StatusTooManyRequests, code: "E4007", msg: "Rate limit exceeded"})
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
		now = s.opts.Now()
	}
	return FormatTimestamp(now)
}

// ok writes a success envelope with the given fields.
func (s *Sim) ok(w http.ResponseWriter, r *http.Request, fields map[string]any) {
	body := map[string]any{"success": true, "createdDate": s.createdDate(r.Context()), "errorStatus": nil}
	for k, v := range fields {
		body[k] = v
	}
	writeJSON(w, http.StatusOK, body)
}

// fail writes UJP's error envelope: the first code (E1020 when any totals
// problem is among them), a property map, and the simulator's errorList of
// every problem.
func (s *Sim) fail(w http.ResponseWriter, r *http.Request, e *simError) {
	st := ErrorStatus{ErrorCode: e.code, ErrorMessage: e.msg, ErrorList: e.items}
	if e.prop != "" {
		st.ErrorPropertyMap = map[string]string{e.prop: e.msg}
		if len(st.ErrorList) == 0 {
			st.ErrorList = []ErrorItem{{ErrorCode: e.code, ErrorMessage: e.msg, Property: e.prop, Codebook: e.codebook}}
		}
	}
	for _, it := range e.items {
		if it.Property != "" {
			if st.ErrorPropertyMap == nil {
				st.ErrorPropertyMap = map[string]string{}
			}
			if _, dup := st.ErrorPropertyMap[it.Property]; !dup {
				st.ErrorPropertyMap[it.Property] = it.ErrorCode + ": " + it.ErrorMessage
			}
		}
	}
	writeJSON(w, e.status, map[string]any{"success": false, "createdDate": s.createdDate(r.Context()), "errorStatus": st})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serverTime is the clock requestTimestamp is judged by
// (api-specification.txt:112-120): the real one, not the business clock
// (off by the clock-skew fault).
func (s *Sim) serverTime(w http.ResponseWriter, r *http.Request) {
	now := s.opts.Now()
	if st, ok := stateOf(r.Context()); ok {
		now = now.Add(st.skew)
	}
	writeJSON(w, http.StatusOK, map[string]string{"timestamp": FormatTimestamp(now)})
}

func (s *Sim) companyLookup(w http.ResponseWriter, r *http.Request) {
	tax := r.PathValue("tax")
	switch tax {
	case TaxNoAnswer:
		<-r.Context().Done() // the registry that never answers
		return
	case TaxSlowRegistry:
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

// subsidiaries serves /subsidiary/{tax}: one subsidiary for the sandbox
// seller, none for another registered company.
func (s *Sim) subsidiaries(w http.ResponseWriter, r *http.Request) {
	tax := r.PathValue("tax")
	c, ok, err := s.company(r.Context(), tax)
	if err != nil {
		s.fail(w, r, s.internal("registry", err))
		return
	}
	if !ok {
		s.fail(w, r, &simError{status: 404, code: "E1000", msg: "Company not found", prop: "tax_number"})
		return
	}
	out := []subsidiary{}
	if tax == TaxSeller {
		out = append(out, subsidiary{TaxPayerID: 1, TaxNumber: tax, SubsidiaryCode: "25000", SubsidiaryName: c.Name + " – Продавница Центар",
			SubsidiaryStreet: "ул. Македонија", SubsidiaryNumber: "12", SubsidiaryCity: "Скопје", CountryID: 132, Zip: "1000",
			TaxpayerSubsidiaryCode: "10", TaxpayerSubsidiaryType: "0", CountryCode: "MK"})
	}
	s.ok(w, r, map[string]any{"subsidiary": out})
}

// middleRates are the simulator's fixed NBRM-style middle rates, denars per
// unit (EUR as in api-specification.txt:173).
var middleRates = map[string]struct {
	id, numeric string
	rate        float64
	country     string
}{
	"EUR": {"76", "978", 61.695, "EMU"}, "USD": {"77", "840", 56.4, "USA"}, "GBP": {"78", "826", 72.1, "GBR"},
	"CHF": {"79", "756", 64.2, "CHE"}, "SEK": {"80", "752", 5.4, "SWE"}, "NOK": {"81", "578", 5.3, "NOR"},
	"JPY": {"82", "392", 0.38, "JPN"}, "DKK": {"83", "208", 8.27, "DNK"}, "CAD": {"84", "124", 41.2, "CAN"},
	"AUD": {"85", "036", 37.1, "AUS"}, "BGN": {"86", "975", 31.54, "BGR"}, "CZK": {"87", "203", 2.45, "CZE"},
	"MKD": {"88", "807", 1, "MKD"},
}

// exchangeRate serves POST /currency-exchange/rate (api-specification.txt:151-175).
func (s *Sim) exchangeRate(w http.ResponseWriter, r *http.Request) {
	var req exchangeRateRequest
	if e := s.readBody(r, &req); e != nil {
		s.fail(w, r, e)
		return
	}
	day, ok := parseDate(req.Date)
	m, known := middleRates[req.CurrencyName]
	if !ok || !known {
		s.fail(w, r, &simError{status: 404, code: "E4008", msg: "Requested resource not found: currencyName and a date YYYY-MM-DD"})
		return
	}
	id, _ := strconv.Atoi(m.id)
	s.ok(w, r, map[string]any{"currencyExcange": map[string]any{"id": 3700 + id, "currencyId": id, "country": m.country, "code": m.numeric,
		"name": req.CurrencyName, "date": day.Format(time.DateOnly), "middleRate": m.rate}})
}

// readBody decodes an unsigned JSON body strictly and checks its
// requestTimestamp (api-specification.txt:19-34).
func (s *Sim) readBody(r *http.Request, v any) *simError {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return &simError{status: 400, code: "E4011", msg: "Required request body is missing"}
	}
	if !utf8.Valid(raw) {
		return &simError{status: 400, code: "E4013", msg: "JSON schema validation failed: the body is not UTF-8 text"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &simError{status: 400, code: "E4013", msg: "JSON schema validation failed: " + err.Error()}
	}
	var ts struct {
		RequestTimestamp string `json:"requestTimestamp"`
	}
	_ = json.Unmarshal(raw, &ts)
	st, _ := stateOf(r.Context())
	return checkTimestamp(ts.RequestTimestamp, st.clock())
}

func (s *Sim) codeList(file string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cl := s.listsFor(r.Context())
		var v any
		key := ""
		switch file {
		case "document-types":
			key, v = "documentTypesList", cl.DocumentTypes
		case "ref-document-types":
			key, v = "refDocumentTypes", cl.RefDocumentTypes
		case "payment-types":
			key, v = "paymentTypeList", cl.PaymentTypes
		case "currency":
			key, v = "currencyList", cl.Currencies
		case "countries":
			key, v = "countryList", cl.Countries
		case "void-reasons":
			key, v = "voidReasonList", cl.VoidReasons
		case "correction-reason":
			key, v = "correctionReasonList", cl.CorrectionReasons
		case "reject-reason":
			key, v = "rejectReasonList", cl.RejectReasons
		case "tax-groups":
			key, v = "taxGroupList", cl.TaxGroups
		case "tax-indicators":
			key, v = "taxIndicators", cl.TaxIndicators
		case "document-statuses":
			key, v = "statusList", cl.Statuses
		case "purchase-tax-indicators":
			key, v = "purchaseTaxIndicators", cl.PurchaseTax
		}
		s.ok(w, r, map[string]any{key: v})
	}
}

// validOn reports whether an entry valid from from (a date-time in one of
// UJP's forms) is valid on day.
func validOn(from string, day time.Time) bool {
	if len(from) < 10 {
		return true
	}
	start, ok := parseDate(from[:10])
	return !ok || !start.After(day)
}

func (s *Sim) correctionReasonsOn(w http.ResponseWriter, r *http.Request) {
	day, ok := parseDate(r.PathValue("date"))
	if !ok {
		s.fail(w, r, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request: date is YYYY-MM-DD", prop: "date"})
		return
	}
	out := []correctionReasonEntry{}
	for _, c := range s.listsFor(r.Context()).CorrectionReasons {
		if validOn(c.ValidDateFrom, day) {
			out = append(out, c)
		}
	}
	s.ok(w, r, map[string]any{"correctionReasonList": out})
}

func (s *Sim) purchaseTaxOn(w http.ResponseWriter, r *http.Request) {
	day, ok := parseDate(r.PathValue("date"))
	if !ok {
		s.fail(w, r, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request: date is YYYY-MM-DD", prop: "date"})
		return
	}
	out := []purchaseTaxEntry{}
	for _, c := range s.listsFor(r.Context()).PurchaseTax {
		if validOn(c.ValidDateFrom, day) {
			out = append(out, c)
		}
	}
	s.ok(w, r, map[string]any{"purchaseTaxIndicators": out})
}

func (s *Sim) docTypeTax(w http.ResponseWriter, r *http.Request) {
	cl := s.listsFor(r.Context())
	code := r.PathValue("docType")
	if _, ok := cl.docType(code); !ok {
		s.fail(w, r, &simError{status: 404, code: "E1017", msg: "Document type not found", prop: "docTypeCode"})
		return
	}
	s.ok(w, r, map[string]any{"docTypeXTaxIndicatorList": cl.docTypeTax(code)})
}

// pageParams reads a paged request (api-specification.txt:181-188).
func (s *Sim) pageParams(r *http.Request, sortable ...string) (pageRequest, *simError) {
	var req pageRequest
	if e := s.readBody(r, &req); e != nil {
		return req, e
	}
	bad := func(msg string) *simError {
		return &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request: " + msg}
	}
	if req.Page == nil || *req.Page < 0 {
		return req, bad("page is 0 or more")
	}
	if req.Size == nil || *req.Size < 1 || *req.Size > 1000 {
		return req, bad("size is 1 to 1000")
	}
	if req.SortDirection == "" {
		req.SortDirection = "ASC"
	}
	if req.SortDirection != "ASC" && req.SortDirection != "DESC" {
		return req, bad("sortDirection is ASC or DESC")
	}
	if req.SortBy == "" {
		req.SortBy = sortable[0]
	}
	for _, f := range sortable {
		if req.SortBy == f {
			return req, nil
		}
	}
	return req, bad("sortBy is one of " + strings.Join(sortable, ", "))
}

func (s *Sim) countriesPage(w http.ResponseWriter, r *http.Request) {
	req, e := s.pageParams(r, "code", "name")
	if e != nil {
		s.fail(w, r, e)
		return
	}
	less := func(a, b countryEntry) bool { return a.Code < b.Code }
	if req.SortBy == "name" {
		less = func(a, b countryEntry) bool { return a.Name < b.Name }
	}
	p := pageOf(s.listsFor(r.Context()).Countries, *req.Page, *req.Size, less, req.SortDirection == "DESC")
	s.ok(w, r, map[string]any{"content": p.Content, "pageNumber": p.PageNumber, "pageSize": p.PageSize,
		"totalElements": p.TotalElements, "totalPages": p.TotalPages, "last": p.Last})
}

func (s *Sim) docTypeTaxPage(w http.ResponseWriter, r *http.Request) {
	req, e := s.pageParams(r, "id", "docTypeCode", "taxIndicatorCode")
	if e != nil {
		s.fail(w, r, e)
		return
	}
	all := s.listsFor(r.Context()).docTypeTax("")
	type indexed struct {
		i int
		e docTypeTaxEntry
	}
	items := make([]indexed, len(all))
	for i, x := range all {
		items[i] = indexed{i, x}
	}
	less := func(a, b indexed) bool { return a.i < b.i }
	switch req.SortBy {
	case "docTypeCode":
		less = func(a, b indexed) bool { return a.e.DocTypeCode < b.e.DocTypeCode }
	case "taxIndicatorCode":
		less = func(a, b indexed) bool { return a.e.TaxIndicatorCode < b.e.TaxIndicatorCode }
	}
	p := pageOf(items, *req.Page, *req.Size, less, req.SortDirection == "DESC")
	content := []docTypeTaxEntry{}
	for _, x := range p.Content.([]indexed) {
		content = append(content, x.e)
	}
	s.ok(w, r, map[string]any{"content": content, "pageNumber": p.PageNumber, "pageSize": p.PageSize,
		"totalElements": p.TotalElements, "totalPages": p.TotalPages, "last": p.Last})
}

// call is a verified signed request.
type call struct {
	user, edb string
	payload   []byte // the verified JWS payload
	r         *http.Request
	now       time.Time // the business clock when the call arrived
}

// signed verifies a signed call (X-SERIAL-NUMBER, envelope, certificate,
// JWS, requestTimestamp, the portal privilege priv when not "") before
// handing it to h. A handler that answers by itself returns nil fields and
// no error.
func (s *Sim) signed(priv string, h func(w http.ResponseWriter, c *call) (map[string]any, *simError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, e := s.verify(r, priv)
		if e == nil {
			var fields map[string]any
			fields, e = h(w, c)
			if e == nil {
				if fields != nil {
					s.ok(w, r, fields)
				}
				return
			}
		}
		s.fail(w, r, e)
	}
}

func (s *Sim) verify(r *http.Request, priv string) (*call, *simError) {
	ctx := r.Context()
	st, _ := stateOf(ctx)
	user, edb, serialHdr := r.Header.Get("X-EUJP-ID"), r.Header.Get("X-EDB"), r.Header.Get("X-SERIAL-NUMBER")
	if serialHdr == "" {
		return nil, &simError{status: 400, code: "E4016", msg: "Missing required request headers: X-SERIAL-NUMBER"}
	}
	serial, ok := s.parseSerial(serialHdr)
	if !ok {
		return nil, &simError{status: 400, code: "E4021", msg: "Invalid X-SERIAL-NUMBER: want the certificate's serial number in " + s.opts.SerialFormat, prop: "X-SERIAL-NUMBER"}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil, &simError{status: 400, code: "E4011", msg: "Required request body is missing"}
	}
	var body signedBody
	if err := json.Unmarshal(raw, &body); err != nil || body.JWS == "" || !utf8.Valid(raw) {
		return nil, &simError{status: 400, code: "E4024", msg: "Invalid request body: want {requestTimestamp, jws}"}
	}
	// The replay window is judged on the arrival time, on the real clock
	// (advancing the business clock is for deadlines).
	now := st.clock()
	if e := checkTimestamp(body.RequestTimestamp, now); e != nil {
		return nil, e
	}
	certs, err := s.db.Reader().ListUJPSimCertificatesBySerial(ctx, serial.String())
	if err != nil {
		return nil, s.internal("certificate", err)
	}
	var cert *dbq.UjpsimCertificate
	otherCompany := false
	for i := range certs {
		if certs[i].Edb == edb {
			cert = &certs[i]
		} else {
			otherCompany = true
		}
	}
	switch {
	case cert == nil && otherCompany:
		return nil, &simError{status: 403, code: "E1013", msg: "User is not authorized to sign documents for this company", prop: "X-EDB"}
	case cert == nil:
		return nil, &simError{status: 401, code: "E1012", msg: "Certificate not found", prop: "X-SERIAL-NUMBER"}
	case cert.EujpID != user:
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
	// Only RS256: an allow-list, so "none" or an HMAC keyed with the
	// public key never passes.
	obj, err := jose.ParseSignedCompact(body.JWS, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, &simError{status: 401, code: "E5005", msg: "JWS validation failed: " + err.Error()}
	}
	if xs, ok := x5cSerial(body.JWS); ok && xs.Cmp(serial) != 0 {
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
	// JSON is UTF-8 text (RFC 8259): a payload that is not is refused,
	// not read with replacement characters and stored.
	if err := json.Unmarshal(payload, &inner); err != nil || !utf8.Valid(payload) {
		return nil, &simError{status: 400, code: "E40131", msg: "Badly formatted JSON in JWS"}
	}
	if e := checkTimestamp(inner.RequestTimestamp, now); e != nil {
		return nil, e
	}
	if inner.RequestTimestamp != body.RequestTimestamp {
		return nil, &simError{status: 400, code: "E4012", msg: "Request timestamp validation failed: the body's requestTimestamp differs from the signed one", prop: "requestTimestamp"}
	}
	if priv != "" {
		has, err := s.hasPrivilege(ctx, user, edb, priv)
		if err != nil {
			return nil, s.internal("privilege", err)
		}
		if !has {
			return nil, &simError{status: 403, code: "E1011", msg: "Privilege not found: " + priv, prop: "X-EUJP-ID"}
		}
	}
	business, err := s.now(ctx)
	if err != nil {
		return nil, s.internal("clock", err)
	}
	return &call{user: user, edb: edb, payload: payload, r: r, now: business}, nil
}

func checkTimestamp(ts string, now time.Time) *simError {
	t, err := parseTimestamp(ts)
	if err != nil {
		return &simError{status: 400, code: "E40121", msg: "Problem parsing requestTimestamp", prop: "requestTimestamp"}
	}
	if d := t.Sub(now); d > timestampWindow || d < -timestampWindow {
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

// x5cSerial reads the serial of the leaf certificate a JWS header carries
// in x5c, without trusting it: the signature is verified against the
// registered certificate; a different x5c only names the wrong one.
func x5cSerial(compact string) (*big.Int, bool) {
	head, _, ok := strings.Cut(compact, ".")
	if !ok {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return nil, false
	}
	var h struct {
		X5C []string `json:"x5c"`
	}
	if json.Unmarshal(b, &h) != nil || len(h.X5C) == 0 {
		return nil, false
	}
	der, err := base64.StdEncoding.DecodeString(h.X5C[0])
	if err != nil {
		return nil, false
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, false
	}
	return c.SerialNumber, true
}
