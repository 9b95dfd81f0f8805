package ujp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/internal/ujp"
	"github.com/denar-mk/denar/internal/ujpturns"
)

// fakeUJP answers every request with what answer returns for its path,
// and records the requests.
type fakeUJP struct {
	mu     sync.Mutex
	seen   []*http.Request
	answer func(r *http.Request) (status int, header map[string]string, body string)
}

func (f *fakeUJP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Clone(context.Background()))
	f.mu.Unlock()
	status, hdr, body := f.answer(r)
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (f *fakeUJP) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.seen...)
}

func newFake(t *testing.T, cfg ujp.Config, answer func(r *http.Request) (int, map[string]string, string)) (*fakeUJP, *ujp.Client) {
	t.Helper()
	f := &fakeUJP{answer: answer}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg.BaseURL = srv.URL
	c, err := ujp.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

// ujpError is UJP's error envelope (api-specification.txt: success,
// createdDate, errorStatus).
func ujpError(code, msg string) string {
	return fmt.Sprintf(`{"success":false,"createdDate":"2026-01-05T08:26:07","errorStatus":{"errorCode":%q,"errorMessage":%q}}`, code, msg)
}

const springBoot = `{"timestamp":"2026-01-05T08:26:07.846+00:00","status":%d,"error":"Internal Server Error","path":"/JSONReceiver/api/v1/sales-invoices/send"}`

const htmlPage = `<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>`

var signer = ujp.Identity{EUJPID: "EUJP-1", EDB: "4030000000001", SerialNumber: "330417598023571620418375436574106271582"}

// TestErrorsByUJPCodeFirst: an answer is judged by UJP's code whatever its
// HTTP status; a body not in UJP's shape by the status, its body kept.
func TestErrorsByUJPCodeFirst(t *testing.T) {
	t.Parallel()
	type want struct {
		kind      string // unavailable, rejected, ratelimited
		code      string
		duplicate bool
		access    bool
		privilege string
		body      string // a substring of the kept body
		refused   bool   // UnavailableError.Refused
	}
	send := func(c *ujp.Client) error {
		_, err := c.Send(context.Background(), signer, "100", "h.p.s")
		return err
	}
	read := func(c *ujp.Client) error {
		_, err := c.SalesIDs(context.Background(), signer, "h.p.s")
		return err
	}
	pdf := func(c *ujp.Client) error {
		_, err := c.SalesPDF(context.Background(), signer, "h.p.s")
		return err
	}
	registry := func(c *ujp.Client) error {
		_, err := c.Company(context.Background(), signer, "4030000000010")
		return err
	}
	for _, tc := range []struct {
		name   string
		call   func(*ujp.Client) error
		status int
		header map[string]string
		body   string
		want   want
	}{
		{"500 carrying a terminal code", send, 500, nil, ujpError("E5007", "Document validation failed"), want{kind: "rejected", code: "E5007"}},
		{"500 E5000", send, 500, nil, ujpError("E5000", "Internal server error"), want{kind: "unavailable", code: "E5000"}},
		{"E5001", send, 500, nil, ujpError("E5001", "Internal error occurred while processing the request"), want{kind: "unavailable", code: "E5001"}},
		{"E4009", read, 503, nil, ujpError("E4009", "Asynchronous request timeout occurred"), want{kind: "unavailable", code: "E4009"}},
		{"E5008", send, 500, nil, ujpError("E5008", "Fetching TimeStampToken failed"), want{kind: "unavailable", code: "E5008"}},
		{"E5003", send, 401, nil, ujpError("E5003", "Certificate has been revoked or unverified according to OCSP response"), want{kind: "unavailable", code: "E5003", refused: true}},
		{"E4025", read, 401, nil, ujpError("E4025", "Unable to validate certificate using CRL"), want{kind: "unavailable", code: "E4025", refused: true}},
		{"E5011 on the JSON Receiver", send, 401, nil, ujpError("E5011", "No OCSP responses for certificate"), want{kind: "unavailable", code: "E5011", refused: true}},
		{"E5011 on the einvoice_api", registry, 400, nil, ujpError("E5011", "Invalid value for field"), want{kind: "rejected", code: "E5011"}},
		{"E1023 on the JSON Receiver", send, 409, nil, ujpError("E1023", "Invoice already exists for that ID"), want{kind: "rejected", code: "E1023", duplicate: true}},
		{"E1023 on the einvoice_api", read, 400, nil, ujpError("E1023", "Report date range exceeds allowed maximum limit"), want{kind: "rejected", code: "E1023"}},
		{"E1023 at the top level", send, 400, nil, `{"errorCode":"E1023","errorMessage":"Invoice already exists for that ID"}`, want{kind: "rejected", code: "E1023", duplicate: true}},
		{"E4007", read, 429, map[string]string{"Retry-After": "3"}, ujpError("E4007", "Rate limit exceeded"), want{kind: "ratelimited", code: "E4007"}},
		{"E4007 in a 200", read, 200, nil, ujpError("E4007", "Rate limit exceeded"), want{kind: "ratelimited", code: "E4007"}},
		{"E1016 in a 200", read, 200, nil, ujpError("E1016", "Document is not in status NEW."), want{kind: "rejected", code: "E1016"}},
		{"E1010 user", send, 401, nil, ujpError("E1010", "User not found"), want{kind: "rejected", code: "E1010", access: true}},
		{"E1011 on a PDF", pdf, 403, nil, ujpError("E1011", "Privilege not found"), want{kind: "rejected", code: "E1011", access: true, privilege: "DP"}},
		{"E1012 certificate", send, 401, nil, ujpError("E1012", "Certificate not found"), want{kind: "rejected", code: "E1012", access: true}},
		{"E1013 company", send, 403, nil, ujpError("E1013", "User is not authorized to sign documents for this company"), want{kind: "rejected", code: "E1013", access: true}},
		{"E4021 serial", send, 400, nil, ujpError("E4021", "Invalid X-SERIAL-NUMBER"), want{kind: "rejected", code: "E4021", access: true}},
		{"E4022 user", send, 400, nil, ujpError("E4022", "Invalid X-EUJP-ID"), want{kind: "rejected", code: "E4022", access: true}},
		{"E4023 tax number", registry, 400, nil, ujpError("E4023", "Invalid X-EDB"), want{kind: "rejected", code: "E4023", access: true}},
		{"Spring Boot's 500", send, 500, nil, fmt.Sprintf(springBoot, 500), want{kind: "unavailable", body: `"error":"Internal Server Error"`}},
		{"Spring Boot's 400", send, 400, nil, fmt.Sprintf(springBoot, 400), want{kind: "rejected", body: `"status":400`}},
		{"an HTML 502", read, 502, map[string]string{"Content-Type": "text/html"}, htmlPage, want{kind: "unavailable", body: "502 Bad Gateway"}},
		{"an HTML 404", read, 404, map[string]string{"Content-Type": "text/html"}, htmlPage, want{kind: "rejected", body: "nginx"}},
		{"a 429 without a body", read, 429, nil, "", want{kind: "ratelimited"}},
		{"a 200 that is not JSON", send, 200, nil, htmlPage, want{kind: "unavailable", body: "502 Bad Gateway"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, c := newFake(t, ujp.Config{}, func(*http.Request) (int, map[string]string, string) { return tc.status, tc.header, tc.body })
			err := tc.call(c)
			var u *ujp.UnavailableError
			var r *ujp.RejectedError
			var rl *ujp.RateLimitedError
			switch tc.want.kind {
			case "unavailable":
				if !errors.As(err, &u) || u.Code != tc.want.code || !ujp.Retryable(err) {
					t.Fatalf("want unavailable %q, got %#v", tc.want.code, err)
				}
				if !strings.Contains(u.Body, tc.want.body) || (tc.want.body == "" && u.Body != "") {
					t.Errorf("body kept %q, want it to hold %q", u.Body, tc.want.body)
				}
				if u.Refused() != tc.want.refused {
					t.Errorf("Refused() = %v", u.Refused())
				}
			case "rejected":
				if !errors.As(err, &r) || r.Code != tc.want.code || ujp.Retryable(err) {
					t.Fatalf("want rejected %q, got %#v", tc.want.code, err)
				}
				if r.HTTPStatus != tc.status {
					t.Errorf("HTTP status %d", r.HTTPStatus)
				}
				if tc.want.body != "" && (!r.Unrecognised() || !strings.Contains(r.Body, tc.want.body)) {
					t.Errorf("body kept %q, want it to hold %q", r.Body, tc.want.body)
				}
				if r.Privilege != tc.want.privilege {
					t.Errorf("privilege %q, want %q", r.Privilege, tc.want.privilege)
				}
			case "ratelimited":
				if !errors.As(err, &rl) || !ujp.Retryable(err) {
					t.Fatalf("want rate limited, got %#v", err)
				}
				if want := tc.header["Retry-After"]; want == "3" && rl.RetryAfter != 3*time.Second {
					t.Errorf("RetryAfter %s", rl.RetryAfter)
				}
			}
			if got := ujp.IsDuplicate(err); got != tc.want.duplicate {
				t.Errorf("IsDuplicate = %v", got)
			}
			if got := ujp.AccessProblem(err) != nil; got != tc.want.access {
				t.Errorf("AccessProblem = %v", got)
			}
		})
	}
}

// TestLongForeignBodyIsTruncated: a foreign body is kept, but not whole.
func TestLongForeignBodyIsTruncated(t *testing.T) {
	t.Parallel()
	long := "<html>" + strings.Repeat("ж", 5000) + "</html>"
	_, c := newFake(t, ujp.Config{}, func(*http.Request) (int, map[string]string, string) { return 400, nil, long })
	_, err := c.Send(context.Background(), signer, "100", "h.p.s")
	var r *ujp.RejectedError
	if !errors.As(err, &r) || !r.Unrecognised() || len(r.Body) > 600 || !strings.HasPrefix(r.Body, "<html>ж") || !strings.HasSuffix(r.Body, "…") {
		t.Fatalf("%d bytes kept: %.80q (%v)", len(r.Body), r.Body, err)
	}
}

// TestIdentityOnEveryCall: X-EUJP-ID and X-EDB go on every service, server
// time and code lists included (api-specification.txt:106-108);
// X-SERIAL-NUMBER on the signed ones, in the configured format.
func TestIdentityOnEveryCall(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"", ujp.SerialDecimal, ujp.SerialHex} {
		t.Run("serial "+format, func(t *testing.T) {
			t.Parallel()
			f, c := newFake(t, ujp.Config{SerialFormat: format}, func(r *http.Request) (int, map[string]string, string) {
				switch {
				case strings.HasSuffix(r.URL.Path, "/server-time"):
					return 200, nil, `{"timestamp":"2026-01-05T12:00:00"}`
				case strings.Contains(r.URL.Path, "/companies/"):
					return 200, nil, `{"success":true,"company":{"taxNumber":"4030000000010","name":"Тест"}}`
				}
				return 200, nil, `{"success":true,"createdDate":"2026-01-05T12:00:00","errorStatus":null,"euids":[],"invoices":[],"statusHistory":[]}`
			})
			ctx := context.Background()
			op := ujp.Identity{EUJPID: "OPERATOR", EDB: "4030000375897"}
			if _, err := c.ServerTime(ctx, op); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Company(ctx, op, "4030000000010"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.SalesInvoicesStatus(ctx, signer, "h.p.s"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.SalesPayloads(ctx, signer, "h.p.s"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.SalesChanges(ctx, signer, "h.p.s"); err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			wantSerial := signer.SerialNumber
			if format == ujp.SerialHex {
				wantSerial = "f8941d57a52e0a147c23b0bc23133f5e" // 330417598023571620418375436574106271582 in hex
			}
			for i, r := range reqs {
				id, edb, serial := r.Header.Get("X-EUJP-ID"), r.Header.Get("X-EDB"), r.Header.Get("X-SERIAL-NUMBER")
				if i < 2 {
					if id != "OPERATOR" || edb != "4030000375897" || serial != "" {
						t.Errorf("%s: X-EUJP-ID %q X-EDB %q X-SERIAL-NUMBER %q", r.URL.Path, id, edb, serial)
					}
					continue
				}
				if id != signer.EUJPID || edb != signer.EDB || serial != wantSerial {
					t.Errorf("%s: X-EUJP-ID %q X-EDB %q X-SERIAL-NUMBER %q, want %q", r.URL.Path, id, edb, serial, wantSerial)
				}
			}
			if reqs[2].URL.Path != ujp.PathSalesInvoicesStatus || reqs[3].URL.Path != ujp.PathSalesPayloadList {
				t.Errorf("paths %s, %s", reqs[2].URL.Path, reqs[3].URL.Path)
			}
		})
	}
	if _, err := ujp.NewClient(ujp.Config{BaseURL: "http://x", SerialFormat: "octal"}); err == nil {
		t.Error("an unknown serial format was accepted")
	}
}

// codeListFake serves code lists in UJP's shapes (api-specification.txt
// 415-627, 689-729): each list holds what the test needs, and the tax
// indicators either as one entry per indicator (singular taxGroupCode) or
// one per (indicator, group) pair.
func codeListFake(pairs bool) func(r *http.Request) (int, map[string]string, string) {
	env := func(key, items string) string {
		return fmt.Sprintf(`{"success":true,"createdDate":"2026-04-29T11:39:25","errorStatus":null,%q:[%s]}`, key, items)
	}
	ind := func(code, group, impact string) string {
		note := ""
		if impact == "PRENESEN" {
			note = "Данок кој се должи член 32 точка 4 од ЗДДВ"
		}
		return fmt.Sprintf(`{"code":%q,"categoryCode":%q,"categoryName":"x","categoryDesc":"x","note":%q,"vatImpact":%q,"isActive":true,"validDateFrom":"2026-04-07 00:00:00","validDateTo":null,"updated_on":"2026-04-28 21:33:13","taxGroupCode":%q}`, code, code, note, impact, group)
	}
	pair := func(docType, code, group, impact string) string {
		return fmt.Sprintf(`{"docTypeId":1,"taxIndicator":%s,"validDateFrom":"2026-04-07 00:00:00","validDateTo":null,"active":true,"docTypeCode":%q,"docTypeName":"Фактура","taxIndicatorCode":%q}`,
			ind(code, group, impact), docType, code)
	}
	return func(r *http.Request) (int, map[string]string, string) {
		p := strings.TrimPrefix(r.URL.Path, ujp.APIPrefix)
		switch p {
		case "/document-types":
			return 200, nil, env("documentTypesList", `{"code":"100","name":"Фактура","type":1,"needSignature":true,"hasItems":true,"hasReference":false,"isReferenceMandatory":false,"isActive":true},
{"code":"110","name":"Книжно одобрение","type":1,"needSignature":true,"hasItems":true,"hasReference":true,"isReferenceMandatory":false,"isActive":true}`)
		case "/ref-document-types":
			return 200, nil, env("refDocumentTypes", `{"code":"SYS","name":"Од систем","type":0,"isActive":true}`)
		case "/payment-types":
			return 200, nil, env("paymentTypeList", `{"code":"P12","description":"Плаќање преку банка","isActive":true}`)
		case "/currency":
			return 200, nil, env("currencyList", `{"code":"MKD","name":"MKD","description":"Македонски денар"}`)
		case "/countries":
			return 200, nil, env("countryList", `{"code":"MK","name":"Северна Македонија","tin":"MK001"}`)
		case "/void-reasons":
			return 200, nil, env("voidReasonList", `{"code":"S-1","voidReason":"Погрешен купувач","isActive":true}`)
		case "/correction-reason":
			return 200, nil, env("correctionReasonList", `{"code":"C01","correctionReason":"Грешка во цена","isActive":true}`)
		case "/reject-reason":
			return 200, nil, env("rejectReasonList", `{"code":"O-1","rejectReason":"Погрешно пресметан ДДВ","isActive":true}`)
		case "/document-statuses":
			return 200, nil, env("statusList", `{"code":"01","name":"Испратена (Нова)"}`)
		case "/tax-groups":
			return 200, nil, env("taxGroupList", `{"code":"DDV-A","name":"ДДВ 18%","percent":18,"isActive":true},{"code":"DDV-V","name":"ДДВ 10%","percent":10,"isActive":true},
{"code":"DDV-B","name":"ДДВ 5%","percent":5,"isActive":true},{"code":"DDV-G","name":"ДДВ 0%","percent":0,"isActive":true}`)
		case "/tax-indicators":
			list := ind("DDV-A", "DDV-A", "STANDARD") + "," + ind("DDV-14-4", "DDV-V", "PRENESEN")
			if pairs {
				list += "," + ind("DDV-14-4", "DDV-B", "PRENESEN")
			}
			return 200, nil, env("taxIndicators", list)
		case "/doc-type-x-tax-indicator/100":
			list := pair("100", "DDV-A", "DDV-A", "STANDARD") + "," + pair("100", "DDV-14-4", "DDV-V", "PRENESEN")
			if pairs {
				list += "," + pair("100", "DDV-14-4", "DDV-B", "PRENESEN")
			}
			return 200, nil, env("docTypeXTaxIndicatorList", list)
		case "/doc-type-x-tax-indicator/110":
			// The credit note's list is where the 5% pair of DDV-14-4 is
			// named when every list has one entry per indicator.
			return 200, nil, env("docTypeXTaxIndicatorList", pair("110", "DDV-14-4", "DDV-B", "PRENESEN"))
		}
		return 404, nil, ujpError("E4004", "No handler found for GET "+r.URL.Path)
	}
}

// TestCodebooksUnionTaxGroups: a multi-rate tax indicator (DDV-14-4,
// tax-indicators.txt) gets every group named for it across /tax-indicators
// and every /doc-type-x-tax-indicator/{docType}, whether the lists hold one
// entry per pair or one per indicator; an invoice with a 5% and a 10% line
// of it then validates against the fetched lists.
func TestCodebooksUnionTaxGroups(t *testing.T) {
	t.Parallel()
	for _, pairs := range []bool{true, false} {
		t.Run(fmt.Sprintf("pairs=%v", pairs), func(t *testing.T) {
			t.Parallel()
			f, c := newFake(t, ujp.Config{}, codeListFake(pairs))
			cb, err := c.Codebooks(context.Background(), operator)
			if err != nil {
				t.Fatal(err)
			}
			ti, ok := cb.TaxIndicator("DDV-14-4")
			if !ok || len(ti.TaxGroupCodes) != 2 || ti.VatImpact != ujpdoc.ImpactPrenesen {
				t.Fatalf("DDV-14-4: %+v", ti)
			}
			if a, _ := cb.TaxIndicator("DDV-A"); len(a.TaxGroupCodes) != 1 || len(cb.TaxIndicators) != 2 {
				t.Fatalf("indicators %+v", cb.TaxIndicators)
			}
			var docTypes []string
			for _, r := range f.requests() {
				if rest, ok := strings.CutPrefix(r.URL.Path, ujp.PathDocTypeTaxIndicators); ok {
					docTypes = append(docTypes, rest)
				}
				if r.Header.Get("X-EUJP-ID") != operator.EUJPID || r.Header.Get("X-EDB") != operator.EDB {
					t.Errorf("%s without the operator's identity", r.URL.Path)
				}
			}
			if strings.Join(docTypes, ",") != "100,110" {
				t.Errorf("doc-type-x-tax-indicator read for %v", docTypes)
			}
			d := invoice(t, "multi-rate")
			d.DocItems = []ujpdoc.Item{
				{DocItemLineNo: 1, DocItemDesc: "Градежни работи", DocItemQty: ujpdoc.A("1"), DocItemUnitOriginalPriceWoVat: ujpdoc.A("1000"), DocItemVatGroup: "DDV-B", DocItemTaxIndicator: "DDV-14-4"},
				{DocItemLineNo: 2, DocItemDesc: "Градежни работи", DocItemQty: ujpdoc.A("1"), DocItemUnitOriginalPriceWoVat: ujpdoc.A("1000"), DocItemVatGroup: "DDV-V", DocItemTaxIndicator: "DDV-14-4"},
			}
			if err := ujpdoc.ComputeTotals(d, cb); err != nil {
				t.Fatal(err)
			}
			if ps := ujpdoc.Validate(d, cb); len(ps) != 0 {
				t.Fatalf("a 5%% and a 10%% line of DDV-14-4: %+v", ps)
			}
		})
	}
}

// TestMergeKeepsReferenceRates: lists that name one group for a
// multi-rate indicator everywhere do not narrow it below the published
// list's rates.
func TestMergeKeepsReferenceRates(t *testing.T) {
	t.Parallel()
	_, c := newFake(t, ujp.Config{}, func(r *http.Request) (int, map[string]string, string) {
		if strings.HasSuffix(r.URL.Path, "/doc-type-x-tax-indicator/110") {
			return 200, nil, `{"success":true,"docTypeXTaxIndicatorList":[]}`
		}
		return codeListFake(false)(r)
	})
	fetched, err := c.Codebooks(context.Background(), operator)
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := ujp.MergeCodebooks(ujpdoc.Snapshot(), fetched)
	ti, _ := merged.TaxIndicator("DDV-14-4")
	if strings.Join(ti.TaxGroupCodes, ",") != "DDV-V,DDV-B" {
		t.Fatalf("DDV-14-4 as validation uses it: %v", ti.TaxGroupCodes)
	}
	if _, restricted := merged.DocTypeTaxIndicators["110"]; restricted {
		t.Errorf("a type UJP listed no indicator for is restricted: %v", merged.DocTypeTaxIndicators["110"])
	}
}

// TestEveryCallTakesATurn: with turns in the store, the code-list refresh
// (a dozen lists) and every other call of one user start at least the
// interval apart; another user's calls are not counted with them.
func TestEveryCallTakesATurn(t *testing.T) {
	t.Parallel()
	const interval = 40 * time.Millisecond
	turns := ujpturns.New(storetest.SQLite(t), ujpturns.Config{Interval: interval})
	var mu sync.Mutex
	arrived := map[string][]time.Time{}
	lists := codeListFake(true)
	_, c := newFake(t, ujp.Config{Turns: turns, Scope: "sandbox"}, func(r *http.Request) (int, map[string]string, string) {
		mu.Lock()
		arrived[r.Header.Get("X-EUJP-ID")] = append(arrived[r.Header.Get("X-EUJP-ID")], time.Now())
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/server-time") {
			return 200, nil, `{"timestamp":"2026-01-05T12:00:00"}`
		}
		return lists(r)
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := c.Codebooks(ctx, operator); err != nil {
			t.Error(err)
		}
	})
	for range 3 {
		wg.Go(func() {
			if _, err := c.ServerTime(ctx, operator); err != nil {
				t.Error(err)
			}
		})
	}
	if _, err := c.ServerTime(ctx, signer); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	times := arrived[operator.EUJPID]
	if len(times) != 11+2+3 {
		t.Fatalf("%d calls of the operator", len(times))
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	// Turns start interval + margin apart; what sits between a turn and
	// the request's arrival (a connection, a busy machine) shifts single
	// arrivals, never the pace: n calls span at least n-1 intervals.
	if span, least := times[len(times)-1].Sub(times[0]), time.Duration(len(times)-1)*interval; span < least {
		t.Errorf("%d calls of one user in %s; one per %s takes at least %s", len(times), span, interval, least)
	}
	if len(arrived[signer.EUJPID]) != 1 {
		t.Errorf("the signer's call: %d", len(arrived[signer.EUJPID]))
	}
}
