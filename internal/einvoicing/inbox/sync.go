package inbox

// Reading UJP's purchase side into the inbox. It is started by the
// pipeline's change-feed poll (pollAll → pollOne → einvoicing.Inbox's
// StartSync; its signed reads are run by the query job, through the
// signer's UJP slot, with the handlers this room registered), and it
// follows one cursor per company in the store (ujp_purchase_cursors):
//
//	ids [polled_through … today] ──▶ payload/list of the EUIDs not stored yet (≤100 a call)
//	    ──▶ discovered_through = the last day whose received documents are all stored
//	    ──▶ changes(polled_through) ──▶ polled_through+1 ──▶ changes(next day) … until today
//
// Every step is a signing request of purpose query that the company's
// signer signs; its result is applied in one transaction, and the next
// step is asked for in that same transaction, so a crash at any point
// leaves either the step to redo or the next one waiting. A day is done
// only when its documents were all stored by a read that started after the
// day ended (with UJP's 5-minute clock margin), and its status changes were
// applied by a read that started after it ended; the cursor then moves one
// day, only from that day (a conditional update), so no day is skipped
// whatever order reads finish in, and every day from the cursor on is read
// again until it is done. A document is stored once: (company, EUID) is
// unique, and inbox.received is written with the row that inserted it.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// firstInboxDay is where a company's first sync starts: the first day of
// the month before today, so that every document whose deadline (the 10th
// of the month after its transaction) may still be open is found.
func firstInboxDay(today time.Time) time.Time {
	return time.Date(today.Year(), today.Month()-1, 1, 0, 0, 0, 0, ujpdoc.Skopje)
}

// startInboxSync asks for the first read of a sync of co's purchase side
// (in the poll's transaction), unless a read of it still waits for its
// signer, or UJP refused its payloads (no RD) within the last hour.
func (s *Service) startInboxSync(ctx context.Context, tx *store.Tx, co dbq.Company, today time.Time) error {
	if prob, missing := pipeline.PrivilegeMissing(co, ujp.PrivilegePayloads); missing && tx.Now.Sub(prob.LastSeenAt) < pipeline.RDRetryEvery {
		return nil
	}
	if _, err := tx.OpenInboxSyncRequest(ctx, dbq.OpenInboxSyncRequestParams{CompanyID: co.ID, Now: tx.Now}); err == nil {
		return nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	cur, err := purchaseCursor(ctx, tx, co, today)
	if err != nil {
		return err
	}
	from, err := pipeline.ParseDay(cur.PolledThrough)
	if err != nil {
		return fmt.Errorf("purchase cursor of %s: %w", co.ID, err)
	}
	return requestPurchaseIDs(ctx, tx, co, from, today)
}

// purchaseCursor returns co's cursor, starting it at firstInboxDay.
func purchaseCursor(ctx context.Context, tx *store.Tx, co dbq.Company, today time.Time) (dbq.UjpPurchaseCursor, error) {
	key := dbq.GetPurchaseCursorParams{CompanyID: co.ID, Environment: co.Environment}
	cur, err := tx.GetPurchaseCursor(ctx, key)
	if errors.Is(err, sql.ErrNoRows) {
		if err := tx.InitPurchaseCursor(ctx, dbq.InitPurchaseCursorParams{CompanyID: co.ID, Environment: co.Environment,
			PolledThrough: firstInboxDay(today).Format(time.DateOnly), UpdatedAt: tx.Now}); err != nil {
			return cur, err
		}
		cur, err = tx.GetPurchaseCursor(ctx, key)
	}
	return cur, err
}

// requestPurchaseIDs asks for the read of the EUIDs received from from to
// today, at most a month (UJP's E4014) per read.
func requestPurchaseIDs(ctx context.Context, tx *store.Tx, co dbq.Company, from, today time.Time) error {
	payload, err := pipeline.MonthRead(tx.Now, from, today)
	if err != nil {
		return err
	}
	return pipeline.AskRead(ctx, tx, co.ID, payload, einvoicing.SigningLink{Type: einvoicing.LinkPurchaseIDs, ID: co.ID})
}

// requestPurchaseChanges asks for the read of co's purchase change feed of
// day, unless one waits for its signer already.
func requestPurchaseChanges(ctx context.Context, tx *store.Tx, co dbq.Company, day string) error {
	link := einvoicing.SigningLink{Type: einvoicing.LinkPurchaseChanges, ID: co.ID}
	if waiting, err := pipeline.ReadWaiting(ctx, tx, link); err != nil || waiting {
		return err
	}
	payload, err := json.Marshal(ujp.ChangesRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), Date: day})
	if err != nil {
		return err
	}
	return pipeline.AskRead(ctx, tx, co.ID, payload, link)
}

// readInbox runs the inbox's signed reads and decisions for the query job.
func (s *Service) readInbox(ctx, cctx context.Context, gw ujp.Gateway, who einvoicing.Signer, sr dbq.SigningRequest, co dbq.Company) error {
	switch sr.LinkType {
	case einvoicing.LinkPurchaseIDs:
		started := s.db.Now()
		ids, err := gw.PurchaseIDs(cctx, who.ID, sr.Jws)
		if err != nil {
			return s.pipe.QueryFailed(ctx, co, err)
		}
		return s.purchaseIDsRead(ctx, co, sr, ids, started)
	case einvoicing.LinkPurchasePayloads:
		list, err := gw.PurchasePayloads(cctx, who.ID, sr.Jws)
		if err != nil {
			return s.pipe.QueryFailed(ctx, co, err)
		}
		if err := s.purchasePayloadsRead(ctx, co, sr, list); err != nil {
			return err
		}
		return s.pipe.AccessOK(ctx, co.ID, ujp.PrivilegePayloads)
	case einvoicing.LinkPurchaseChanges:
		started := s.db.Now()
		changes, err := gw.PurchaseChanges(cctx, who.ID, sr.Jws)
		if err != nil {
			return s.pipe.QueryFailed(ctx, co, err)
		}
		return s.purchaseChangesRead(ctx, co, sr, changes, started)
	case einvoicing.LinkInboxPDF:
		pdf, err := gw.PurchasePDF(cctx, who.ID, sr.Jws)
		if err != nil {
			return s.pipe.QueryFailed(ctx, co, err)
		}
		if err := s.db.Writer().PutInboxPDF(ctx, dbq.PutInboxPDFParams{DocumentID: sr.LinkID,
			Pdf: base64.StdEncoding.EncodeToString(pdf), CreatedAt: s.db.Now()}); err != nil {
			return err
		}
		return s.pipe.AccessOK(ctx, co.ID, ujp.PrivilegePDF)
	case einvoicing.LinkInboxStatus:
		st, err := gw.PurchaseCurrentStatus(cctx, who.ID, sr.Jws)
		if err != nil {
			return s.pipe.QueryFailed(ctx, co, err)
		}
		return s.inboxInTx(ctx, func(tx *store.Tx) error {
			return s.decisionStatusRead(ctx, tx, sr.LinkID, sr.ID, st)
		})
	case einvoicing.LinkInboxDecision:
		return s.sendDecision(ctx, gw, who, sr)
	}
	return jobs.Cancel(fmt.Errorf("signed read %s: not an inbox read: %s", sr.ID, sr.LinkType))
}

// purchaseIDsRead asks for the payloads of the EUIDs not stored yet, or,
// when every one is stored, records the discovery and goes on to the
// change feed.
func (s *Service) purchaseIDsRead(ctx context.Context, co dbq.Company, sr dbq.SigningRequest, ids []string, started time.Time) error {
	var req ujp.DateRangeRequest
	if err := pipeline.DecodeSigned(sr, &req); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		seen := map[string]bool{}
		var fresh []string
		for _, euid := range ids {
			if seen[euid] || euid == "" {
				continue
			}
			seen[euid] = true
			if _, err := tx.GetInboxDocumentByEUID(ctx, dbq.GetInboxDocumentByEUIDParams{CompanyID: co.ID, Euid: euid}); errors.Is(err, sql.ErrNoRows) {
				fresh = append(fresh, euid)
			} else if err != nil {
				return err
			}
		}
		if len(fresh) == 0 {
			return s.discoveryDone(ctx, tx, co, req.DateTo, started)
		}
		batch := fresh[:min(len(fresh), pipeline.MaxPayloadsPerRequest)]
		payload, err := json.Marshal(ujp.EUIDsRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), EUIDs: batch})
		if err != nil {
			return err
		}
		// The next step needs the range's end and when this read started.
		link := einvoicing.SigningLink{Type: einvoicing.LinkPurchasePayloads, ID: fmt.Sprintf("%s/%s/%d", co.ID, req.DateTo, started.UnixMilli())}
		return pipeline.AskRead(ctx, tx, co.ID, payload, link)
	})
}

// purchasePayloadsRead stores the documents UJP gave (each with
// inbox.received), then reads the EUIDs again if there may be more, or
// records the discovery.
func (s *Service) purchasePayloadsRead(ctx context.Context, co dbq.Company, sr dbq.SigningRequest, list []ujp.Payload) error {
	var req ujp.EUIDsRequest
	if err := pipeline.DecodeSigned(sr, &req); err != nil {
		return err
	}
	parts := strings.Split(sr.LinkID, "/")
	if len(parts) != 3 {
		return fmt.Errorf("payload read %s: link %q", sr.ID, sr.LinkID)
	}
	to := parts[1]
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return fmt.Errorf("payload read %s: link %q: %w", sr.ID, sr.LinkID, err)
	}
	started := time.UnixMilli(ms)
	name := s.StatusName(co.Environment, ujp.StatusSent)
	asked := map[string]bool{}
	for _, e := range req.EUIDs {
		asked[e] = true
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		got := map[string]bool{}
		for _, it := range list {
			if !asked[it.EUID] || got[it.EUID] {
				continue
			}
			got[it.EUID] = true
			if _, _, err := s.StoreIncoming(ctx, tx, co, it, name); err != nil {
				return err
			}
		}
		for _, e := range req.EUIDs {
			if got[e] {
				continue
			}
			if _, err := tx.GetInboxDocumentByEUID(ctx, dbq.GetInboxDocumentByEUIDParams{CompanyID: co.ID, Euid: e}); errors.Is(err, sql.ErrNoRows) {
				// UJP listed it and did not give it: the discovery is not
				// complete; the next poll asks again.
				s.log.Warn("UJP listed an incoming document but gave no payload; asking again at the next poll", "company", co.ID, "euid", e)
				return nil
			} else if err != nil {
				return err
			}
		}
		if len(req.EUIDs) >= pipeline.MaxPayloadsPerRequest {
			// There may be more than one batch: read the EUIDs again.
			cur, err := purchaseCursor(ctx, tx, co, pipeline.SkopjeMidnight(tx.Now))
			if err != nil {
				return err
			}
			from, err := pipeline.ParseDay(cur.PolledThrough)
			if err != nil {
				return err
			}
			end, err := pipeline.ParseDay(to)
			if err != nil {
				return err
			}
			return requestPurchaseIDs(ctx, tx, co, from, end)
		}
		return s.discoveryDone(ctx, tx, co, to, started)
	})
}

// StoreIncoming stores one incoming document UJP gave (its EUID and the
// seller's payload, unmodified) in co's inbox, counts it in usage and
// writes inbox.received, all in tx — unless the inbox holds it already
// (read twice, by two processes, or by the inbox sync and a
// reconciliation): stored is false then and nothing is written. The one
// way a document enters the inbox from UJP's lists.
func (s *Service) StoreIncoming(ctx context.Context, tx *store.Tx, co dbq.Company, it ujp.Payload, statusName string) (d dbq.InboxDocument, stored bool, err error) {
	d, err = tx.InsertInboxDocument(ctx, dbq.InsertInboxDocumentParams(newInboxDocument(co, it.EUID, []byte(it.Payload), tx.Now, statusName)))
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil // stored by another read
	}
	if err != nil {
		return d, false, fmt.Errorf("store inbox document %s: %w", it.EUID, err)
	}
	if _, err := einvoicing.CountReceived(ctx, tx, einvoicing.ReceivedDocument{ID: d.ID, AccountID: d.AccountID, CompanyID: d.CompanyID,
		Environment: d.Environment, ReceivedAt: d.ReceivedAt}); err != nil {
		return d, false, fmt.Errorf("count inbox document %s: %w", d.ID, err)
	}
	if err := s.inboxEvent(ctx, tx, d, webhooks.EventInboxReceived); err != nil {
		return d, false, err
	}
	return d, true, nil
}

// discoveryDone records that every document received up to to, as far as
// a read started at started can tell, is stored, and asks for the change
// feed of the first day not done.
func (s *Service) discoveryDone(ctx context.Context, tx *store.Tx, co dbq.Company, to string, started time.Time) error {
	through := pipeline.LastCompleteDay(started)
	if to < through {
		through = to
	}
	if err := tx.SetPurchaseDiscovered(ctx, dbq.SetPurchaseDiscoveredParams{Through: through, UpdatedAt: tx.Now,
		CompanyID: co.ID, Environment: co.Environment}); err != nil {
		return err
	}
	if today := pipeline.SkopjeMidnight(tx.Now); through == to && to < today.Format(time.DateOnly) {
		// The read covered a month of a longer way to today: read the
		// next stretch at once.
		end, err := pipeline.ParseDay(to)
		if err != nil {
			return err
		}
		if err := requestPurchaseIDs(ctx, tx, co, end.AddDate(0, 0, 1), today); err != nil {
			return err
		}
	}
	cur, err := purchaseCursor(ctx, tx, co, pipeline.SkopjeMidnight(tx.Now))
	if err != nil {
		return err
	}
	if n, err := tx.CountInboxDocuments(ctx, co.ID); err != nil {
		return err
	} else if n == 0 && cur.PolledThrough <= through {
		// No document in the inbox: no change of those days can concern
		// it, so they are done without reading their feeds.
		last, err := pipeline.ParseDay(through)
		if err != nil {
			return err
		}
		_, err = tx.AdvancePurchaseCursor(ctx, dbq.AdvancePurchaseCursorParams{Next: last.AddDate(0, 0, 1).Format(time.DateOnly),
			UpdatedAt: tx.Now, CompanyID: co.ID, Environment: co.Environment, FromDay: cur.PolledThrough})
		return err
	}
	return requestPurchaseChanges(ctx, tx, co, cur.PolledThrough)
}

// purchaseChangesRead applies a day's status changes (oldest first; a
// change of a document not in the inbox is skipped), moves the cursor past
// the day when the day is done, and asks for the next day's feed.
func (s *Service) purchaseChangesRead(ctx context.Context, co dbq.Company, sr dbq.SigningRequest, changes []ujp.StatusChange, started time.Time) error {
	var req ujp.ChangesRequest
	if err := pipeline.DecodeSigned(sr, &req); err != nil {
		return err
	}
	day := req.Date
	if len(day) > len(time.DateOnly) {
		day = day[:len(time.DateOnly)]
	}
	return s.inboxInTx(ctx, func(tx *store.Tx) error {
		for i := range changes {
			ch := changes[i]
			d, err := tx.GetInboxDocumentByEUID(ctx, dbq.GetInboxDocumentByEUIDParams{CompanyID: co.ID, Euid: ch.EUID})
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			at, err := ujpdoc.ParseTimestamp(ch.Timestamp)
			if err != nil {
				at = tx.Now
			}
			if _, err := s.ApplyUJPStatus(ctx, tx, d, ch.NewStatus.Code, ch.NewStatus.Name, at.UTC(), &ch); err != nil {
				return err
			}
		}
		cur, err := purchaseCursor(ctx, tx, co, pipeline.SkopjeMidnight(tx.Now))
		if err != nil {
			return err
		}
		if cur.PolledThrough != day || day > cur.DiscoveredThrough || day > pipeline.LastCompleteDay(started) {
			return nil // not the cursor's day, or not done yet: read again at the next poll
		}
		d, err := pipeline.ParseDay(day)
		if err != nil {
			return err
		}
		next := d.AddDate(0, 0, 1).Format(time.DateOnly)
		n, err := tx.AdvancePurchaseCursor(ctx, dbq.AdvancePurchaseCursorParams{Next: next, UpdatedAt: tx.Now,
			CompanyID: co.ID, Environment: co.Environment, FromDay: day})
		if err != nil || n == 0 {
			return err
		}
		if next > pipeline.SkopjeMidnight(tx.Now).Format(time.DateOnly) {
			return nil
		}
		return requestPurchaseChanges(ctx, tx, co, next)
	})
}

// inboxSyncDue reports whether co's purchase side is read at all: an active
// client company (not a payroll employer).
func inboxSyncDue(co dbq.Company) bool {
	return co.Status == "active" && !co.PayrollEmployer
}
