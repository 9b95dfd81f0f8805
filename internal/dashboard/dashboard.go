// Package dashboard is the web console of the e-invoicing service, served
// at /dashboard: server-rendered pages (html/template, no JavaScript) where
// an account's people sign in and see their companies, e-invoices, inbox,
// events and usage, and decide. Like the API packages it decodes, calls
// the application layer (internal/einvoicing) or the account adapter
// (internal/auth) and renders; it never touches the store. Every state
// change goes through one use-case method, which writes the dashboard's
// audit entry in its own transaction.
package dashboard

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/usage"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
)

// Deps are what the dashboard needs.
type Deps struct {
	Service *einvoicing.Service
	// Companies is the companies room: the company pages' list and reads.
	Companies *companies.Service
	// Pipeline is the submission pipeline room (UJP's PDFs).
	Pipeline *pipeline.Service
	// Webhooks serves the event log and webhook endpoints.
	Webhooks *webhooks.Service
	// Signing shows the signing requests documents wait on.
	Signing *signing.Service
	// Inbox is the inbox room: incoming documents and their decisions.
	Inbox *inbox.Service
	// Reconcile is the reconciliation room: the home page's last go-live
	// checks.
	Reconcile *reconcile.Service
	// Usage is the usage room: the usage page's months.
	Usage *usage.Service
	Users *auth.Users
	Log   *slog.Logger
	// SecureCookies marks cookies Secure even on a plain-HTTP connection
	// (behind a TLS-terminating proxy). A request that arrived over TLS
	// gets Secure cookies anyway.
	SecureCookies bool
}

// Dashboard serves the pages.
type Dashboard struct {
	d     Deps
	pages map[string]*template.Template
	cat   catalogue
	// fieldsMK words the application layer's field errors in Macedonian
	// (fieldMessage).
	fieldsMK map[string]string
}

//go:embed templates/*.html
var templateFS embed.FS

// Cookie names.
const (
	sessionCookie = "dn_session"
	preCSRFCookie = "dn_csrf" // double-submit token of the sign-in forms
	langCookie    = "dn_lang"
	cookiePath    = "/dashboard"
)

// New builds the dashboard and parses its templates.
func New(d Deps) *Dashboard {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	db := &Dashboard{d: d, pages: map[string]*template.Template{}, cat: newCatalogue(), fieldsMK: fieldMessagesMK()}
	funcs := template.FuncMap{
		"date":  func(t time.Time) string { return t.In(skopje).Format("02.01.2006 15:04") },
		"datep": func(t *time.Time) string { return fmtTimePtr(t) },
		// short cuts a text shown in a list (an attempt's error) to 120
		// characters.
		"short": func(s *string) string {
			if s == nil {
				return ""
			}
			if r := []rune(*s); len(r) > 120 {
				return string(r[:120]) + "…"
			}
			return *s
		},
		// clip cuts a name or description shown in a list to n characters.
		"clip": func(n int, s string) string {
			if r := []rune(s); len(r) > n {
				return string(r[:n]) + "…"
			}
			return s
		},
		// pwField describes a password input of a form: its label and its
		// error, if any.
		"pwField": func(page fieldPage, name, id, labelKey, auto string) fieldView {
			return fieldView{Name: name, ID: id, Label: page.T(labelKey), Auto: auto, Err: page.FieldErr(name)}
		},
		"inc": func(i int) int { return i + 1 },
		"deref": func(s *string) string {
			if s == nil {
				return ""
			}
			return *s
		},
	}
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	entries, err := templateFS.ReadDir("templates")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		if e.Name() == "layout.html" {
			continue
		}
		t := template.Must(template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+e.Name()))
		db.pages[strings.TrimSuffix(e.Name(), ".html")] = t
	}
	return db
}

var skopje = denar.Skopje

func fmtTimePtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.In(skopje).Format("02.01.2006 15:04")
}

// Register adds the dashboard's routes to mux.
func (d *Dashboard) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /dashboard", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
	})
	mux.Handle("GET /dashboard/{$}", d.user(anyRole, d.home))
	// Any other /dashboard URL: an HTML page, in the user's language, with
	// the way back (the service's own 404 is a JSON problem).
	mux.HandleFunc("/dashboard/", d.notFound)
	mux.HandleFunc("GET /dashboard/login", d.loginPage)
	mux.HandleFunc("POST /dashboard/login", d.login)
	mux.HandleFunc("GET /dashboard/login/totp", d.totpPage)
	mux.HandleFunc("POST /dashboard/login/totp", d.totp)
	mux.HandleFunc("GET /dashboard/lang/{lang}", d.setLang)

	mux.Handle("POST /dashboard/logout", d.user(anyRole, d.logout))
	mux.Handle("POST /dashboard/env", d.user(anyRole, d.switchEnv))
	mux.Handle("GET /dashboard/companies", d.user(anyRole, d.companies))
	mux.Handle("GET /dashboard/einvoices", d.user(anyRole, d.einvoices))
	mux.Handle("GET /dashboard/einvoices/{company}/{id}", d.user(anyRole, d.einvoice))
	mux.Handle("GET /dashboard/einvoices/{company}/{id}/pdf", d.user(anyRole, d.einvoicePDF))
	mux.Handle("POST /dashboard/einvoices/{company}/{id}/storno", d.user(staffRole, d.storno))
	mux.Handle("GET /dashboard/einvoices/{company}/{id}/correction", d.user(staffRole, d.correctionForm))
	mux.Handle("POST /dashboard/einvoices/{company}/{id}/correction", d.userForm(staffRole, 256<<10, d.correct))
	mux.Handle("GET /dashboard/inbox", d.user(anyRole, d.inbox))
	mux.Handle("GET /dashboard/inbox/{company}/{id}", d.user(anyRole, d.inboxDoc))
	mux.Handle("GET /dashboard/inbox/{company}/{id}/pdf", d.user(anyRole, d.inboxPDF))
	mux.Handle("POST /dashboard/inbox/{company}/{id}/decide", d.user(staffRole, d.decide))
	mux.Handle("GET /dashboard/events", d.user(anyRole, d.events))
	mux.Handle("GET /dashboard/events/{id}", d.user(anyRole, d.event))
	mux.Handle("POST /dashboard/events/{id}/replay", d.user(ownerRole, d.replay))
	mux.Handle("GET /dashboard/webhooks", d.user(ownerRole, d.webhooks))
	mux.Handle("GET /dashboard/webhooks/{id}", d.user(ownerRole, d.webhook))
	mux.Handle("GET /dashboard/keys", d.user(ownerRole, d.keys))
	mux.Handle("POST /dashboard/keys", d.user(ownerRole, d.createKey))
	mux.Handle("POST /dashboard/keys/{id}/revoke", d.user(ownerRole, d.revokeKey))
	mux.Handle("POST /dashboard/clients", d.user(ownerRole, d.createClient))
	mux.Handle("POST /dashboard/clients/{id}/revoke", d.user(ownerRole, d.revokeClient))
	mux.Handle("GET /dashboard/usage", d.user(anyRole, d.usage))
	mux.Handle("GET /dashboard/security", d.user(anyRole, d.security))
	mux.Handle("POST /dashboard/security/totp", d.user(anyRole, d.totpStart))
	mux.Handle("POST /dashboard/security/totp/confirm", d.user(anyRole, d.totpConfirm))
	mux.Handle("GET /dashboard/audit", d.user(ownerRole, d.audit))
	mux.Handle("GET /dashboard/users", d.user(ownerRole, d.users))
	mux.Handle("POST /dashboard/users/{id}/role", d.user(ownerRole, d.setRole))
	mux.Handle("POST /dashboard/users/{id}/remove", d.user(ownerRole, d.removeUser))
	mux.Handle("POST /dashboard/security/password", d.user(anyRole, d.changePassword))
	mux.Handle("POST /dashboard/webhooks", d.user(ownerRole, d.createWebhook))
	mux.Handle("POST /dashboard/webhooks/{id}/enabled", d.user(ownerRole, d.setWebhookEnabled))
	mux.Handle("POST /dashboard/webhooks/{id}/rotate", d.user(ownerRole, d.rotateWebhook))
}

// Role requirements of routes.
var (
	anyRole   = []string{auth.RoleOwner, auth.RoleStaff, auth.RoleViewer}
	staffRole = []string{auth.RoleOwner, auth.RoleStaff}
	ownerRole = []string{auth.RoleOwner}
)

// req is one request as a signed-in user.
type req struct {
	w    http.ResponseWriter
	r    *http.Request
	s    auth.Session
	lang string
}

func (q *req) principal() *auth.Principal { return q.s.Principal() }

// caller is the application layer's view of the user, with the audit
// entry of the act.
func (q *req) caller(action, target, detail string) einvoicing.Caller {
	return einvoicing.Caller{Principal: q.principal(), Audit: q.audit(action, target, detail)}
}

func (q *req) audit(action, target, detail string) *auth.AuditEntry {
	return &auth.AuditEntry{Action: action, Target: target, Detail: detail, RemoteAddr: clientAddr(q.r),
		Nonce: q.r.PostForm.Get("nonce")}
}

// user wraps a handler that needs a signed-in user with one of roles: no
// session redirects to the sign-in page; a POST without the session's
// CSRF token is refused (403); a role not in roles is refused (403).
func (d *Dashboard) user(roles []string, h func(*req)) http.Handler {
	return d.userForm(roles, 64<<10, h)
}

// userForm is user for a form whose body may have up to limit bytes (the
// correction form's 33 rows of lines, percent-encoded, can pass 64 KB).
func (d *Dashboard) userForm(roles []string, limit int64, h func(*req)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		var s auth.Session
		if err == nil {
			s, err = d.d.Users.Session(r.Context(), c.Value)
		}
		if err == nil && s.State != auth.SessionActive {
			err = auth.ErrNoSession
		}
		lang := d.lang(r)
		if err != nil {
			if !errors.Is(err, auth.ErrNoSession) && !errors.Is(err, http.ErrNoCookie) {
				d.d.Log.ErrorContext(r.Context(), "dashboard session", "err", err)
				d.fail(w, r, lang, http.StatusInternalServerError, "error")
				return
			}
			if r.Method != http.MethodGet {
				d.fail(w, r, lang, http.StatusForbidden, "csrf.failed")
				return
			}
			http.Redirect(w, r, "/dashboard/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		s.Token = c.Value
		q := &req{w: w, r: r, s: s, lang: lang}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			if err := r.ParseForm(); err != nil {
				d.fail(w, r, lang, http.StatusBadRequest, "error")
				return
			}
			if !tokenEqual(r.PostForm.Get("csrf"), s.CSRF) {
				d.fail(w, r, lang, http.StatusForbidden, "csrf.failed")
				return
			}
		}
		allowed := false
		for _, role := range roles {
			allowed = allowed || role == s.User.Role
		}
		if !allowed {
			d.failUser(q, http.StatusForbidden, "forbidden")
			return
		}
		h(q)
	})
}

func tokenEqual(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// clientAddr is the client's IP address (the connection's: a proxy in
// front must be trusted explicitly, which the dashboard does not do).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (d *Dashboard) lang(r *http.Request) string {
	if c, err := r.Cookie(langCookie); err == nil {
		for _, l := range languages {
			if c.Value == l {
				return l
			}
		}
	}
	return languages[0]
}

func (d *Dashboard) setLang(w http.ResponseWriter, r *http.Request) {
	lang := r.PathValue("lang")
	ok := false
	for _, l := range languages {
		ok = ok || l == lang
	}
	if !ok {
		lang = languages[0]
	}
	http.SetCookie(w, d.cookie(r, langCookie, lang, 365*24*time.Hour))
	next := r.URL.Query().Get("next")
	if !localPath(next) {
		next = "/dashboard/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// localPath reports whether p is a path of the dashboard (an open
// redirect must not go elsewhere).
func localPath(p string) bool {
	return strings.HasPrefix(p, "/dashboard") && !strings.HasPrefix(p, "//") && !strings.Contains(p, "\\")
}

func (d *Dashboard) cookie(r *http.Request, name, value string, ttl time.Duration) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: cookiePath, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || d.d.SecureCookies}
	if ttl > 0 {
		c.MaxAge = int(ttl.Seconds())
	} else if ttl < 0 {
		c.MaxAge = -1
	}
	return c
}

// base is what every page's data carries.
type base struct {
	Lang       string
	Title      string
	User       *auth.User
	Env        string
	Production bool
	CanProd    bool
	CSRF       string
	// Nonce is the token of this page's forms that change something: the
	// same form submitted twice acts once (auth.AuditEntry.Nonce).
	Nonce   string
	Path    string
	Nav     string
	Message string
	Error   string
	// Refresh > 0 reloads the page every that many seconds (a document
	// waiting for its signature or UJP shows its progress without
	// JavaScript).
	Refresh int
	// Errs are a form's field errors by field path, shown next to the
	// fields (FieldErr).
	Errs map[string]string
	cat  catalogue
}

// fieldPage is a page's data with form fields.
type fieldPage interface {
	T(key string) string
	FieldErr(path string) string
}

// fieldView is one input of a form as a template draws it.
type fieldView struct{ Name, ID, Label, Auto, Err string }

// FieldErr is the error of the form field at path, or "".
func (b base) FieldErr(path string) string { return b.Errs[path] }

// T is the page's string of key.
func (b base) T(key string) string { return b.cat.text(b.Lang, key) }

// Owner and Staff say what the user's role may do.
func (b base) Owner() bool { return b.User != nil && b.User.Role == auth.RoleOwner }

// Staff reports whether the user may change documents and decide.
func (b base) Staff() bool {
	return b.User != nil && (b.User.Role == auth.RoleOwner || b.User.Role == auth.RoleStaff)
}

// Badge is the deadline badge of a pending decision with days left: red
// up to 2 days, yellow up to 5, green beyond, grey once passed.
func (b base) Badge(days int) template.HTML {
	class, text := "ok", fmt.Sprintf("%d %s", days, b.T("inbox.days"))
	switch {
	case days < 0:
		class, text = "over", b.T("inbox.overdue")
	case days == 0:
		class, text = "urgent", b.T("inbox.today")
	case days <= 2:
		class = "urgent"
	case days <= 5:
		class = "soon"
	}
	return template.HTML(`<span class="badge ` + class + `">` + template.HTMLEscapeString(text) + `</span>`)
}

// Other is the language the switch offers.
func (b base) Other() string {
	if b.Lang == "en" {
		return "mk"
	}
	return "en"
}

func (d *Dashboard) baseFor(q *req, nav, titleKey string) base {
	u := q.s.User
	return base{Lang: q.lang, User: &u, Env: q.s.Environment, Production: q.s.Environment == auth.EnvProduction,
		CanProd: q.s.ProductionEnabled, CSRF: q.s.CSRF, Nonce: auth.RandomToken(20), Path: q.r.URL.RequestURI(), Nav: nav,
		Title: d.cat.text(q.lang, titleKey), cat: d.cat}
}

func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
}

// sendDocument answers with a document (a PDF, an export) as a download:
// never kept by a cache or a proxy, never framed, never run as anything
// active in the dashboard's origin (a sandbox with nothing allowed), and
// saved rather than shown, so that what a third party wrote (a supplier's
// PDF) is not rendered under the dashboard's origin.
func sendDocument(w http.ResponseWriter, contentType, filename string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; sandbox")
	_, _ = w.Write(body)
}

func (d *Dashboard) render(w http.ResponseWriter, status int, page string, data any) {
	t, ok := d.pages[page]
	if !ok {
		panic("dashboard: no template " + page)
	}
	pageHeaders(w)
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout.html", data); err != nil {
		d.d.Log.Error("render dashboard page", "page", page, "err", err)
		http.Error(w, "render error", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// fail renders an error page with no session (sign-in side).
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, lang string, status int, key string) {
	b := base{Lang: lang, cat: d.cat, Path: r.URL.RequestURI()}
	b.Title = b.T("error")
	b.Error = b.T(key)
	d.render(w, status, "error", struct{ base }{b})
}

func (d *Dashboard) failUser(q *req, status int, key string) {
	b := d.baseFor(q, "", "error")
	b.Error = b.T(key)
	d.render(q.w, status, "error", struct{ base }{b})
}

// fieldErrs returns the field errors of an invalid-input error (422) by
// path, the first message of each in the request's language; nil for any
// other error.
func (d *Dashboard) fieldErrs(q *req, err error) map[string]string {
	var de *denar.Error
	if !errors.As(err, &de) || len(de.Fields) == 0 || httpx.FromError(err).Status != http.StatusUnprocessableEntity {
		return nil
	}
	m := map[string]string{}
	for _, f := range de.Fields {
		if _, ok := m[f.Path]; !ok {
			m[f.Path] = fieldMessage(d.fieldsMK, q.lang, f)
		}
	}
	return m
}

// failErr renders an application error: its status (404 for another
// account's resources, 409 conflicts, 422 invalid input) and message.
func (d *Dashboard) failErr(q *req, err error) {
	if errors.Is(err, auth.ErrAlreadyDone) {
		d.failUser(q, http.StatusConflict, "form.again")
		return
	}
	p := httpx.FromError(err)
	if p.Status >= 500 {
		d.d.Log.ErrorContext(q.r.Context(), "dashboard", "path", q.r.URL.Path, "err", err)
	}
	b := d.baseFor(q, "", "error")
	switch {
	case p.Status == http.StatusNotFound:
		b.Error = b.T("notfound")
	case p.Status >= 500:
		b.Error = b.T("error") + " (" + p.Code + ")"
	default:
		msg := p.Detail
		if s, ok := b.cat[q.lang]["code."+p.Code]; ok {
			msg = s // the problem's words in the page's language
		}
		for _, fe := range p.Errors {
			msg += " " + fe.Path + ": " + fieldMessage(d.fieldsMK, q.lang, fe)
		}
		b.Error = msg
	}
	d.render(q.w, p.Status, "error", struct{ base }{b})
}
