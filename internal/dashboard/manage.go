package dashboard

// The owner's management pages: users (role, removal), API keys with their
// scopes and environment, webhook endpoints (create, enable, disable,
// rotate the secret); and every user's own password.

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
)

// scopeChoice is a checkbox of the key form.
type scopeChoice struct {
	Name    string
	Checked bool
}

func scopeChoices(checked []string) []scopeChoice {
	out := make([]scopeChoice, 0, len(auth.EInvoiceScopes))
	for _, s := range auth.EInvoiceScopes {
		out = append(out, scopeChoice{Name: s, Checked: slices.Contains(checked, s)})
	}
	return out
}

// createKey makes a key with the environment and scopes of the form and
// shows its secret once, in the answer to the POST (never in a URL, never
// again). A production key asks for confirmation even from the sandbox.
func (d *Dashboard) createKey(q *req) {
	f := q.r.PostForm
	choice := auth.KeyChoice{Environment: f.Get("environment"), Scopes: f["scope"]}
	if !d.confirmedFor(q, choice.Environment == auth.EnvProduction) {
		return
	}
	k, secret, err := d.d.Users.CreateAccountKey(q.r.Context(), q.principal(), choice, q.audit("key.create", "", ""))
	if errs := d.fieldErrs(q, err); errs != nil {
		for k, v := range errs {
			if strings.HasPrefix(k, "scopes[") {
				errs["scopes"] = v
			}
		}
		if len(choice.Scopes) == 0 {
			errs["scopes"] = d.cat.text(q.lang, "key.scopes.none")
		}
		data := keysData{Scopes: scopeChoices(choice.Scopes), KeyEnv: choice.Environment}
		data.Errs = errs
		d.showKeys(q, http.StatusUnprocessableEntity, data)
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	d.showKeys(q, http.StatusCreated, keysData{NewID: k.ID, Secret: secret})
}

type usersData struct {
	base
	Users []auth.User
	Roles []string
}

func (d *Dashboard) users(q *req) {
	d.showUsers(q, http.StatusOK, "", "")
}

// showUsers renders the users page with a message or an error (catalogue
// keys).
func (d *Dashboard) showUsers(q *req, status int, msgKey, errKey string) {
	us, err := d.d.Users.AccountUsers(q.r.Context(), q.principal())
	if err != nil {
		d.failErr(q, err)
		return
	}
	data := usersData{base: d.baseFor(q, "users", "users.title"), Users: us, Roles: auth.Roles}
	if msgKey == "" && q.r.URL.Query().Get("done") != "" {
		msgKey = "done"
	}
	if msgKey != "" {
		data.Message = data.T(msgKey)
	}
	if errKey != "" {
		data.Error = data.T(errKey)
	}
	d.render(q.w, status, "users", data)
}

// userErr answers a refused user change on the users page.
func (d *Dashboard) userErr(q *req, err error) {
	switch {
	case errors.Is(err, auth.ErrUserNotFound):
		d.failUser(q, http.StatusNotFound, "notfound")
	case errors.Is(err, auth.ErrLastOwner):
		d.showUsers(q, http.StatusConflict, "", "user.lastowner")
	case errors.Is(err, auth.ErrSelf):
		d.showUsers(q, http.StatusConflict, "", "user.self")
	case d.fieldErrs(q, err) != nil:
		d.showUsers(q, http.StatusUnprocessableEntity, "", "user.badrole")
	default:
		d.failErr(q, err)
	}
}

func (d *Dashboard) setRole(q *req) {
	id, role := q.r.PathValue("id"), q.r.PostForm.Get("role")
	if _, err := d.d.Users.SetUserRole(q.r.Context(), q.principal(), id, role, q.audit("user.role", id, role)); err != nil {
		d.userErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/users?done=1", http.StatusSeeOther)
}

func (d *Dashboard) removeUser(q *req) {
	id := q.r.PathValue("id")
	if err := d.d.Users.RemoveUser(q.r.Context(), q.principal(), id, q.audit("user.remove", id, "")); err != nil {
		d.userErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/users?done=1", http.StatusSeeOther)
}

// changePassword sets the user's own password: the current one, the new
// one twice. Other sessions of the user end; this one stays.
func (d *Dashboard) changePassword(q *req) {
	f := q.r.PostForm
	show := func(status int, errs map[string]string, errKey string) {
		b := d.baseFor(q, "security", "security.title")
		b.Errs = errs
		if errKey != "" {
			b.Error = b.T(errKey)
		}
		d.render(q.w, status, "security", securityData{base: b, TOTPOn: q.s.User.TOTPEnabled})
	}
	if f.Get("new") != f.Get("repeat") {
		show(http.StatusUnprocessableEntity, map[string]string{"repeat": d.cat.text(q.lang, "password.mismatch")}, "")
		return
	}
	err := d.d.Users.ChangePassword(q.r.Context(), q.s, clientAddr(q.r), f.Get("current"), f.Get("new"),
		q.audit("user.password", q.s.User.ID, ""))
	switch {
	case errors.Is(err, auth.ErrWrongPassword):
		show(http.StatusUnprocessableEntity, map[string]string{"current": d.cat.text(q.lang, "password.wrong")}, "")
	case errors.Is(err, auth.ErrThrottled):
		q.w.Header().Set("Retry-After", "900")
		show(http.StatusTooManyRequests, nil, "login.throttled")
	case d.fieldErrs(q, err) != nil:
		show(http.StatusUnprocessableEntity, map[string]string{"new": d.cat.text(q.lang, "password.short")}, "")
	case err != nil:
		d.failErr(q, err)
	default:
		http.Redirect(q.w, q.r, "/dashboard/security?done=password", http.StatusSeeOther)
	}
}

// eventChoice is a checkbox of the endpoint form.
type eventChoice struct {
	Type    string
	Checked bool
}

// subscribable are the event types an endpoint may subscribe to ("*" is
// the form's "all events").
func subscribable() []string {
	var out []string
	for _, k := range webhooks.EventKinds() {
		if k.Type != webhooks.EventWebhookTest {
			out = append(out, k.Type)
		}
	}
	return out
}

// createWebhook registers an endpoint of the session's environment for the
// events of every company and shows its secret once.
func (d *Dashboard) createWebhook(q *req) {
	if !d.confirmed(q) {
		return
	}
	f := q.r.PostForm
	cmd := webhooks.CreateWebhookEndpoint{URL: strings.TrimSpace(f.Get("url")), Events: f["event"],
		Description: strings.TrimSpace(f.Get("description"))}
	ep, err := d.d.Webhooks.CreateWebhookEndpoint(q.r.Context(), q.caller("webhook.create", "", cmd.URL), cmd)
	if errs := d.fieldErrs(q, err); errs != nil {
		// The events' errors are per item (events[i]); the form shows them
		// at the list.
		for k, v := range errs {
			if strings.HasPrefix(k, "events[") {
				errs["events"] = v
			}
		}
		d.showWebhooks(q, http.StatusUnprocessableEntity, webhooksData{Form: cmd, Errs: errs})
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	d.showWebhooks(q, http.StatusCreated, webhooksData{NewID: ep.ID, Secret: *ep.Secret})
}

// setWebhookEnabled enables or disables an endpoint (the API's PATCH
// enabled).
func (d *Dashboard) setWebhookEnabled(q *req) {
	if !d.confirmed(q) {
		return
	}
	id := q.r.PathValue("id")
	on := q.r.PostForm.Get("enabled") == "true"
	action := "webhook.disable"
	if on {
		action = "webhook.enable"
	}
	if _, err := d.d.Webhooks.UpdateWebhookEndpoint(q.r.Context(), q.caller(action, id, ""), id,
		webhooks.UpdateWebhookEndpoint{Enabled: &on}); err != nil {
		d.failErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/webhooks?done=1", http.StatusSeeOther)
}

// rotateWebhook gives an endpoint a new secret and shows it once.
func (d *Dashboard) rotateWebhook(q *req) {
	if !d.confirmed(q) {
		return
	}
	id := q.r.PathValue("id")
	ep, err := d.d.Webhooks.RotateWebhookSecret(q.r.Context(), q.caller("webhook.rotate_secret", id, ""), id)
	if err != nil {
		d.failErr(q, err)
		return
	}
	d.showWebhooks(q, http.StatusOK, webhooksData{NewID: ep.ID, Secret: *ep.Secret, Rotated: true})
}

type webhooksData struct {
	base
	Endpoints []webhooks.WebhookEndpoint
	Events    []eventChoice
	All       bool
	Form      webhooks.CreateWebhookEndpoint
	// NewID and Secret are a new (or rotated) endpoint's secret, shown once.
	NewID, Secret string
	Rotated       bool
	Errs          map[string]string
}

// webhooks lists the account's endpoints of the environment.
func (d *Dashboard) webhooks(q *req) {
	d.showWebhooks(q, http.StatusOK, webhooksData{})
}

func (d *Dashboard) showWebhooks(q *req, status int, data webhooksData) {
	eps, err := d.d.Webhooks.WebhookEndpoints(q.r.Context(), q.principal(), "", pageSize)
	if err != nil {
		d.failErr(q, err)
		return
	}
	if len(eps) > pageSize {
		eps = eps[:pageSize]
	}
	data.base, data.Endpoints = d.baseFor(q, "webhooks", "webhooks.title"), eps
	data.base.Errs = data.Errs
	for _, t := range subscribable() {
		data.Events = append(data.Events, eventChoice{Type: t, Checked: slices.Contains(data.Form.Events, t)})
	}
	data.All = data.Form.Events == nil || slices.Contains(data.Form.Events, "*")
	if q.r.URL.Query().Get("done") != "" {
		data.Message = data.T("done")
	}
	d.render(q.w, status, "webhooks", data)
}
