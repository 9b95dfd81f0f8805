package pipeline

// Asking for a signed read of UJP, as every room that reads UJP does: the
// read is a signing request of purpose query over UJP's request, and the
// query job makes it once the company's signer has signed.

import (
	"context"
	"database/sql"
	"errors"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// AskRead asks the company's signer to sign a read of UJP whose request is
// payload, for link. Without a signer nothing is asked and AskRead returns
// nil: the read waits, and what wants it asks again in its own time.
func AskRead(ctx context.Context, tx *store.Tx, companyID string, payload []byte, link einvoicing.SigningLink) error {
	_, err := einvoicing.RequestSignature(ctx, tx, companyID, einvoicing.PurposeQuery, payload, link)
	if errors.Is(err, einvoicing.ErrNoSigner) {
		return nil
	}
	return err
}

// ReadWaiting reports whether a request for link still waits for its
// signer, so that a read is not asked for twice.
func ReadWaiting(ctx context.Context, tx *store.Tx, link einvoicing.SigningLink) (bool, error) {
	_, err := tx.OpenSigningRequestForLink(ctx, dbq.OpenSigningRequestForLinkParams{LinkType: link.Type, LinkID: link.ID, Now: tx.Now})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
