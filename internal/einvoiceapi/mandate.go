package einvoiceapi

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// DefaultMandateTTL is how long a mandate link works.
const DefaultMandateTTL = 14 * 24 * time.Hour

// mandatePrefix marks mandate tokens; the rest is 43 base62 characters
// (about 256 bits), so the link itself is the credential.
const mandatePrefix = "mdt_"

// sendMandate creates a mandate token for a new company and queues the
// mail, in the company's transaction.
func (h *handlers) sendMandate(ctx context.Context, tx *store.Tx, c dbq.Company, acct dbq.Account) error {
	ttl := h.deps.MandateTTL
	if ttl <= 0 {
		ttl = DefaultMandateTTL
	}
	tok := mandatePrefix + auth.RandomToken(43)
	if err := tx.CreateMandate(ctx, dbq.CreateMandateParams{
		TokenHash: auth.Hash(tok), CompanyID: c.ID, AccountID: acct.ID, CreatedAt: tx.Now, ExpiresAt: tx.Now.Add(ttl),
	}); err != nil {
		return fmt.Errorf("create mandate: %w", err)
	}
	link := strings.TrimRight(h.deps.PublicURL, "/") + "/mandates/" + tok
	var b strings.Builder
	if err := mandateMail.Execute(&b, map[string]any{
		"Rep": c.RepresentativeName, "Company": c.Name, "Tax": c.TaxNumber, "Account": acct.Name,
		"Link": link, "Days": int(ttl / (24 * time.Hour)),
	}); err != nil {
		return fmt.Errorf("render mandate mail: %w", err)
	}
	if _, err := mail.Queue(ctx, tx, mail.Message{
		To: c.RepresentativeEmail, Subject: "Овластување за е-фактури: " + c.Name + " (e-invoicing mandate)", Body: b.String(), Link: link,
	}); err != nil {
		return fmt.Errorf("queue mandate mail: %w", err)
	}
	return nil
}

// The mail is plain text; text/template would do, but html/template's
// escaping is harmless here and keeps one template package in use.
var mandateMail = template.Must(template.New("mail").Parse(`Почитуван/а {{.Rep}},

{{.Account}} бара овластување да издава и прима е-фактури преку УЈП (е-Фактура) во име на {{.Company}} (ЕДБ {{.Tax}}).

Прегледајте го барањето и прифатете го на следнава врска (важи {{.Days}} дена, може да се искористи еднаш):

{{.Link}}

Ако не го очекувавте ова барање, не правете ништо: без ваше прифаќање овластувањето не важи.

English: {{.Account}} asks for your mandate to e-invoice through UJP on behalf of {{.Company}}; open the link above to review and accept it.

-- denar
`))

func (h *handlers) registerMandates(mux *http.ServeMux) {
	mux.HandleFunc("GET /mandates/{token}", h.mandatePage)
	mux.HandleFunc("POST /mandates/{token}", h.mandateAccept)
}

// mandateView is what the page shows.
type mandateView struct {
	State       string // "open", "accepted", "used", "expired", "unknown"
	Company     string
	TaxNumber   string
	VATNumber   string
	Address     string
	Account     string
	Action      string
	ExpiresAt   string
	Environment string
}

// loadMandate resolves a token into the page's view and the mandate row.
func (h *handlers) loadMandate(ctx context.Context, q *dbq.Queries, tok string) (mandateView, dbq.Mandate, error) {
	if !strings.HasPrefix(tok, mandatePrefix) || len(tok) > 100 {
		return mandateView{State: "unknown"}, dbq.Mandate{}, nil
	}
	m, err := q.GetMandate(ctx, auth.Hash(tok))
	if errors.Is(err, sql.ErrNoRows) {
		return mandateView{State: "unknown"}, dbq.Mandate{}, nil
	}
	if err != nil {
		return mandateView{}, m, fmt.Errorf("load mandate: %w", err)
	}
	c, err := q.GetCompany(ctx, m.CompanyID)
	if err != nil {
		return mandateView{}, m, fmt.Errorf("load company: %w", err)
	}
	acct, err := q.GetAccount(ctx, m.AccountID)
	if err != nil {
		return mandateView{}, m, fmt.Errorf("load account: %w", err)
	}
	co := companyFrom(c, false)
	v := mandateView{
		State: "open", Company: c.Name, TaxNumber: c.TaxNumber, Account: acct.Name,
		ExpiresAt: m.ExpiresAt.In(skopje).Format("02.01.2006 15:04"), Environment: c.Environment,
		Action: "/mandates/" + url.PathEscape(tok),
	}
	if co.VATNumber != nil {
		v.VATNumber = *co.VATNumber
	}
	v.Address = strings.TrimSpace(strings.Join([]string{co.Address.Street, co.Address.Number + ",", co.Address.Zip, co.Address.City}, " "))
	v.Address = strings.Trim(v.Address, ", ")
	switch {
	case m.UsedAt.Valid:
		v.State = "used"
	case !h.deps.DB.Now().Before(m.ExpiresAt):
		v.State = "expired"
	}
	return v, m, nil
}

var skopje = func() *time.Location {
	if l, err := time.LoadLocation("Europe/Skopje"); err == nil {
		return l
	}
	return time.UTC
}()

func pageHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The token is in the URL: never send it on as a Referer.
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
}

func (h *handlers) mandatePage(w http.ResponseWriter, r *http.Request) {
	v, _, err := h.loadMandate(r.Context(), h.deps.DB.Reader(), r.PathValue("token"))
	if err != nil {
		h.deps.Log.ErrorContext(r.Context(), "mandate page", "err", err)
		v = mandateView{State: "error"}
	}
	h.renderMandate(w, v)
}

// mandateAccept accepts a mandate. CSRF: the unguessable token in the path
// is the whole authority (a forged form cannot know it), the page is never
// framed, and a cross-site Origin is refused as well.
func (h *handlers) mandateAccept(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		// Behind a proxy the public host may differ from the one we see.
		public := ""
		if pu, err := url.Parse(h.deps.PublicURL); err == nil {
			public = pu.Host
		}
		if u, err := url.Parse(o); err != nil || (u.Host != r.Host && u.Host != public) {
			pageHeaders(w)
			w.WriteHeader(http.StatusForbidden)
			_ = mandatePage.Execute(w, mandateView{State: "forbidden"})
			return
		}
	}
	var v mandateView
	err := h.deps.DB.InTx(r.Context(), func(tx *store.Tx) error {
		var m dbq.Mandate
		var err error
		v, m, err = h.loadMandate(r.Context(), tx.Queries, r.PathValue("token"))
		if err != nil || v.State != "open" {
			return err
		}
		n, err := tx.UseMandate(r.Context(), dbq.UseMandateParams{TokenHash: m.TokenHash, UsedAt: sql.NullTime{Time: tx.Now, Valid: true}})
		if err != nil {
			return err
		}
		if n == 0 {
			v.State = "used"
			return nil
		}
		if err := tx.SetCompanyStatus(r.Context(), dbq.SetCompanyStatusParams{ID: m.CompanyID, Status: "active"}); err != nil {
			return err
		}
		v.State = "accepted"
		return nil
	})
	if err != nil {
		h.deps.Log.ErrorContext(r.Context(), "mandate accept", "err", err)
		v = mandateView{State: "error"}
	}
	h.renderMandate(w, v)
}

func (h *handlers) renderMandate(w http.ResponseWriter, v mandateView) {
	pageHeaders(w)
	switch v.State {
	case "unknown":
		w.WriteHeader(http.StatusNotFound)
	case "used", "expired":
		w.WriteHeader(http.StatusGone)
	case "error":
		w.WriteHeader(http.StatusInternalServerError)
	}
	if err := mandatePage.Execute(w, v); err != nil {
		h.deps.Log.Error("render mandate page", "err", err)
	}
}

var mandatePage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="mk">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Овластување за е-фактури</title>
<style>
body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}
button{font-size:1.1rem;padding:.6rem 1.4rem;background:#1a5e20;color:#fff;border:0;border-radius:4px;cursor:pointer}
.en{color:#555;font-size:.9rem}.note{background:#f4f4f4;padding:.75rem 1rem;border-radius:4px}
</style>
</head>
<body>
{{- if eq .State "open"}}
<h1>Овластување за е-фактури</h1>
<p><strong>{{.Account}}</strong> бара ваше овластување да работи со е-фактури преку системот е-Фактура на УЈП во име на компанијата:</p>
<dl id="company">
<dt>Компанија</dt><dd id="company-name">{{.Company}}</dd>
<dt>ЕДБ</dt><dd>{{.TaxNumber}}</dd>
{{- if .VATNumber}}<dt>ЕДБ за ДДВ</dt><dd>{{.VATNumber}}</dd>{{end}}
{{- if .Address}}<dt>Адреса</dt><dd>{{.Address}}</dd>{{end}}
<dt>Средина</dt><dd>{{if eq .Environment "production"}}продукција{{else}}тест (sandbox){{end}}</dd>
</dl>
<h2>Што дозволува овластувањето</h2>
<ul>
<li>да подготвува и доставува до УЈП е-фактури и одобренија во име на компанијата;</li>
<li>да ги чита влезните е-фактури на компанијата и, по ваш налог, да ги прифаќа или одбива;</li>
<li>да ги следи статусите на документите кај УЈП.</li>
</ul>
<p class="note">Секој документ се потпишува на ваш уред или сервер; {{.Account}} и denar никогаш не го држат вашиот клуч за потпишување.</p>
<form method="post" action="{{.Action}}">
<button type="submit" id="accept">Прифаќам</button>
</form>
<p>Врската важи до {{.ExpiresAt}} и може да се искористи еднаш.</p>
<p class="en" lang="en">English: {{.Account}} asks for your mandate to issue and receive e-invoices through UJP on behalf of {{.Company}}. Press “Прифаќам” (Accept) to grant it.</p>
{{- else if eq .State "accepted"}}
<h1 id="result">Овластувањето е прифатено</h1>
<p>Компанијата <strong>{{.Company}}</strong> е сега активна кај {{.Account}}. Можете да ја затворите страницата.</p>
<p class="en" lang="en">Mandate accepted: the company is now active.</p>
{{- else if eq .State "used"}}
<h1 id="result">Врската е веќе искористена</h1>
<p>Ова овластување е веќе прифатено. Ако мислите дека е грешка, обратете се кај {{.Account}}.</p>
<p class="en" lang="en">This link has already been used.</p>
{{- else if eq .State "expired"}}
<h1 id="result">Врската истече</h1>
<p>Рокот за прифаќање заврши. Побарајте од {{.Account}} да испрати ново барање.</p>
<p class="en" lang="en">This link has expired; ask for a new mandate request.</p>
{{- else if eq .State "forbidden"}}
<h1 id="result">Барањето е одбиено</h1>
<p>Овластувањето може да се прифати само од оваа страница.</p>
<p class="en" lang="en">The request did not come from this page.</p>
{{- else if eq .State "error"}}
<h1 id="result">Грешка</h1>
<p>Се појави грешка кај нас. Обидете се повторно за неколку минути.</p>
<p class="en" lang="en">Something went wrong on our side; try again in a few minutes.</p>
{{- else}}
<h1 id="result">Непозната врска</h1>
<p>Оваа врска не е валидна. Проверете дали ја копиравте целата врска од пораката.</p>
<p class="en" lang="en">This link is not valid.</p>
{{- end}}
</body>
</html>
`))
