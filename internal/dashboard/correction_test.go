package dashboard_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// delivered stores a delivered e-invoice of company A with lines, built as
// the application layer builds one, and returns its id.
func (w *world) delivered(number string, lines []einvoice.Line) string {
	w.t.Helper()
	ctx := w.t.Context()
	id := denar.NewID("einv")
	today := w.db.Now().In(ujpdoc.Skopje).Format(time.DateOnly)
	req := einvoice.Request{Number: number, IssueDate: today,
		Buyer: einvoice.Party{TaxNumber: "4030000000010", Name: "Купувач ДОО Битола",
			Address: einvoice.PartyAddress{Street: ptr("Широк сокак"), Number: ptr("5"), PostalCode: ptr("7000"), City: ptr("Битола")}},
		Payment: einvoice.Payment{TypeCode: "P12", Currency: "MKD"}, Lines: lines}
	seller := ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: "4030000000001", SellerName: "Фирма",
		SellerAddress: ujpdoc.Address{StreetAddress: "Широк сокак", StreetNumber: "1", PostalCode: "7000", City: "Битола"}}
	doc, err := req.Build(seller, id, ujpdoc.Snapshot())
	if err != nil {
		w.t.Fatal(err)
	}
	raw, _ := json.Marshal(ujpdoc.Request{RequestTimestamp: "2026-01-01T00:00:00.000Z", Document: *doc})
	tot := einvoice.DocTotals(doc)
	err = w.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.CreateEInvoice(ctx, dbq.CreateEInvoiceParams{ID: id, AccountID: w.acctA, CompanyID: w.companyA,
			Environment: auth.EnvSandbox, Kind: "invoice", Status: "delivered", DocumentType: "100", Number: number,
			IssueDate: today, Document: string(raw), UjpDocID: id, TotalNet: tot.Net, TotalVat: tot.Vat, TotalGross: tot.Gross,
			Currency: "MKD", Problems: "[]", Fingerprint: "f-" + id, CreatedAt: tx.Now, UpdatedAt: tx.Now}); err != nil {
			return err
		}
		_, err := tx.SetEInvoiceDelivered(ctx, dbq.SetEInvoiceDeliveredParams{ToStatus: "delivered", FromStatus: "delivered",
			Euid: sql.NullString{String: "EUID-" + id, Valid: true}, UpdatedAt: tx.Now, ID: id})
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

func ptr[T any](v T) *T { return &v }

// signer gives company A a signing agent and certificate, so that its
// documents ask for signatures.
func (w *world) signer() {
	w.t.Helper()
	ctx := w.t.Context()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		w.t.Fatal(err)
	}
	now := w.db.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Фирма"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		w.t.Fatal(err)
	}
	err = w.db.InTx(ctx, func(tx *store.Tx) error {
		agent := denar.NewID("agt")
		if _, err := tx.CreateSigningAgent(ctx, dbq.CreateSigningAgentParams{ID: agent, AccountID: w.acctA, Environment: auth.EnvSandbox,
			Name: "test", SecretHash: "x", CreatedAt: tx.Now}); err != nil {
			return err
		}
		_, err := tx.CreateSigningCertificate(ctx, dbq.CreateSigningCertificateParams{ID: denar.NewID("crt"), AgentID: agent, CompanyID: w.companyA,
			Der: base64.StdEncoding.EncodeToString(der), Serial: "1", Subject: "CN=Фирма", NotBefore: tx.Now.Add(-time.Hour), NotAfter: tx.Now.Add(24 * time.Hour), CreatedAt: tx.Now})
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// corrections are company A's correction documents of original.
func (w *world) corrections(original string) []einvoicing.EInvoice {
	w.t.Helper()
	p := &auth.Principal{AccountID: w.acctA, Environment: auth.EnvSandbox, Scopes: auth.EInvoiceDefaultScopes}
	rows, err := w.svc.EInvoices(w.t.Context(), p, w.companyA, einvoicing.EInvoiceFilter{}, "", 100)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []einvoicing.EInvoice
	for _, r := range rows {
		if r.Kind == "correction" && r.OriginalID != nil && *r.OriginalID == original {
			out = append(out, r)
		}
	}
	return out
}

var inputValue = regexp.MustCompile(`name="(lines\[\d+\]\.[a-zA-Z]+|number|issueDate|supplyDate)" value="([^"]*)"`)

// correctionForm reads the form's fields as the browser would send them.
func correctionForm(t *testing.T, p page) url.Values {
	t.Helper()
	f := url.Values{"csrf": {csrfOf(t, p)}}
	if m := nonceField.FindStringSubmatch(p.body); m != nil {
		f.Set("nonce", m[1])
	}
	for _, m := range inputValue.FindAllStringSubmatch(p.body, -1) {
		f.Set(m[1], m[2])
	}
	f.Set("reason", "C02")
	return f
}

func TestDashboardCorrection(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		w.signer()
		orig := w.delivered("F-77", []einvoice.Line{
			{Description: "Консултантски услуги", Unit: ptr("час"), Quantity: "3", UnitPrice: "1000", VatPercent: "18", TaxIndicator: "DDV-A"},
			{Description: "Книга", Quantity: "2", UnitPrice: "333.3333", VatPercent: "5", TaxIndicator: "DDV-B"},
		})
		detail := "/dashboard/einvoices/" + w.companyA + "/" + orig
		path := detail + "/correction"

		v := w.browser()
		v.signIn("viewer@a.mk")
		if p := v.do("GET", detail, nil); strings.Contains(p.body, `id="correction"`) {
			t.Fatal("a viewer is offered the correction")
		}
		if p := v.do("GET", path, nil); p.status != http.StatusForbidden {
			t.Fatalf("viewer's correction form: %d", p.status)
		}
		if p := v.do("POST", path, url.Values{"csrf": {v.csrf()}, "reason": {"C01"}}); p.status != http.StatusForbidden {
			t.Fatalf("viewer corrects: %d", p.status)
		}

		s := w.browser()
		s.signIn("staff@a.mk")
		if p := s.do("GET", detail, nil); !strings.Contains(p.body, `id="correction" href="`+path+`"`) {
			t.Fatal("staff is not offered the correction")
		}
		form := s.do("GET", path, nil)
		if form.status != http.StatusOK || strings.Count(form.body, `class="corr-line"`) != 5 ||
			!strings.Contains(form.body, `name="lines[0].quantity" value="3"`) || !strings.Contains(form.body, `name="lines[1].unitPrice" value="333.3333"`) ||
			!strings.Contains(form.body, `name="number" value="F-77/K"`) || !strings.Contains(form.body, `value="C01"`) {
			t.Fatalf("the form (%d) is not filled from the original:\n%s", form.status, form.body)
		}
		if p := s.do("POST", path, url.Values{"reason": {"C01"}}); p.status != http.StatusForbidden {
			t.Fatalf("without CSRF: %d", p.status)
		}

		// Invalid input: each error next to its field, nothing created.
		bad := correctionForm(t, form)
		bad.Set("reason", "C99")
		bad.Set("lines[0].quantity", "три")
		bad.Set("lines[1].description", "")
		bad.Set("lines[3].quantity", "1") // a new row with only a quantity
		p := s.do("POST", path, bad)
		for _, id := range []string{"c-reason-e", "l0q-e", "l1d-e", "l3d-e", "l3p-e"} {
			if !strings.Contains(p.body, `id="`+id+`"`) {
				t.Errorf("no error %s", id)
			}
		}
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `name="lines[0].quantity" value="три"`) || len(w.corrections(orig)) != 0 {
			t.Fatalf("invalid correction: %d, %d corrections; the form must keep what was sent", p.status, len(w.corrections(orig)))
		}

		// Valid: the first line's quantity changes, the second line is taken
		// out, a new line is added in the first empty row.
		good := correctionForm(t, form)
		good.Set("lines[0].quantity", "2")
		for _, k := range []string{"description", "unit", "quantity", "unitPrice", "unitDiscount", "vatPercent", "taxIndicator"} {
			good.Set("lines[1]."+k, "")
		}
		good.Set("lines[2].description", "Превод")
		good.Set("lines[2].quantity", "1")
		good.Set("lines[2].unitPrice", "500")
		good.Set("lines[2].vatPercent", "18")
		good.Set("lines[2].taxIndicator", "DDV-A")
		good.Set("comment", "Погрешна количина")
		p = s.do("POST", path, good)
		cs := w.corrections(orig)
		if p.status != http.StatusSeeOther || len(cs) != 1 || !strings.HasPrefix(p.header.Get("Location"), "/dashboard/einvoices/"+w.companyA+"/"+cs[0].ID) {
			t.Fatalf("correct: %d %s, %d corrections\n%s", p.status, p.header.Get("Location"), len(cs), regexp.MustCompile(`id="error">[^<]*`).FindString(p.body))
		}
		// 2×1000 + 1×500 = 2500 net at 18%.
		c := cs[0]
		if c.Number != "F-77/K" || c.Totals.Net != "2500.00" || c.Totals.Gross != "2950.00" {
			t.Fatalf("the correction: %s %+v", c.Number, c.Totals)
		}
		var stored ujpdoc.Request
		_ = json.Unmarshal(c.Document, &stored)
		h := stored.Document.Header
		if h.DocStorno != ujpdoc.StornoCorrection || h.CorrectionReasonCode == nil || *h.CorrectionReasonCode != "C02" ||
			h.CorrectionComment == nil || *h.CorrectionComment != "Погрешна количина" || len(stored.Document.DocItems) != 2 ||
			stored.Document.DocItems[1].DocItemDesc != "Превод" || stored.Document.Buyer.BuyerName != "Купувач ДОО Битола" {
			t.Fatalf("the correction's document: %+v, %d lines", h, len(stored.Document.DocItems))
		}
		if page := s.do("GET", p.header.Get("Location"), nil); page.status != http.StatusOK || !strings.Contains(page.body, `id="message"`) {
			t.Fatalf("the correction's page: %d", page.status)
		}
		// The same form again acts once.
		if again := s.do("POST", path, good); again.status != http.StatusConflict || len(w.corrections(orig)) != 1 {
			t.Fatalf("the same form again: %d, %d corrections", again.status, len(w.corrections(orig)))
		}
		if n := w.actions(w.acctA)["einvoice.correction"]; n != 1 {
			t.Fatalf("%d einvoice.correction audit rows", n)
		}
		// Another account's e-invoice is unknown.
		b := w.browser()
		b.signIn("owner@b.mk")
		if p := b.do("GET", path, nil); p.status != http.StatusNotFound {
			t.Fatalf("another account's correction form: %d", p.status)
		}
		if p := b.do("POST", path, with(url.Values{"csrf": {b.csrf()}}, "reason", "C01")); p.status != http.StatusNotFound {
			t.Fatalf("another account corrects: %d", p.status)
		}
	})
}

// TestDashboardCorrectionPageSize fills the correction form at its worst:
// 20 lines with 400-character descriptions; then every field of every row
// in error, with values at and over the form's limits.
func TestDashboardCorrectionPageSize(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.SQLite(t))
	long := strings.Repeat("ф", 400)
	var lines []einvoice.Line
	for range 20 {
		lines = append(lines, einvoice.Line{Description: long, Unit: ptr("час"), Quantity: "1000000.0000", UnitPrice: "999999999.9999",
			UnitDiscount: "1.0000", VatPercent: "18", TaxIndicator: "DDV-A"})
	}
	orig := w.delivered("F-"+strings.Repeat("9", 40), lines)
	s := w.browser()
	s.signIn("staff@a.mk")
	path := "/dashboard/einvoices/" + w.companyA + "/" + orig + "/correction"
	form := s.do("GET", path, nil)
	if form.status != http.StatusOK || len(form.body) >= 100<<10 {
		t.Fatalf("the form: %d, %d bytes", form.status, len(form.body))
	}
	t.Logf("form: %d bytes", len(form.body))
	for _, over := range []bool{false, true} {
		bad := correctionForm(t, form)
		for row := range maxRows {
			for _, k := range []string{"unit", "quantity", "unitPrice", "unitDiscount", "vatPercent", "taxIndicator"} {
				v := strings.Repeat("ж", 40)
				if over {
					v += "жжжжж"
				}
				bad.Set(fmt.Sprintf("lines[%d].%s", row, k), v)
			}
			if over {
				bad.Set(fmt.Sprintf("lines[%d].description", row), long+"ффф")
			}
		}
		p := s.do("POST", path, bad)
		if p.status != http.StatusUnprocessableEntity || len(p.body) >= 100<<10 || strings.Count(p.body, `class="ferr" id="l`) < 5*maxRows {
			t.Fatalf("every field in error (over the limits %v): %d, %d bytes, %d field errors", over, p.status, len(p.body), strings.Count(p.body, `class="ferr" id="l`))
		}
		t.Logf("form with errors (over the limits %v): %d bytes", over, len(p.body))
	}
	// A longer document, or a longer description, is corrected through
	// the API: no form.
	longer := w.delivered("F-21", append(lines, lines[0]))
	wider := w.delivered("F-401", []einvoice.Line{{Description: long + "ф", Quantity: "1", UnitPrice: "1", VatPercent: "18", TaxIndicator: "DDV-A"}})
	for _, id := range []string{longer, wider} {
		if p := s.do("GET", "/dashboard/einvoices/"+w.companyA+"/"+id, nil); strings.Contains(p.body, `id="correction"`) {
			t.Fatal("a document beyond the form's limits is offered the form")
		}
		if p := s.do("GET", "/dashboard/einvoices/"+w.companyA+"/"+id+"/correction", nil); p.status != http.StatusConflict {
			t.Fatalf("the form of a document beyond its limits: %d", p.status)
		}
	}
}

// maxRows are the rows of a full form: 20 lines and 3 empty rows.
const maxRows = 23

// TestDashboardCorrectionErrorsInLanguage submits a correction with a
// quantity that is no number, a line without a description and a supply
// date that is no date: the application layer's messages appear next to
// those fields in Macedonian, and in English after the switch.
func TestDashboardCorrectionErrorsInLanguage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		orig := w.delivered("F-88", []einvoice.Line{
			{Description: "Консултантски услуги", Quantity: "3", UnitPrice: "1000", VatPercent: "18", TaxIndicator: "DDV-A"},
			{Description: "Книга", Quantity: "2", UnitPrice: "300", VatPercent: "5", TaxIndicator: "DDV-B"},
		})
		path := "/dashboard/einvoices/" + w.companyA + "/" + orig + "/correction"
		s := w.browser()
		s.signIn("staff@a.mk")
		want := map[string]map[string]string{
			"mk": {"l0q-e": "не е децимален број како „1234.50“ (без експонент или знак плус)", "l1d-e": "е задолжително", "c-supply-e": "мора да биде датум ГГГГ-ММ-ДД"},
			"en": {"l0q-e": "is not a decimal number such as &#34;1234.50&#34; (no exponent or plus sign)", "l1d-e": "is required", "c-supply-e": "must be a date YYYY-MM-DD"},
		}
		for _, lang := range []string{"mk", "en"} {
			s.do("GET", "/dashboard/lang/"+lang, nil)
			bad := correctionForm(t, s.do("GET", path, nil))
			bad.Set("lines[0].quantity", "три")
			bad.Set("lines[1].description", "")
			bad.Set("supplyDate", "31.12.2026")
			p := s.do("POST", path, bad)
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `<html lang="`+lang+`">`) {
				t.Fatalf("%s: %d", lang, p.status)
			}
			for id, msg := range want[lang] {
				if span := `<span class="ferr" id="` + id + `">` + msg + `</span>`; !strings.Contains(p.body, span) {
					t.Errorf("%s: no %s; errors: %q", lang, span, regexp.MustCompile(`<span class="ferr" id="[^"]*">[^<]*`).FindAllString(p.body, -1))
				}
			}
			if len(w.corrections(orig)) != 0 {
				t.Fatalf("%s: an invalid correction was created", lang)
			}
		}
	})
}
