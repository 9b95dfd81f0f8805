package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/usage"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
)

// pageSize bounds every list: a page stays well under 100 KB.
const pageSize = 50

// maxLines is how many lines of an e-invoice its page shows (an e-invoice
// may have 1,000; the PDF has them all); maxAttempts how many of a
// delivery's latest attempts.
const (
	// progressRefresh is the reload interval, in seconds, of a page whose
	// document is on its way (no JavaScript: a meta refresh).
	progressRefresh = 5

	maxLines     = 100
	maxAttempts  = 5
	deliveryPage = 20
)

// latestAttempts keeps each delivery's last maxAttempts attempts.
func latestAttempts(ds []webhooks.WebhookDelivery) {
	for i := range ds {
		if a := ds[i].Attempts; len(a) > maxAttempts {
			ds[i].Attempts = a[len(a)-maxAttempts:]
		}
	}
}

func queryEscape(s string) string { return url.QueryEscape(s) }

// companyList is the companies of the session's environment (the first
// 100), for pickers and cross-company pages.
func (d *Dashboard) companyList(q *req) ([]companies.Company, error) {
	cs, err := d.d.Companies.Companies(q.r.Context(), q.principal(), "", 100)
	if len(cs) > 100 {
		cs = cs[:100]
	}
	return cs, err
}

type companiesData struct {
	base
	Companies []companies.Company
	Next      string
}

func (d *Dashboard) companies(q *req) {
	cs, err := d.d.Companies.Companies(q.r.Context(), q.principal(), q.r.URL.Query().Get("after"), pageSize)
	if err != nil {
		d.failErr(q, err)
		return
	}
	data := companiesData{base: d.baseFor(q, "companies", "companies.title")}
	if len(cs) > pageSize {
		cs = cs[:pageSize]
		data.Next = "/dashboard/companies?after=" + url.QueryEscape(cs[len(cs)-1].ID)
	}
	data.Companies = cs
	d.render(q.w, http.StatusOK, "companies", data)
}

type einvoicesData struct {
	base
	Companies []companies.Company
	Company   string
	F         einvoicing.EInvoiceFilter
	Statuses  []string
	Rows      []einvoicing.EInvoice
	Buyers    map[string]string
	// Names are the companies' names by id (the company column).
	Names map[string]string
	Next  string
}

// einvoiceStatuses are the statuses the filter offers: einvoice.Statuses.
func einvoiceStatuses() []string {
	out := make([]string, len(einvoice.Statuses))
	for i, st := range einvoice.Statuses {
		out[i] = string(st)
	}
	return out
}

// companyNames are the names of companies by id.
func companyNames(cs []companies.Company) map[string]string {
	m := make(map[string]string, len(cs))
	for _, c := range cs {
		m[c.ID] = c.Name
	}
	return m
}

// einvoices lists the e-invoices of every company of the environment the
// user may see (or of the company chosen), newest first. Each company's
// newest page after the cursor is read and the pages merged: ids sort by
// creation time, so the cursor (the last id shown) is one for all.
func (d *Dashboard) einvoices(q *req) {
	cs, err := d.companyList(q)
	if err != nil {
		d.failErr(q, err)
		return
	}
	v := q.r.URL.Query()
	data := einvoicesData{base: d.baseFor(q, "einvoices", "einvoices.title"), Companies: cs, Statuses: einvoiceStatuses(),
		Company: v.Get("company"), Buyers: map[string]string{}, Names: companyNames(cs),
		F: einvoicing.EInvoiceFilter{Status: v.Get("status"), IssuedFrom: v.Get("from"), IssuedTo: v.Get("to"),
			BuyerTaxNumber: strings.TrimSpace(v.Get("buyer")), Number: strings.TrimSpace(v.Get("number"))}}
	var rows []einvoicing.EInvoice
	for _, c := range cs {
		if data.Company != "" && c.ID != data.Company {
			continue
		}
		page, err := d.d.Service.EInvoices(q.r.Context(), q.principal(), c.ID, data.F, v.Get("after"), pageSize)
		if errs := d.fieldErrs(q, err); errs != nil {
			data.Errs = errs
			d.render(q.w, http.StatusUnprocessableEntity, "einvoices", data)
			return
		}
		if err != nil {
			d.failErr(q, err)
			return
		}
		rows = append(rows, page...)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID > rows[j].ID })
	if len(rows) > pageSize {
		rows = rows[:pageSize]
		nv := url.Values{}
		for k, vs := range v {
			nv[k] = vs
		}
		nv.Set("after", rows[len(rows)-1].ID)
		data.Next = "/dashboard/einvoices?" + nv.Encode()
	}
	data.Rows = rows
	for _, r := range rows {
		var req struct {
			Document struct {
				Buyer struct {
					BuyerName string `json:"buyerName"`
				} `json:"buyer"`
			} `json:"document"`
		}
		_ = json.Unmarshal(r.Document, &req)
		data.Buyers[r.ID] = req.Document.Buyer.BuyerName
	}
	d.render(q.w, http.StatusOK, "einvoices", data)
}

// stornoForm is what the storno form was sent with, shown again with its
// errors.
type stornoForm struct{ Reason, Comment string }

type einvoiceData struct {
	base
	CompanyName string
	Form        stornoForm
	Inv         einvoicing.EInvoice
	Doc         ujpdoc.Document
	MoreLines   int // lines not shown (the page shows the first maxLines)
	History     []einvoicing.StatusChange
	Problems    []map[string]any
	Signing     *einvoicing.SigningRequest
	VoidReasons []ujpdoc.Code
	CanStorno   bool
	// CanCorrect offers the correction form (a document of up to
	// maxFormLines lines; a longer one is corrected through the API).
	CanCorrect bool
}

func (d *Dashboard) einvoice(q *req) {
	d.showEInvoice(q, http.StatusOK, stornoForm{}, nil)
}

// companyName is the name of company id, or the id when it cannot be read.
func (d *Dashboard) companyName(q *req, id string) string {
	if c, err := d.d.Companies.Company(q.r.Context(), q.principal(), id); err == nil {
		return c.Name
	}
	return id
}

// showEInvoice renders an e-invoice's page; form and errs are a storno
// form sent back with its field errors.
func (d *Dashboard) showEInvoice(q *req, status int, form stornoForm, errs map[string]string) {
	ctx, p := q.r.Context(), q.principal()
	company, id := q.r.PathValue("company"), q.r.PathValue("id")
	inv, err := d.d.Service.EInvoice(ctx, p, company, id)
	if err != nil {
		d.failErr(q, err)
		return
	}
	hist, err := d.d.Service.StatusHistory(ctx, p, company, id)
	if err != nil {
		d.failErr(q, err)
		return
	}
	data := einvoiceData{base: d.baseFor(q, "einvoices", "einvoices.title"), Inv: inv, History: hist, Form: form,
		CompanyName: d.companyName(q, inv.CompanyID)}
	data.Errs = errs
	data.Title = inv.Number
	// The stored document is UJP's request: {requestTimestamp, document}.
	var req ujpdoc.Request
	if err := json.Unmarshal(inv.Document, &req); err == nil {
		data.Doc = req.Document
	}
	data.CanCorrect = data.Staff() && correctable(inv) && fitsForm(&data.Doc)
	if n := len(data.Doc.DocItems); n > maxLines {
		data.Doc.DocItems, data.MoreLines = data.Doc.DocItems[:maxLines], n-maxLines
	}
	_ = json.Unmarshal(inv.Problems, &data.Problems)
	if inv.SigningRequestID != nil {
		if sr, err := d.d.Signing.SigningRequest(ctx, p, *inv.SigningRequestID); err == nil {
			data.Signing = &sr
		}
	}
	switch inv.Status {
	case "delivered", "accepted", "auto_accepted":
		data.CanStorno = inv.Kind != "storno" && data.Staff()
	case "validating", "awaiting_signature", "queued", "submitting":
		data.Refresh = progressRefresh
	}
	if data.CanStorno {
		data.VoidReasons = d.d.Service.CodeLists(q.s.Environment).VoidReasons
	}
	if q.r.URL.Query().Get("done") != "" {
		data.Message = data.T("done")
	}
	d.render(q.w, status, "einvoice", data)
}

func (d *Dashboard) einvoicePDF(q *req) {
	pdf, err := d.d.Pipeline.PDF(q.r.Context(), q.principal(), q.r.PathValue("company"), q.r.PathValue("id"))
	if err != nil {
		d.failErr(q, err)
		return
	}
	sendDocument(q.w, "application/pdf", q.r.PathValue("id")+".pdf", pdf)
}

func (d *Dashboard) inboxPDF(q *req) {
	pdf, err := d.d.Inbox.InboxPDF(q.r.Context(), q.principal(), q.r.PathValue("company"), q.r.PathValue("id"))
	if err != nil {
		d.failErr(q, err)
		return
	}
	sendDocument(q.w, "application/pdf", q.r.PathValue("id")+".pdf", pdf)
}

func optionalText(s string) *string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

func (d *Dashboard) storno(q *req) {
	if !d.confirmed(q) {
		return
	}
	company, id := q.r.PathValue("company"), q.r.PathValue("id")
	f := q.r.PostForm
	reason := f.Get("reason")
	st, err := d.d.Service.StornoEInvoice(q.r.Context(), q.caller("einvoice.storno", id, reason),
		einvoicing.Storno{CompanyID: company, ID: id, Reason: reason, Comment: optionalText(f.Get("comment"))})
	if errs := d.fieldErrs(q, err); errs != nil {
		// Next to the fields, in the page's language, with what was typed.
		d.showEInvoice(q, http.StatusUnprocessableEntity, stornoForm{Reason: reason, Comment: f.Get("comment")}, errs)
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/einvoices/"+url.PathEscape(company)+"/"+url.PathEscape(st.ID)+"?done=1", http.StatusSeeOther)
}

// inboxRow is an inbox document with the company it belongs to.
type inboxRow struct {
	einvoicing.InboxDocument
	CompanyName string
}

type inboxData struct {
	base
	Companies []companies.Company
	Company   string
	Status    string
	Before    string
	Rows      []inboxRow
	Statuses  []string
}

// inbox lists the incoming documents of one company, or of every company
// of the environment, most urgent first: pending documents by decideBy,
// then the decided ones, newest first. Each company contributes its newest
// page (inbox.InboxPageSize documents) under the filters.
func (d *Dashboard) inbox(q *req) {
	cs, err := d.companyList(q)
	if err != nil {
		d.failErr(q, err)
		return
	}
	v := q.r.URL.Query()
	data := inboxData{base: d.baseFor(q, "inbox", "inbox.title"), Companies: cs, Company: v.Get("company"),
		Status: v.Get("status"), Before: v.Get("before"), Statuses: einvoice.DecisionStates}
	f := inbox.InboxFilter{Status: data.Status, DeadlineBefore: data.Before}
	for _, c := range cs {
		if data.Company != "" && c.ID != data.Company {
			continue
		}
		docs, err := d.d.Inbox.Inbox(q.r.Context(), q.principal(), c.ID, f, "")
		if err != nil {
			d.failErr(q, err)
			return
		}
		for _, doc := range docs {
			data.Rows = append(data.Rows, inboxRow{InboxDocument: doc, CompanyName: c.Name})
		}
	}
	sort.SliceStable(data.Rows, func(i, j int) bool {
		a, b := data.Rows[i], data.Rows[j]
		ap, bp := a.Decision.State == "pending", b.Decision.State == "pending"
		if ap != bp {
			return ap
		}
		if ap && a.DecideBy != b.DecideBy {
			return a.DecideBy < b.DecideBy
		}
		return a.ReceivedAt.After(b.ReceivedAt)
	})
	if len(data.Rows) > pageSize {
		data.Rows = data.Rows[:pageSize]
	}
	d.render(q.w, http.StatusOK, "inbox", data)
}

// decideForm is what a decision form was sent with, shown again with its
// errors.
type decideForm struct{ Decision, Reason, Comment string }

type inboxDocData struct {
	base
	CompanyName string
	Form        decideForm
	Doc         einvoicing.InboxDocument
	Problems    []map[string]any
	Signing     *einvoicing.SigningRequest
	Reasons     []ujpdoc.Code
	CanDecide   bool
}

func (d *Dashboard) inboxDoc(q *req) {
	d.showInboxDoc(q, http.StatusOK, decideForm{}, nil)
}

// showInboxDoc renders an incoming document's page; form and errs are a
// decision form sent back with its field errors.
func (d *Dashboard) showInboxDoc(q *req, status int, form decideForm, errs map[string]string) {
	ctx, p := q.r.Context(), q.principal()
	doc, err := d.d.Inbox.InboxDocument(ctx, p, q.r.PathValue("company"), q.r.PathValue("id"))
	if err != nil {
		d.failErr(q, err)
		return
	}
	data := inboxDocData{base: d.baseFor(q, "inbox", "inbox.title"), Doc: doc, Form: form, CompanyName: d.companyName(q, doc.CompanyID)}
	data.Errs = errs
	data.Title = doc.Number
	_ = json.Unmarshal(doc.Problems, &data.Problems)
	if doc.Decision.SigningRequestID != nil {
		if sr, err := d.d.Signing.SigningRequest(ctx, p, *doc.Decision.SigningRequestID); err == nil {
			data.Signing = &sr
		}
	}
	data.CanDecide = data.Staff() && doc.Decision.State == "pending" && doc.Decision.Requested == nil && doc.DaysLeft >= 0
	if doc.Decision.Requested != nil {
		data.Refresh = progressRefresh
	}
	if data.CanDecide {
		data.Reasons = d.d.Service.CodeLists(q.s.Environment).RejectReasons
	}
	if q.r.URL.Query().Get("done") != "" {
		data.Message = data.T("done")
	}
	d.render(q.w, status, "inboxdoc", data)
}

// decide accepts or rejects an incoming document: the same use case as
// POST /v1/inbox/{id}/accept and /reject, which asks the company's signer
// for the decision's signature.
func (d *Dashboard) decide(q *req) {
	if !d.confirmed(q) {
		return
	}
	company, id := q.r.PathValue("company"), q.r.PathValue("id")
	f := q.r.PostForm
	accept := f.Get("decision") == "accept"
	action, detail := "inbox.reject", f.Get("reason")
	if accept {
		action, detail = "inbox.accept", ""
	}
	cmd := inbox.DecideInbox{CompanyID: company, ID: id, Accept: accept, Comment: optionalText(f.Get("comment"))}
	if !accept {
		cmd.ReasonCode = f.Get("reason")
	}
	_, err := d.d.Inbox.DecideInbox(q.r.Context(), q.caller(action, id, detail), cmd)
	if errs := d.fieldErrs(q, err); errs != nil {
		// Next to the fields of the form that was sent, in the page's
		// language, with what was typed (an О-7 rejection needs a comment).
		form := decideForm{Decision: f.Get("decision"), Reason: f.Get("reason"), Comment: f.Get("comment")}
		d.showInboxDoc(q, http.StatusUnprocessableEntity, form, errs)
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/inbox/"+url.PathEscape(company)+"/"+url.PathEscape(id)+"?done=1", http.StatusSeeOther)
}

type confirmField struct{ Name, Value string }

type confirmData struct {
	base
	Action string
	Fields []confirmField
	Back   string
}

// confirmed reports whether the POST may go ahead: always in the sandbox;
// in production only with confirm=yes, else it answers with a page that
// repeats the form with confirm=yes (no JavaScript needed).
func (d *Dashboard) confirmed(q *req) bool { return d.confirmedFor(q, false) }

// confirmedFor is confirmed for an act that is a production one also when
// the session is in the sandbox (prod: creating a production key).
func (d *Dashboard) confirmedFor(q *req, prod bool) bool {
	if (q.s.Environment != auth.EnvProduction && !prod) || q.r.PostForm.Get("confirm") == "yes" {
		return true
	}
	data := confirmData{base: d.baseFor(q, "", "confirm.title"), Action: q.r.URL.Path, Back: q.r.Referer()}
	if !localPath(strings.TrimPrefix(data.Back, "http://"+q.r.Host)) {
		data.Back = "/dashboard/"
	}
	keys := make([]string, 0, len(q.r.PostForm))
	for k := range q.r.PostForm {
		if k != "csrf" && k != "confirm" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range q.r.PostForm[k] {
			data.Fields = append(data.Fields, confirmField{k, v})
		}
	}
	d.render(q.w, http.StatusOK, "confirm", data)
	return false
}

type eventsData struct {
	base
	Type   string
	Types  []string
	Rows   []webhooks.Event
	Next   string
	Object map[string]eventObject
	Names  map[string]string
}

// eventObject is what an event is about: the resource's id and, for a
// document, its number (the page links to it).
type eventObject struct {
	ID, Number, Link string
}

// objectOf reads the resource of an event's data ({"object": {...}}).
func objectOf(data json.RawMessage) eventObject {
	var d struct {
		Object struct {
			ID        string `json:"id"`
			Object    string `json:"object"`
			Number    string `json:"number"`
			CompanyID string `json:"companyId"`
		} `json:"object"`
	}
	_ = json.Unmarshal(data, &d)
	o := d.Object
	out := eventObject{ID: o.ID, Number: o.Number}
	switch o.Object {
	case webhooks.ResourceEInvoice:
		out.Link = "/dashboard/einvoices/" + url.PathEscape(o.CompanyID) + "/" + url.PathEscape(o.ID)
	case webhooks.ResourceInboxDocument:
		out.Link = "/dashboard/inbox/" + url.PathEscape(o.CompanyID) + "/" + url.PathEscape(o.ID)
	}
	return out
}

func (d *Dashboard) events(q *req) {
	v := q.r.URL.Query()
	cs, err := d.companyList(q)
	if err != nil {
		d.failErr(q, err)
		return
	}
	data := eventsData{base: d.baseFor(q, "events", "events.title"), Type: v.Get("type"), Object: map[string]eventObject{},
		Names: companyNames(cs)}
	for _, k := range webhooks.EventKinds() {
		if k.Type != webhooks.EventWebhookTest {
			data.Types = append(data.Types, k.Type)
		}
	}
	rows, err := d.d.Webhooks.Events(q.r.Context(), q.principal(), webhooks.EventFilter{Type: data.Type}, v.Get("after"), pageSize)
	if err != nil {
		d.failErr(q, err)
		return
	}
	if len(rows) > pageSize {
		rows = rows[:pageSize]
		data.Next = "/dashboard/events?type=" + url.QueryEscape(data.Type) + "&after=" + url.QueryEscape(rows[len(rows)-1].ID)
	}
	data.Rows = rows
	for _, e := range rows {
		data.Object[e.ID] = objectOf(e.Data)
	}
	d.render(q.w, http.StatusOK, "events", data)
}

type eventData struct {
	base
	Ev          webhooks.Event
	CompanyName string
	Object      eventObject
	Data        string
	Deliveries  []webhooks.WebhookDelivery
}

func (d *Dashboard) event(q *req) {
	ctx, p := q.r.Context(), q.principal()
	id := q.r.PathValue("id")
	ev, err := d.d.Webhooks.Event(ctx, p, id)
	if err != nil {
		d.failErr(q, err)
		return
	}
	ds, err := d.d.Webhooks.EventDeliveries(ctx, p, id, webhooks.DeliveryFilter{}, "", deliveryPage)
	if err != nil {
		d.failErr(q, err)
		return
	}
	if len(ds) > deliveryPage {
		ds = ds[:deliveryPage]
	}
	latestAttempts(ds)
	data := eventData{base: d.baseFor(q, "events", "events.title"), Ev: ev, Deliveries: ds, Object: objectOf(ev.Data)}
	if ev.CompanyID != "" {
		data.CompanyName = d.companyName(q, ev.CompanyID)
	}
	data.Title = data.EnumText("event", ev.Type)
	var pretty strings.Builder
	if b, err := json.MarshalIndent(json.RawMessage(ev.Data), "", "  "); err == nil && len(b) < 16<<10 {
		pretty.Write(b)
	}
	data.Data = pretty.String()
	if q.r.URL.Query().Get("done") != "" {
		data.Message = data.T("done")
	}
	d.render(q.w, http.StatusOK, "event", data)
}

func (d *Dashboard) replay(q *req) {
	if !d.confirmed(q) {
		return
	}
	id := q.r.PathValue("id")
	ep := q.r.PostForm.Get("endpoint")
	if _, err := d.d.Webhooks.ReplayEvent(q.r.Context(), q.caller("event.replay", id, ep), id, ep); err != nil {
		d.failErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/events/"+url.PathEscape(id)+"?done=1", http.StatusSeeOther)
}

type keysData struct {
	base
	Keys    []auth.APIKey
	Clients []auth.OAuthClient
	Secret  string // a new key's secret, shown once
	NewID   string
	// ClientSecret and NewClient are a new OAuth client's, shown once.
	ClientSecret, NewClient string
	// Scopes are the key form's checkboxes; KeyEnv its environment.
	Scopes []scopeChoice
	KeyEnv string
}

func (d *Dashboard) keys(q *req) {
	d.showKeys(q, http.StatusOK, keysData{})
}

func (d *Dashboard) showKeys(q *req, status int, data keysData) {
	ks, err := d.d.Users.AccountKeys(q.r.Context(), q.principal())
	if err != nil {
		d.failErr(q, err)
		return
	}
	if len(ks) > 2*pageSize {
		ks = ks[:2*pageSize]
	}
	cs, err := d.d.Users.AccountClients(q.r.Context(), q.principal())
	if err != nil {
		d.failErr(q, err)
		return
	}
	if len(cs) > pageSize {
		cs = cs[:pageSize]
	}
	errs := data.Errs
	data.base, data.Keys, data.Clients = d.baseFor(q, "keys", "keys.title"), ks, cs
	data.Errs = errs
	if data.Scopes == nil {
		data.Scopes = scopeChoices(auth.EInvoiceDefaultScopes)
	}
	if data.KeyEnv == "" {
		data.KeyEnv = q.s.Environment
	}
	if q.r.URL.Query().Get("done") != "" {
		data.Message = data.T("done")
	}
	d.render(q.w, status, "keys", data)
}

func (d *Dashboard) createClient(q *req) {
	if !d.confirmed(q) {
		return
	}
	c, secret, err := d.d.Users.CreateAccountClient(q.r.Context(), q.principal(), q.audit("oauth_client.create", "", ""))
	if err != nil {
		d.failErr(q, err)
		return
	}
	d.showKeys(q, http.StatusCreated, keysData{NewClient: c.ID, ClientSecret: secret})
}

func (d *Dashboard) revokeClient(q *req) {
	if !d.confirmed(q) {
		return
	}
	id := q.r.PathValue("id")
	err := d.d.Users.RevokeAccountClient(q.r.Context(), q.principal(), id, q.audit("oauth_client.revoke", id, ""))
	if errors.Is(err, auth.ErrUserNotFound) {
		d.failUser(q, http.StatusNotFound, "notfound")
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/keys?done=1", http.StatusSeeOther)
}

func (d *Dashboard) revokeKey(q *req) {
	if !d.confirmed(q) {
		return
	}
	id := q.r.PathValue("id")
	err := d.d.Users.RevokeAccountKey(q.r.Context(), q.principal(), id, q.audit("key.revoke", id, ""))
	if errors.Is(err, auth.ErrUserNotFound) {
		d.failUser(q, http.StatusNotFound, "notfound")
		return
	}
	if err != nil {
		d.failErr(q, err)
		return
	}
	http.Redirect(q.w, q.r, "/dashboard/keys?done=1", http.StatusSeeOther)
}

// bar is one month of the usage chart.
type bar struct {
	Period               string
	Sent, Received       int
	Billable             int
	X, SentY, SentH      int
	RecvX, RecvY, RecvH  int
	LabelX               int
	SentLabel, RecvLabel string
}

type usageData struct {
	base
	Bars     []bar
	Plan     usage.UsagePlan
	ShowPlan bool
	PlanY    int
	Width    int
	Height   int
	Max      int
	Currency string
}

// Chart geometry (SVG user units).
const (
	chartH    = 200
	chartTop  = 20
	barW      = 22
	groupW    = 70
	chartLeft = 40
)

func (d *Dashboard) usage(q *req) {
	now := time.Now().In(skopje)
	if t := d.d.Service.Now(); !t.IsZero() {
		now = t.In(skopje)
	}
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, skopje)
	data := usageData{base: d.baseFor(q, "usage", "usage.title")}
	for i := 5; i >= 0; i-- {
		period := first.AddDate(0, -i, 0).Format("2006-01")
		u, err := d.d.Usage.Usage(q.r.Context(), q.principal(), usage.Query{Period: period, Environment: q.s.Environment})
		if err != nil {
			d.failErr(q, err)
			return
		}
		data.Plan = u.Plan
		data.Bars = append(data.Bars, bar{Period: period, Sent: u.Totals.Sent, Received: u.Totals.Received, Billable: u.Totals.Billable})
	}
	// The plan's allowance counts production documents only: the line is
	// drawn (and scales the chart) in production.
	top := 1
	if q.s.Environment == auth.EnvProduction {
		top = max(top, data.Plan.IncludedDocuments)
		data.ShowPlan = data.Plan.IncludedDocuments > 0
	}
	for _, b := range data.Bars {
		top = max(top, b.Sent, b.Received)
	}
	data.Max = top
	scale := func(n int) int {
		h := n * chartH / top
		if n > 0 && h < 2 {
			h = 2 // a month with documents is never an empty bar
		}
		return h
	}
	for i := range data.Bars {
		b := &data.Bars[i]
		b.X = chartLeft + i*groupW
		b.SentH, b.RecvH = scale(b.Sent), scale(b.Received)
		b.SentY, b.RecvY = chartTop+chartH-b.SentH, chartTop+chartH-b.RecvH
		b.RecvX = b.X + barW + 2
		b.LabelX = b.X + barW
		b.SentLabel = fmt.Sprintf("%s %s: %d", b.Period, data.T("usage.sent"), b.Sent)
		b.RecvLabel = fmt.Sprintf("%s %s: %d", b.Period, data.T("usage.received"), b.Received)
	}
	data.PlanY = chartTop + chartH - scale(data.Plan.IncludedDocuments)
	data.Width = chartLeft + len(data.Bars)*groupW + 10
	data.Height = chartTop + chartH + 30
	d.render(q.w, http.StatusOK, "usage", data)
}

type auditData struct {
	base
	Rows []auth.AuditRecord
}

func (d *Dashboard) audit(q *req) {
	rows, err := d.d.Users.AuditLog(q.r.Context(), q.principal(), 2*pageSize)
	if err != nil {
		d.failErr(q, err)
		return
	}
	d.render(q.w, http.StatusOK, "audit", auditData{base: d.baseFor(q, "audit", "audit.title"), Rows: rows})
}

type webhookData struct {
	base
	Endpoint   webhooks.WebhookEndpoint
	State      string
	States     []string
	Deliveries []webhooks.WebhookDelivery
	Next       string
}

// webhook shows one endpoint's deliveries, newest first, by state, each
// with its attempts and a replay of its event to this endpoint.
func (d *Dashboard) webhook(q *req) {
	ctx, p := q.r.Context(), q.principal()
	id := q.r.PathValue("id")
	ep, err := d.d.Webhooks.WebhookEndpoint(ctx, p, id)
	if err != nil {
		d.failErr(q, err)
		return
	}
	v := q.r.URL.Query()
	data := webhookData{base: d.baseFor(q, "webhooks", "webhooks.title"), Endpoint: ep, State: v.Get("state"),
		States: []string{"pending", "failed", "succeeded", "abandoned"}}
	data.Title = ep.URL
	ds, err := d.d.Webhooks.EndpointDeliveries(ctx, p, id, webhooks.DeliveryFilter{State: data.State}, v.Get("after"), deliveryPage)
	if err != nil {
		d.failErr(q, err)
		return
	}
	if len(ds) > deliveryPage {
		ds = ds[:deliveryPage]
		data.Next = "/dashboard/webhooks/" + url.PathEscape(id) + "?state=" + url.QueryEscape(data.State) + "&after=" + url.QueryEscape(ds[len(ds)-1].ID)
	}
	latestAttempts(ds)
	data.Deliveries = ds
	d.render(q.w, http.StatusOK, "webhook", data)
}
