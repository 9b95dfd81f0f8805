package einvoicing

import (
	"context"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// signedLink is what a signature of a link type sets off: signed runs in
// the transaction that records the signature (AfterSigned); read is the
// signed read or decision the query job then makes at UJP (runQuery), nil
// when the signature is used otherwise (an e-invoice's document is sent by
// the submit job; the go-live check reads its own).
type signedLink struct {
	signed func(s *Service, ctx context.Context, tx *store.Tx, r SigningRequest) error
	read   readFunc
}

// readFunc makes a signed read or decision at UJP for the query job.
type readFunc func(p *Pipeline, ctx, cctx context.Context, gw ujp.Gateway, who signer, sr dbq.SigningRequest, co dbq.Company) error

// linkOf is the one registry of the link types a signing request can
// belong to, used when a signature arrives and when its read runs.
// RequestSignature refuses a link type it does not know, so a request
// that nothing would follow up cannot be made.
func linkOf(t string) (signedLink, bool) {
	enqueue := func(_ *Service, ctx context.Context, tx *store.Tx, r SigningRequest) error {
		return enqueueQuery(ctx, tx, r)
	}
	query := func(r readFunc) signedLink { return signedLink{signed: enqueue, read: r} }
	switch t {
	case LinkEInvoice:
		return signedLink{signed: (*Service).einvoiceSigned}, true
	case linkUJPCheck:
		return signedLink{signed: func(*Service, context.Context, *store.Tx, SigningRequest) error { return nil }}, true
	case linkChanges, LinkPDF:
		return query((*Pipeline).readSales), true
	case linkPurchaseIDs, linkPurchasePayloads, linkPurchaseChanges, LinkInboxPDF, linkInboxStatus, LinkInboxDecision:
		return query((*Pipeline).readInbox), true
	case linkSalesLookup, linkSalesLookupPayloads:
		return query((*Pipeline).readLookup), true
	case linkReconciliation:
		return signedLink{signed: func(_ *Service, ctx context.Context, tx *store.Tx, r SigningRequest) error {
			return enqueueReconcileQuery(ctx, tx, r)
		}, read: (*Pipeline).readReconciliation}, true
	}
	return signedLink{}, false
}
