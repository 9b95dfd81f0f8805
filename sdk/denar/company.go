package denar

import (
	"context"
	"iter"

	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
)

// CompanyClient is the e-invoicing client bound to one company: every
// request it makes carries X-Company-Id with the company's id, so no call
// takes a company argument. Get one with EInvoice.Company; it is cheap,
// and safe to use from several goroutines, like the client it comes from.
type CompanyClient struct {
	e *EInvoice
	// ID is the company's id (cmp_…).
	ID string
}

// Company returns a client bound to company id (cmp_…), the one its
// requests act for. A credential that reaches several companies needs one
// for every e-invoice and inbox call; with one that reaches a single
// company, Company and the client's own methods do the same.
func (c *EInvoice) Company(id string) *CompanyClient { return &CompanyClient{e: c, ID: id} }

// Details reads the company (GET /v1/companies/{id}).
func (c *CompanyClient) Details(ctx context.Context) (*einvoiceapi.Company, error) {
	return c.e.GetCompany(ctx, c.ID)
}

// Issue issues an e-invoice of the company (POST /v1/einvoices): accepted
// (202) and then signed, submitted and delivered in the background;
// WaitForStatus follows it.
func (c *CompanyClient) Issue(ctx context.Context, in einvoiceapi.Request) (*einvoiceapi.EInvoice, error) {
	return c.e.Issue(ctx, c.ID, in)
}

// EInvoice reads one of the company's e-invoices.
func (c *CompanyClient) EInvoice(ctx context.Context, id string) (*einvoiceapi.EInvoice, error) {
	return c.e.Get(ctx, c.ID, id)
}

// WaitForStatus reads the e-invoice every Poll of the client until it has
// one of want, reaches a final status not in want (*ErrStatusUnreachable),
// or ctx ends.
func (c *CompanyClient) WaitForStatus(ctx context.Context, id string, want ...einvoiceapi.EInvoiceStatus) (*einvoiceapi.EInvoice, error) {
	return c.e.WaitForStatus(ctx, c.ID, id, want...)
}

// EInvoices iterates over the company's e-invoices matching params, newest
// first, page after page.
func (c *CompanyClient) EInvoices(ctx context.Context, params einvoiceapi.ListEInvoicesParams) iter.Seq2[einvoiceapi.EInvoice, error] {
	params.XCompanyId = &c.ID
	return c.e.EInvoices(ctx, params)
}

// StatusHistory is the e-invoice's status changes, oldest first (GET
// /v1/einvoices/{id}/status-history).
func (c *CompanyClient) StatusHistory(ctx context.Context, id string) ([]einvoiceapi.StatusChange, error) {
	r, err := c.e.Raw.GetEInvoiceStatusHistoryWithResponse(ctx, id, &einvoiceapi.GetEInvoiceStatusHistoryParams{XCompanyId: &c.ID})
	if err != nil {
		return nil, err
	}
	h, err := result(r.JSON200, r, nil)
	if err != nil {
		return nil, err
	}
	return deref(h.Data), nil
}

// PDF is UJP's PDF of a delivered e-invoice (GET /v1/einvoices/{id}/pdf).
func (c *CompanyClient) PDF(ctx context.Context, id string) ([]byte, error) {
	r, err := c.e.Raw.GetEInvoicePDFWithResponse(ctx, id, &einvoiceapi.GetEInvoicePDFParams{XCompanyId: &c.ID})
	if err != nil {
		return nil, err
	}
	if r.StatusCode() != 200 {
		return nil, problemFrom(r.StatusCode(), r.Body)
	}
	return r.Body, nil
}

// Storno cancels a delivered e-invoice with a storno document (POST
// /v1/einvoices/{id}/storno); the answer is the storno, itself an
// e-invoice on its way to UJP.
func (c *CompanyClient) Storno(ctx context.Context, id string, in einvoiceapi.StornoBody) (*einvoiceapi.EInvoice, error) {
	return c.e.Storno(ctx, c.ID, id, in)
}

// Correct replaces a delivered e-invoice with a correction (POST
// /v1/einvoices/{id}/correction): the complete new document, with
// DocStorno 2 and a correction reason.
func (c *CompanyClient) Correct(ctx context.Context, id string, in einvoiceapi.CorrectionRequest) (*einvoiceapi.EInvoice, error) {
	if in.References == nil {
		in.References = &[]einvoiceapi.Reference{}
	}
	r, err := c.e.Raw.CorrectEInvoiceWithResponse(ctx, id, &einvoiceapi.CorrectEInvoiceParams{XCompanyId: &c.ID}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// Inbox iterates over the company's incoming e-invoices matching params.
func (c *CompanyClient) Inbox(ctx context.Context, params einvoiceapi.ListInboxParams) iter.Seq2[einvoiceapi.InboxDocument, error] {
	params.XCompanyId = &c.ID
	return c.e.Inbox(ctx, params)
}

// InboxDocument reads one incoming e-invoice (GET /v1/inbox/{id}).
func (c *CompanyClient) InboxDocument(ctx context.Context, id string) (*einvoiceapi.InboxDocument, error) {
	r, err := c.e.Raw.GetInboxDocumentWithResponse(ctx, id, &einvoiceapi.GetInboxDocumentParams{XCompanyId: &c.ID})
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// Accept accepts an incoming e-invoice (POST /v1/inbox/{id}/accept).
func (c *CompanyClient) Accept(ctx context.Context, id string, in einvoiceapi.AcceptBody) (*einvoiceapi.InboxDocument, error) {
	return c.e.Accept(ctx, c.ID, id, in)
}

// Reject rejects an incoming e-invoice with a reason of the reject-reasons
// codebook (POST /v1/inbox/{id}/reject).
func (c *CompanyClient) Reject(ctx context.Context, id string, in einvoiceapi.RejectBody) (*einvoiceapi.InboxDocument, error) {
	return c.e.Reject(ctx, c.ID, id, in)
}

// Events iterates over the company's events, newest first (GET
// /v1/events in list mode).
func (c *CompanyClient) Events(ctx context.Context, params einvoiceapi.ListEventsParams) iter.Seq2[einvoiceapi.Event, error] {
	params.XCompanyId = &c.ID
	return c.e.Events(ctx, params)
}

// Usage is the company's documents in a month, YYYY-MM, against the
// account's plan (GET /v1/usage with companyId).
func (c *CompanyClient) Usage(ctx context.Context, period string) (*einvoiceapi.Usage, error) {
	return c.e.Usage(ctx, einvoiceapi.GetUsageParams{Period: period, CompanyId: &c.ID})
}

// AcceptSandboxMandate accepts the mandate of a sandbox company that waits
// for it, as its representative would from the mandate mail: the company
// becomes active. Sandbox only.
func (c *CompanyClient) AcceptSandboxMandate(ctx context.Context) error {
	return c.e.AcceptSandboxMandate(ctx, c.ID)
}

// SandboxDropIncoming has the sandbox's fictitious supplier send the
// company an invoice (POST /v1/sandbox/inbox); it appears in the inbox
// once the company's signer has signed the reads. Sandbox only.
func (c *CompanyClient) SandboxDropIncoming(ctx context.Context, in einvoiceapi.SandboxIncomingInputBody) (*einvoiceapi.SandboxIncoming, error) {
	r, err := c.e.Raw.SandboxDropIncomingWithResponse(ctx, &einvoiceapi.SandboxDropIncomingParams{XCompanyId: &c.ID}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// SimulateEInvoice drives a sandbox e-invoice as UJP or the buyer would:
// the buyer accepts or rejects it, its deadline passes, UJP goes down or
// refuses (POST /v1/sandbox/einvoices/{id}/simulate). Sandbox only.
func (c *CompanyClient) SimulateEInvoice(ctx context.Context, id string, in einvoiceapi.SimulateInputBody) (*einvoiceapi.Simulation, error) {
	r, err := c.e.Raw.SimulateEInvoiceWithResponse(ctx, id, &einvoiceapi.SimulateEInvoiceParams{XCompanyId: &c.ID}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// SimulateInbox drives a sandbox incoming e-invoice: its deadline passes,
// or its seller stornos it (POST /v1/sandbox/inbox/{id}/simulate).
// Sandbox only.
func (c *CompanyClient) SimulateInbox(ctx context.Context, id string, in einvoiceapi.SimulateInboxInputBody) (*einvoiceapi.InboxSimulation, error) {
	r, err := c.e.Raw.SimulateInboxDocumentWithResponse(ctx, id, &einvoiceapi.SimulateInboxDocumentParams{XCompanyId: &c.ID}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}
