package reconcile

// Daily reconciliation: a company's records of a day against UJP's. UJP
// has no push and answers lost in flight, change feeds read on a day and
// the inbox's month window each leave room for a document to be missed;
// reconciling a finished day closes that room, and a day with nothing to
// fix proves the sync of that day complete (docs/reconciliation.md).
//
// A run is one row of reconciliations (UNIQUE company, environment, day)
// moved by signed reads, each a signing request of purpose query the
// company's agent signs, run by the einvoice.ujp_query job at the lowest
// priority of the signer's UJP user (ujp.PriorityBackground):
//
//	sales_ids          sales-invoice/ids [day, day]         UJP's documents of the day
//	sales_status       sales-invoice/invoices-status        their statuses and headlines; ours by EUID
//	                   [day, day]                           are matched or repaired
//	sales_current      sales-invoice/current-status         one listed document the status list left out
//	sales_payloads     sales-invoice/payload/list (≤100)    the rest by header.docId: ours repaired,
//	                                                        others imported as kind external; without RD
//	                                                        by number, date, gross and buyer
//	missing_current    sales-invoice/current-status         one of ours delivered on the day that UJP did
//	                                                        not list: not found (E4008) is flagged ujp_missing
//	purchase_ids       purchase-invoice/ids [day, day]      UJP's incoming documents of the day
//	purchase_payloads  purchase-invoice/payload/list (≤100) those not in the inbox, stored as the inbox sync
//	                                                        stores them (einvoicing.Service.StoreIncoming)
//	purchase_status    purchase-invoice/invoices-status     the statuses of those added
//	done               reconciliation.completed (+ .mismatch when anything was fixed)
//
// Each answer is applied in one transaction that also asks for the next
// read, and only while the row is still at the read the answer belongs to
// (its seq, in the signing request's link): an answer applied twice (a
// retried job, two processes) or late changes nothing, and a crash at any
// point leaves either the read to run again or the next one waiting. The
// daily job (KindReconcile) starts the days due and looks at runs that
// have not moved for a while: it runs their signed read again, or asks for
// it afresh.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/crashpoint"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// KindReconcile is the daily job: it starts the reconciliation of every
// day due of every active company with a ready signer, and resumes runs
// that have not moved for Config.Quiet.
const KindReconcile = "einvoice.reconcile"

// reconcileAllArgs are the daily job's arguments: none.
type reconcileAllArgs struct{}

func (reconcileAllArgs) Kind() string { return KindReconcile }

// ProblemUJPMissing flags an e-invoice the service shows delivered (or
// later) that UJP does not know.
const ProblemUJPMissing = "ujp_missing"

// Steps of a run: the read it waits for.
const (
	stepSalesIDs         = "sales_ids"
	stepSalesStatus      = "sales_status"
	stepSalesCurrent     = "sales_current"
	stepSalesPayloads    = "sales_payloads"
	stepMissingCurrent   = "missing_current"
	stepPurchaseIDs      = "purchase_ids"
	stepPurchasePayloads = "purchase_payloads"
	stepPurchaseStatus   = "purchase_status"
	stepDone             = "done"
)

// lookback is how many days back the daily job reconciles days not yet
// reconciled (never before the company was onboarded): a month and a
// day, the longest a document's buyer deadline runs after its month.
const lookback = 31

// reconWork is a run's working set between two reads.
type reconWork struct {
	SalesListed   bool     `json:"salesListed,omitempty"`
	SalesIDs      []string `json:"salesIds,omitempty"`
	SalesStatused bool     `json:"salesStatused,omitempty"`
	StatusPending []string `json:"statusPending,omitempty"`
	// Unknown are documents UJP lists that are not ours by EUID; NoPayload
	// those of them whose payload cannot be read (UJP left them out, or
	// the signer lacks RD).
	Unknown         []ujp.DocStatus `json:"unknown,omitempty"`
	NoPayload       []string        `json:"noPayload,omitempty"`
	PayloadsRefused bool            `json:"payloadsRefused,omitempty"`
	// Missing are ours, delivered on the day, that UJP did not list.
	Missing        []reconMissing `json:"missing,omitempty"`
	PurchaseListed bool           `json:"purchaseListed,omitempty"`
	PurchaseFresh  []string       `json:"purchaseFresh,omitempty"`
	PurchaseAdded  []string       `json:"purchaseAdded,omitempty"`
}

type reconMissing struct {
	EInvoiceID string `json:"einvoiceId"`
	EUID       string `json:"euid"`
}

// recon is a run as one transaction applies an answer to it.
type recon struct {
	row   dbq.Reconciliation
	co    dbq.Company
	work  reconWork
	count reconCounts
	probs []ReconciliationProblem
}

// problem records q once.
func (r *recon) problem(q ReconciliationProblem) {
	for _, o := range r.probs {
		if o.Code == q.Code && o.EUID == q.EUID && o.EInvoiceID == q.EInvoiceID {
			return
		}
	}
	r.probs = append(r.probs, q)
}

func loadRecon(ctx context.Context, tx *store.Tx, row dbq.Reconciliation) (*recon, error) {
	co, err := tx.GetCompany(ctx, row.CompanyID)
	if err != nil {
		return nil, fmt.Errorf("reconciliation %s: company: %w", row.ID, err)
	}
	r := &recon{row: row, co: co, count: decodeCounts(row.Counts), probs: decodeReconProblems(row.Problems)}
	if err := json.Unmarshal([]byte(row.Work), &r.work); err != nil {
		return nil, fmt.Errorf("reconciliation %s: work: %w", row.ID, err)
	}
	return r, nil
}

// errReconMoved: the run moved on under the transaction (another process
// applied the same answer first); the transaction is rolled back.
var errReconMoved = errors.New("reconciliation moved concurrently")

// dayBounds is [start, end) of a Skopje day, in UTC: SQLite compares
// times as text in the zone they were written in, and the store writes
// UTC.
func dayBounds(day string) (time.Time, time.Time, error) {
	d, err := pipeline.ParseDay(day)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return d.UTC(), d.AddDate(0, 0, 1).UTC(), nil
}

// startReconciliation creates co's run of day and asks for its first read,
// unless the day has a row already (created reports which).
func (s *Service) startReconciliation(ctx context.Context, tx *store.Tx, co dbq.Company, day string) (dbq.Reconciliation, bool, error) {
	id := denar.NewID("rcn")
	n, err := tx.InsertReconciliation(ctx, dbq.InsertReconciliationParams{ID: id, AccountID: co.AccountID, CompanyID: co.ID,
		Environment: co.Environment, Day: day, Step: stepSalesIDs, Now: tx.Now})
	if err != nil {
		return dbq.Reconciliation{}, false, fmt.Errorf("reconciliation of %s %s: %w", co.ID, day, err)
	}
	if n == 0 {
		r, err := tx.GetReconciliationByDay(ctx, dbq.GetReconciliationByDayParams{CompanyID: co.ID, Environment: co.Environment, Day: day})
		return r, false, err
	}
	row, err := tx.GetReconciliation(ctx, id)
	if err != nil {
		return row, false, err
	}
	r := &recon{row: row, co: co, probs: []ReconciliationProblem{}}
	if err := s.ask(ctx, tx, r, stepSalesIDs); err != nil {
		return row, false, err
	}
	row, err = tx.GetReconciliation(ctx, id)
	return row, true, err
}

// restartReconciliation runs a completed day again.
func (s *Service) restartReconciliation(ctx context.Context, tx *store.Tx, co dbq.Company, row dbq.Reconciliation) (dbq.Reconciliation, error) {
	n, err := tx.RestartReconciliation(ctx, dbq.RestartReconciliationParams{Step: stepSalesIDs, Now: tx.Now, ID: row.ID})
	if err != nil {
		return row, err
	}
	if row, err = tx.GetReconciliation(ctx, row.ID); err != nil || n == 0 {
		return row, err // restarted by another caller first
	}
	if err := s.ask(ctx, tx, &recon{row: row, co: co, probs: []ReconciliationProblem{}}, stepSalesIDs); err != nil {
		return row, err
	}
	return tx.GetReconciliation(ctx, row.ID)
}

// ask moves r to step (its next read, seq + 1) with its working set and
// figures, and asks the company's signer to sign that read. Without a
// signer the run waits: the daily job asks again.
func (s *Service) ask(ctx context.Context, tx *store.Tx, r *recon, step string) error {
	work, err := json.Marshal(r.work)
	if err != nil {
		return err
	}
	counts, probs, err := r.encode()
	if err != nil {
		return err
	}
	n, err := tx.AdvanceReconciliation(ctx, dbq.AdvanceReconciliationParams{Step: step, Work: string(work), Counts: counts,
		Problems: probs, UpdatedAt: tx.Now, ID: r.row.ID, FromSeq: r.row.Seq})
	if err != nil {
		return fmt.Errorf("reconciliation %s: %w", r.row.ID, err)
	}
	if n == 0 {
		return errReconMoved
	}
	r.row.Step, r.row.Seq = step, r.row.Seq+1
	return s.askRead(ctx, tx, r)
}

// askRead asks for the signature of r's current read.
func (s *Service) askRead(ctx context.Context, tx *store.Tx, r *recon) error {
	payload, err := readPayload(r, tx.Now)
	if err != nil {
		return err
	}
	link := einvoicing.SigningLink{Type: einvoicing.LinkReconciliation, ID: r.row.ID + "/" + strconv.Itoa(int(r.row.Seq))}
	_, err = einvoicing.RequestSignature(ctx, tx, r.co.ID, einvoicing.PurposeQuery, payload, link)
	if errors.Is(err, einvoicing.ErrNoSigner) {
		s.log.Info("reconciliation waits for a signer", "reconciliation", r.row.ID, "company", r.co.ID)
		return nil
	}
	return err
}

func (r *recon) encode() (counts, probs string, err error) {
	c, err := json.Marshal(r.count)
	if err != nil {
		return "", "", err
	}
	if r.probs == nil {
		r.probs = []ReconciliationProblem{}
	}
	b, err := json.Marshal(r.probs)
	return string(c), string(b), err
}

// readPayload is the payload of r's current read, stamped now.
func readPayload(r *recon, now time.Time) ([]byte, error) {
	ts := ujpdoc.FormatTimestamp(now)
	day := ujp.DateRangeRequest{RequestTimestamp: ts, DateFrom: r.row.Day, DateTo: r.row.Day}
	switch r.row.Step {
	case stepSalesIDs, stepSalesStatus, stepPurchaseIDs, stepPurchaseStatus:
		return json.Marshal(day)
	case stepSalesCurrent:
		return json.Marshal(ujp.EUIDRequest{RequestTimestamp: ts, EUID: r.work.StatusPending[0]})
	case stepMissingCurrent:
		return json.Marshal(ujp.EUIDRequest{RequestTimestamp: ts, EUID: r.work.Missing[0].EUID})
	case stepSalesPayloads:
		return json.Marshal(ujp.EUIDsRequest{RequestTimestamp: ts, EUIDs: r.work.payloadBatch()})
	case stepPurchasePayloads:
		return json.Marshal(ujp.EUIDsRequest{RequestTimestamp: ts, EUIDs: r.work.PurchaseFresh[:min(len(r.work.PurchaseFresh), pipeline.MaxPayloadsPerRequest)]})
	}
	return nil, fmt.Errorf("reconciliation %s: no read at step %s", r.row.ID, r.row.Step)
}

// payloadBatch are the next unknown documents whose payloads to read.
func (w *reconWork) payloadBatch() []string {
	var out []string
	for _, u := range w.Unknown {
		if !slices.Contains(w.NoPayload, u.EUID) {
			out = append(out, u.EUID)
			if len(out) == pipeline.MaxPayloadsPerRequest {
				break
			}
		}
	}
	return out
}

// next asks for r's next read, resolving by their headlines the unknown
// documents whose payloads cannot be read, or completes r.
func (s *Service) next(ctx context.Context, tx *store.Tx, r *recon) error {
	w := &r.work
	switch {
	case !w.SalesListed:
		return s.ask(ctx, tx, r, stepSalesIDs)
	case !w.SalesStatused:
		return s.ask(ctx, tx, r, stepSalesStatus)
	case len(w.StatusPending) > 0:
		return s.ask(ctx, tx, r, stepSalesCurrent)
	}
	// The payloads are asked for even when the company is known to lack
	// RD: a run after RD was granted reads them, and a refused read is
	// what the run's privilege_missing reports.
	if !w.PayloadsRefused && len(w.payloadBatch()) > 0 {
		return s.ask(ctx, tx, r, stepSalesPayloads)
	}
	for _, u := range w.Unknown {
		if err := s.resolveByHeadline(ctx, tx, r, u); err != nil {
			return err
		}
	}
	w.Unknown, w.NoPayload = nil, nil
	switch {
	case len(w.Missing) > 0:
		return s.ask(ctx, tx, r, stepMissingCurrent)
	case !w.PurchaseListed:
		return s.ask(ctx, tx, r, stepPurchaseIDs)
	case len(w.PurchaseFresh) > 0:
		return s.ask(ctx, tx, r, stepPurchasePayloads)
	case len(w.PurchaseAdded) > 0:
		return s.ask(ctx, tx, r, stepPurchaseStatus)
	}
	return s.complete(ctx, tx, r)
}

// complete records r's figures and its events.
func (s *Service) complete(ctx context.Context, tx *store.Tx, r *recon) error {
	counts, probs, err := r.encode()
	if err != nil {
		return err
	}
	n, err := tx.CompleteReconciliation(ctx, dbq.CompleteReconciliationParams{Counts: counts, Problems: probs,
		CompletedAt: sql.NullTime{Time: tx.Now, Valid: true}, UpdatedAt: tx.Now, ID: r.row.ID, FromSeq: r.row.Seq})
	if err != nil {
		return err
	}
	if n == 0 {
		return errReconMoved
	}
	row, err := tx.GetReconciliation(ctx, r.row.ID)
	if err != nil {
		return err
	}
	v := reconciliationView(row)
	if err := s.core.WriteEvent(ctx, tx, row.AccountID, row.CompanyID, row.Environment, webhooks.EventReconciliationCompleted, row.ID, v); err != nil {
		return err
	}
	if r.count.fixed() {
		if err := s.core.WriteEvent(ctx, tx, row.AccountID, row.CompanyID, row.Environment, webhooks.EventReconciliationMismatch, row.ID, v); err != nil {
			return err
		}
	}
	s.log.Info("reconciliation completed", "reconciliation", row.ID, "company", row.CompanyID, "day", row.Day, "clean", v.Clean,
		"repaired", r.count.Sales.Repaired, "discovered", r.count.Sales.Discovered, "missingAtUJP", r.count.Sales.MissingAtUJP,
		"added", r.count.Purchase.Added, "problems", len(r.probs))
	return nil
}

// reconAnswer is what a read of a run brought back.
type reconAnswer struct {
	ids      []string
	statuses []ujp.DocStatus
	status   *ujp.DocStatus
	notFound bool
	payloads []ujp.Payload
	refused  bool // the payloads were refused for want of RD
}

// readReconciliation makes a run's signed read and applies its answer,
// for the query job.
func (s *Service) readReconciliation(ctx, cctx context.Context, gw ujp.Gateway, who einvoicing.Signer, sr dbq.SigningRequest, co dbq.Company) error {
	id, seqText, _ := strings.Cut(sr.LinkID, "/")
	seq, err := strconv.Atoi(seqText)
	if err != nil {
		return jobs.Cancel(fmt.Errorf("reconciliation read %s: link %q", sr.ID, sr.LinkID))
	}
	row, err := s.db.Reader().GetReconciliation(ctx, id)
	if err != nil {
		return err
	}
	if row.State != ReconciliationRunning || int(row.Seq) != seq {
		return nil // answered already, or asked for afresh
	}
	// Reconciliation can always wait: it takes the turns nothing else of
	// the user wants.
	cctx = ujp.WithPriority(cctx, ujp.PriorityBackground)
	var a reconAnswer
	privilege := ""
	switch row.Step {
	case stepSalesIDs:
		a.ids, err = gw.SalesIDs(cctx, who.ID, sr.Jws)
	case stepSalesStatus:
		a.statuses, err = gw.SalesInvoicesStatus(cctx, who.ID, sr.Jws)
	case stepSalesCurrent, stepMissingCurrent:
		a.status, err = gw.CurrentStatus(cctx, who.ID, sr.Jws)
		if ujp.IsNotFound(err) {
			a.notFound, err = true, nil
		}
	case stepSalesPayloads, stepPurchasePayloads:
		privilege = ujp.PrivilegePayloads
		if row.Step == stepSalesPayloads {
			a.payloads, err = gw.SalesPayloads(cctx, who.ID, sr.Jws)
		} else {
			a.payloads, err = gw.PurchasePayloads(cctx, who.ID, sr.Jws)
		}
		if r := ujp.AccessProblem(err); r != nil && r.Privilege == ujp.PrivilegePayloads {
			if _, err := s.pipe.AccessProblem(ctx, co.ID, err); err != nil {
				return err
			}
			// Refused: the company's problem of the missing RD, just
			// recorded, stays (AccessOK below clears only what this read
			// proved).
			a.refused, err, privilege = true, nil, ""
		}
	case stepPurchaseIDs:
		a.ids, err = gw.PurchaseIDs(cctx, who.ID, sr.Jws)
	case stepPurchaseStatus:
		a.statuses, err = gw.PurchaseInvoicesStatus(cctx, who.ID, sr.Jws)
	default:
		return jobs.Cancel(fmt.Errorf("reconciliation %s: no read at step %s", row.ID, row.Step))
	}
	switch {
	case pipeline.StaleRead(err):
		return s.askAfresh(ctx, row.ID, seq)
	case ujp.AccessProblem(err) != nil:
		if _, rerr := s.pipe.AccessProblem(ctx, co.ID, err); rerr != nil {
			return rerr
		}
		r := ujp.AccessProblem(err)
		msg := fmt.Sprintf("UJP refused the company's signer (%s %s); the run waits until the company's access is set right in UJP's portal (see the company's problems) and resumes by itself.", r.Code, r.Message)
		_, err := s.atSeq(context.WithoutCancel(ctx), row.ID, seq, func(tx *store.Tx, cur dbq.Reconciliation) error {
			return s.noteProblem(ctx, tx, cur, ReconciliationProblem{Code: "access_refused", Message: msg})
		})
		return err
	case err != nil:
		return s.pipe.QueryFailed(ctx, co, err)
	}
	applied, err := s.atSeq(context.WithoutCancel(ctx), id, seq, func(tx *store.Tx, cur dbq.Reconciliation) error {
		r, err := loadRecon(ctx, tx, cur)
		if err != nil {
			return err
		}
		if err := s.apply(ctx, tx, r, sr, a); err != nil {
			return err
		}
		return s.next(ctx, tx, r)
	})
	if err != nil || !applied {
		return err
	}
	crashpoint.Hit(crashpoint.ReconcileAfterRead)
	return s.pipe.AccessOK(ctx, co.ID, privilege)
}

// atSeq runs fn in one transaction on run id if it is still running at
// seq. It reports whether fn ran and committed: a run that had moved on,
// before fn or under it (errReconMoved, rolled back), is left alone
// without an error.
func (s *Service) atSeq(ctx context.Context, id string, seq int, fn func(tx *store.Tx, cur dbq.Reconciliation) error) (bool, error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.GetReconciliation(ctx, id)
		if err != nil {
			return err
		}
		if cur.State != ReconciliationRunning || int(cur.Seq) != seq {
			return errReconMoved
		}
		return fn(tx, cur)
	})
	if errors.Is(err, errReconMoved) {
		return false, nil
	}
	return err == nil, err
}

// noteProblem records a problem on run cur, without moving it.
func (s *Service) noteProblem(ctx context.Context, tx *store.Tx, cur dbq.Reconciliation, q ReconciliationProblem) error {
	r, err := loadRecon(ctx, tx, cur)
	if err != nil {
		return err
	}
	r.problem(q)
	counts, probs, err := r.encode()
	if err != nil {
		return err
	}
	// The same step and working set, one seq on: the read is asked for
	// again when the daily job next looks at the run.
	_, err = tx.AdvanceReconciliation(ctx, dbq.AdvanceReconciliationParams{Step: cur.Step, Work: cur.Work, Counts: counts,
		Problems: probs, UpdatedAt: tx.Now, ID: cur.ID, FromSeq: cur.Seq})
	return err
}

// askAfresh asks for the read of a run still at seq again, signed now
// (UJP refused the signed one's requestTimestamp as too old).
func (s *Service) askAfresh(ctx context.Context, id string, seq int) error {
	_, err := s.atSeq(context.WithoutCancel(ctx), id, seq, func(tx *store.Tx, cur dbq.Reconciliation) error {
		return s.askAgain(ctx, tx, cur)
	})
	return err
}

// askAgain asks for the read of run cur's step again, as a new seq.
func (s *Service) askAgain(ctx context.Context, tx *store.Tx, cur dbq.Reconciliation) error {
	r, err := loadRecon(ctx, tx, cur)
	if err != nil {
		return err
	}
	return s.ask(ctx, tx, r, cur.Step)
}

// apply records the answer a of r's current read.
func (s *Service) apply(ctx context.Context, tx *store.Tx, r *recon, sr dbq.SigningRequest, a reconAnswer) error {
	w := &r.work
	switch r.row.Step {
	case stepSalesIDs:
		w.SalesIDs = unique(a.ids)
		w.SalesListed = true
		r.count.Sales.AtUJP = len(w.SalesIDs)
	case stepSalesStatus:
		return s.salesStatuses(ctx, tx, r, a.statuses)
	case stepSalesCurrent:
		euid := w.StatusPending[0]
		w.StatusPending = w.StatusPending[1:]
		if a.notFound || a.status == nil {
			r.problem(ReconciliationProblem{Code: "status_unknown", Message: "UJP lists the document for the day but does not give its status (current-status: not found); it is left as it is.", EUID: euid})
			return nil
		}
		st := *a.status
		st.EUID = euid
		return s.salesDocument(ctx, tx, r, st)
	case stepSalesPayloads:
		var req ujp.EUIDsRequest
		if err := pipeline.DecodeSigned(sr, &req); err != nil {
			return err
		}
		if a.refused {
			w.PayloadsRefused = true
			r.problem(ReconciliationProblem{Code: "privilege_missing", Message: "The signer's user lacks the RD privilege for the company in UJP's portal: documents UJP holds that the service has no EUID for were matched by number, date, gross amount and buyer instead of their docId."})
			return nil
		}
		return s.salesPayloads(ctx, tx, r, req.EUIDs, a.payloads)
	case stepMissingCurrent:
		m := w.Missing[0]
		w.Missing = w.Missing[1:]
		return s.missingChecked(ctx, tx, r, m, a)
	case stepPurchaseIDs:
		w.PurchaseListed = true
		ids := unique(a.ids)
		r.count.Purchase.AtUJP = len(ids)
		for _, euid := range ids {
			_, err := tx.GetInboxDocumentByEUID(ctx, dbq.GetInboxDocumentByEUIDParams{CompanyID: r.co.ID, Euid: euid})
			switch {
			case err == nil:
				r.count.Purchase.InInbox++
			case errors.Is(err, sql.ErrNoRows):
				w.PurchaseFresh = append(w.PurchaseFresh, euid)
			default:
				return err
			}
		}
	case stepPurchasePayloads:
		return s.purchasePayloads(ctx, tx, r, sr, a)
	case stepPurchaseStatus:
		return s.purchaseStatuses(ctx, tx, r, a.statuses)
	}
	return nil
}

func unique(ids []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// salesStatuses applies invoices-status of the day: each listed document
// is matched or repaired (ours by EUID) or kept to be looked up by its
// docId; those the list left out are read one by one; and ours delivered
// on the day that UJP does not list are kept to be looked up.
func (s *Service) salesStatuses(ctx context.Context, tx *store.Tx, r *recon, list []ujp.DocStatus) error {
	w := &r.work
	byEUID := map[string]ujp.DocStatus{}
	for _, st := range list {
		if st.EUID != "" && (st.SellerTin == "" || st.SellerTin == r.co.TaxNumber) {
			byEUID[st.EUID] = st
		}
	}
	atUJP := map[string]bool{}
	for _, euid := range w.SalesIDs {
		atUJP[euid] = true
		st, ok := byEUID[euid]
		if !ok {
			w.StatusPending = append(w.StatusPending, euid)
			continue
		}
		if err := s.salesDocument(ctx, tx, r, st); err != nil {
			return err
		}
	}
	for _, st := range list {
		// Listed by status but not by id: UJP holds it for the day all
		// the same.
		if _, ok := byEUID[st.EUID]; ok && !atUJP[st.EUID] {
			atUJP[st.EUID] = true
			r.count.Sales.AtUJP++
			if err := s.salesDocument(ctx, tx, r, st); err != nil {
				return err
			}
		}
	}
	w.SalesIDs, w.SalesStatused = nil, true
	from, until, err := dayBounds(r.row.Day)
	if err != nil {
		return err
	}
	ours, err := tx.EInvoicesDeliveredBetween(ctx, dbq.EInvoicesDeliveredBetweenParams{CompanyID: r.co.ID,
		FromAt: sql.NullTime{Time: from, Valid: true}, UntilAt: sql.NullTime{Time: until, Valid: true}})
	if err != nil {
		return err
	}
	for _, o := range ours {
		if !atUJP[o.Euid.String] {
			w.Missing = append(w.Missing, reconMissing{EInvoiceID: o.ID, EUID: o.Euid.String})
		}
	}
	return nil
}

// salesDocument settles one document UJP lists: ours by EUID is matched
// or repaired; another is kept to be looked up by its docId.
func (s *Service) salesDocument(ctx context.Context, tx *store.Tx, r *recon, st ujp.DocStatus) error {
	inv, err := tx.GetEInvoiceByEUID(ctx, dbq.GetEInvoiceByEUIDParams{CompanyID: r.co.ID, Euid: sql.NullString{String: st.EUID, Valid: true}})
	if errors.Is(err, sql.ErrNoRows) {
		r.work.Unknown = append(r.work.Unknown, st)
		return nil
	}
	if err != nil {
		return err
	}
	if inv.Kind != einvoicing.KindExternal {
		r.count.Sales.AtDenar++
	}
	return s.settle(ctx, tx, r, inv, st)
}

// settle brings inv, a document UJP holds as st, to UJP's status.
func (s *Service) settle(ctx context.Context, tx *store.Tx, r *recon, inv dbq.Einvoice, st ujp.DocStatus) error {
	to, ok := einvoice.FromUJP(st.StatusCode)
	from := einvoice.Status(inv.Status)
	switch {
	case !ok:
		r.problem(ReconciliationProblem{Code: "status_unknown", Message: fmt.Sprintf("UJP reports status %s %q, which the service does not know; the document is left as it is.", st.StatusCode, st.StatusName), EUID: st.EUID, EInvoiceID: inv.ID})
		return nil
	case from == to && inv.Euid.String == st.EUID:
		r.count.Sales.Matched++
		return clearMissing(ctx, tx, inv)
	case inv.Euid.Valid && inv.Euid.String != st.EUID:
		r.problem(ReconciliationProblem{Code: "status_conflict", Message: fmt.Sprintf("The document's docId is at UJP under EUID %s, but the service holds EUID %s for it; it is left as it is.", st.EUID, inv.Euid.String), EUID: st.EUID, EInvoiceID: inv.ID})
		return nil
	case from.AtUJP() && einvoice.CanMove(to, from):
		// Ours is ahead of the read: a move applied after UJP answered.
		r.count.Sales.Matched++
		return clearMissing(ctx, tx, inv)
	case !einvoice.CanReconcile(from, to):
		r.problem(ReconciliationProblem{Code: "status_conflict", Message: fmt.Sprintf("The service shows the document %s, which UJP's status %s %q cannot lead to; it is left as it is.", from, st.StatusCode, st.StatusName), EUID: st.EUID, EInvoiceID: inv.ID})
		return nil
	}
	m := einvoicing.StatusMove{To: to, Cause: "reconciled", UJPCode: st.StatusCode, Reconciled: true}
	if !inv.Euid.Valid {
		m.EUID = st.EUID
	}
	if from == einvoice.Failed {
		// Why it failed no longer holds: UJP holds it.
		if err := tx.SetEInvoiceProblems(ctx, dbq.SetEInvoiceProblemsParams{ID: inv.ID, Problems: "[]", UpdatedAt: tx.Now}); err != nil {
			return err
		}
		inv.Problems = "[]"
	}
	moved, err := s.core.MoveEInvoice(ctx, tx, inv, m)
	if err != nil {
		return err
	}
	if err := pipeline.LookupOver(ctx, tx, inv); err != nil {
		return err
	}
	r.count.Sales.Repaired++
	s.log.Info("reconciliation repaired a document to UJP's status", "einvoice", inv.ID, "from", from, "to", to, "euid", st.EUID)
	return clearMissing(ctx, tx, moved)
}

// salesPayloads settles the documents whose payloads UJP gave: ours by
// docId are repaired, others imported. Those UJP left out are matched by
// their headlines later.
func (s *Service) salesPayloads(ctx context.Context, tx *store.Tx, r *recon, asked []string, list []ujp.Payload) error {
	w := &r.work
	given := map[string]string{}
	for _, pl := range list {
		if slices.Contains(asked, pl.EUID) {
			given[pl.EUID] = pl.Payload
		}
	}
	var rest []ujp.DocStatus
	for _, u := range w.Unknown {
		if !slices.Contains(asked, u.EUID) {
			rest = append(rest, u)
			continue
		}
		payload, ok := given[u.EUID]
		if !ok {
			w.NoPayload = append(w.NoPayload, u.EUID)
			rest = append(rest, u)
			continue
		}
		if err := s.resolveByPayload(ctx, tx, r, u, payload); err != nil {
			return err
		}
	}
	w.Unknown = rest
	return nil
}

// resolveByPayload settles a document UJP holds that is not ours by EUID,
// by its header.docId: ours (a send whose answer was lost) is repaired,
// any other imported.
func (s *Service) resolveByPayload(ctx context.Context, tx *store.Tx, r *recon, st ujp.DocStatus, payload string) error {
	if docID := pipeline.PayloadDocID(payload); docID != "" {
		inv, err := tx.GetEInvoiceByDocID(ctx, dbq.GetEInvoiceByDocIDParams{CompanyID: r.co.ID, UjpDocID: docID})
		if err == nil && inv.Kind != einvoicing.KindExternal {
			r.count.Sales.AtDenar++
			return s.settle(ctx, tx, r, inv, st)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
	}
	return s.importExternal(ctx, tx, r, st, []byte(payload))
}

// resolveByHeadline settles a document UJP holds that is not ours by EUID
// and whose payload cannot be read: ours is the one document without an
// EUID of that number and date with UJP's gross amount and buyer; none is
// imported; several are a problem (nothing is changed).
func (s *Service) resolveByHeadline(ctx context.Context, tx *store.Tx, r *recon, st ujp.DocStatus) error {
	cands, err := tx.EInvoicesWithoutEUID(ctx, dbq.EInvoicesWithoutEUIDParams{CompanyID: r.co.ID, Number: st.DocNumber, IssueDate: st.DocDate})
	if err != nil {
		return err
	}
	var match []dbq.Einvoice
	for _, c := range cands {
		doc, err := einvoicing.StoredDocument(c)
		if err != nil {
			continue
		}
		if st.DocGrossAmountR.Equal(doc.DocTotals.DocGrossAmountR.Amount) && (st.BuyerTin == "" || st.BuyerTin == doc.Buyer.BuyerTin) {
			match = append(match, c)
		}
	}
	switch len(match) {
	case 0:
		return s.importExternal(ctx, tx, r, st, nil)
	case 1:
		r.count.Sales.AtDenar++
		return s.settle(ctx, tx, r, match[0], st)
	}
	r.problem(ReconciliationProblem{Code: "ambiguous_match", Message: fmt.Sprintf("Without the document's payload (no RD), %d of the service's documents match UJP's number %s, date %s, gross amount and buyer; none was changed and nothing was imported.", len(match), st.DocNumber, st.DocDate), EUID: st.EUID})
	return nil
}

// importExternal stores a document UJP holds that the service never
// issued, as an e-invoice of kind external: its payload when UJP gave it,
// else UJP's headline of it; counted in usage as sent; event
// einvoice.discovered. A document imported already (another run or
// process) is only matched.
func (s *Service) importExternal(ctx context.Context, tx *store.Tx, r *recon, st ujp.DocStatus, payload []byte) error {
	status, ok := einvoice.FromUJP(st.StatusCode)
	if !ok {
		r.problem(ReconciliationProblem{Code: "status_unknown", Message: fmt.Sprintf("UJP holds a document the service never issued in status %s %q, which the service does not know; it was not imported.", st.StatusCode, st.StatusName), EUID: st.EUID})
		return nil
	}
	row := dbq.InsertExternalEInvoiceParams{ID: denar.NewID("einv"), AccountID: r.co.AccountID, CompanyID: r.co.ID,
		Environment: r.co.Environment, Status: string(status), Number: st.DocNumber, IssueDate: st.DocDate, Document: "null",
		UjpDocID: "ujp:" + st.EUID, Euid: sql.NullString{String: st.EUID, Valid: true},
		TotalNet: st.DocGrossAmountR.Sub(st.DocVatAmount.Amount).StringFixed(2), TotalVat: st.DocVatAmount.StringFixed(2),
		TotalGross: st.DocGrossAmountR.StringFixed(2), DeliveredAt: sql.NullTime{Time: tx.Now, Valid: true}, CreatedAt: tx.Now}
	if len(payload) > 0 && json.Valid(payload) {
		row.Document = string(payload)
		if doc := payloadDocument(payload); doc != nil {
			t := einvoice.DocTotals(doc)
			row.DocumentType, row.TotalNet, row.TotalVat, row.TotalGross, row.Currency = doc.Header.DocType, t.Net, t.Vat, t.Gross, t.Currency
			if doc.Header.DocNumber != "" {
				row.Number = doc.Header.DocNumber
			}
			if doc.Header.DocDate != "" {
				row.IssueDate = doc.Header.DocDate
			}
		}
	}
	n, err := tx.InsertExternalEInvoice(ctx, row)
	if err != nil {
		return fmt.Errorf("import %s: %w", st.EUID, err)
	}
	if n == 0 {
		r.count.Sales.Matched++
		return nil
	}
	inv, err := tx.GetEInvoiceByID(ctx, row.ID)
	if err != nil {
		return err
	}
	history := []einvoice.Status{status}
	if status != einvoice.Delivered {
		history = []einvoice.Status{einvoice.Delivered, status}
	}
	from := sql.NullString{}
	for _, to := range history {
		if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: inv.ID, FromStatus: from,
			ToStatus: string(to), Cause: "discovered", UjpCode: sql.NullString{String: st.StatusCode, Valid: to == status}, At: tx.Now}); err != nil {
			return err
		}
		from = sql.NullString{String: string(to), Valid: true}
	}
	if err := einvoicing.CountSent(ctx, tx, inv); err != nil {
		return err
	}
	if err := s.core.EInvoiceEvent(ctx, tx, inv, webhooks.EventDiscovered); err != nil {
		return err
	}
	r.count.Sales.Discovered++
	s.log.Info("reconciliation found a document the service never issued", "einvoice", inv.ID, "euid", st.EUID, "company", r.co.ID)
	return nil
}

// payloadDocument is the document of a payload as UJP returns it (the
// signed request {requestTimestamp, document} or the document itself).
func payloadDocument(payload []byte) *ujpdoc.Document {
	var req ujpdoc.Request
	if json.Unmarshal(payload, &req) == nil && req.Document.Header.DocID != "" {
		return &req.Document
	}
	var doc ujpdoc.Document
	if json.Unmarshal(payload, &doc) == nil && doc.Header.DocID != "" {
		return &doc
	}
	return nil
}

// missingChecked applies the status read of one of ours that UJP did not
// list for the day: not found, it is flagged; found (UJP lists it under
// another day), it is settled like any other.
func (s *Service) missingChecked(ctx context.Context, tx *store.Tx, r *recon, m reconMissing, a reconAnswer) error {
	inv, err := tx.GetEInvoiceByID(ctx, m.EInvoiceID)
	if err != nil {
		return err
	}
	r.count.Sales.AtDenar++
	if !a.notFound && a.status != nil {
		st := *a.status
		st.EUID = m.EUID
		return s.settle(ctx, tx, r, inv, st)
	}
	r.count.Sales.MissingAtUJP++
	return s.flagMissing(ctx, tx, inv)
}

// flagMissing marks inv as unknown to UJP (problem ujp_missing) with its
// event, once: nothing is sent again by itself.
func (s *Service) flagMissing(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) error {
	var items []einvoicing.ProblemItem
	_ = json.Unmarshal([]byte(inv.Problems), &items)
	if slices.ContainsFunc(items, func(q einvoicing.ProblemItem) bool { return q.Code == ProblemUJPMissing }) {
		return nil
	}
	items = append(items, einvoicing.ProblemItem{Code: ProblemUJPMissing, Message: fmt.Sprintf(
		"UJP does not know this document (EUID %s): its current-status answers not found. Nothing is sent again by itself; check it in UJP's portal, and issue it again if it must be.", inv.Euid.String)})
	b, err := json.Marshal(items)
	if err != nil {
		return err
	}
	if err := tx.SetEInvoiceProblems(ctx, dbq.SetEInvoiceProblemsParams{ID: inv.ID, Problems: string(b), UpdatedAt: tx.Now}); err != nil {
		return err
	}
	flagged, err := tx.GetEInvoiceByID(ctx, inv.ID)
	if err != nil {
		return err
	}
	s.log.Warn("reconciliation: UJP does not know a delivered document", "einvoice", inv.ID, "euid", inv.Euid.String)
	return s.core.EInvoiceEvent(ctx, tx, flagged, webhooks.EventMissingAtUJP)
}

// clearMissing drops the ujp_missing flag of a document UJP knows again.
func clearMissing(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) error {
	var items []einvoicing.ProblemItem
	if json.Unmarshal([]byte(inv.Problems), &items) != nil {
		return nil
	}
	kept := slices.DeleteFunc(slices.Clone(items), func(q einvoicing.ProblemItem) bool { return q.Code == ProblemUJPMissing })
	if len(kept) == len(items) {
		return nil
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	return tx.SetEInvoiceProblems(ctx, dbq.SetEInvoiceProblemsParams{ID: inv.ID, Problems: string(b), UpdatedAt: tx.Now})
}

// purchasePayloads stores the incoming documents UJP gave, as the inbox
// sync does (StoreIncoming).
func (s *Service) purchasePayloads(ctx context.Context, tx *store.Tx, r *recon, sr dbq.SigningRequest, a reconAnswer) error {
	w := &r.work
	var req ujp.EUIDsRequest
	if err := pipeline.DecodeSigned(sr, &req); err != nil {
		return err
	}
	w.PurchaseFresh = slices.DeleteFunc(w.PurchaseFresh, func(e string) bool { return slices.Contains(req.EUIDs, e) })
	if a.refused {
		r.problem(ReconciliationProblem{Code: "privilege_missing", Message: fmt.Sprintf("The signer's user lacks the RD privilege for the company in UJP's portal: %d incoming documents UJP lists for the day could not be read into the inbox. Grant RD; the inbox sync adds them, and a new run of the day proves it.", len(req.EUIDs)+len(w.PurchaseFresh))})
		w.PurchaseFresh = nil
		return nil
	}
	name := s.inbox.StatusName(r.co.Environment, ujp.StatusSent)
	got := map[string]bool{}
	for _, it := range a.payloads {
		if !slices.Contains(req.EUIDs, it.EUID) || got[it.EUID] {
			continue
		}
		got[it.EUID] = true
		_, stored, err := s.inbox.StoreIncoming(ctx, tx, r.co, it, name)
		if err != nil {
			return err
		}
		if stored {
			r.count.Purchase.Added++
			w.PurchaseAdded = append(w.PurchaseAdded, it.EUID)
		} else {
			r.count.Purchase.InInbox++
		}
	}
	for _, e := range req.EUIDs {
		if !got[e] {
			r.problem(ReconciliationProblem{Code: "payload_missing", Message: "UJP lists the incoming document for the day but gave no payload for it; it is not in the inbox.", EUID: e})
		}
	}
	return nil
}

// purchaseStatuses records UJP's status of the incoming documents the run
// added (stored as 01, as every new one is): one decided or auto-accepted
// since shows so at once.
func (s *Service) purchaseStatuses(ctx context.Context, tx *store.Tx, r *recon, list []ujp.DocStatus) error {
	added := r.work.PurchaseAdded
	r.work.PurchaseAdded = nil
	for _, st := range list {
		if !slices.Contains(added, st.EUID) || st.StatusCode == ujp.StatusSent {
			continue
		}
		d, err := tx.GetInboxDocumentByEUID(ctx, dbq.GetInboxDocumentByEUIDParams{CompanyID: r.co.ID, Euid: st.EUID})
		if err != nil {
			return err
		}
		if _, err := s.inbox.ApplyUJPStatus(ctx, tx, d, st.StatusCode, st.StatusName, tx.Now, nil); err != nil {
			return err
		}
	}
	return nil
}

// reconcileAll is the daily job: it resumes quiet runs, then starts, for
// every active company with a ready signer that has no run going, the
// latest day due not reconciled yet (one a pass, so a backlog is worked
// through a day at a time).
func (s *Service) reconcileAll(ctx context.Context, _ *jobs.Job, _ reconcileAllArgs) error {
	cfg := s.cfg
	now := s.db.Now()
	q := s.db.Reader()
	quiet, err := q.QuietReconciliations(ctx, now.Add(-cfg.Quiet))
	if err != nil {
		return err
	}
	for _, row := range quiet {
		if err := s.resume(ctx, row); err != nil {
			return fmt.Errorf("resume reconciliation %s: %w", row.ID, err)
		}
	}
	ids, err := q.CompaniesForInboxSync(ctx, dbq.CompaniesForInboxSyncParams{Now: now,
		SeenAfter: sql.NullTime{Time: now.Add(-einvoicing.AgentOnlineTTL), Valid: true}})
	if err != nil {
		return err
	}
	latest, err := pipeline.ParseDay(lastReconcilableDay(now, cfg.Hour))
	if err != nil {
		return err
	}
	for _, id := range ids {
		co, err := q.GetCompany(ctx, id)
		if err != nil {
			return err
		}
		if _, ok := s.gateways[co.Environment]; !ok {
			continue
		}
		first := latest.AddDate(0, 0, 1-lookback)
		if onboarded := pipeline.SkopjeMidnight(co.CreatedAt); onboarded.After(first) {
			first = onboarded
		}
		if first.After(latest) {
			continue
		}
		days, err := q.CompanyReconciliationDays(ctx, dbq.CompanyReconciliationDaysParams{CompanyID: co.ID, Environment: co.Environment,
			FromDay: first.Format(time.DateOnly)})
		if err != nil {
			return err
		}
		have := map[string]bool{}
		going := false
		for _, d := range days {
			have[d.Day] = true
			going = going || d.State == ReconciliationRunning
		}
		if going {
			continue
		}
		for d := latest; !d.Before(first); d = d.AddDate(0, 0, -1) {
			day := d.Format(time.DateOnly)
			if have[day] {
				continue
			}
			if err := s.db.InTx(ctx, func(tx *store.Tx) error {
				_, _, err := s.startReconciliation(ctx, tx, co, day)
				return err
			}); err != nil {
				return fmt.Errorf("reconcile %s %s: %w", co.ID, day, err)
			}
			break
		}
	}
	return nil
}

// lastReconcilableDay is the latest day the daily job reconciles at now:
// yesterday from hour (Skopje) on, the day before until then, and never a
// day whose lists may still change (pipeline.LastCompleteDay).
func lastReconcilableDay(now time.Time, hour int) string {
	today := pipeline.SkopjeMidnight(now)
	latest := today.AddDate(0, 0, -1)
	if now.Before(today.Add(time.Duration(hour) * time.Hour)) {
		latest = latest.AddDate(0, 0, -1)
	}
	day := latest.Format(time.DateOnly)
	if last := pipeline.LastCompleteDay(now); day > last {
		day = last
	}
	return day
}

// resume looks at a run that has not moved for a while: its read waits
// for its signer (left alone), or was signed (its query job is run again,
// once: a job still going holds the key), or neither — expired, refused,
// or never asked for want of a signer — and is asked for afresh.
func (s *Service) resume(ctx context.Context, row dbq.Reconciliation) error {
	link := row.ID + "/" + strconv.Itoa(int(row.Seq))
	q := s.db.Reader()
	co, err := q.GetCompany(ctx, row.CompanyID)
	if err != nil {
		return err
	}
	for _, prob := range einvoicing.CompanyProblems(co.UjpProblems) {
		if prob.Code == pipeline.ProblemAccessMissing && s.db.Now().Sub(prob.LastSeenAt) < pipeline.RDRetryEvery {
			// UJP refuses the signer: asked again hourly, not at every
			// pass (any accepted call clears the problem sooner).
			return nil
		}
	}
	if _, err := q.OpenSigningRequestForLink(ctx, dbq.OpenSigningRequestForLinkParams{LinkType: einvoicing.LinkReconciliation, LinkID: link, Now: s.db.Now()}); err == nil {
		return nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = s.atSeq(ctx, row.ID, int(row.Seq), func(tx *store.Tx, cur dbq.Reconciliation) error {
		sr, err := tx.LatestSignedRequestForLink(ctx, dbq.LatestSignedRequestForLinkParams{LinkType: einvoicing.LinkReconciliation, LinkID: link})
		if err == nil {
			if stale, _ := s.pipe.Stale(sr); !stale {
				if err := enqueueReconcileQuery(ctx, tx, einvoicing.SigningRequestFrom(sr)); err != nil {
					return err
				}
				return tx.TouchReconciliation(ctx, dbq.TouchReconciliationParams{ID: cur.ID, UpdatedAt: tx.Now})
			}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return s.askAgain(ctx, tx, cur)
	})
	return err
}

// enqueueReconcileQuery runs a run's signed read once its signature is
// recorded, as one job per read: asking again while one is going is a
// no-op.
func enqueueReconcileQuery(ctx context.Context, tx *store.Tx, r einvoicing.SigningRequest) error {
	link := ""
	for _, id := range r.Links {
		link = id
	}
	_, err := jobs.Insert(ctx, tx, einvoicing.QueryArgs{SigningRequestID: r.ID}, jobs.InsertOpts{MaxAttempts: 5,
		UniqueKey: einvoicing.KindUJPQuery + ":" + einvoicing.LinkReconciliation + ":" + link})
	return err
}
