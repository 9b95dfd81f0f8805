package denar

import (
	"context"
	"iter"
	"slices"
	"time"

	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
	"github.com/denar-mk/denar/sdk/denar/payrollapi"
)

// Calculate computes one employee's month (POST /v1/calculations).
func (c *Payroll) Calculate(ctx context.Context, in payrollapi.Input) (*payrollapi.Result, error) {
	r, err := c.Raw.CalculateWithResponse(ctx, &payrollapi.CalculateParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// CalculateBatch computes up to 500 inputs in one request, in order
// (POST /v1/calculations/batch).
func (c *Payroll) CalculateBatch(ctx context.Context, in payrollapi.BatchInput) (*payrollapi.BatchResults, error) {
	r, err := c.Raw.CalculateBatchWithResponse(ctx, &payrollapi.CalculateBatchParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// MpinXML returns the МПИН XML file of a month's records, byte for byte as
// it is uploaded to UJP (POST /v1/files/mpin/xml).
func (c *Payroll) MpinXML(ctx context.Context, in payrollapi.MpinRequest) ([]byte, error) {
	r, err := c.Raw.MpinXMLWithResponse(ctx, &payrollapi.MpinXMLParams{}, in)
	if err != nil {
		return nil, err
	}
	if r.StatusCode() != 200 {
		return nil, problemFrom(r.StatusCode(), r.Body)
	}
	return r.Body, nil
}

// CreateCompany onboards a company (POST /v1/companies): it is
// pending_mandate until its representative accepts the mandate mailed to
// them.
func (c *EInvoice) CreateCompany(ctx context.Context, in einvoiceapi.CreateCompanyBody) (*einvoiceapi.Company, error) {
	r, err := c.Raw.CreateCompanyWithResponse(ctx, &einvoiceapi.CreateCompanyParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON201, r, nil)
}

// GetCompany reads a company.
func (c *EInvoice) GetCompany(ctx context.Context, id string) (*einvoiceapi.Company, error) {
	r, err := c.Raw.GetCompanyWithResponse(ctx, id)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// Issue issues an e-invoice for companyID ("" for the client's default
// company): accepted (202) and then signed, submitted and delivered in
// the background; WaitForStatus follows it.
func (c *EInvoice) Issue(ctx context.Context, companyID string, in einvoiceapi.Request) (*einvoiceapi.EInvoice, error) {
	if in.References == nil {
		in.References = &[]einvoiceapi.Reference{}
	}
	r, err := c.Raw.IssueEInvoiceWithResponse(ctx, &einvoiceapi.IssueEInvoiceParams{}, in, company(companyID))
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// Get reads an e-invoice.
func (c *EInvoice) Get(ctx context.Context, companyID, id string) (*einvoiceapi.EInvoice, error) {
	r, err := c.Raw.GetEInvoiceWithResponse(ctx, id, &einvoiceapi.GetEInvoiceParams{}, company(companyID))
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// Storno cancels a delivered e-invoice with a storno document (POST
// /v1/einvoices/{id}/storno); the answer is the storno, itself an
// e-invoice that goes through signing and submission.
func (c *EInvoice) Storno(ctx context.Context, companyID, id string, in einvoiceapi.StornoBody) (*einvoiceapi.EInvoice, error) {
	r, err := c.Raw.StornoEInvoiceWithResponse(ctx, id, &einvoiceapi.StornoEInvoiceParams{}, in, company(companyID))
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// ErrStatusUnreachable is returned by WaitForStatus when the e-invoice
// reached a final status other than the one waited for.
type ErrStatusUnreachable struct {
	EInvoice *einvoiceapi.EInvoice
}

func (e *ErrStatusUnreachable) Error() string {
	return "denar: e-invoice " + e.EInvoice.Id + " is " + string(e.EInvoice.Status)
}

// finalStatuses are the statuses an e-invoice does not leave by itself.
var finalStatuses = []einvoiceapi.EInvoiceStatus{
	einvoiceapi.EInvoiceStatusInvalid, einvoiceapi.EInvoiceStatusFailed, einvoiceapi.EInvoiceStatusRejected,
	einvoiceapi.EInvoiceStatusAccepted, einvoiceapi.EInvoiceStatusAutoAccepted,
	einvoiceapi.EInvoiceStatusCancelledByStorno, einvoiceapi.EInvoiceStatusCorrected,
}

// WaitForStatus reads the e-invoice every Poll until it has one of want
// (returned), reaches a final status not in want (*ErrStatusUnreachable),
// or ctx ends.
func (c *EInvoice) WaitForStatus(ctx context.Context, companyID, id string, want ...einvoiceapi.EInvoiceStatus) (*einvoiceapi.EInvoice, error) {
	poll := c.Poll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	for {
		e, err := c.Get(ctx, companyID, id)
		if err != nil {
			return nil, err
		}
		if slices.Contains(want, e.Status) {
			return e, nil
		}
		if slices.Contains(finalStatuses, e.Status) {
			return e, &ErrStatusUnreachable{EInvoice: e}
		}
		select {
		case <-ctx.Done():
			return e, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// EInvoices iterates over the e-invoices matching params, following
// nextCursor page after page; params.Cursor is the starting point. The
// iteration stops at the first error, yielded with a zero EInvoice.
func (c *EInvoice) EInvoices(ctx context.Context, params einvoiceapi.ListEInvoicesParams) iter.Seq2[einvoiceapi.EInvoice, error] {
	return pages(func(cursor *string) (*[]einvoiceapi.EInvoice, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListEInvoicesWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		p, err := result(r.JSON200, r, nil)
		if err != nil {
			return nil, nil, err
		}
		return p.Data, p.NextCursor, nil
	}, params.Cursor)
}

// Inbox iterates over the incoming e-invoices matching params, as
// EInvoices does.
func (c *EInvoice) Inbox(ctx context.Context, params einvoiceapi.ListInboxParams) iter.Seq2[einvoiceapi.InboxDocument, error] {
	return pages(func(cursor *string) (*[]einvoiceapi.InboxDocument, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListInboxWithResponse(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		p, err := result(r.JSON200, r, nil)
		if err != nil {
			return nil, nil, err
		}
		return p.Data, p.NextCursor, nil
	}, params.Cursor)
}

// Accept accepts an incoming e-invoice (POST /v1/inbox/{id}/accept).
func (c *EInvoice) Accept(ctx context.Context, companyID, id string, in einvoiceapi.AcceptBody) (*einvoiceapi.InboxDocument, error) {
	r, err := c.Raw.AcceptInboxDocumentWithResponse(ctx, id, &einvoiceapi.AcceptInboxDocumentParams{}, in, company(companyID))
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// Reject rejects an incoming e-invoice with a reason code (POST
// /v1/inbox/{id}/reject).
func (c *EInvoice) Reject(ctx context.Context, companyID, id string, in einvoiceapi.RejectBody) (*einvoiceapi.InboxDocument, error) {
	r, err := c.Raw.RejectInboxDocumentWithResponse(ctx, id, &einvoiceapi.RejectInboxDocumentParams{}, in, company(companyID))
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// pages turns a page function into an iterator.
func pages[T any](page func(cursor *string) (*[]T, *string, error), cursor *string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, next, err := page(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if items != nil {
				for _, it := range *items {
					if !yield(it, nil) {
						return
					}
				}
			}
			if next == nil || *next == "" {
				return
			}
			cursor = next
		}
	}
}
