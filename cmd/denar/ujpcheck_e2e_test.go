package main

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/store/storetest"
	"github.com/denar-mk/denar/sdk/signer"
)

// TestUJPCheckAgainstStrictSimulator is the go-live check, `denar ujp
// check`, against a strict `denar ujp-sim` whose users, certificates and
// privileges are registered out of band: every line holds for a company
// set up as at UJP's portal (exit status 0), and each fault makes its own
// line fail (exit status 1) with what to do: an identity UJP does not
// know, a clock off UJP's, a portal privilege revoked, changed code lists,
// a certificate UJP does not know. The dashboard shows each company's last
// check.
func TestUJPCheckAgainstStrictSimulator(t *testing.T) {
	t.Parallel()
	storetest.EachMigratedURL(t, func(t *testing.T, dbURL string) {
		t.Parallel()
		u := newStrictUJPWorld(t, dbURL)
		a, b := u.companies[0], u.companies[1]

		// A company set up as at UJP: every line holds.
		rep, code, _ := u.check(nil, "--company", a.id, "--sign", "--json")
		if code != 0 || !rep.OK {
			t.Fatalf("a company set up at UJP: exit %d, %+v", code, rep.Lines)
		}
		for _, l := range rep.Lines {
			if l.State != reconcile.CheckOK {
				t.Errorf("line %s: %s %s", l.Name, l.State, l.Detail)
			}
		}
		if d := rep.Line(reconcile.LineRegistry).Detail; !strings.Contains(d, a.name) || !strings.Contains(d, "Скопје") {
			t.Errorf("registry line: %s", d)
		}
		if d := rep.Line(reconcile.LinePrivileges).Detail; d != "granted: DP, RD, DA" {
			t.Errorf("privileges line: %s", d)
		}
		if d := rep.Line(reconcile.LineIdentity).Detail; !strings.Contains(d, strictOperator) || !strings.Contains(d, strictSigner) {
			t.Errorf("identity line: %s", d)
		}
		if d := rep.Line(reconcile.LineRateBudget).Detail; !strings.Contains(d, strictOperator) || !strings.Contains(d, strictSigner) {
			t.Errorf("rate line: %s", d)
		}
		// The table, for a person.
		_, code, out := u.check(nil, "--company", b.id)
		if code != 0 || !strings.Contains(out, "Every line holds") || !strings.Contains(out, "certificate") || !strings.Contains(out, "SKIPPED") {
			t.Fatalf("the table: exit %d\n%s", code, out)
		}

		fails := func(what string, rep reconcile.UJPCheckReport, code int, line, detail, action string) {
			t.Helper()
			l := rep.Line(line)
			if code != 1 || rep.OK || l.State != reconcile.CheckFail || !strings.Contains(l.Detail, detail) || !strings.Contains(l.Action, action) {
				t.Fatalf("%s: exit %d, line %s: %+v\nall lines: %+v", what, code, line, l, rep.Lines)
			}
		}

		// An operator identity UJP does not know.
		rep, code, _ = u.check([]string{"DENAR_UJP_USER=NOT-AT-UJP"}, "--company", a.id, "--json")
		fails("wrong identity", rep, code, reconcile.LineIdentity, "E1010", "DENAR_UJP_USER")

		// UJP's clock 10 minutes off this host's.
		u.simControl("/_sim/clock/skew", `{"seconds":600}`)
		rep, code, _ = u.check(nil, "--company", a.id, "--json")
		fails("skewed clock", rep, code, reconcile.LineServerTime, "behind it", "NTP")
		// UJP's time has whole seconds: the skew is known to a second.
		if d := rep.Line(reconcile.LineServerTime).Detail; !regexp.MustCompile(`is (9m59s|10m0s|10m1s) behind it`).MatchString(d) {
			t.Fatalf("skewed clock: %s", d)
		}
		u.simControl("/_sim/clock/skew", `{"seconds":0}`)

		// A portal privilege revoked.
		u.simAdmin("revoke", "-eujp-id", strictSigner, "-edb", a.tax, "DA")
		rep, code, _ = u.check(nil, "--company", a.id, "--sign", "--json")
		fails("missing privilege", rep, code, reconcile.LinePrivileges, "missing: DA", "grant the signer's user")
		if l := rep.Line(reconcile.LineCertificate); l.State != reconcile.CheckOK {
			t.Fatalf("certificate line with a privilege missing: %+v", l)
		}
		u.simAdmin("grant", "-eujp-id", strictSigner, "-edb", a.tax, "DA")

		// UJP's code lists changed (for this company's calls).
		u.simControl("/_sim/sellers/"+a.tax+"/code-lists", `{"changed":true}`)
		rep, code, _ = u.check(nil, "--company", a.id, "--json")
		fails("changed code lists", rep, code, reconcile.LineCodeLists, "+DDV-14-3-10", "GET /v1/codebooks")
		if d := rep.Line(reconcile.LineCodeLists).Detail; !strings.Contains(d, "-P13") || !strings.Contains(d, "~100") {
			t.Fatalf("code-list line: %s", d)
		}
		u.simControl("/_sim/sellers/"+a.tax+"/code-lists", `{"changed":false}`)

		// A certificate registered with denar that UJP does not know.
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "Марија Николовска", Organization: []string{b.name}},
			NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(certValidity)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &u.signKey.PublicKey, u.signKey)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(der)
		if err := signer.RegisterCertificateAs(t.Context(), http.DefaultClient, u.creds, cert, b.id, strictSigner); err != nil {
			t.Fatal(err)
		}
		rep, code, _ = u.check(nil, "--company", b.id, "--sign", "--json")
		fails("unregistered certificate", rep, code, reconcile.LineCertificate, "E1012", "Register the certificate (serial "+cert.SerialNumber.String())

		// The dashboard's home page shows each company's last check: a's
		// found the changed code lists, b's the unknown certificate.
		home := u.dashboardHome()
		rowA := regexp.MustCompile(`<tr class="check" data-company="` + a.id + `" data-ok="false">.*?</tr>`).FindString(home)
		rowB := regexp.MustCompile(`<tr class="check" data-company="` + b.id + `" data-ok="false">.*?</tr>`).FindString(home)
		if !strings.Contains(rowA, `data-line="code_lists"`) || strings.Contains(rowA, `data-line="certificate"`) ||
			!strings.Contains(rowB, `data-line="certificate"`) || !strings.Contains(rowB, "E1012") {
			t.Fatalf("the home page's go-live checks:\n%s", home)
		}
	})
}

// check runs `denar ujp check --env sandbox args…` with serve's
// configuration (and extra); the report is read when --json asked for it.
func (u *strictUJPWorld) check(extra []string, args ...string) (reconcile.UJPCheckReport, int, string) {
	u.t.Helper()
	cmd := exec.Command(denarBin, append([]string{"ujp", "check", "--env", "sandbox", "--wait", "30s"}, args...)...)
	cmd.Env = append(append([]string{}, u.srv.env...), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		u.t.Fatal(err)
	}
	var rep reconcile.UJPCheckReport
	if strings.Contains(strings.Join(args, " "), "--json") {
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			u.t.Fatalf("denar ujp check %s: exit %d, %v\n%s\n%s", strings.Join(args, " "), code, err, stdout.String(), stderr.String())
		}
	}
	return rep, code, stdout.String()
}

// simControl posts body to the simulator's control API.
func (u *strictUJPWorld) simControl(path, body string) {
	u.t.Helper()
	if r := call(u.t, "POST", u.sim.url+path, simToken, nil, body); r.status != 200 {
		u.t.Fatalf("%s: %d %s", path, r.status, r.body)
	}
}

// dashboardHome signs in to the dashboard as a new owner of the account
// and returns its home page.
func (u *strictUJPWorld) dashboardHome() string {
	t := u.t
	t.Helper()
	var user struct{ Email, Password string }
	if err := json.Unmarshal([]byte(runAdminCmd(t, u.srv.env, "user", "create", "--account", u.account, "--email", "check@biro.mk",
		"--role", "owner", "--json")), &user); err != nil || user.Password == "" {
		t.Fatalf("user create: %v %+v", err, user)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string) {
		resp, err := c.Get(u.srv.einvoice + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, page := get("/dashboard/login")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field on the sign-in page")
	}
	resp, err := c.PostForm(u.srv.einvoice+"/dashboard/login", url.Values{"csrf": {m[1]}, "email": {user.Email}, "password": {user.Password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	status, home := get("/dashboard/")
	if status != 200 {
		t.Fatalf("home page: %d\n%s", status, home)
	}
	return home
}
