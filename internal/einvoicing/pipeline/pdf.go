package pipeline

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// errPDFNotReady answers a PDF asked for before UJP's rendering is here.
func errPDFNotReady(id string) error {
	return denar.Errorf("pdf_not_ready", "UJP's PDF of %s is not here yet: it is fetched once the document is delivered and the signer has signed the read.", id)
}

// PDF returns UJP's rendering of an e-invoice. Until it is fetched, 409
// pdf_not_ready; a delivered document whose read was never signed (no
// signer then) or failed is asked for again.
func (p *Service) PDF(ctx context.Context, who *auth.Principal, companyID, id string) ([]byte, error) {
	q := p.db.Reader()
	inv, err := einvoicing.EInvoiceRow(ctx, q, who, companyID, id)
	if err != nil {
		return nil, err
	}
	row, err := q.GetEInvoicePDF(ctx, inv.ID)
	if errors.Is(err, sql.ErrNoRows) {
		if inv.Euid.Valid {
			err := p.db.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
				if _, err := tx.OpenSigningRequestForLink(ctx, dbq.OpenSigningRequestForLinkParams{LinkType: einvoicing.LinkPDF, LinkID: inv.ID, Now: tx.Now}); err == nil {
					return nil
				} else if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
				return requestPDF(ctx, tx, inv)
			})
			if err != nil {
				return nil, err
			}
		}
		return nil, errPDFNotReady(inv.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("pdf of %s: %w", inv.ID, err)
	}
	pdf, err := base64.StdEncoding.DecodeString(row.Pdf)
	if err != nil {
		return nil, fmt.Errorf("stored pdf of %s: %w", inv.ID, err)
	}
	return pdf, nil
}
