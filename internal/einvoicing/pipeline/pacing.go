package pipeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Just-in-time signing. UJP takes one request a second from a user and a
// signature is good for five minutes, so a UJP user's (a signer's)
// documents are signed in the order and at the rate its budget sends them:
// at most SignAhead of them are "in flight" (a document signing request
// issued and not yet sent: awaiting_signature with a request, queued,
// submitting). The others wait in awaiting_signature with no request
// (einvoices.sign_turn_since) until a send frees a place; the pace job
// (KindPace) then issues the next requests, the companies sharing the user
// taking turns (the one whose last request is oldest first), each
// company's documents oldest first. A document is signed when about
// SignAhead sends are ahead of it, so its signature is seconds old when
// sent and nothing is signed twice.

// signAhead is how many documents of one UJP user may be in flight: what
// its budget sends in SignAheadTime (one send per SignerInterval),
// between 2 and SignAheadMax.
func (c Config) signAhead() int {
	if c.SignAhead > 0 {
		return c.SignAhead
	}
	if c.SignerInterval <= 0 {
		return signAheadMax
	}
	return min(max(int(c.SignAheadTime/c.SignerInterval), 2), signAheadMax)
}

// signChunk is how many places of a user must be free before a top-up
// issues requests for them: half of SignAhead, so that a document is
// still signed at least half of SignAhead's time before its send.
func (c Config) signChunk() int {
	return max(c.signAhead()/2, 1)
}

// signAheadMax bounds the requests open at once for one user, whatever
// the interval (a scaled-down window would otherwise sign thousands at
// once).
const signAheadMax = 256

// paceCompanyWaits is what PaceState answers, instead of a count of the
// documents in flight, when the issuing company's own documents of the
// user wait to be signed (-1: another company's do).
const paceCompanyWaits = -2

// MustWait reports whether a new document of key from companyID waits
// for its turn to be signed: when SignAhead documents are in flight, or
// others wait already (they go first), unless the company has none in
// flight or waiting (its own place, see einvoicing.FirstOfCompany). wake is true when
// places are free all the same, so a top-up should run.
func (p *Service) MustWait(ctx context.Context, tx *store.Tx, key, companyID string) (wait, wake bool, err error) {
	if key == "" {
		return false, false, nil
	}
	k := p.cfg.signAhead()
	state := func() (int64, error) {
		n, err := tx.PaceState(ctx, dbq.PaceStateParams{Key: key, CompanyID: companyID, Lim: int32(k)})
		if err != nil {
			return 0, fmt.Errorf("pace state of %s: %w", key, err)
		}
		return n, nil
	}
	n, err := state()
	if err != nil {
		return false, false, err
	}
	if n >= 0 && n >= int64(k-lockZone) && tx.Dialect == store.Postgres {
		// Near the last places: concurrent issues of the user take
		// them one at a time (SQLite has one writer anyway).
		if err := lockPace(ctx, tx, key); err != nil {
			return false, false, err
		}
		if n, err = state(); err != nil {
			return false, false, err
		}
	}
	switch {
	case n == paceCompanyWaits:
		return true, false, nil // its company's earlier ones go first
	case n >= 0 && n < int64(k):
		return false, false, nil
	}
	// Others wait, or every place is taken: the company's own place if it
	// has nothing of the user in flight either.
	first, err := einvoicing.FirstOfCompany(ctx, tx, key, companyID, "")
	if err != nil || !first {
		return true, false, err
	}
	// The company's turn: it had none, so it is the one served least
	// recently (the order top-ups follow).
	if err := tx.PaceCompanyIssued(ctx, dbq.PaceCompanyIssuedParams{Key: key, CompanyID: companyID, At: tx.Now}); err != nil {
		return false, false, err
	}
	return false, false, nil
}

// lockZone is how near SignAhead a user's documents in flight are when an
// issue takes the user's pacing lock.
const lockZone = 16

func lockPace(ctx context.Context, tx *store.Tx, key string) error {
	if err := tx.LockPace(ctx, dbq.LockPaceParams{Key: key, Now: tx.Now}); err != nil {
		return fmt.Errorf("pace lock of %s: %w", key, err)
	}
	return nil
}

// pace is the worker of KindPace.
func (p *Service) pace(ctx context.Context, _ *jobs.Job, a einvoicing.PaceArgs) error {
	return p.db.InTx(ctx, func(tx *store.Tx) error { return p.topUp(ctx, tx, a.Key) })
}

// paceSweep is the worker of KindPaceSweep.
func (p *Service) paceSweep(ctx context.Context, _ *jobs.Job, _ paceSweepArgs) error {
	keys, err := p.db.Writer().PaceKeysWaiting(ctx)
	if err != nil {
		return err
	}
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		for _, k := range keys {
			if err := einvoicing.EnqueuePace(ctx, tx, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// topUp issues document signing requests for key's waiting documents
// until SignAhead are in flight, companies in turn.
func (p *Service) topUp(ctx context.Context, tx *store.Tx, key string) error {
	k, chunk := p.cfg.signAhead(), p.cfg.signChunk()
	// Requests go out a chunk at a time, so the signer gets them in
	// batches (one claim and one answer each) rather than one per send;
	// until a chunk is free, a top-up writes nothing.
	n, err := tx.InFlightCount(ctx, key)
	if err != nil {
		return fmt.Errorf("in flight of %s: %w", key, err)
	}
	if n > 0 && k-int(n) < chunk {
		return nil
	}
	if err := lockPace(ctx, tx, key); err != nil {
		return err
	}
	if n, err = tx.InFlightCount(ctx, key); err != nil {
		return fmt.Errorf("in flight of %s: %w", key, err)
	}
	// Looked at again under the lock: another top-up may have taken part
	// of the chunk since, and issuing what is left would split it.
	free := k - int(n)
	if free <= 0 || (n > 0 && free < chunk) {
		return nil
	}
	counts, err := tx.WaitingCounts(ctx, key)
	if err != nil {
		return err
	}
	if len(counts) == 0 {
		if n == 0 {
			return p.readWantedPDFs(ctx, tx, key)
		}
		return nil
	}
	last, err := tx.PaceCompanies(ctx, key)
	if err != nil {
		return err
	}
	issued := map[string]time.Time{}
	for _, r := range last {
		issued[r.CompanyID] = r.IssuedAt
	}
	waiting := map[string]int64{}
	for _, c := range counts {
		waiting[c.CompanyID] = c.N
	}
	at := tx.Now
	done := map[string]bool{}
	for _, companyID := range turnOrder(waiting, issued, free) {
		if done[companyID] {
			continue // it had none left after all
		}
		ok, err := p.signNext(ctx, tx, key, companyID)
		if err != nil {
			return err
		}
		if !ok {
			done[companyID] = true
			continue
		}
		// Distinct instants, so the order holds across transactions.
		at = at.Add(time.Microsecond)
		if err := tx.PaceCompanyIssued(ctx, dbq.PaceCompanyIssuedParams{Key: key, CompanyID: companyID, At: at}); err != nil {
			return err
		}
	}
	return nil
}

// turnOrder is the order in which n places go to the companies with
// documents waiting (waiting: how many each): the company whose last
// request was issued longest ago (issued; none: first) takes the next
// place, then by id, so the companies take turns, each as long as it has
// documents waiting.
func turnOrder(waiting map[string]int64, issued map[string]time.Time, n int) []string {
	type co struct {
		id   string
		left int64
		last time.Time
		seq  int // places taken in this order: after every earlier one
	}
	cos := make([]*co, 0, len(waiting))
	for id, w := range waiting {
		if w > 0 {
			cos = append(cos, &co{id: id, left: w, last: issued[id]})
		}
	}
	less := func(a, b *co) bool {
		if (a.seq == 0) != (b.seq == 0) {
			return a.seq == 0
		}
		if a.seq != b.seq {
			return a.seq < b.seq
		}
		if !a.last.Equal(b.last) {
			return a.last.Before(b.last)
		}
		return a.id < b.id
	}
	var out []string
	for seq := 1; len(out) < n; seq++ {
		var next *co
		for _, c := range cos {
			if c.left > 0 && (next == nil || less(c, next)) {
				next = c
			}
		}
		if next == nil {
			break
		}
		out = append(out, next.id)
		next.left--
		next.seq = seq
	}
	return out
}

// pdfBatch is how many deferred PDF reads one pace job asks for.
const pdfBatch = 100

// readWantedPDFs asks for the PDFs of key's delivered documents deferred
// while its sends went on, up to pdfBatch, and has the pace job run again
// for the rest.
func (p *Service) readWantedPDFs(ctx context.Context, tx *store.Tx, key string) error {
	ids, err := tx.WantedPDFs(ctx, dbq.WantedPDFsParams{Key: key, Lim: pdfBatch})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := tx.DeleteWantedPDF(ctx, id); err != nil {
			return err
		}
		inv, err := tx.GetEInvoiceByID(ctx, id)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		if !inv.Euid.Valid {
			continue
		}
		if _, err := tx.GetEInvoicePDF(ctx, id); err == nil {
			continue // read meanwhile (GET …/pdf asked for it)
		}
		if _, err := tx.OpenSigningRequestForLink(ctx, dbq.OpenSigningRequestForLinkParams{LinkType: einvoicing.LinkPDF, LinkID: id, Now: tx.Now}); err == nil {
			continue
		}
		if err := requestPDF(ctx, tx, inv); err != nil {
			return err
		}
	}
	if len(ids) == pdfBatch {
		_, err := jobs.Insert(ctx, tx, einvoicing.PaceArgs{Key: key}, jobs.InsertOpts{RunAt: tx.Now.Add(time.Second)})
		return err
	}
	return nil
}

// signNext issues the signing request of the company's oldest document of
// key waiting for its turn; false when none waits.
func (p *Service) signNext(ctx context.Context, tx *store.Tx, key, companyID string) (bool, error) {
	for {
		inv, err := tx.OldestWaitingOfCompany(ctx, dbq.OldestWaitingOfCompanyParams{Key: key, CompanyID: companyID})
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		taken, err := tx.EndSignTurnWait(ctx, inv.ID)
		if err != nil {
			return false, err
		}
		if taken == 0 {
			continue // another transaction took it
		}
		if einvoice.Status(inv.Status) != einvoice.AwaitingSignature || inv.SigningRequestID.Valid {
			return true, nil // moved on meanwhile (cancelled): nothing to sign
		}
		// The document was stamped when it was issued; UJP wants its
		// requestTimestamp fresh.
		payload, err := einvoicing.RefreshedDocument(ctx, tx, inv)
		if err != nil {
			return false, err
		}
		if _, err := p.svc.AskDocumentSignature(ctx, tx, inv, payload); errors.Is(err, einvoicing.ErrNoSigner) {
			p.log.WarnContext(ctx, "e-invoice's turn to be signed came but the company has no valid certificate", "einvoice", inv.ID)
			return true, nil
		} else if err != nil {
			return false, err
		}
		return true, nil
	}
}

// Queue tells where inv stands; nil when it is not waiting to be sent.
func (p *Service) Queue(ctx context.Context, q *dbq.Queries, inv dbq.Einvoice) (*einvoicing.Queue, error) {
	st := einvoice.Status(inv.Status)
	if inv.PaceKey == "" || (st != einvoice.AwaitingSignature && st != einvoice.Queued) {
		return nil, nil
	}
	var pos int64
	signing := "signed"
	if inv.SignTurnSince.Valid {
		signing = "waiting_for_turn"
		flight, err := q.InFlightCount(ctx, inv.PaceKey)
		if err != nil {
			return nil, err
		}
		mine, err := q.WaitingAheadInCompany(ctx, dbq.WaitingAheadInCompanyParams{Key: inv.PaceKey, CompanyID: inv.CompanyID,
			CreatedAt: inv.CreatedAt, ID: inv.ID})
		if err != nil {
			return nil, err
		}
		counts, err := q.WaitingCounts(ctx, inv.PaceKey)
		if err != nil {
			return nil, err
		}
		// Companies take turns: of each other company, about as many go
		// first as of this one.
		pos = flight + mine
		for _, c := range counts {
			if c.CompanyID != inv.CompanyID {
				pos += min(c.N, mine+1)
			}
		}
	} else {
		if st == einvoice.AwaitingSignature {
			if !inv.SigningRequestID.Valid {
				return nil, nil // refused, or no signer: problems say why
			}
			signing = "requested"
		}
		n, err := q.InFlightAhead(ctx, dbq.InFlightAheadParams{Key: inv.PaceKey, CreatedAt: inv.CreatedAt, ID: inv.ID})
		if err != nil {
			return nil, err
		}
		pos = n
	}
	step := max(p.cfg.SignerInterval, 10*time.Millisecond)
	return &einvoicing.Queue{Position: int(pos), ExpectedAt: p.db.Now().Add(time.Duration(pos+1) * step).UTC().Truncate(time.Millisecond), Signing: signing}, nil
}
