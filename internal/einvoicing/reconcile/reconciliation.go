package reconcile

// The reconciliation resource: one company's day compared with UJP's
// records (reconcile.go runs it). POST /v1/reconciliations asks for a day,
// GET lists and reads them.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/usecase"
)

// States of a reconciliation.
const (
	ReconciliationRunning   = "running"
	ReconciliationCompleted = "completed"
)

// Reconciliation is the public reconciliation object: what one run found
// comparing a company's documents of a day with UJP's.
type Reconciliation struct {
	ID          string                  `json:"id" example:"rcn_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"Prefix rcn_."`
	Object      string                  `json:"object" enum:"reconciliation" example:"reconciliation" doc:"Always reconciliation."`
	Date        string                  `json:"date" format:"date" example:"2026-05-04" doc:"The day reconciled (Europe/Skopje): the documents UJP received on it."`
	Environment string                  `json:"environment" enum:"sandbox,production" example:"production" doc:"The environment of the company and of the UJP it was compared with."`
	CompanyID   string                  `json:"companyId" example:"cmp_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The company (cmp_…)."`
	State       string                  `json:"state" enum:"running,completed" example:"completed" doc:"running: UJP's records are being read (each read signed by the company's agent, at the lowest priority of its UJP user); completed: the figures are final."`
	Clean       bool                    `json:"clean" doc:"true once completed with nothing repaired, discovered, missing at UJP or added to the inbox, and no problems: proof that the service's records of the day were complete."`
	Runs        int                     `json:"runs" example:"1" doc:"How many times the day was reconciled (a completed day asked for again runs again; the figures are the last run's)."`
	Sales       ReconciliationSales     `json:"sales" doc:"The company's own documents (UJP's sales side)."`
	Purchase    ReconciliationPurchase  `json:"purchase" doc:"The documents the company received (UJP's purchase side) against the inbox."`
	Problems    []ReconciliationProblem `json:"problems" doc:"What the run could not settle; empty when nothing. See docs/errors.md, reconciliation problems."`
	StartedAt   time.Time               `json:"startedAt" example:"2026-05-05T01:00:00Z" doc:"When the (last) run started."`
	CompletedAt *time.Time              `json:"completedAt" example:"2026-05-05T01:00:09Z" doc:"When it completed; null while running."`
	CreatedAt   time.Time               `json:"createdAt" example:"2026-05-05T01:00:00Z" doc:"When the day was first asked for."`
	UpdatedAt   time.Time               `json:"updatedAt" example:"2026-05-05T01:00:09Z" doc:"When the run last moved."`
}

// ReconciliationSales are the figures of UJP's sales side.
type ReconciliationSales struct {
	AtUJP        int `json:"atUJP" example:"42" doc:"Documents UJP lists as issued by the company on the day (sales-invoice/ids)."`
	AtDenar      int `json:"atDenar" example:"41" doc:"Of the service's own documents, those UJP lists for the day (by EUID or docId) and those delivered on the day that UJP does not list."`
	Matched      int `json:"matched" example:"40" doc:"Documents UJP and the service agree on: same EUID, same status."`
	Repaired     int `json:"repaired" example:"1" doc:"Documents the service showed otherwise (queued, submitting, held, failed, or behind UJP's status) moved to UJP's status (history cause reconciled)."`
	Discovered   int `json:"discovered" example:"1" doc:"Documents UJP holds that the service never issued, imported as e-invoices of kind external (event einvoice.discovered)."`
	MissingAtUJP int `json:"missingAtUJP" example:"0" doc:"Documents the service shows delivered (or later) that UJP does not know, flagged with problem ujp_missing (event einvoice.missing_at_ujp)."`
}

// ReconciliationPurchase are the figures of UJP's purchase side.
type ReconciliationPurchase struct {
	AtUJP   int `json:"atUJP" example:"7" doc:"Documents UJP lists as received by the company on the day (purchase-invoice/ids)."`
	InInbox int `json:"inInbox" example:"6" doc:"Of those, the ones already in the inbox."`
	Added   int `json:"added" example:"1" doc:"The ones added to the inbox by the run (event inbox.received)."`
}

// ReconciliationProblem is one thing a run could not settle.
type ReconciliationProblem struct {
	Code       string `json:"code" enum:"status_unknown,status_conflict,ambiguous_match,payload_missing,privilege_missing,access_refused" example:"privilege_missing" doc:"A stable code (docs/errors.md, reconciliation problems)."`
	Message    string `json:"message" doc:"What happened and what to do, in words."`
	EUID       string `json:"euid,omitempty" doc:"UJP's EUID of the document concerned, when one is."`
	EInvoiceID string `json:"einvoiceId,omitempty" doc:"The e-invoice concerned (einv_…), when one is."`
}

// Path is the reconciliation's path in the API.
func (r Reconciliation) Path() string { return "/v1/reconciliations/" + r.ID }

// reconCounts is the counts column.
type reconCounts struct {
	Sales    ReconciliationSales    `json:"sales"`
	Purchase ReconciliationPurchase `json:"purchase"`
}

func (c reconCounts) fixed() bool {
	return c.Sales.Repaired+c.Sales.Discovered+c.Sales.MissingAtUJP+c.Purchase.Added > 0
}

func decodeCounts(raw string) reconCounts {
	var c reconCounts
	_ = json.Unmarshal([]byte(raw), &c)
	return c
}

func decodeReconProblems(raw string) []ReconciliationProblem {
	out := []ReconciliationProblem{}
	_ = json.Unmarshal([]byte(raw), &out)
	return out
}

func reconciliationView(r dbq.Reconciliation) Reconciliation {
	c := decodeCounts(r.Counts)
	probs := decodeReconProblems(r.Problems)
	v := Reconciliation{ID: r.ID, Object: "reconciliation", Date: r.Day, Environment: r.Environment, CompanyID: r.CompanyID,
		State: r.State, Runs: int(r.Runs), Sales: c.Sales, Purchase: c.Purchase, Problems: probs,
		StartedAt: r.StartedAt.UTC(), CompletedAt: store.TimeOrNil(r.CompletedAt), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	v.Clean = r.State == ReconciliationCompleted && !c.fixed() && len(probs) == 0
	return v
}

// reconciliationRow loads a reconciliation within the caller's reach
// (auth.InReach).
func reconciliationRow(ctx context.Context, q *dbq.Queries, p *auth.Principal, id string) (dbq.Reconciliation, error) {
	sc := einvoicing.ScopeOf(p)
	r, err := q.GetReconciliationInReach(ctx, dbq.GetReconciliationInReachParams{ID: id, AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed})
	return auth.InReach(ctx, q, p, "Reconciliation", id, r, err)
}

// Reconciliation returns one reconciliation.
func (s *Service) Reconciliation(ctx context.Context, p *auth.Principal, id string) (Reconciliation, error) {
	r, err := reconciliationRow(ctx, s.db.Reader(), p, id)
	if err != nil {
		return Reconciliation{}, err
	}
	return reconciliationView(r), nil
}

// ReconciliationFilter selects reconciliations; empty fields do not
// filter.
type ReconciliationFilter struct {
	CompanyID string
	Date      string
}

// Reconciliations returns up to limit+1 reconciliations of the account in
// the credential's environment and allow-list, newest first, after the id
// after.
func (s *Service) Reconciliations(ctx context.Context, p *auth.Principal, f ReconciliationFilter, after string, limit int) ([]Reconciliation, error) {
	if f.Date != "" {
		if _, err := time.Parse(time.DateOnly, f.Date); err != nil {
			return nil, denar.Invalid(denar.FieldError{Path: "query.date", Message: "must be a date YYYY-MM-DD"})
		}
	}
	q := s.db.Reader()
	if f.CompanyID != "" {
		if _, err := einvoicing.CompanyRef(ctx, q, p, f.CompanyID); err != nil {
			return nil, err
		}
	}
	sc := einvoicing.ScopeOf(p)
	rows, err := q.ListReconciliations(ctx, dbq.ListReconciliationsParams{AccountID: sc.AccountID, Environment: sc.Environment,
		AllCompanies: sc.AllCompanies, Allowed: sc.Allowed, AfterID: after, CompanyID: store.NullText(f.CompanyID), Day: store.NullText(f.Date),
		Lim: int64(limit + 1)})
	if err != nil {
		return nil, fmt.Errorf("list reconciliations: %w", err)
	}
	out := make([]Reconciliation, 0, len(rows))
	for _, r := range rows {
		out = append(out, reconciliationView(r))
	}
	return out, nil
}

// Reconcile is the command of POST /v1/reconciliations.
type Reconcile struct {
	CompanyID string
	// Date is the day to reconcile, YYYY-MM-DD (Europe/Skopje).
	Date string
}

// Reconcile asks for the reconciliation of a company's day: the day's row
// (created now, or the one the daily job or an earlier call made) with its
// first read asked of the company's signer. A day running already answers
// as it is; a completed day runs again (runs + 1). The day must have ended
// in Skopje at least UJP's clock margin ago (5 minutes), so that UJP's
// lists of it are final: 422 at date otherwise.
func (s *Service) Reconcile(ctx context.Context, c einvoicing.Caller, cmd Reconcile) (Reconciliation, error) {
	var fe denar.FieldErrors
	if strings.TrimSpace(cmd.CompanyID) == "" {
		fe.Add("companyId", "is required")
	}
	if d, err := time.Parse(time.DateOnly, cmd.Date); err != nil {
		fe.Add("date", "must be a date YYYY-MM-DD")
	} else if last := pipeline.LastCompleteDay(s.db.Now()); d.Format(time.DateOnly) > last {
		fe.Add("date", "must be a day that has ended in Europe/Skopje (at most %s now: UJP's lists of a day are final %s after it ends)", last, pipeline.CompletionMargin)
	}
	if err := fe.Err(); err != nil {
		return Reconciliation{}, err
	}
	return usecase.Write(ctx, s.db, c, func(tx *store.Tx) (Reconciliation, error) {
		co, err := einvoicing.CompanyRef(ctx, tx.Queries, c.Principal, cmd.CompanyID)
		if err != nil {
			return Reconciliation{}, err
		}
		if co, err = einvoicing.Mandated(co, nil); err != nil {
			return Reconciliation{}, err
		}
		if _, err := einvoicing.CurrentCertificate(ctx, tx.Queries, co.ID, tx.Now); err != nil {
			return Reconciliation{}, err
		}
		r, created, err := s.startReconciliation(ctx, tx, co, cmd.Date)
		if err != nil {
			return Reconciliation{}, err
		}
		if !created && r.State == ReconciliationCompleted {
			if r, err = s.restartReconciliation(ctx, tx, co, r); err != nil {
				return Reconciliation{}, err
			}
		}
		return reconciliationView(r), nil
	})
}
