package dashboard_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

var nonceField = regexp.MustCompile(`name="nonce" value="([^"]+)"`)

// form is a page's csrf and nonce.
func (b *browser) form(path string) url.Values {
	b.w.t.Helper()
	p := b.do("GET", path, nil)
	m := nonceField.FindStringSubmatch(p.body)
	if m == nil {
		b.w.t.Fatalf("%s has no form nonce (%d)", path, p.status)
	}
	return url.Values{"csrf": {csrfOf(b.w.t, p)}, "nonce": {m[1]}}
}

func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = vs
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Add(kv[i], kv[i+1])
	}
	return out
}

func (w *world) userID(email string) string {
	w.t.Helper()
	row, err := w.users.SignIn(w.t.Context(), email, password, "192.0.2.9", "")
	if err != nil {
		w.t.Fatal(err)
	}
	return row.User.ID
}

func (w *world) actions(acct string) map[string]int {
	w.t.Helper()
	log, err := w.users.AuditLog(w.t.Context(), &auth.Principal{AccountID: acct}, 200)
	if err != nil {
		w.t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range log {
		n[e.Action]++
	}
	return n
}

func TestDashboardUsers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := t.Context()
		staffID, viewerID, ownerID, ownerB := w.userID("staff@a.mk"), w.userID("viewer@a.mk"), w.userID("owner@a.mk"), w.userID("owner@b.mk")
		roleOf := func(email string) string {
			us, _ := w.users.AccountUsers(ctx, &auth.Principal{AccountID: w.acctA})
			for _, u := range us {
				if u.Email == email {
					return u.Role
				}
			}
			return ""
		}
		o := w.browser()
		o.signIn("owner@a.mk")
		s := w.browser()
		s.signIn("staff@a.mk")

		// Staff may neither see nor change users: refused before any call.
		if p := s.do("GET", "/dashboard/users", nil); p.status != http.StatusForbidden {
			t.Fatalf("staff's users page: %d", p.status)
		}
		if p := s.do("POST", "/dashboard/users/"+viewerID+"/role", url.Values{"csrf": {s.csrf()}, "role": {"owner"}}); p.status != http.StatusForbidden || roleOf("viewer@a.mk") != auth.RoleViewer {
			t.Fatalf("staff promotes the viewer: %d, role %s", p.status, roleOf("viewer@a.mk"))
		}
		// No token, no change.
		if p := o.do("POST", "/dashboard/users/"+staffID+"/role", url.Values{"role": {"viewer"}}); p.status != http.StatusForbidden {
			t.Fatalf("without CSRF: %d", p.status)
		}

		page := o.do("GET", "/dashboard/users", nil)
		if !strings.Contains(page.body, `action="/dashboard/users/`+staffID+`/role"`) || strings.Contains(page.body, `action="/dashboard/users/`+ownerID+`/remove"`) {
			t.Fatal("the users page lacks the role form, or offers removing oneself")
		}
		f := o.form("/dashboard/users")
		if p := o.do("POST", "/dashboard/users/"+staffID+"/role", with(f, "role", "viewer")); p.status != http.StatusSeeOther || roleOf("staff@a.mk") != auth.RoleViewer {
			t.Fatalf("owner demotes staff: %d, role %s", p.status, roleOf("staff@a.mk"))
		}
		// The same form again acts once.
		if p := o.do("POST", "/dashboard/users/"+staffID+"/role", with(f, "role", "owner")); p.status != http.StatusConflict || roleOf("staff@a.mk") != auth.RoleViewer {
			t.Fatalf("the same form twice: %d, role %s", p.status, roleOf("staff@a.mk"))
		}
		// The demoted user's session has the new role at once.
		if p := s.do("GET", "/dashboard/inbox/"+w.companyA+"/"+w.docA, nil); strings.Contains(p.body, `id="reject"`) {
			t.Fatal("a demoted user still sees the decide forms")
		}
		// The only owner cannot demote themselves.
		if p := o.do("POST", "/dashboard/users/"+ownerID+"/role", with(o.form("/dashboard/users"), "role", "staff")); p.status != http.StatusConflict ||
			!strings.Contains(p.body, "барем еден сопственик") || roleOf("owner@a.mk") != auth.RoleOwner {
			t.Fatalf("demoting the last owner: %d, role %s", p.status, roleOf("owner@a.mk"))
		}
		if p := o.do("POST", "/dashboard/users/"+ownerID+"/remove", o.form("/dashboard/users")); p.status != http.StatusConflict {
			t.Fatalf("removing oneself: %d", p.status)
		}
		if p := o.do("POST", "/dashboard/users/"+staffID+"/role", with(o.form("/dashboard/users"), "role", "admin")); p.status != http.StatusUnprocessableEntity {
			t.Fatalf("an unknown role: %d", p.status)
		}
		// Another account's user is unknown.
		if p := o.do("POST", "/dashboard/users/"+ownerB+"/remove", o.form("/dashboard/users")); p.status != http.StatusNotFound {
			t.Fatalf("removing another account's user: %d", p.status)
		}
		if p := o.do("POST", "/dashboard/users/"+ownerB+"/role", with(o.form("/dashboard/users"), "role", "viewer")); p.status != http.StatusNotFound {
			t.Fatalf("changing another account's user: %d", p.status)
		}
		// Removing a user ends their sessions.
		v := w.browser()
		v.signIn("viewer@a.mk")
		if p := o.do("POST", "/dashboard/users/"+viewerID+"/remove", o.form("/dashboard/users")); p.status != http.StatusSeeOther || roleOf("viewer@a.mk") != "" {
			t.Fatalf("remove the viewer: %d", p.status)
		}
		if p := v.do("GET", "/dashboard/companies", nil); p.status != http.StatusSeeOther {
			t.Fatalf("a removed user's session: %d", p.status)
		}
		got := w.actions(w.acctA)
		if got["user.role"] != 1 || got["user.remove"] != 1 {
			t.Fatalf("audit: %v", got)
		}
	})
}

func TestDashboardPassword(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		a, other := w.browser(), w.browser()
		a.signIn("viewer@a.mk")
		other.signIn("viewer@a.mk")
		const next = "нова долга лозинка 2026"
		for _, tc := range []struct {
			current, new, repeat, errID string
		}{
			{"wrong password!", next, next, "pw-current-err"},
			{password, "short one", "short one", "pw-new-err"},
			{password, next, next + "x", "pw-repeat-err"},
		} {
			p := a.do("POST", "/dashboard/security/password", with(a.form("/dashboard/security"), "current", tc.current, "new", tc.new, "repeat", tc.repeat))
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="`+tc.errID+`"`) || !strings.Contains(p.body, `aria-invalid="true"`) {
				t.Fatalf("%+v: %d, no %s next to the field", tc, p.status, tc.errID)
			}
		}
		if p := a.do("POST", "/dashboard/security/password", url.Values{"current": {password}, "new": {next}, "repeat": {next}}); p.status != http.StatusForbidden {
			t.Fatalf("without CSRF: %d", p.status)
		}
		f := with(a.form("/dashboard/security"), "current", password, "new", next, "repeat", next)
		if p := a.do("POST", "/dashboard/security/password", f); p.status != http.StatusSeeOther {
			t.Fatalf("change: %d %s", p.status, p.body)
		}
		if p := a.do("GET", "/dashboard/security?done=password", nil); p.status != http.StatusOK || !strings.Contains(p.body, `id="message"`) {
			t.Fatalf("this session after the change: %d", p.status)
		}
		if p := other.do("GET", "/dashboard/companies", nil); p.status != http.StatusSeeOther {
			t.Fatalf("the other session after the change: %d", p.status)
		}
		if _, err := w.users.SignIn(t.Context(), "viewer@a.mk", password, "192.0.2.1", ""); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("the old password: %v", err)
		}
		if _, err := w.users.SignIn(t.Context(), "viewer@a.mk", next, "192.0.2.1", ""); err != nil {
			t.Fatalf("the new password: %v", err)
		}
		if got := w.actions(w.acctA)["user.password"]; got != 1 {
			t.Fatalf("%d user.password audit rows", got)
		}
	})
}

func TestDashboardKeyScopes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := t.Context()
		as := &auth.Store{DB: db}
		o := w.browser()
		o.signIn("owner@a.mk")
		page := o.do("GET", "/dashboard/keys", nil)
		for _, sc := range auth.EInvoiceScopes {
			box := regexp.MustCompile(`<input type="checkbox" id="scope-\d+" name="scope" value="` + sc + `"( checked)?>`).FindStringSubmatch(page.body)
			if box == nil {
				t.Fatalf("no checkbox for %s", sc)
			}
			if def := box[1] != ""; def != (sc != "signing:agent") {
				t.Errorf("%s checked %v", sc, def)
			}
		}
		count := func() int {
			ks, _ := w.users.AccountKeys(ctx, &auth.Principal{AccountID: w.acctA})
			return len(ks)
		}
		for _, extra := range [][]string{{}, {"scope", "root:all"}, {"scope", "einvoices:read", "environment", "moon"}} {
			p := o.do("POST", "/dashboard/keys", with(o.form("/dashboard/keys"), extra...))
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `class="ferr"`) || count() != 0 {
				t.Fatalf("%v: %d, %d keys", extra, p.status, count())
			}
		}
		p := o.do("POST", "/dashboard/keys", with(o.form("/dashboard/keys"), "scope", "einvoices:read", "scope", "signing:agent", "environment", "sandbox"))
		m := regexp.MustCompile(`id="new-key" data-id="[^"]+">([^<]+)<`).FindStringSubmatch(p.body)
		if p.status != http.StatusCreated || m == nil {
			t.Fatalf("create: %d", p.status)
		}
		kp, err := as.Authenticate(ctx, auth.ServiceEInvoice, m[1])
		if err != nil || kp.Environment != auth.EnvSandbox || strings.Join(kp.Scopes, " ") != "einvoices:read signing:agent" {
			t.Fatalf("the key: %+v %v", kp, err)
		}
		// A production key asks first, even from the sandbox.
		f := with(o.form("/dashboard/keys"), "scope", "inbox:read", "environment", "production")
		if p := o.do("POST", "/dashboard/keys", f); p.status != http.StatusOK || !strings.Contains(p.body, `name="confirm" value="yes"`) || count() != 1 {
			t.Fatalf("unconfirmed production key: %d, %d keys", p.status, count())
		}
		p = o.do("POST", "/dashboard/keys", with(f, "confirm", "yes"))
		m = regexp.MustCompile(`id="new-key" data-id="[^"]+">([^<]+)<`).FindStringSubmatch(p.body)
		if p.status != http.StatusCreated || m == nil || !strings.HasPrefix(m[1], "dn_live_") {
			t.Fatalf("confirmed production key: %d", p.status)
		}
		if kp, err := as.Authenticate(ctx, auth.ServiceEInvoice, m[1]); err != nil || kp.Environment != auth.EnvProduction || strings.Join(kp.Scopes, " ") != "inbox:read" {
			t.Fatalf("the production key: %+v %v", kp, err)
		}
	})
}

func TestDashboardWebhookEndpoints(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		w := newWorld(t, db)
		ctx := t.Context()
		hook := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { rw.WriteHeader(http.StatusNoContent) }))
		defer hook.Close()
		o := w.browser()
		o.signIn("owner@a.mk")
		s := w.browser()
		s.signIn("staff@a.mk")
		if p := s.do("POST", "/dashboard/webhooks", url.Values{"csrf": {s.csrf()}, "url": {hook.URL}, "event": {"*"}}); p.status != http.StatusForbidden {
			t.Fatalf("staff creates an endpoint: %d", p.status)
		}
		page := o.do("GET", "/dashboard/webhooks", nil)
		if !strings.Contains(page.body, `value="einvoice.submitted"`) || !strings.Contains(page.body, `id="wh-ev-all" name="event" value="*" checked`) {
			t.Fatal("the endpoint form lacks the event checkboxes")
		}
		for _, tc := range []struct {
			kv    []string
			errID string
		}{
			{[]string{"url", "ftp://example.mk/hook", "event", "*"}, "wh-url-err"},
			{[]string{"url", hook.URL}, "wh-events-err"},
			{[]string{"url", hook.URL, "event", "no.such.event"}, "wh-events-err"},
		} {
			p := o.do("POST", "/dashboard/webhooks", with(o.form("/dashboard/webhooks"), tc.kv...))
			if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="`+tc.errID+`"`) {
				t.Fatalf("%v: %d, no %s", tc.kv, p.status, tc.errID)
			}
		}
		f := with(o.form("/dashboard/webhooks"), "url", hook.URL+"/denar", "event", "einvoice.submitted", "event", "inbox.received", "description", "Книговодство")
		p := o.do("POST", "/dashboard/webhooks", f)
		m := regexp.MustCompile(`id="new-secret" data-id="([^"]+)">(whsec_[^<]+)<`).FindStringSubmatch(p.body)
		if p.status != http.StatusCreated || m == nil {
			t.Fatalf("create: %d", p.status)
		}
		id, secret := m[1], m[2]
		if again := o.do("POST", "/dashboard/webhooks", f); again.status != http.StatusConflict {
			t.Fatalf("the same form again: %d", again.status)
		}
		owner := &auth.Principal{AccountID: w.acctA, Environment: auth.EnvSandbox}
		eps, _ := w.hooks.WebhookEndpoints(ctx, owner, "", 10)
		if len(eps) != 1 || eps[0].ID != id || strings.Join(eps[0].Events, " ") != "einvoice.submitted inbox.received" || !eps[0].Enabled {
			t.Fatalf("endpoints: %+v", eps)
		}
		if list := o.do("GET", "/dashboard/webhooks", nil); strings.Contains(list.body, secret) || !strings.Contains(list.body, `data-id="`+id+`"`) {
			t.Fatal("the list shows the secret again, or not the endpoint")
		}
		// Disable, enable.
		for _, on := range []string{"false", "true"} {
			if p := o.do("POST", "/dashboard/webhooks/"+id+"/enabled", with(o.form("/dashboard/webhooks"), "enabled", on)); p.status != http.StatusSeeOther {
				t.Fatalf("enabled=%s: %d", on, p.status)
			}
			ep, _ := w.hooks.WebhookEndpoint(ctx, owner, id)
			if ep.Enabled != (on == "true") || (on == "false" && (ep.DisabledReason == nil || *ep.DisabledReason != "disabled_by_api")) {
				t.Fatalf("after enabled=%s: %+v", on, ep)
			}
		}
		// Rotate: a new secret shown once; the old one keeps signing a while.
		rf := o.form("/dashboard/webhooks")
		p = o.do("POST", "/dashboard/webhooks/"+id+"/rotate", rf)
		m = regexp.MustCompile(`id="new-secret" data-id="[^"]+">(whsec_[^<]+)<`).FindStringSubmatch(p.body)
		if p.status != http.StatusOK || m == nil || m[1] == secret {
			t.Fatalf("rotate: %d", p.status)
		}
		if again := o.do("POST", "/dashboard/webhooks/"+id+"/rotate", rf); again.status != http.StatusConflict || strings.Contains(again.body, "whsec_") {
			t.Fatalf("the rotate form again: %d", again.status)
		}
		if ep, _ := w.hooks.WebhookEndpoint(ctx, owner, id); ep.PreviousSecretExpiresAt == nil {
			t.Fatal("no previous secret after the rotation")
		}
		// Another account's endpoint is unknown.
		b := w.browser()
		b.signIn("owner@b.mk")
		if p := b.do("POST", "/dashboard/webhooks/"+id+"/rotate", b.form("/dashboard/webhooks")); p.status != http.StatusNotFound {
			t.Fatalf("another account rotates: %d", p.status)
		}
		got := w.actions(w.acctA)
		if got["webhook.create"] != 1 || got["webhook.disable"] != 1 || got["webhook.enable"] != 1 || got["webhook.rotate_secret"] != 1 {
			t.Fatalf("audit: %v", got)
		}
	})
}
