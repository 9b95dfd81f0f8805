package dashboard

// The home page: what needs an accountant's attention now, across the
// companies of the environment.

import (
	"net/http"
	"sort"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
)

// soonDays is how near an incoming invoice's decision deadline must be to
// need attention (the reminders go at 5, 2 and 1 days).
const soonDays = 5

// homeLimit bounds each list of the home page.
const homeLimit = 10

type homeData struct {
	base
	// Deadlines are pending incoming invoices whose deadline is within
	// soonDays, soonest first.
	Deadlines []inboxRow
	// Stuck are e-invoices that failed or are held, newest first.
	Stuck []einvoicing.EInvoice
	Names map[string]string
	// Offline are the companies whose signer is not ready.
	Offline []companies.Company
	// Failing are the webhook endpoints failing or disabled (owners only).
	Failing []webhooks.WebhookEndpoint
	// Checks are the last go-live check (denar ujp check) of each
	// company that had one.
	Checks []checkRow
	// Quiet: nothing needs attention.
	Quiet bool
}

// checkRow is a company's last go-live check and its lines that do not
// hold.
type checkRow struct {
	reconcile.UJPCheckReport
	CompanyName string
	Bad         []reconcile.CheckLine
}

func (d *Dashboard) home(q *req) {
	ctx, p := q.r.Context(), q.principal()
	cs, err := d.companyList(q)
	if err != nil {
		d.failErr(q, err)
		return
	}
	data := homeData{base: d.baseFor(q, "home", "home.title"), Names: companyNames(cs)}
	before := time.Now().In(skopje).AddDate(0, 0, soonDays+1).Format(time.DateOnly) // decideBy before it: within soonDays
	if t := d.d.Service.Now(); !t.IsZero() {
		before = t.In(skopje).AddDate(0, 0, soonDays+1).Format(time.DateOnly)
	}
	for _, c := range cs {
		if !c.Environments.Sandbox.SignerReady && !c.Environments.Production.SignerReady && c.Status == "active" {
			data.Offline = append(data.Offline, c)
		}
		docs, err := d.d.Inbox.Inbox(ctx, p, c.ID, inbox.InboxFilter{Status: "pending", DeadlineBefore: before}, "")
		if err != nil {
			d.failErr(q, err)
			return
		}
		for _, doc := range docs {
			if doc.Decision.Requested == nil {
				data.Deadlines = append(data.Deadlines, inboxRow{InboxDocument: doc, CompanyName: c.Name})
			}
		}
		for _, st := range []string{"failed", "held"} {
			rows, err := d.d.Service.EInvoices(ctx, p, c.ID, einvoicing.EInvoiceFilter{Status: st}, "", homeLimit)
			if err != nil {
				d.failErr(q, err)
				return
			}
			data.Stuck = append(data.Stuck, rows...)
		}
	}
	sort.SliceStable(data.Deadlines, func(i, j int) bool { return data.Deadlines[i].DecideBy < data.Deadlines[j].DecideBy })
	sort.Slice(data.Stuck, func(i, j int) bool { return data.Stuck[i].ID > data.Stuck[j].ID })
	data.Deadlines = data.Deadlines[:min(len(data.Deadlines), homeLimit)]
	data.Stuck = data.Stuck[:min(len(data.Stuck), homeLimit)]
	if data.Owner() {
		eps, err := d.d.Webhooks.WebhookEndpoints(ctx, p, "", pageSize)
		if err != nil {
			d.failErr(q, err)
			return
		}
		for _, ep := range eps {
			if ep.Environment == q.s.Environment && (!ep.Enabled || ep.FailingSince != nil) {
				data.Failing = append(data.Failing, ep)
			}
		}
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	checks, err := d.d.Reconcile.LastUJPChecks(ctx, p, ids)
	if err != nil {
		d.failErr(q, err)
		return
	}
	failing := 0
	for _, c := range cs {
		rep, ok := checks[c.ID]
		if !ok {
			continue
		}
		row := checkRow{CompanyName: c.Name, UJPCheckReport: rep}
		for _, l := range rep.Lines {
			if l.State == reconcile.CheckFail || l.State == reconcile.CheckWarn {
				row.Bad = append(row.Bad, l)
			}
		}
		if !rep.OK {
			failing++
		}
		data.Checks = append(data.Checks, row)
	}
	data.Quiet = len(data.Deadlines)+len(data.Stuck)+len(data.Offline)+len(data.Failing)+failing == 0
	d.render(q.w, http.StatusOK, "home", data)
}

// notFound is the page of a /dashboard URL that is none: in the user's
// language, with the way back.
func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request) {
	lang := d.lang(r)
	b := base{Lang: lang, cat: d.cat, Path: r.URL.RequestURI()}
	b.Title = b.T("notfound.title")
	b.Error = b.T("notfound.page")
	d.render(w, http.StatusNotFound, "error", struct{ base }{b})
}
