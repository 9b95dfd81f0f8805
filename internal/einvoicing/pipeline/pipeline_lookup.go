package pipeline

// Looking a document up in UJP's records. A send that got no answer (a
// timeout, a lost connection, a 5xx), or UJP's E1023 "Invoice already
// exists for that ID" without the EUID (error-codes.txt, JSON Receiver),
// leaves the document possibly at UJP. Before it is sent again, and instead
// of ever failing it, UJP's own records are read, with reads the company's
// signer signs like every other:
//
//	invoices-status [docDate … today] (≤ a month a read, E4014)
//	    ──▶ candidates: the seller's documents with our number and date
//	    ──▶ payload/list of the candidates (needs RD) ──▶ header.docId is ours?
//	        (without RD: number + date + gross + buyer, exactly one)
//	──▶ found: delivered with UJP's EUID (cause submitted_earlier)
//	──▶ not found: sent again (signed again first if the signature is old)
//
// The document's send_unknown_since marks it meanwhile: the submit job
// keeps probing and asking for the look-up on its retry ladder, and the
// hold window never fails it.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// lookupAgain is how long after a look-up read was signed another is not
// asked for: the first is still being made (its job retries an outage).
const lookupAgain = 2 * time.Minute

// startLookup asks for the look-up of inv, unless one is on its way. A
// read that waited for its signer longer than UJP's timestamp window
// would be refused: it is expired and asked for afresh.
func (p *Service) startLookup(ctx context.Context, inv dbq.Einvoice) error {
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		for _, link := range []string{einvoicing.LinkSalesLookup, einvoicing.LinkSalesLookupPayloads} {
			open, err := tx.OpenSigningRequestForLink(ctx, dbq.OpenSigningRequestForLinkParams{LinkType: link, LinkID: inv.ID, Now: tx.Now})
			switch {
			case err == nil:
				if stale, _ := p.Stale(open); !stale {
					return nil
				}
				if _, err := tx.FinishSigningRequest(ctx, dbq.FinishSigningRequestParams{ID: open.ID, State: einvoicing.StateExpired, Now: tx.Now}); err != nil {
					return err
				}
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
			sr, err := tx.LatestSignedRequestForLink(ctx, dbq.LatestSignedRequestForLinkParams{LinkType: link, LinkID: inv.ID})
			if err == nil && tx.Now.Sub(sr.UpdatedAt) < lookupAgain {
				return nil
			} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		return p.requestLookup(ctx, tx, inv)
	})
}

// requestLookup asks the signer to sign the read of the seller's documents
// from inv's date on.
func (p *Service) requestLookup(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) error {
	from, err := ParseDay(inv.IssueDate)
	if err != nil {
		return fmt.Errorf("look-up of %s: issue date: %w", inv.ID, err)
	}
	return requestLookupFrom(ctx, tx, inv, from)
}

func requestLookupFrom(ctx context.Context, tx *store.Tx, inv dbq.Einvoice, from time.Time) error {
	today := SkopjeMidnight(tx.Now)
	payload, err := MonthRead(tx.Now, from, today)
	if err != nil {
		return err
	}
	// Without a signer, the submit job asks again.
	return AskRead(ctx, tx, inv.CompanyID, payload, einvoicing.SigningLink{Type: einvoicing.LinkSalesLookup, ID: inv.ID})
}

// readLookup runs the look-up's signed reads for the query job.
func (p *Service) readLookup(ctx, cctx context.Context, gw ujp.Gateway, who einvoicing.Signer, sr dbq.SigningRequest, co dbq.Company) error {
	switch sr.LinkType {
	case einvoicing.LinkSalesLookup:
		list, err := gw.SalesInvoicesStatus(cctx, who.ID, sr.Jws)
		if StaleRead(err) {
			return p.lookupAfresh(ctx, sr)
		}
		if err != nil {
			return p.QueryFailed(ctx, co, err)
		}
		if err := p.lookupStatuses(ctx, co, sr, list); err != nil {
			return err
		}
		return p.AccessOK(ctx, co.ID, "")
	case einvoicing.LinkSalesLookupPayloads:
		list, err := gw.SalesPayloads(cctx, who.ID, sr.Jws)
		if r := ujp.AccessProblem(err); r != nil && r.Privilege == ujp.PrivilegePayloads {
			// No RD: recorded on the company, and the look-up starts over
			// to match without the payloads.
			if _, err := p.AccessProblem(ctx, co.ID, err); err != nil {
				return err
			}
			return p.lookupAfresh(ctx, sr)
		}
		if StaleRead(err) {
			return p.lookupAfresh(ctx, sr)
		}
		if err != nil {
			return p.QueryFailed(ctx, co, err)
		}
		if err := p.lookupPayloads(ctx, sr, list); err != nil {
			return err
		}
		return p.AccessOK(ctx, co.ID, ujp.PrivilegePayloads)
	}
	return jobs.Cancel(fmt.Errorf("signed read %s: not a look-up: %s", sr.ID, sr.LinkType))
}

// lookupAfresh asks for the look-up again from its start, signed now
// (the signed read was too old for UJP, or the payloads were refused).
func (p *Service) lookupAfresh(ctx context.Context, sr dbq.SigningRequest) error {
	return p.db.InTx(ctx, func(tx *store.Tx) error {
		inv, ok, err := lookingUp(ctx, tx, sr.LinkID)
		if err != nil || !ok {
			return err
		}
		return p.requestLookup(ctx, tx, inv)
	})
}

// lookingUp returns e-invoice id when it still waits for its look-up.
func lookingUp(ctx context.Context, tx *store.Tx, id string) (dbq.Einvoice, bool, error) {
	inv, err := tx.GetEInvoiceByID(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return inv, false, nil
	}
	if err != nil {
		return inv, false, err
	}
	st := einvoice.Status(inv.Status)
	return inv, inv.SendUnknownSince.Valid && (st == einvoice.Queued || st == einvoice.Held), nil
}

// lookupStatuses reads the answer of invoices-status: the seller's
// documents with inv's number and date are the candidates.
func (p *Service) lookupStatuses(ctx context.Context, co dbq.Company, sr dbq.SigningRequest, list []ujp.DocStatus) error {
	var req ujp.DateRangeRequest
	if err := DecodeSigned(sr, &req); err != nil {
		return err
	}
	return p.settleLookup(ctx, sr, func(tx *store.Tx, inv dbq.Einvoice) (string, error) {
		doc, err := einvoicing.StoredDocument(inv)
		if err != nil {
			return "", err
		}
		h := doc.Header
		var candidates []ujp.DocStatus
		for _, st := range list {
			if st.DocNumber == h.DocNumber && st.DocDate == h.DocDate && (st.SellerTin == "" || st.SellerTin == co.TaxNumber) {
				candidates = append(candidates, st)
			}
		}
		if len(candidates) == 0 {
			if next, err := ParseDay(req.DateTo); err == nil && next.Before(SkopjeMidnight(tx.Now)) {
				// A month was read and UJP's today is further on.
				return "", requestLookupFrom(ctx, tx, inv, next.AddDate(0, 0, 1))
			}
			return "", p.notAtUJP(ctx, tx, inv)
		}
		if _, missing := PrivilegeMissing(co, ujp.PrivilegePayloads); !missing {
			euids := make([]string, 0, min(len(candidates), MaxPayloadsPerRequest))
			for _, c := range candidates[:min(len(candidates), MaxPayloadsPerRequest)] {
				euids = append(euids, c.EUID)
			}
			payload, err := json.Marshal(ujp.EUIDsRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), EUIDs: euids})
			if err != nil {
				return "", err
			}
			return "", AskRead(ctx, tx, inv.CompanyID, payload, einvoicing.SigningLink{Type: einvoicing.LinkSalesLookupPayloads, ID: inv.ID})
		}
		// Without RD the payloads cannot be read: the document is UJP's
		// one with our number, date, gross amount and buyer, if exactly
		// one matches.
		var match []ujp.DocStatus
		for _, c := range candidates {
			if c.DocGrossAmountR.Equal(doc.DocTotals.DocGrossAmountR.Amount) && c.BuyerTin == doc.Buyer.BuyerTin {
				match = append(match, c)
			}
		}
		switch len(match) {
		case 0:
			return "", p.notAtUJP(ctx, tx, inv)
		case 1:
			return match[0].EUID, nil
		}
		p.log.Warn("UJP holds several documents with this number, date, amount and buyer; without RD they cannot be told apart, the look-up is tried again later",
			"einvoice", inv.ID, "matches", len(match))
		return "", nil
	})
}

// lookupPayloads reads the candidates' payloads: the one whose header.docId
// is the e-invoice's is it.
func (p *Service) lookupPayloads(ctx context.Context, sr dbq.SigningRequest, list []ujp.Payload) error {
	return p.settleLookup(ctx, sr, func(tx *store.Tx, inv dbq.Einvoice) (string, error) {
		for _, pl := range list {
			if PayloadDocID(pl.Payload) == inv.UjpDocID {
				return pl.EUID, nil
			}
		}
		return "", p.notAtUJP(ctx, tx, inv)
	})
}

// settleLookup runs decide, in one transaction, on the e-invoice sr looks
// up while it still waits for its look-up: decide returns the EUID UJP
// holds it under when it found it, and records itself what else it
// found. A found e-invoice is then delivered as submitted earlier.
func (p *Service) settleLookup(ctx context.Context, sr dbq.SigningRequest, decide func(tx *store.Tx, inv dbq.Einvoice) (string, error)) error {
	var found string
	err := p.db.InTx(ctx, func(tx *store.Tx) error {
		inv, ok, err := lookingUp(ctx, tx, sr.LinkID)
		if err != nil || !ok {
			return err
		}
		found, err = decide(tx, inv)
		return err
	})
	if err != nil || found == "" {
		return err
	}
	inv, err := p.db.Reader().GetEInvoiceByID(ctx, sr.LinkID)
	if err != nil {
		return err
	}
	return p.deliver(ctx, inv, found, "", "submitted_earlier")
}

// LookupOver ends the look-up of inv's lost send, if one was going: UJP
// was found to hold the document.
func LookupOver(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) error {
	if !inv.SendUnknownSince.Valid {
		return nil
	}
	return tx.SetEInvoiceSendUnknown(ctx, dbq.SetEInvoiceSendUnknownParams{ID: inv.ID})
}

// notAtUJP records that UJP does not hold inv: it is sent again.
func (p *Service) notAtUJP(ctx context.Context, tx *store.Tx, inv dbq.Einvoice) error {
	p.log.Info("UJP does not hold the document; sending it again", "einvoice", inv.ID)
	if err := tx.SetEInvoiceSendUnknown(ctx, dbq.SetEInvoiceSendUnknownParams{ID: inv.ID}); err != nil {
		return err
	}
	return einvoicing.EnqueueSubmit(ctx, tx, inv.ID)
}
