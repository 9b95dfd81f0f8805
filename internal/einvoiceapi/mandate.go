package einvoiceapi

// Mandate pages: the representative of a new company opens the link of the
// mandate mail and accepts. The link's token is the whole authority.

import (
	"html/template"
	"net/http"
	"net/url"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/httpx"
)

func (h *handlers) registerMandates(mux *http.ServeMux) {
	mux.HandleFunc("GET /mandates/{token}", h.mandatePage)
	mux.HandleFunc("POST /mandates/{token}", h.mandateAccept)
}

// mandateView is what the page shows.
type mandateView struct {
	companies.Mandate
	Action    string
	ExpiresAt string
	State     string // the mandate's, or "forbidden" and "error" of the page
}

var skopje = denar.Skopje

func view(m companies.Mandate, tok string) mandateView {
	return mandateView{Mandate: m, State: m.State, Action: "/mandates/" + url.PathEscape(tok),
		ExpiresAt: m.ExpiresAt.In(skopje).Format("02.01.2006 15:04")}
}

func pageHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The token is in the URL: never send it on as a Referer.
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
}

func (h *handlers) mandatePage(w http.ResponseWriter, r *http.Request) {
	tok := r.PathValue("token")
	if !httpx.CredentialText(tok) {
		// No link carries such bytes; the store is not asked.
		h.renderMandate(w, mandateView{State: companies.MandateUnknown})
		return
	}
	m, err := h.companies.Mandate(r.Context(), tok)
	v := view(m, tok)
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
	tok := r.PathValue("token")
	if !httpx.CredentialText(tok) {
		h.renderMandate(w, mandateView{State: companies.MandateUnknown})
		return
	}
	m, err := h.companies.AcceptMandate(r.Context(), tok)
	v := view(m, tok)
	if err != nil {
		h.deps.Log.ErrorContext(r.Context(), "mandate accept", "err", err)
		v = mandateView{State: "error"}
	}
	h.renderMandate(w, v)
}

func (h *handlers) renderMandate(w http.ResponseWriter, v mandateView) {
	pageHeaders(w)
	switch v.State {
	case companies.MandateUnknown:
		w.WriteHeader(http.StatusNotFound)
	case companies.MandateUsed, companies.MandateExpired:
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
