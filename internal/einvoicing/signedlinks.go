package einvoicing

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// LinkHandler is what the signing requests of one link type set off. The
// room that owns the link type registers it with Service.HandleLink when
// it is built.
type LinkHandler struct {
	// Signed runs in the transaction that records the signature
	// (AfterSigned); required.
	Signed func(ctx context.Context, tx *store.Tx, r SigningRequest) error
	// Read makes the signed read or decision at UJP for the query job;
	// nil when the signature is used otherwise (an e-invoice's document is
	// sent by the submit job; the go-live check reads its own).
	Read ReadFunc
	// Failed applies a refusal (expired false, with the signer's reason
	// and message) or an expiry of a request in the transaction that
	// records it; nil when nothing follows.
	Failed func(ctx context.Context, tx *store.Tx, r dbq.SigningRequest, expired bool, reason, message string) error
}

// ReadFunc makes a signed read or decision at UJP for the query job.
type ReadFunc func(ctx, cctx context.Context, gw ujp.Gateway, who Signer, sr dbq.SigningRequest, co dbq.Company) error

// Signer is who calls UJP for a signing request: the identity headers and
// the certificate behind them.
type Signer struct {
	ID   ujp.Identity
	Cert dbq.SigningCertificate
}

// linkTypes are the link types a signing request can be made for
// (RequestSignature refuses any other); every one needs a handler
// (CheckLinks), so no signature is stored with nothing to run it.
var linkTypes = []string{LinkEInvoice, LinkChanges, LinkPDF, LinkSalesLookup, LinkSalesLookupPayloads,
	LinkInboxDecision, LinkInboxStatus, LinkInboxPDF, LinkPurchaseIDs, LinkPurchasePayloads, LinkPurchaseChanges,
	LinkReconciliation, LinkUJPCheck}

// HandleLink registers h for the signing requests of link type t. It
// panics on a type RequestSignature does not know, a second handler for
// one type or a handler without Signed: wiring mistakes, found when the
// service is built.
func (s *Service) HandleLink(t string, h LinkHandler) {
	switch {
	case !slices.Contains(linkTypes, t):
		panic(fmt.Sprintf("einvoicing: HandleLink: unknown link type %q", t))
	case h.Signed == nil:
		panic(fmt.Sprintf("einvoicing: HandleLink(%q): no Signed", t))
	}
	if _, dup := s.links[t]; dup {
		panic(fmt.Sprintf("einvoicing: HandleLink(%q) twice", t))
	}
	s.links[t] = h
}

// CheckLinks reports a link type no room handles, or a room's port not
// wired (UseInbox); cmd/denar calls it once every room is built.
func (s *Service) CheckLinks() error {
	if s.inbox == nil {
		return errNoInbox
	}
	for _, t := range linkTypes {
		if _, ok := s.links[t]; !ok {
			return fmt.Errorf("einvoicing: no handler for link type %q (handled: %v)", t, slices.Sorted(maps.Keys(s.links)))
		}
	}
	return nil
}

// Link is the handler of link type t (the query job runs its Read).
func (s *Service) Link(t string) (LinkHandler, bool) {
	h, ok := s.links[t]
	return h, ok
}

// handleLinks registers the handler of the link type the core owns: an
// e-invoice's document. The rooms register theirs when they are built.
func (s *Service) handleLinks() {
	s.HandleLink(LinkEInvoice, LinkHandler{Signed: s.einvoiceSigned,
		Failed: func(ctx context.Context, tx *store.Tx, r dbq.SigningRequest, expired bool, reason, message string) error {
			if expired {
				return nil // the signing room's expiry replaces it
			}
			return s.documentRefused(ctx, tx, r, reason, message)
		}})
}
