package dashboard

import (
	"errors"
	"net/http"
	"time"

	"github.com/denar-mk/denar/internal/auth"
)

// The sign-in forms have no session yet: their CSRF token is a
// double-submit cookie (dn_csrf, HttpOnly, SameSite=Lax) that the form
// repeats. A forged cross-site form cannot read the cookie, so it cannot
// repeat it.

type loginData struct {
	base
	Email, Next string
}

// preCSRF returns the browser's double-submit token, setting a new one
// when it has none.
func (d *Dashboard) preCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(preCSRFCookie); err == nil && len(c.Value) == 32 {
		return c.Value
	}
	tok := auth.RandomToken(32)
	http.SetCookie(w, d.cookie(r, preCSRFCookie, tok, time.Hour))
	return tok
}

func (d *Dashboard) checkPreCSRF(r *http.Request) bool {
	c, err := r.Cookie(preCSRFCookie)
	return err == nil && tokenEqual(r.PostForm.Get("csrf"), c.Value)
}

func (d *Dashboard) loginPage(w http.ResponseWriter, r *http.Request) {
	d.showLogin(w, r, http.StatusOK, "", "")
}

func (d *Dashboard) showLogin(w http.ResponseWriter, r *http.Request, status int, email, errKey string) {
	lang := d.lang(r)
	b := base{Lang: lang, cat: d.cat, Path: r.URL.RequestURI(), CSRF: d.preCSRF(w, r)}
	b.Title = b.T("login.title")
	if errKey != "" {
		b.Error = b.T(errKey)
	}
	next := r.FormValue("next")
	if !localPath(next) {
		next = ""
	}
	d.render(w, status, "login", loginData{base: b, Email: email, Next: next})
}

func (d *Dashboard) parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, d.lang(r), http.StatusBadRequest, "error")
		return false
	}
	return true
}

func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	if !d.parseForm(w, r) {
		return
	}
	if !d.checkPreCSRF(r) {
		d.fail(w, r, d.lang(r), http.StatusForbidden, "csrf.failed")
		return
	}
	email := r.PostForm.Get("email")
	prev := ""
	if c, err := r.Cookie(sessionCookie); err == nil {
		prev = c.Value
	}
	s, err := d.d.Users.SignIn(r.Context(), email, r.PostForm.Get("password"), clientAddr(r), prev)
	switch {
	case errors.Is(err, auth.ErrBadCredentials):
		d.showLogin(w, r, http.StatusUnauthorized, email, "login.failed")
		return
	case errors.Is(err, auth.ErrThrottled):
		w.Header().Set("Retry-After", "900")
		d.showLogin(w, r, http.StatusTooManyRequests, email, "login.throttled")
		return
	case err != nil:
		d.d.Log.ErrorContext(r.Context(), "dashboard sign-in", "err", err)
		d.fail(w, r, d.lang(r), http.StatusInternalServerError, "error")
		return
	}
	d.startSession(w, r, s)
}

// startSession sets the cookie of a new session (a new id: any previous
// one was ended by the sign-in) and goes on to the second factor or the
// page asked for.
func (d *Dashboard) startSession(w http.ResponseWriter, r *http.Request, s auth.Session) {
	// The lifetime by the store's clock (DENAR_CLOCK_OFFSET may shift it).
	http.SetCookie(w, d.cookie(r, sessionCookie, s.Token, s.ExpiresAt.Sub(d.d.Service.Now())))
	next := r.PostForm.Get("next")
	if !localPath(next) {
		next = "/dashboard/"
	}
	if s.State == auth.SessionMFA {
		http.Redirect(w, r, "/dashboard/login/totp?next="+queryEscape(next), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (d *Dashboard) totpPage(w http.ResponseWriter, r *http.Request) {
	d.showTOTP(w, r, http.StatusOK, "")
}

func (d *Dashboard) showTOTP(w http.ResponseWriter, r *http.Request, status int, errKey string) {
	lang := d.lang(r)
	b := base{Lang: lang, cat: d.cat, Path: r.URL.RequestURI(), CSRF: d.preCSRF(w, r)}
	b.Title = b.T("totp.title")
	if errKey != "" {
		b.Error = b.T(errKey)
	}
	next := r.FormValue("next")
	if !localPath(next) {
		next = ""
	}
	d.render(w, status, "totp", loginData{base: b, Next: next})
}

func (d *Dashboard) totp(w http.ResponseWriter, r *http.Request) {
	if !d.parseForm(w, r) {
		return
	}
	if !d.checkPreCSRF(r) {
		d.fail(w, r, d.lang(r), http.StatusForbidden, "csrf.failed")
		return
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		http.Redirect(w, r, "/dashboard/login", http.StatusSeeOther)
		return
	}
	s, err := d.d.Users.SecondFactor(r.Context(), c.Value, r.PostForm.Get("code"), clientAddr(r))
	switch {
	case errors.Is(err, auth.ErrNoSession):
		http.Redirect(w, r, "/dashboard/login", http.StatusSeeOther)
		return
	case errors.Is(err, auth.ErrBadCode):
		d.showTOTP(w, r, http.StatusUnauthorized, "totp.failed")
		return
	case errors.Is(err, auth.ErrThrottled):
		d.showTOTP(w, r, http.StatusTooManyRequests, "login.throttled")
		return
	case err != nil:
		d.d.Log.ErrorContext(r.Context(), "dashboard second factor", "err", err)
		d.fail(w, r, d.lang(r), http.StatusInternalServerError, "error")
		return
	}
	d.startSession(w, r, s)
}

func (d *Dashboard) logout(q *req) {
	if err := d.d.Users.SignOut(q.r.Context(), q.s, q.audit("session.sign_out", q.s.User.ID, "")); err != nil {
		d.failErr(q, err)
		return
	}
	http.SetCookie(q.w, d.cookie(q.r, sessionCookie, "", -1))
	http.Redirect(q.w, q.r, "/dashboard/login", http.StatusSeeOther)
}

func (d *Dashboard) switchEnv(q *req) {
	env := q.r.PostForm.Get("environment")
	err := d.d.Users.SetEnvironment(q.r.Context(), q.s, env, q.audit("session.environment", env, ""))
	if errors.Is(err, auth.ErrProductionNotEnabled) {
		b := d.baseFor(q, "", "error")
		b.Error = err.Error()
		d.render(q.w, http.StatusForbidden, "error", struct{ base }{b})
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	next := q.r.PostForm.Get("next")
	if !localPath(next) {
		next = "/dashboard/"
	}
	http.Redirect(q.w, q.r, next, http.StatusSeeOther)
}

type securityData struct {
	base
	TOTPOn      bool
	URI, Secret string
}

func (d *Dashboard) security(q *req) {
	b := d.baseFor(q, "security", "security.title")
	if q.r.URL.Query().Get("done") == "password" {
		b.Message = b.T("password.done")
	}
	d.render(q.w, http.StatusOK, "security", securityData{base: b, TOTPOn: q.s.User.TOTPEnabled})
}

func (d *Dashboard) totpStart(q *req) {
	secret, err := d.d.Users.StartTOTP(q.r.Context(), q.principal())
	b := d.baseFor(q, "security", "security.title")
	if errors.Is(err, auth.ErrBadCode) {
		d.render(q.w, http.StatusConflict, "security", securityData{base: b, TOTPOn: true})
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	d.render(q.w, http.StatusOK, "security", securityData{base: b, Secret: secret,
		URI: auth.TOTPURI("denar", q.s.User.Email, secret)})
}

func (d *Dashboard) totpConfirm(q *req) {
	err := d.d.Users.ConfirmTOTP(q.r.Context(), q.principal(), q.r.PostForm.Get("code"), q.audit("user.totp_enable", q.s.User.ID, ""))
	b := d.baseFor(q, "security", "security.title")
	if errors.Is(err, auth.ErrBadCode) {
		b.Error = b.T("totp.failed")
		d.render(q.w, http.StatusUnprocessableEntity, "security", securityData{base: b})
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	b.Message = b.T("security.totp.done")
	d.render(q.w, http.StatusOK, "security", securityData{base: b, TOTPOn: true})
}
