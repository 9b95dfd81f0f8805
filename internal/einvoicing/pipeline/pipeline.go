package pipeline

// The submission pipeline: a signed e-invoice goes queued → submitting →
// delivered (or held, or failed) on durable jobs, and UJP's change feeds
// move it on to accepted, auto_accepted or rejected. Nothing here is kept in
// memory between steps: every step starts from the rows, so a process that
// dies at any point leaves work another process finishes.
//
// Three facts of UJP shape it (docs/einvoices.md, "Pipeline"):
//   - every call, reads included, carries a JWS signed on the customer's
//     device, and the JWS holds a requestTimestamp UJP refuses when it is more
//     than 5 minutes off; a document that waited longer is signed again (the
//     same docId and content, a fresh timestamp);
//   - header.docId is fixed when the e-invoice is created, so UJP refuses a
//     second document (E1023); a send whose outcome is unknown is looked up
//     in UJP's records before it is sent again (pipeline_lookup.go), and
//     never failed meanwhile;
//   - UJP allows one request per second per user, so every call takes a
//     turn of its user from the store (ujp.Turns, internal/ujpturns), shared
//     by every process; a job without a turn soon snoozes.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Config tunes the pipeline; zero values take the defaults.
type Config struct {
	// SignerInterval is the least time between two calls of one UJP user
	// (UJP allows one request per second). The gateway's client spaces the
	// calls (ujp.Turns); the pipeline waits at least this long after UJP's
	// E4007.
	SignerInterval time.Duration
	// HoldWindow is how long a held document keeps being resubmitted
	// before it fails; default 72h.
	HoldWindow time.Duration
	// PollEvery is how often the change feeds are read; default 1m.
	PollEvery time.Duration
	// CallTimeout bounds one call to UJP; default 30s.
	CallTimeout time.Duration
	// ResignAfter is the age of a signed payload after which it is signed
	// again before sending; default 4m (UJP's window is 5 minutes).
	ResignAfter time.Duration
	// SignAhead is how many documents of one UJP user may have their
	// signing request out or be signed and not yet sent (pacing.go);
	// default what the user's budget sends in SignAheadTime, between 2
	// and 256.
	SignAhead int
	// SignAheadTime is how far ahead of its send a document is signed;
	// default 10 s (defaultSignAheadTime).
	SignAheadTime time.Duration
	// RetryDelays is the ladder of waits between resubmissions of a held
	// document, the last repeating; default 10s, 30s, 1m, 2m, 5m, 10m, 30m.
	RetryDelays []time.Duration
}

// The defaults of Config, also those of the settings that set
// them (cmd/denar reads them from here).
const (
	DefaultHoldWindow  = 72 * time.Hour
	DefaultPollEvery   = time.Minute
	DefaultCallTimeout = 30 * time.Second
	defaultResignAfter = 4 * time.Minute
	// defaultSignAheadTime is how far ahead of its send a document of a
	// backlog is signed: at UJP's one send a second, ten documents per
	// signer. Enough to hide an agent's round trip; small, so that another
	// company's single invoice sharing the signer waits a few turns, not
	// the length of a backlog (the month-end benchmark: 90 s left a quiet
	// company's invoice behind 228 others).
	defaultSignAheadTime = 10 * time.Second
)

// DefaultRetryDelays is the default ladder of waits between resubmissions
// of a held document, the last repeating.
func DefaultRetryDelays() []time.Duration {
	return []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
		5 * time.Minute, 10 * time.Minute, 30 * time.Minute}
}

func (c Config) withDefaults() Config {
	c.SignerInterval = max(c.SignerInterval, 0)
	if c.HoldWindow <= 0 {
		c.HoldWindow = DefaultHoldWindow
	}
	if c.PollEvery <= 0 {
		c.PollEvery = DefaultPollEvery
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.ResignAfter <= 0 {
		c.ResignAfter = defaultResignAfter
	}
	if c.SignAheadTime <= 0 {
		c.SignAheadTime = defaultSignAheadTime
	}
	if len(c.RetryDelays) == 0 {
		c.RetryDelays = DefaultRetryDelays()
	}
	return c
}

// Deps are the room's collaborators; cmd/denar builds them.
type Deps struct {
	DB  *store.DB
	Log *slog.Logger
	// EInvoicing is the application layer the room is built on: it moves
	// the e-invoices, asks for their signatures and dispatches the signed
	// reads (Service.Link); required.
	EInvoicing *einvoicing.Service
	// Gateways are UJP by environment (auth.EnvSandbox, auth.EnvProduction); a
	// missing one makes that environment's documents wait in held.
	Gateways map[string]ujp.Gateway
	// Sandbox drives the UJP simulator behind the sandbox environment; nil
	// when the sandbox talks to something else (simulate answers 403).
	Sandbox einvoicing.SandboxUJP
}

// Service is the submission pipeline room: the jobs that send the signed
// e-invoices to UJP, read its change feeds and make the signed reads, the
// pacing of each UJP user's signatures, and the use cases of UJP's PDF
// and of the sandbox's simulated outcomes.
type Service struct {
	svc      *einvoicing.Service
	db       *store.DB
	gateways map[string]ujp.Gateway
	cfg      Config
	log      *slog.Logger
	sandbox  einvoicing.SandboxUJP
}

// New builds the room, registers the handlers of its signed reads and
// connects its pacing to d.EInvoicing (UsePacing).
func New(d Deps, cfg Config) *Service {
	if d.EInvoicing == nil {
		panic("pipeline: New needs Deps.EInvoicing")
	}
	p := &Service{svc: d.EInvoicing, db: d.DB, gateways: d.Gateways, cfg: cfg.withDefaults(), log: d.Log, sandbox: d.Sandbox}
	if p.log == nil {
		p.log = slog.Default()
	}
	for _, t := range []string{einvoicing.LinkChanges, einvoicing.LinkPDF} {
		p.svc.HandleLink(t, einvoicing.LinkHandler{Signed: einvoicing.EnqueueQuery, Read: p.readSales})
	}
	for _, t := range []string{einvoicing.LinkSalesLookup, einvoicing.LinkSalesLookupPayloads} {
		p.svc.HandleLink(t, einvoicing.LinkHandler{Signed: einvoicing.EnqueueQuery, Read: p.readLookup})
	}
	p.svc.UsePacing(p)
	return p
}

// Config is the pipeline's tuning (defaults applied), which the rooms that
// call UJP through it (the inbox, reconciliation) follow.
func (p *Service) Config() Config { return p.cfg }

// The periodic jobs take no arguments.
type (
	pollChangesArgs struct{}
	paceSweepArgs   struct{}
)

func (pollChangesArgs) Kind() string { return einvoicing.KindPollChanges }
func (paceSweepArgs) Kind() string   { return einvoicing.KindPaceSweep }

// RegisterJobs registers the room's job kinds on r: the submission, the
// change-feed polls (sales and the inbox), the signed reads and decisions
// at UJP, and the pacing of signatures.
func (p *Service) RegisterJobs(r *jobs.Runner) {
	jobs.Register(r, p.submit, jobs.Options{Timeout: 2 * p.cfg.CallTimeout,
		Backoff: jobs.Schedule(5*time.Second, 30*time.Second, 2*time.Minute, 10*time.Minute)})
	jobs.Register(r, p.pollAll, jobs.Options{Every: p.cfg.PollEvery})
	jobs.Register(r, p.pollOne, jobs.Options{Timeout: p.cfg.CallTimeout})
	jobs.Register(r, p.pace, jobs.Options{Backoff: jobs.Schedule(time.Second, 5*time.Second, 30*time.Second)})
	jobs.Register(r, p.paceSweep, jobs.Options{Every: 15 * time.Second})
	jobs.Register(r, p.query, jobs.Options{Timeout: 2 * p.cfg.CallTimeout,
		Backoff: jobs.Schedule(5*time.Second, 15*time.Second, 30*time.Second, time.Minute)})
}

// errNoEUJPID is a certificate without the UJP user of its holder: UJP
// cannot be called with it.
var errNoEUJPID = errors.New("the certificate has no EUJP id (register it again with eujpId)")

func (p *Service) SignerOf(ctx context.Context, q *dbq.Queries, sr dbq.SigningRequest, co dbq.Company) (einvoicing.Signer, error) {
	cert, err := q.GetSigningCertificate(ctx, sr.CertificateID)
	if err != nil {
		return einvoicing.Signer{}, fmt.Errorf("certificate %s: %w", sr.CertificateID, err)
	}
	if cert.EujpID == "" {
		return einvoicing.Signer{}, fmt.Errorf("certificate %s: %w", cert.ID, errNoEUJPID)
	}
	return einvoicing.Signer{ID: ujp.Identity{EUJPID: cert.EujpID, EDB: co.TaxNumber, SerialNumber: cert.Serial}, Cert: cert}, nil
}

// waiter names a job as a waiter for UJP turns, so that it keeps its place
// in the user's queue from one attempt to the next, and places it there as
// the job queue does: by when it came due. A company's only document of
// its user in flight is due a while ago (einvoicing.FirstOfCompany), so
// its send goes before the user's other sends, not behind every one
// waiting; the others go in the order they were signed.
func waiter(ctx context.Context, j *jobs.Job) context.Context {
	return ujp.WithWaiter(ctx, waiterName(j), j.RunAt)
}

func waiterName(j *jobs.Job) string { return fmt.Sprintf("job-%d", j.ID) }

// resentFirst is how much earlier than its job was made a document sent
// before waits in its user's queue: before any send not yet made.
const resentFirst = time.Hour

// submit is the worker of KindSubmit: one attempt to get an e-invoice to
// UJP, starting from whatever state the rows are in.
func (p *Service) submit(ctx context.Context, j *jobs.Job, a einvoicing.SubmitArgs) error {
	ctx = waiter(ctx, j)
	q := p.db.Writer()
	inv, err := q.GetEInvoiceByID(ctx, a.EInvoiceID)
	if err != nil {
		return fmt.Errorf("submit %s: %w", a.EInvoiceID, err)
	}
	status := einvoice.Status(inv.Status)
	if status != einvoice.Queued && status != einvoice.Held && status != einvoice.Submitting {
		return nil // done already, or not signed yet
	}
	if inv.SubmitAttempts > 0 {
		// Sent before (UJP's E4007, say): it had its turn, and goes
		// again before the user's sends not sent yet, even a company's
		// only one (due sendFirst early).
		ctx = ujp.WithWaiter(ctx, waiterName(j), j.CreatedAt.Add(-resentFirst))
	}
	sr, err := q.LatestSignedRequestForLink(ctx, dbq.LatestSignedRequestForLinkParams{LinkType: einvoicing.LinkEInvoice, LinkID: inv.ID})
	if errors.Is(err, sql.ErrNoRows) {
		return jobs.Cancel(fmt.Errorf("submit %s: no signature", inv.ID))
	}
	if err != nil {
		return fmt.Errorf("submit %s: signature: %w", inv.ID, err)
	}
	co, err := q.GetCompany(ctx, inv.CompanyID)
	if err != nil {
		return fmt.Errorf("submit %s: company: %w", inv.ID, err)
	}
	unknown := inv.SendUnknownSince.Valid
	if status == einvoice.Held && !unknown && inv.HeldSince.Valid && p.db.Now().Sub(inv.HeldSince.Time) > p.cfg.HoldWindow {
		// Only a document UJP cannot hold: one whose last send's outcome
		// is unknown is looked up for as long as it takes.
		return p.fail(ctx, inv, "hold_window_exceeded", "", []einvoicing.ProblemItem{{Code: "hold_window_exceeded",
			Message: fmt.Sprintf("UJP was unreachable for longer than the hold window (%s); the document was not delivered.", p.cfg.HoldWindow)}})
	}
	gw, ok := p.gateways[co.Environment]
	if !ok {
		return p.hold(ctx, inv, "ujp_not_configured", "")
	}
	who, err := p.SignerOf(ctx, q, sr, co)
	if errors.Is(err, errNoEUJPID) {
		p.log.Warn("e-invoice waits: its signer's certificate has no EUJP id", "einvoice", inv.ID, "certificate", sr.CertificateID)
		return p.retryLater(inv)
	}
	if err != nil {
		return err
	}
	if status == einvoice.Held || unknown {
		// Probe with an unsigned call as the company first (its own
		// registry entry), so an outage does not ask the signer for a
		// fresh signature, or a signed look-up, on every retry.
		cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
		_, err := gw.Company(cctx, who.ID, co.TaxNumber)
		cancel()
		if d, ok := Busy(err); ok {
			return jobs.Snooze(d)
		}
		if ujp.Retryable(err) {
			return p.retryLater(inv)
		}
	}
	if status == einvoice.Submitting {
		// An attempt is open: another worker's send in flight, or one
		// whose process died before it learnt the answer. The first is
		// left alone; the second may have reached UJP, so UJP's records
		// tell before anything is sent again.
		if open := p.db.Now().Sub(inv.UpdatedAt); open < 2*p.cfg.CallTimeout {
			return jobs.Snooze(2*p.cfg.CallTimeout - open)
		}
		return p.sendUnknown(ctx, inv, einvoicing.StatusMove{To: einvoice.Held, Cause: "attempt_interrupted"})
	}
	if unknown {
		// UJP may hold the document: its records are read before
		// anything else is sent (pipeline_lookup.go).
		if err := p.startLookup(ctx, inv); err != nil {
			return err
		}
		return p.retryLater(inv)
	}
	if stale, err := p.Stale(sr); err != nil || stale {
		if err != nil {
			p.log.Warn("signed payload without a readable timestamp; signing again", "einvoice", inv.ID, "err", err)
		}
		return p.resign(ctx, inv, status)
	}
	if d, err := p.untilNearTurn(ctx, q, inv, a.First); err != nil || d > 0 {
		if err != nil {
			return fmt.Errorf("submit %s: %w", inv.ID, err)
		}
		return jobs.Snooze(d)
	}
	// The signer's turn at UJP and the attempt's record (the move to
	// submitting) commit together: a document moves to submitting only
	// when its send goes now, and the turn is not held (one write). A
	// gateway whose turns keep no store leaves the move to us.
	moved, orig := false, inv
	work := func(ctx context.Context, tx any) error {
		stx, ok := tx.(*store.Tx)
		if !ok {
			return fmt.Errorf("submit %s: turn's transaction is %T", inv.ID, tx)
		}
		next, err := startSubmission(ctx, stx, orig)
		if err != nil {
			return err
		}
		inv, moved = next, true
		return nil
	}
	turn, err := gw.Turn(ujp.WithTurnWork(ctx, work), who.ID, ujp.PrioritySend)
	if d, ok := Busy(err); ok {
		return jobs.Snooze(d)
	}
	var de *denar.Error
	if errors.As(err, &de) {
		return nil // another worker moved it first
	}
	if err != nil {
		return fmt.Errorf("submit %s: turn: %w", inv.ID, err)
	}
	defer ujp.ReleaseTurn(turn) // when the send does not happen after all
	if !moved {
		if err := p.db.InTx(ctx, func(tx *store.Tx) error { return work(ctx, tx) }); err != nil {
			if errors.As(err, &de) {
				return nil
			}
			return err
		}
	}
	res, err := p.send(turn, gw, who, inv, sr.Jws)
	return p.afterSend(ctx, co, inv, res, err)
}

// SendLead is how many sends of its user may go before a document's while
// its submit job waits for its turn holding a worker. A job further back
// gives its worker up until it is about that near (untilNearTurn): a
// signer's batch of signatures makes many sends due at once, and the
// workers they would hold waiting in one user's queue are those the other
// users' sends need.
const SendLead = 4

// SendDue implements einvoicing.Pacing: a queued document's submit job
// comes due when about SendLead sends of its user are ahead of it, so a
// batch of signatures spreads its sends' jobs over their turns instead of
// making them all due, claimed and put back at once.
func (p *Service) SendDue(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) (time.Time, error) {
	d, err := p.untilNearTurn(ctx, tx.Queries, inv, false)
	return tx.Now.Add(d), err
}

// untilNearTurn is how long a queued document's send waits before its job
// asks for its user's turn: none when at most SendLead sends of the user
// go before it, or it is its company's only one (first), or it was sent
// before (its place is at the front), or the user's calls are not spaced.
func (p *Service) untilNearTurn(ctx context.Context, q *dbq.Queries, inv dbq.Einvoice, first bool) (time.Duration, error) {
	if first || inv.PaceKey == "" || einvoice.Status(inv.Status) != einvoice.Queued || inv.SubmitAttempts > 0 || p.cfg.SignerInterval <= 0 {
		return 0, nil
	}
	ahead, err := q.SendsAhead(ctx, dbq.SendsAheadParams{Key: inv.PaceKey, UpdatedAt: inv.UpdatedAt, ID: inv.ID})
	if err != nil {
		return 0, fmt.Errorf("sends ahead: %w", err)
	}
	if ahead <= SendLead {
		return 0, nil
	}
	return time.Duration(ahead-SendLead) * p.cfg.SignerInterval, nil
}

func (p *Service) send(ctx context.Context, gw ujp.Gateway, who einvoicing.Signer, inv dbq.Einvoice, jws string) (*ujp.SendResult, error) {
	cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	return gw.Send(cctx, who.ID, inv.DocumentType, jws)
}

// Stale reports whether the signed payload's requestTimestamp is too old
// for UJP to take.
func (p *Service) Stale(sr dbq.SigningRequest) (bool, error) {
	raw, err := base64.RawURLEncoding.DecodeString(sr.Payload)
	if err != nil {
		return true, err
	}
	var inner struct {
		RequestTimestamp string `json:"requestTimestamp"`
	}
	if err := json.Unmarshal(raw, &inner); err != nil {
		return true, err
	}
	t, err := ujpdoc.ParseTimestamp(inner.RequestTimestamp)
	if err != nil {
		return true, err
	}
	return p.db.Now().Sub(t) > p.cfg.ResignAfter, nil
}

// resign asks the signer for the same document with a fresh
// requestTimestamp; its signature enqueues the next submission.
func (p *Service) resign(ctx context.Context, inv dbq.Einvoice, status einvoice.Status) error {
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.OpenSigningRequestForLink(ctx, dbq.OpenSigningRequestForLinkParams{LinkType: einvoicing.LinkEInvoice, LinkID: inv.ID, Now: tx.Now}); err == nil {
			return nil // one is already waiting
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		b, err := einvoicing.RefreshedDocument(ctx, tx, inv)
		if err != nil {
			return fmt.Errorf("resign %s: %w", inv.ID, err)
		}
		if status == einvoice.Submitting {
			if inv, err = p.svc.MoveEInvoice(ctx, tx, inv, einvoicing.StatusMove{To: einvoice.Queued, Cause: "signature_refresh"}); err != nil {
				return err
			}
		}
		_, err = p.svc.AskDocumentSignature(ctx, tx, inv, b)
		if errors.Is(err, einvoicing.ErrNoSigner) {
			p.log.Warn("e-invoice needs a fresh signature but the company has no valid certificate", "einvoice", inv.ID)
			return nil
		}
		return err
	})
}

// startSubmission records an attempt: inv moves to submitting in tx,
// unless another worker moved it first (a *denar.Error).
func startSubmission(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) (dbq.Einvoice, error) {
	if err := einvoice.Move(einvoice.Status(inv.Status), einvoice.Submitting); err != nil {
		return inv, err
	}
	n, err := tx.StartEInvoiceSubmission(ctx, dbq.StartEInvoiceSubmissionParams{ID: inv.ID, FromStatus: inv.Status, UpdatedAt: tx.Now})
	if err != nil {
		return inv, err
	}
	if n == 0 {
		return inv, &denar.Error{Code: einvoice.CodeStateConflict, Message: "moved by another worker"}
	}
	cause := "submission"
	if inv.Status == string(einvoice.Held) {
		cause = "retry"
	}
	if err := tx.AddEInvoiceStatus(ctx, dbq.AddEInvoiceStatusParams{ID: denar.NewID("esh"), EinvoiceID: inv.ID,
		FromStatus: sql.NullString{String: inv.Status, Valid: true}, ToStatus: string(einvoice.Submitting), Cause: cause, At: tx.Now}); err != nil {
		return inv, err
	}
	inv.Status, inv.UpdatedAt, inv.SubmitAttempts = string(einvoice.Submitting), tx.Now, inv.SubmitAttempts+1
	return inv, nil
}

// existingEUID reads an EUID out of E1023's message, when UJP gives one (a
// fast path: UJP's published text, "Invoice already exists for that ID",
// carries none, and the document is then looked up in UJP's records).
var existingEUID = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

func (p *Service) afterSend(ctx context.Context, co dbq.Company, inv dbq.Einvoice, res *ujp.SendResult, err error) error {
	var rej *ujp.RejectedError
	var rl *ujp.RateLimitedError
	var un *ujp.UnavailableError
	switch {
	case err == nil:
		if err := p.deliver(ctx, inv, res.EUID, res.QRLink, "submitted"); err != nil {
			return err
		}
		return p.AccessOK(ctx, co.ID, "")
	case ujp.IsDuplicate(err):
		errors.As(err, &rej)
		if euid := existingEUID.FindString(rej.Message); euid != "" {
			// An earlier attempt landed and its answer was lost.
			return p.deliver(ctx, inv, euid, "", "submitted_earlier")
		}
		// UJP holds a document with this docId and did not say which:
		// its records tell (pipeline_lookup.go).
		return p.sendUnknown(ctx, inv, einvoicing.StatusMove{To: einvoice.Queued, Cause: "ujp_duplicate", UJPCode: rej.Code})
	case ujp.AccessProblem(err) != nil:
		// UJP refused the caller, not the document: it waits, and the
		// company carries the problem.
		r := ujp.AccessProblem(err)
		var since time.Time
		if err := p.db.InTx(ctx, func(tx *store.Tx) error {
			if err := recordAccessProblem(ctx, tx, co.ID, r); err != nil {
				return err
			}
			since = tx.Now
			if raw, err := tx.GetCompanyUJPProblems(ctx, co.ID); err == nil {
				for _, q := range einvoicing.CompanyProblems(raw) {
					if q.UJPCode == r.Code && q.Since.Before(since) {
						since = q.Since
					}
				}
			}
			_, err := p.svc.MoveEInvoice(ctx, tx, inv, einvoicing.StatusMove{To: einvoice.Queued, Cause: problemOf(r, tx.Now).Code, UJPCode: r.Code})
			return err
		}); err != nil {
			return err
		}
		// The ladder follows how long UJP has refused, so a problem left
		// for days is tried every half hour, not every ten seconds.
		return jobs.Snooze(RetryDelay(p.cfg.RetryDelays, sql.NullTime{Time: since, Valid: true}, p.db.Now()))
	case errors.As(err, &rej) && TimestampCodes[rej.Code]:
		return p.resign(ctx, inv, einvoice.Submitting)
	case errors.As(err, &rej) && rej.Unrecognised():
		return p.fail(ctx, inv, "ujp_rejected", "", []einvoicing.ProblemItem{{Code: einvoicing.ProblemUnexpectedAnswer,
			Message: fmt.Sprintf("UJP answered HTTP %d with a body that is not UJP's: %s", rej.HTTPStatus, rej.Body)}})
	case errors.As(err, &rej):
		return p.fail(ctx, inv, "ujp_rejected", rej.Code, rejectionProblems(rej))
	case errors.As(err, &rl):
		if err := p.move(ctx, inv, einvoicing.StatusMove{To: einvoice.Queued, Cause: "ujp_rate_limited", UJPCode: ujp.CodeRateLimited}); err != nil {
			return err
		}
		// The client moved the user's next turn past UJP's Retry-After:
		// the document asks again at once and waits in the queue, at the
		// front (it was sent before), rather than coming back when the
		// others already took the turns after it.
		return jobs.Snooze(0)
	case errors.As(err, &un) && un.Refused():
		// A certificate check UJP could not make: it did not take the
		// document in.
		p.log.Warn("UJP could not check the certificate; e-invoice held", "einvoice", inv.ID, "err", err)
		return p.hold(ctx, inv, "ujp_outage", un.Code)
	default:
		if d, ok := Busy(err); ok {
			// Not sent (no turn after all): back in the queue.
			if err := p.move(ctx, inv, einvoicing.StatusMove{To: einvoice.Queued, Cause: "ujp_busy"}); err != nil {
				return err
			}
			return jobs.Snooze(d)
		}
		// No answer, or UJP's "not now": whether the document landed is
		// unknown.
		p.log.Warn("UJP gave no answer; e-invoice held until UJP's records tell whether it landed", "einvoice", inv.ID, "err", err)
		return p.sendUnknown(ctx, inv, einvoicing.StatusMove{To: einvoice.Held, Cause: "ujp_outage", UJPCode: unavailableCode(err)})
	}
}

func unavailableCode(err error) string {
	var u *ujp.UnavailableError
	if errors.As(err, &u) {
		return u.Code
	}
	return ""
}

func (p *Service) move(ctx context.Context, inv dbq.Einvoice, m einvoicing.StatusMove) error {
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := p.svc.MoveEInvoice(ctx, tx, inv, m)
		return err
	})
}

// hold moves a document to held (starting its window) and schedules the
// next attempt on the retry ladder.
func (p *Service) hold(ctx context.Context, inv dbq.Einvoice, cause, code string) error {
	if inv.Status != string(einvoice.Held) {
		err := p.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := p.svc.MoveEInvoice(ctx, tx, inv, einvoicing.StatusMove{To: einvoice.Held, Cause: cause, UJPCode: code})
			return err
		})
		if err != nil {
			return err
		}
	}
	return p.retryLater(inv)
}

// retryLater schedules the next look at a held document. The step of the
// ladder follows how long it has been held, not how many sends were made:
// while UJP stays down only probes are made, and the waits must still grow.
func (p *Service) retryLater(inv dbq.Einvoice) error {
	return jobs.Snooze(RetryDelay(p.cfg.RetryDelays, inv.HeldSince, p.db.Now()))
}

// rejectionProblems keeps UJP's codes as UJP wrote them.
func rejectionProblems(r *ujp.RejectedError) []einvoicing.ProblemItem {
	if len(r.Items) == 0 {
		prop := ""
		for k := range r.Properties {
			prop = k
			break
		}
		return []einvoicing.ProblemItem{{Code: r.Code, Message: r.Message, Path: prop}}
	}
	out := make([]einvoicing.ProblemItem, 0, len(r.Items))
	for _, it := range r.Items {
		out = append(out, einvoicing.ProblemItem{Code: it.ErrorCode, Message: it.ErrorMessage, Path: it.Property, Codebook: it.Codebook})
	}
	return out
}

func (p *Service) fail(ctx context.Context, inv dbq.Einvoice, cause, code string, problems []einvoicing.ProblemItem) error {
	b, err := json.Marshal(problems)
	if err != nil {
		return err
	}
	return p.move(ctx, inv, einvoicing.StatusMove{To: einvoice.Failed, Cause: cause, UJPCode: code, Problems: b})
}

// deliver records the EUID and asks for a signature to fetch UJP's PDF.
// The original of a storno or correction is not moved here: it moves when
// UJP reports its 07 or 09 (applyChanges), which UJP may do later than it
// takes the storno, or never (a storno it refuses fails on its own).
// cause submitted_earlier (UJP held the document from an earlier send) may
// deliver a document waiting in queued or held.
func (p *Service) deliver(ctx context.Context, inv dbq.Einvoice, euid, qr, cause string) error {
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.GetEInvoiceByID(ctx, inv.ID)
		if err != nil {
			return err
		}
		switch einvoice.Status(cur.Status) {
		case einvoice.Submitting:
		case einvoice.Queued, einvoice.Held:
			if cause != "submitted_earlier" {
				return nil
			}
		default:
			return nil
		}
		d, err := p.svc.MoveEInvoice(ctx, tx, cur, einvoicing.StatusMove{To: einvoice.Delivered, Cause: cause, UJPCode: ujp.StatusSent, EUID: euid, QRLink: qr,
			TopsUp: cur.PaceKey != ""})
		if err != nil {
			return err
		}
		if err := LookupOver(ctx, tx, cur); err != nil {
			return err
		}
		co, err := tx.GetCompany(ctx, d.CompanyID)
		if err != nil {
			return err
		}
		if _, missing := PrivilegeMissing(co, ujp.PrivilegePDF); missing {
			// UJP refuses this company's PDFs (no DP): asking for every
			// document's would only collect refusals. GET …/pdf asks.
			return p.paceAtDelivery(ctx, tx, d)
		}
		if d.PaceKey != "" {
			// The PDF is read once the signer's sends are done: its
			// signature and its call never go before a send (pacing.go).
			if err := tx.WantPDF(ctx, dbq.WantPDFParams{EinvoiceID: d.ID, PaceKey: d.PaceKey, At: tx.Now}); err != nil {
				return err
			}
			return p.paceAtDelivery(ctx, tx, d)
		}
		return requestPDF(ctx, tx, d)
	})
}

// paceAtDelivery gives the place a delivered document of a UJP user
// leaves to the next ones in the delivery's transaction, rather than in a
// pace job of its own (a claim and a completion per send): usually one
// read that finds no chunk free (pacing.go). A top-up that fails leaves
// the work to the pace job.
func (p *Service) paceAtDelivery(ctx context.Context, tx *store.Tx, d dbq.Einvoice) error {
	if d.PaceKey == "" {
		return nil
	}
	if err := tx.Savepoint(ctx, func() error { return p.topUp(ctx, tx, d.PaceKey) }); err != nil {
		p.log.Warn("top-up at delivery failed; left to the pace job", "einvoice", d.ID, "err", err)
		return einvoicing.EnqueuePace(ctx, tx, d.PaceKey)
	}
	return nil
}

// sendUnknown records that UJP may hold inv (a send without an answer, or
// UJP's E1023 without the EUID) with the move m, and schedules the next
// look: UJP's records are read before the document is sent again, and it
// is never failed while its outcome is unknown.
func (p *Service) sendUnknown(ctx context.Context, inv dbq.Einvoice, m einvoicing.StatusMove) error {
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		moved, err := p.svc.MoveEInvoice(ctx, tx, inv, m)
		if err != nil {
			return err
		}
		if !inv.SendUnknownSince.Valid {
			if err := tx.SetEInvoiceSendUnknown(ctx, dbq.SetEInvoiceSendUnknownParams{ID: inv.ID,
				Since: sql.NullTime{Time: tx.Now, Valid: true}}); err != nil {
				return err
			}
		}
		if m.To == einvoice.Queued {
			// UJP answered: look it up now.
			return p.requestLookup(ctx, tx, moved)
		}
		return nil
	})
	if err != nil {
		return err
	}
	cur, err := p.db.Reader().GetEInvoiceByID(ctx, inv.ID)
	if err != nil {
		return err
	}
	return p.retryLater(cur)
}

// requestPDF asks the signer to sign the read of UJP's PDF of d.
func requestPDF(ctx context.Context, tx *store.Tx, d dbq.Einvoice) error {
	payload, err := json.Marshal(ujp.EUIDRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), EUID: d.Euid.String})
	if err != nil {
		return err
	}
	// Without a signer, asked again when the PDF is requested.
	return AskRead(ctx, tx, d.CompanyID, payload, einvoicing.SigningLink{Type: einvoicing.LinkPDF, ID: d.ID})
}

// pollAll is the periodic worker: it schedules a read of UJP for every
// company with documents waiting on UJP (the sales change feed) and every
// active company with a ready signer (the inbox: UJP's purchase side).
func (p *Service) pollAll(ctx context.Context, _ *jobs.Job, _ pollChangesArgs) error {
	q := p.db.Reader()
	ids, err := q.CompaniesAwaitingUJP(ctx)
	if err != nil {
		return err
	}
	now := p.db.Now()
	inbox, err := q.CompaniesForInboxSync(ctx, dbq.CompaniesForInboxSyncParams{Now: now,
		SeenAfter: sql.NullTime{Time: now.Add(-einvoicing.AgentOnlineTTL), Valid: true}})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		for _, id := range append(ids, inbox...) {
			if seen[id] {
				continue
			}
			seen[id] = true
			if err := einvoicing.EnqueuePoll(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// pollOne asks the company's signer to sign change-feed reads for every day
// from the company's cursor to UJP's today (at most a week per run).
func (p *Service) pollOne(ctx context.Context, _ *jobs.Job, a einvoicing.PollArgs) error {
	co, err := p.db.Reader().GetCompany(ctx, a.CompanyID)
	if err != nil {
		return err
	}
	gw, ok := p.gateways[co.Environment]
	if !ok {
		return nil
	}
	today := p.ujpNow(ctx, gw, co).In(ujpdoc.Skopje)
	today = time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, ujpdoc.Skopje)
	// From the first day not read to the end (the cursor), else yesterday
	// (a move just before midnight); never more than a week back, never
	// past UJP's today.
	from := today.AddDate(0, 0, -1)
	if c, err := p.db.Reader().GetChangeCursor(ctx, dbq.GetChangeCursorParams{CompanyID: co.ID, Environment: co.Environment}); err == nil {
		if t, err := time.ParseInLocation(time.DateOnly, c.PolledThrough, ujpdoc.Skopje); err == nil {
			from = t
		}
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if weekAgo := today.AddDate(0, 0, -7); from.Before(weekAgo) {
		from = weekAgo
	}
	if from.After(today) {
		from = today
	}
	awaiting, err := p.db.Reader().CompanyAwaitingUJP(ctx, co.ID)
	if err != nil {
		return err
	}
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		if awaiting > 0 {
			if err := p.requestSalesChanges(ctx, tx, co, from, today); err != nil {
				return err
			}
		}
		// The purchase side (the inbox), when it is due.
		return p.svc.SyncInbox(ctx, tx, co, today)
	})
}

// ujpNow is UJP's clock, read as the company's signer, or, when it cannot
// be read (no signer, no turn soon, UJP not answering), ours: a poll never
// stops for want of UJP's time. Both are read in Skopje time.
func (p *Service) ujpNow(ctx context.Context, gw ujp.Gateway, co dbq.Company) time.Time {
	cert, err := p.db.Reader().CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: co.ID, Now: p.db.Now()})
	if err != nil || cert.EujpID == "" {
		return p.db.Now()
	}
	cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	t, err := gw.ServerTime(cctx, ujp.Identity{EUJPID: cert.EujpID, EDB: co.TaxNumber})
	if err != nil {
		p.log.Info("UJP's time not read; polling by our clock", "company", co.ID, "err", err)
		return p.db.Now()
	}
	return t
}

// requestSalesChanges asks the signer to sign the sales change-feed reads
// of the days from from to today.
func (p *Service) requestSalesChanges(ctx context.Context, tx *store.Tx, co dbq.Company, from, today time.Time) error {
	for d := from; !d.After(today); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		link := einvoicing.SigningLink{Type: einvoicing.LinkChanges, ID: co.ID + "/" + day}
		waiting, err := ReadWaiting(ctx, tx, link)
		if err != nil {
			return err
		}
		if waiting {
			continue
		}
		payload, err := json.Marshal(ujp.ChangesRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), Date: day})
		if err != nil {
			return err
		}
		if _, err := einvoicing.RequestSignature(ctx, tx, co.ID, einvoicing.PurposeQuery, payload, link); errors.Is(err, einvoicing.ErrNoSigner) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// query runs a signed read once its signature is recorded.
func (p *Service) query(ctx context.Context, j *jobs.Job, a einvoicing.QueryArgs) error {
	ctx = waiter(ctx, j)
	q := p.db.Reader()
	sr, err := q.GetSigningRequest(ctx, a.SigningRequestID)
	if err != nil {
		return err
	}
	co, err := q.GetCompany(ctx, sr.CompanyID)
	if err != nil {
		return err
	}
	gw, ok := p.gateways[co.Environment]
	if !ok {
		return jobs.Cancel(fmt.Errorf("no UJP gateway for %s", co.Environment))
	}
	who, err := p.SignerOf(ctx, q, sr, co)
	if err != nil {
		return jobs.Cancel(err)
	}
	if sr.LinkType == einvoicing.LinkPDF {
		// A PDF read goes after every send of its user: when its turn
		// is not near it gives its worker back (a snooze until its turn
		// may come) rather than hold it, while other users' sends wait
		// for a worker.
		ctx = ujp.WithTurnWait(ctx, 2*p.cfg.SignerInterval)
	}
	cctx, cancel := context.WithTimeout(ctx, p.cfg.CallTimeout)
	defer cancel()
	err = p.runQuery(ctx, cctx, gw, who, sr, co)
	if d, ok := Busy(err); ok {
		return jobs.Snooze(d)
	}
	var rl *ujp.RateLimitedError
	if errors.As(err, &rl) {
		return jobs.Snooze(max(rl.RetryAfter, p.cfg.SignerInterval))
	}
	return err
}

// runQuery makes the signed read (or decision) sr and applies its answer.
func (p *Service) runQuery(ctx, cctx context.Context, gw ujp.Gateway, who einvoicing.Signer, sr dbq.SigningRequest, co dbq.Company) error {
	h, ok := p.svc.Link(sr.LinkType)
	if !ok || h.Read == nil {
		return jobs.Cancel(fmt.Errorf("signed read %s: link type %q has no read", sr.ID, sr.LinkType))
	}
	return h.Read(ctx, cctx, gw, who, sr, co)
}

// readSales performs the sales side's signed reads of the pipeline: the
// change feed and a delivered document's PDF.
func (p *Service) readSales(ctx, cctx context.Context, gw ujp.Gateway, who einvoicing.Signer, sr dbq.SigningRequest, co dbq.Company) error {
	switch sr.LinkType {
	case einvoicing.LinkChanges:
		changes, err := gw.SalesChanges(cctx, who.ID, sr.Jws)
		if err != nil {
			return p.QueryFailed(ctx, co, err)
		}
		companyID, day, _ := strings.Cut(sr.LinkID, "/")
		if err := p.applyChanges(ctx, companyID, co.Environment, day, changes); err != nil {
			return err
		}
		return p.AccessOK(ctx, co.ID, "")
	case einvoicing.LinkPDF:
		pdf, err := gw.SalesPDF(cctx, who.ID, sr.Jws)
		if err != nil {
			return p.QueryFailed(ctx, co, err)
		}
		if err := p.db.Writer().PutEInvoicePDF(ctx, dbq.PutEInvoicePDFParams{EinvoiceID: sr.LinkID,
			Pdf: base64.StdEncoding.EncodeToString(pdf), CreatedAt: p.db.Now()}); err != nil {
			return err
		}
		return p.AccessOK(ctx, co.ID, ujp.PrivilegePDF)
	}
	return jobs.Cancel(fmt.Errorf("signed read %s: not a sales read: %s", sr.ID, sr.LinkType))
}

// QueryFailed retries an unavailable UJP; an access refusal is the
// company's problem and ends the read quietly; another refusal (a stale
// timestamp included) ends the read: the next poll, or the next PDF
// request, signs a new one.
func (p *Service) QueryFailed(ctx context.Context, co dbq.Company, err error) error {
	if _, ok := Busy(err); ok {
		return err
	}
	if ujp.Retryable(err) {
		return err
	}
	if access, rerr := p.AccessProblem(ctx, co.ID, err); access || rerr != nil {
		return rerr
	}
	return jobs.Cancel(err)
}

// ujpCauses names the cause of a move UJP reported.
var ujpCauses = map[einvoice.Status]string{
	einvoice.Accepted:          "buyer_accepted",
	einvoice.Rejected:          "buyer_rejected",
	einvoice.AutoAccepted:      "deadline_passed",
	einvoice.CancelledByStorno: "ujp_voided",
	einvoice.Corrected:         "ujp_corrected",
}

// applyChanges moves the company's documents as the change feed of day
// says, oldest change first; moves the domain does not allow (a change we
// applied already, a status we were past) are skipped.
func (p *Service) applyChanges(ctx context.Context, companyID, env, day string, changes []ujp.StatusChange) error {
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		for _, ch := range changes {
			inv, err := tx.GetEInvoiceByEUID(ctx, dbq.GetEInvoiceByEUIDParams{CompanyID: companyID, Euid: sql.NullString{String: ch.EUID, Valid: true}})
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			to, ok := einvoice.FromUJP(ch.NewStatus.Code)
			if !ok {
				p.log.Warn("UJP reported a status we do not know", "euid", ch.EUID, "code", ch.NewStatus.Code)
				continue
			}
			if inv.Status == string(to) || !einvoice.CanMove(einvoice.Status(inv.Status), to) {
				continue
			}
			cause := ujpCauses[to]
			if cause == "" {
				cause = "ujp_status"
			}
			m := einvoicing.StatusMove{To: to, Cause: cause, UJPCode: ch.NewStatus.Code}
			if to == einvoice.Rejected {
				item := einvoicing.ProblemItem{Code: deref(ch.RejectReasonCode), Codebook: ujpdoc.CBRejectReasons,
					Message: strings.TrimSpace(deref(ch.RejectReason) + " " + deref(ch.Comment))}
				if m.Problems, err = json.Marshal([]einvoicing.ProblemItem{item}); err != nil {
					return err
				}
			}
			if _, err := p.svc.MoveEInvoice(ctx, tx, inv, m); err != nil {
				return err
			}
		}
		// A day before UJP's today is complete: later polls start after it.
		if next, err := time.Parse(time.DateOnly, day); err == nil {
			today := tx.Now.In(ujpdoc.Skopje).Format(time.DateOnly)
			if day < today {
				return tx.SetChangeCursor(ctx, dbq.SetChangeCursorParams{CompanyID: companyID, Environment: env,
					PolledThrough: next.AddDate(0, 0, 1).Format(time.DateOnly), UpdatedAt: tx.Now})
			}
		}
		return nil
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
