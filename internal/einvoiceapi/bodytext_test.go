package einvoiceapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestBodyTextRefused: the black-box findings against the e-invoicing
// service. An escaped lone surrogate in an e-invoice line is refused as
// invalid UTF-8 (encoding/json would have stored and signed U+FFFD), and a
// member given twice, by name or by case, is refused rather than the last
// one winning; each a 422 validation_failed at the member's path, nothing
// created.
func TestBodyTextRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newPipeEnv(t, db)
		date := e.now().Format(time.DateOnly)
		line := `{"description":"X\ud800Y","quantity":"2","unitPrice":"500","vatPercent":"18","taxIndicator":"DDV-A"}`
		invoice := func(line string) []byte {
			return []byte(strings.Replace(string(slowBuyerInvoice("F-text", date, "Тест")),
				`{"description":"Услуга","quantity":"2","unitPrice":"500","vatPercent":"18","taxIndicator":"DDV-A"}`, line, 1))
		}
		c := newCAPI(t, db)
		key := c.key(c.account(""), auth.EnvSandbox, nil, nil)
		for _, tc := range []struct {
			name, path, msg string
			status          func() (int, []byte)
		}{
			{"lone surrogate", "lines[0].description", "is not valid UTF-8", func() (int, []byte) {
				st, _, raw := e.postWithKey("/v1/einvoices", "text-1", invoice(line))
				return st, raw
			}},
			{"escaped NUL", "lines[0].description", "contains a NUL character", func() (int, []byte) {
				st, _, raw := e.postWithKey("/v1/einvoices", "text-2", invoice(strings.Replace(line, `\ud800`, `\u0000`, 1)))
				return st, raw
			}},
			{"duplicate quantity", "lines[0].quantity", "is given more than once", func() (int, []byte) {
				st, _, raw := e.postWithKey("/v1/einvoices", "text-3", invoice(strings.Replace(line, `"X\ud800Y"`, `"X","quantity":"9"`, 1)))
				return st, raw
			}},
			{"duplicate taxNumber", "taxNumber", "is given more than once", func() (int, []byte) {
				r := c.do("POST", "/v1/companies", key, `{"taxNumber":"4030000000001","taxNumber":"4030000000010","representative":{"name":"Ана Петровска","email":"ana@example.mk"}}`)
				return r.status, r.body
			}},
			{"taxNumber by case", "TaxNumber", `also as "taxNumber"`, func() (int, []byte) {
				r := c.do("POST", "/v1/companies", key, `{"taxNumber":"4030000000001","TaxNumber":"4030000000010","representative":{"name":"Ана Петровска","email":"ana@example.mk"}}`)
				return r.status, r.body
			}},
		} {
			st, raw := tc.status()
			var p struct {
				Code   string `json:"code"`
				Errors []struct{ Path, Message string }
			}
			if err := json.Unmarshal(raw, &p); err != nil || st != 422 || p.Code != "validation_failed" || len(p.Errors) != 1 ||
				p.Errors[0].Path != tc.path || !strings.Contains(p.Errors[0].Message, tc.msg) {
				t.Errorf("%s: %d %s, want 422 validation_failed at %s", tc.name, st, raw, tc.path)
			}
		}
		if r := c.do("GET", "/v1/companies", key, ""); r.status != 200 || strings.Contains(string(r.body), "40300000000") {
			t.Errorf("companies after the refusals: %d %s", r.status, r.body)
		}
	})
}
