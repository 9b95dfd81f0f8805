package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/store/storetest"
)

// seedEInvoice writes an e-invoice of company in status, and its event of
// type typ when typ is not "".
func (w *world) seedEInvoice(acct, company, number, status, typ string) string {
	w.t.Helper()
	id := denar.NewID("einv")
	err := w.db.InTx(w.t.Context(), func(tx *store.Tx) error {
		doc := `{"requestTimestamp":"x","document":{"buyer":{"buyerTin":"4030000000002","buyerName":"Купувач ДОО"},"docItems":[]}}`
		if _, err := tx.CreateEInvoice(w.t.Context(), dbq.CreateEInvoiceParams{ID: id, AccountID: acct, CompanyID: company,
			Environment: auth.EnvSandbox, Kind: "invoice", Status: status, DocumentType: "100", Number: number,
			IssueDate: "2026-03-02", Document: doc, UjpDocID: id, TotalNet: "100", TotalVat: "18", TotalGross: "118",
			Currency: "MKD", Problems: "[]", Fingerprint: "f" + id, CreatedAt: tx.Now, UpdatedAt: tx.Now}); err != nil {
			return err
		}
		if typ == "" {
			return nil
		}
		data := fmt.Sprintf(`{"object":{"id":%q,"object":"einvoice","number":%q,"companyId":%q,"status":%q}}`, id, number, company, status)
		return tx.CreateEvent(w.t.Context(), dbq.CreateEventParams{ID: denar.NewID("evt"), AccountID: acct, CompanyID: company,
			Environment: auth.EnvSandbox, Type: typ, ObjectID: id, Payload: data, CreatedAt: tx.Now})
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// addCompany writes another active company of account acct.
func (w *world) addCompany(acct, name, tax string) string {
	w.t.Helper()
	var id string
	err := w.db.InTx(w.t.Context(), func(tx *store.Tx) error {
		co, err := tx.CreateCompany(w.t.Context(), dbq.CreateCompanyParams{ID: denar.NewID("cmp"), AccountID: acct, Name: name,
			TaxNumber: tax, VatNumber: "МК" + tax, Status: "active", SigningMode: "bridge", Environment: auth.EnvSandbox,
			Address: "{}", CreatedAt: tx.Now})
		id = co.ID
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

var rowIDs = regexp.MustCompile(`class="einvoice" data-id="([^"]+)"`)

// TestEInvoicesOfEveryCompany: the e-invoices page shows every company's
// e-invoices, newest first, with the company's name, and filters by
// company; nothing is chosen for the user.
func TestEInvoicesOfEveryCompany(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.SQLite(t))
	second := w.addCompany(w.acctA, "Друга Фирма ДООЕЛ", "4030000000003")
	a1 := w.seedEInvoice(w.acctA, w.companyA, "A-1", "delivered", "")
	s1 := w.seedEInvoice(w.acctA, second, "S-1", "failed", "")
	a2 := w.seedEInvoice(w.acctA, w.companyA, "A-2", "held", "")
	w.seedEInvoice(w.acctB, w.compB, "B-1", "delivered", "") // another account's
	b := w.browser()
	b.signIn("owner@a.mk")
	p := b.do("GET", "/dashboard/einvoices", nil)
	got := rowIDs.FindAllStringSubmatch(p.body, -1)
	var ids []string
	for _, m := range got {
		ids = append(ids, m[1])
	}
	if p.status != http.StatusOK || strings.Join(ids, ",") != strings.Join([]string{a2, s1, a1}, ",") {
		t.Fatalf("%d rows %v, want every company's, newest first: %v", p.status, ids, []string{a2, s1, a1})
	}
	for _, name := range []string{"Друга Фирма ДООЕЛ", "Фирма 4030000000001"} {
		if !strings.Contains(p.body, `<td class="company">`+name+`</td>`) {
			t.Errorf("the company column lacks %s", name)
		}
	}
	if strings.Contains(p.body, " selected>Фирма") || strings.Contains(p.body, " selected>Друга") {
		t.Error("a company is chosen in the filter the user did not choose")
	}
	p = b.do("GET", "/dashboard/einvoices?company="+second, nil)
	if m := rowIDs.FindAllStringSubmatch(p.body, -1); len(m) != 1 || m[0][1] != s1 {
		t.Fatalf("filtered by company: %v", m)
	}
	// Past the page size, the next page follows on from the last row.
	for i := range 50 {
		w.seedEInvoice(w.acctA, second, fmt.Sprintf("P-%d", i), "delivered", "")
	}
	p = b.do("GET", "/dashboard/einvoices", nil)
	next := regexp.MustCompile(`href="(/dashboard/einvoices\?after=[^"]+)"`).FindStringSubmatch(p.body)
	if len(rowIDs.FindAllString(p.body, -1)) != 50 || next == nil {
		t.Fatalf("a full page and a next link: %d rows", len(rowIDs.FindAllString(p.body, -1)))
	}
	p = b.do("GET", strings.ReplaceAll(next[1], "&amp;", "&"), nil)
	if rows := rowIDs.FindAllStringSubmatch(p.body, -1); len(rows) != 3 || rows[2][1] != a1 {
		t.Fatalf("the second page: %v", rows)
	}
}

// TestEventsShowTheirObject: the events page reads the object an event is
// about from data.object, links to it and names the company.
func TestEventsShowTheirObject(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.SQLite(t))
	id := w.seedEInvoice(w.acctA, w.companyA, "F-2026-17", "failed", "einvoice.failed")
	b := w.browser()
	b.signIn("owner@a.mk")
	p := b.do("GET", "/dashboard/events", nil)
	link := `<a href="/dashboard/einvoices/` + w.companyA + `/` + id + `">F-2026-17</a>`
	if !strings.Contains(p.body, link) || !strings.Contains(p.body, `<td class="company">Фирма 4030000000001</td>`) ||
		!strings.Contains(p.body, "е-фактура неуспешна") {
		t.Fatalf("the event's row lacks its object, company or type:\n%s", p.body)
	}
}

// TestFormErrorsNextToTheField: a rejection with О-7 and no comment answers
// the page again with the error next to the comment, in the page's
// language, the reason still chosen and what was typed kept; nothing is
// decided.
func TestFormErrorsNextToTheField(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.SQLite(t))
	b := w.browser()
	b.signIn("staff@a.mk")
	path := "/dashboard/inbox/" + w.companyA + "/" + w.docA
	page := b.do("GET", path, nil)
	nonce := regexp.MustCompile(`name="nonce" value="([^"]+)"`).FindStringSubmatch(page.body)[1]
	p := b.do("POST", path+"/decide", url.Values{"csrf": {b.csrf()}, "nonce": {nonce}, "decision": {"reject"}, "reason": {"О-7"}, "comment": {"   "}})
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d", p.status)
	}
	for _, want := range []string{
		`<span class="ferr" id="reject-comment-err">е задолжително со причината О-7`,
		`aria-describedby="reject-comment-err"`,
		`<option value="О-7" selected>`,
		`<textarea id="reject-comment" name="comment" maxlength="500" rows="2" cols="60" aria-invalid="true" aria-describedby="reject-comment-err">   </textarea>`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(p.body, `id="accept-comment-err"`) {
		t.Error("the error is also shown at the acceptance's comment")
	}
	if d, err := w.inbox.InboxDocument(t.Context(), &auth.Principal{AccountID: w.acctA, Environment: auth.EnvSandbox}, w.companyA, w.docA); err != nil || d.Decision.Requested != nil {
		t.Fatalf("a refused rejection was requested: %v %v", d.Decision.Requested, err)
	}
	// English, the same.
	b.do("GET", "/dashboard/lang/en", nil)
	p = b.do("POST", path+"/decide", url.Values{"csrf": {b.csrf()}, "nonce": {nonce + "x"}, "decision": {"reject"}, "reason": {"О-7"}})
	if !strings.Contains(p.body, `<span class="ferr" id="reject-comment-err">is required with reason О-7`) {
		t.Errorf("English page: %s", p.body)
	}
}

// TestUnknownDashboardPage: a /dashboard URL that is none is an HTML page
// in the user's language with the way back, signed in or not.
func TestUnknownDashboardPage(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.SQLite(t))
	for _, signedIn := range []bool{false, true} {
		b := w.browser()
		if signedIn {
			b.signIn("viewer@a.mk")
		}
		p := b.do("GET", "/dashboard/einvoice/typo", nil)
		if p.status != http.StatusNotFound || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") ||
			!strings.Contains(p.body, "Нема страница на оваа адреса.") || !strings.Contains(p.body, `<a href="/dashboard/" id="back">`) {
			t.Fatalf("signed in %v: %d %s\n%s", signedIn, p.status, p.header.Get("Content-Type"), p.body)
		}
	}
}

// TestHomeSaysWhatNeedsAttention: the home page lists the incoming
// invoices whose deadline is near, the failed and held e-invoices, the
// companies without a signer and the failing webhook endpoints; with
// nothing of the kind it says so.
func TestHomeSaysWhatNeedsAttention(t *testing.T) {
	t.Parallel()
	w := newWorld(t, storetest.SQLite(t))
	b := w.browser()
	b.signIn("owner@b.mk")
	if p := b.do("GET", "/dashboard/", nil); p.status != http.StatusOK || !strings.Contains(p.body, `id="offline"`) {
		t.Fatalf("home: %d\n%s", p.status, p.body)
	}
	ctx := t.Context()
	soon := ""
	err := w.db.InTx(ctx, func(tx *store.Tx) error {
		soon = tx.Now.In(time.UTC).AddDate(0, 0, 2).Format(time.DateOnly)
		d, err := tx.InsertInboxDocument(ctx, dbq.InsertInboxDocumentParams{ID: denar.NewID("inbd"), AccountID: w.acctA, CompanyID: w.companyA,
			Environment: auth.EnvSandbox, Euid: "EUID-SOON", Kind: "invoice", DocumentType: "100", Number: "Ф-СКОРО",
			IssueDate: tx.Now.Format(time.DateOnly), TransactionDate: tx.Now.Format(time.DateOnly),
			Seller:   `{"country":"MK","taxNumber":"4030000000005","name":"Брз Добавувач","address":{}}`,
			TotalNet: "100.00", TotalVat: "18.00", TotalGross: "118.00", Currency: "MKD", UjpStatus: "01", UjpStatusName: "Испратена",
			UjpStatusAt: tx.Now, DecisionState: "pending", Problems: "[]", DecideBy: soon, Payload: []byte(`{}`), ReceivedAt: tx.Now})
		_ = d
		if err != nil {
			return err
		}
		_, err = tx.CreateWebhookEndpoint(ctx, dbq.CreateWebhookEndpointParams{ID: denar.NewID("whe"), AccountID: w.acctA,
			Environment: auth.EnvSandbox, Url: "https://hooks.example.com/down", EventTypes: "*", Secret: "x", CreatedAt: tx.Now})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.WriteDB().ExecContext(ctx, "UPDATE webhook_endpoints SET failing_since = $1 WHERE account_id = $2", time.Now().Add(-time.Hour), w.acctA); err != nil {
		t.Fatal(err)
	}
	failed := w.seedEInvoice(w.acctA, w.companyA, "F-FAILED", "failed", "")
	held := w.seedEInvoice(w.acctA, w.companyA, "F-HELD", "held", "")
	w.seedEInvoice(w.acctA, w.companyA, "F-OK", "delivered", "")
	a := w.browser()
	a.signIn("owner@a.mk")
	p := a.do("GET", "/dashboard/", nil)
	for _, want := range []string{
		"Ф-СКОРО", "Брз Добавувач", // the deadline, 2 days away (the one a month away is not listed)
		`data-id="` + failed + `"`, `data-id="` + held + `"`, "неуспешна", "задржана",
		`class="offline" data-id="` + w.companyA + `"`, // no signer
		"https://hooks.example.com/down",
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("home lacks %q", want)
		}
	}
	for _, not := range []string{"F-OK", "Ф-1", `id="quiet"`, `id="checks"`} {
		if strings.Contains(p.body, not) {
			t.Errorf("home shows %q", not)
		}
	}
	// The last go-live check of a company (denar ujp check) shows with
	// the lines that did not hold; B's company, of another account, not.
	for _, c := range []struct {
		id, company string
		at          time.Time
		lines       string
	}{
		{"uck_old", w.companyA, time.Now().Add(-time.Hour), `[{"name":"identity","state":"fail","detail":"old run","action":"x"}]`},
		{"uck_new", w.companyA, time.Now(), `[{"name":"server_time","state":"ok","detail":"fine"},{"name":"privileges","state":"fail","detail":"granted: DP, RD; missing: DA","action":"grant DA in UJP's portal"}]`},
		{"uck_b", w.compB, time.Now(), `[{"name":"registry","state":"fail","detail":"B's problem"}]`},
	} {
		if err := w.db.Writer().InsertUJPCheck(ctx, dbq.InsertUJPCheckParams{ID: c.id, Environment: auth.EnvSandbox, CompanyID: c.company,
			Ok: false, Lines: c.lines, CreatedAt: c.at}); err != nil {
			t.Fatal(err)
		}
	}
	p = a.do("GET", "/dashboard/", nil)
	for _, want := range []string{`<tr class="check" data-company="` + w.companyA + `" data-ok="false">`, `data-line="privileges"`, "missing: DA", "grant DA in UJP&#39;s portal"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("home's go-live checks lack %q", want)
		}
	}
	for _, not := range []string{"old run", `data-line="server_time"`, "B&#39;s problem"} {
		if strings.Contains(p.body, not) {
			t.Errorf("home's go-live checks show %q", not)
		}
	}

	// A viewer sees no webhook endpoints (the owner's).
	v := w.browser()
	v.signIn("viewer@a.mk")
	if p := v.do("GET", "/dashboard/", nil); strings.Contains(p.body, "hooks.example.com") || !strings.Contains(p.body, "Ф-СКОРО") {
		t.Error("the viewer's home")
	}
}
