package denar

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/denar-mk/denar/sdk/denar/einvoiceapi"
	"github.com/denar-mk/denar/sdk/denar/payrollapi"
)

// The account's side of the e-invoicing service: its companies, events,
// webhook endpoints, usage and the code lists. Every method answers a
// *Problem for a 4xx or 5xx, as the rest of the package does.

// Companies iterates over the account's companies in the credential's
// environment, newest first.
func (c *EInvoice) Companies(ctx context.Context, params einvoiceapi.ListCompaniesParams) iter.Seq2[einvoiceapi.Company, error] {
	return pages(func(cursor *string) (*[]einvoiceapi.Company, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListCompaniesWithResponse(ctx, &params)
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

// UpdateCompany changes a company's externalRef or signingMode (PATCH
// /v1/companies/{id}).
func (c *EInvoice) UpdateCompany(ctx context.Context, id string, in einvoiceapi.PatchCompanyBody) (*einvoiceapi.Company, error) {
	r, err := c.Raw.UpdateCompanyWithResponse(ctx, id, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// SandboxMandateLink is a fresh mandate link of a sandbox company that
// waits for its mandate (POST /v1/sandbox/companies/{id}/mandate-link), as
// its representative's mail carries it. Sandbox only.
func (c *EInvoice) SandboxMandateLink(ctx context.Context, companyID string) (*einvoiceapi.SandboxMandateLink, error) {
	r, err := c.Raw.SandboxMandateLinkWithResponse(ctx, companyID, &einvoiceapi.SandboxMandateLinkParams{})
	if err != nil {
		return nil, err
	}
	return result(r.JSON201, r, nil)
}

// AcceptSandboxMandate accepts the mandate of a sandbox company as its
// representative would: it asks for the mandate link and submits the
// mandate page's form. The company is active when it returns nil.
// Sandbox only.
func (c *EInvoice) AcceptSandboxMandate(ctx context.Context, companyID string) error {
	l, err := c.SandboxMandateLink(ctx, companyID)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.Url, strings.NewReader(url.Values{}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &Problem{Status: resp.StatusCode, Title: http.StatusText(resp.StatusCode),
			Detail: fmt.Sprintf("the mandate page of %s answered %s", companyID, resp.Status)}
	}
	return nil
}

// SigningRequests iterates over the signing requests matching params,
// newest first.
func (c *EInvoice) SigningRequests(ctx context.Context, params einvoiceapi.ListSigningRequestsParams) iter.Seq2[einvoiceapi.SigningRequest, error] {
	return pages(func(cursor *string) (*[]einvoiceapi.SigningRequest, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListSigningRequestsWithResponse(ctx, &params)
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

// Events iterates over the account's events matching params, newest first
// (GET /v1/events in list mode; params.After, the feed mode, is EventFeed's).
func (c *EInvoice) Events(ctx context.Context, params einvoiceapi.ListEventsParams) iter.Seq2[einvoiceapi.Event, error] {
	params.After = nil
	return pages(func(cursor *string) (*[]einvoiceapi.Event, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListEventsWithResponse(ctx, &params)
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

// EventFeed reads the event feed once from after ("start" for the oldest
// event, "now" for only what comes next, or the next of an earlier read),
// oldest first: the events, where to read from next time, and whether more
// follow right away. Keep next and read again, now or later, to see every
// event once, in order (GET /v1/events?after=…).
func (c *EInvoice) EventFeed(ctx context.Context, after string, params einvoiceapi.ListEventsParams) (events []einvoiceapi.Event, next string, more bool, err error) {
	params.After, params.Cursor = &after, nil
	r, err := c.Raw.ListEventsWithResponse(ctx, &params)
	if err != nil {
		return nil, "", false, err
	}
	p, err := result(r.JSON200, r, nil)
	if err != nil {
		return nil, "", false, err
	}
	if p.NextCursor != nil {
		next = *p.NextCursor
	}
	return deref(p.Data), next, p.HasMore, nil
}

// Event reads one event (GET /v1/events/{id}).
func (c *EInvoice) Event(ctx context.Context, id string) (*einvoiceapi.Event, error) {
	r, err := c.Raw.GetEventWithResponse(ctx, id)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// EventTypes is the catalogue of event types: the types a webhook endpoint
// can subscribe to, and what each event's data.object is.
func (c *EInvoice) EventTypes(ctx context.Context) ([]einvoiceapi.EventKind, error) {
	r, err := c.Raw.ListEventTypesWithResponse(ctx)
	if err != nil {
		return nil, err
	}
	p, err := result(r.JSON200, r, nil)
	if err != nil {
		return nil, err
	}
	return deref(p.Data), nil
}

// EventDeliveries iterates over the webhook deliveries of an event.
func (c *EInvoice) EventDeliveries(ctx context.Context, eventID string, params einvoiceapi.ListEventDeliveriesParams) iter.Seq2[einvoiceapi.WebhookDelivery, error] {
	return pages(func(cursor *string) (*[]einvoiceapi.WebhookDelivery, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListEventDeliveriesWithResponse(ctx, eventID, &params)
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

// ReplayEvent delivers an event again now (POST /v1/events/{id}/replay):
// to every endpoint subscribed to it, or to in.EndpointId only.
func (c *EInvoice) ReplayEvent(ctx context.Context, id string, in einvoiceapi.ReplayInputBody) (*einvoiceapi.ReplayResult, error) {
	r, err := c.Raw.ReplayEventWithResponse(ctx, id, &einvoiceapi.ReplayEventParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// CreateWebhookEndpoint registers where events are POSTed (POST
// /v1/webhook-endpoints). The answer carries the signing secret, shown
// this once: keep it for VerifySignature.
func (c *EInvoice) CreateWebhookEndpoint(ctx context.Context, in einvoiceapi.CreateWebhookEndpointBody) (*einvoiceapi.WebhookEndpoint, error) {
	r, err := c.Raw.CreateWebhookEndpointWithResponse(ctx, &einvoiceapi.CreateWebhookEndpointParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON201, r, nil)
}

// WebhookEndpoints iterates over the account's webhook endpoints.
func (c *EInvoice) WebhookEndpoints(ctx context.Context, params einvoiceapi.ListWebhookEndpointsParams) iter.Seq2[einvoiceapi.WebhookEndpoint, error] {
	return pages(func(cursor *string) (*[]einvoiceapi.WebhookEndpoint, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListWebhookEndpointsWithResponse(ctx, &params)
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

// WebhookEndpoint reads a webhook endpoint.
func (c *EInvoice) WebhookEndpoint(ctx context.Context, id string) (*einvoiceapi.WebhookEndpoint, error) {
	r, err := c.Raw.GetWebhookEndpointWithResponse(ctx, id)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// UpdateWebhookEndpoint changes a webhook endpoint (PATCH); enabling a
// disabled one starts its failure clock afresh.
func (c *EInvoice) UpdateWebhookEndpoint(ctx context.Context, id string, in einvoiceapi.PatchWebhookEndpointBody) (*einvoiceapi.WebhookEndpoint, error) {
	r, err := c.Raw.UpdateWebhookEndpointWithResponse(ctx, id, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// DeleteWebhookEndpoint deletes a webhook endpoint and abandons what waits
// for it.
func (c *EInvoice) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	r, err := c.Raw.DeleteWebhookEndpointWithResponse(ctx, id)
	if err != nil {
		return err
	}
	if r.StatusCode() >= 300 {
		return problemFrom(r.StatusCode(), r.Body)
	}
	return nil
}

// RotateWebhookSecret gives the endpoint a new signing secret (in the
// answer, shown once); the previous one keeps signing for 24 hours.
func (c *EInvoice) RotateWebhookSecret(ctx context.Context, id string) (*einvoiceapi.WebhookEndpoint, error) {
	r, err := c.Raw.RotateWebhookSecretWithResponse(ctx, id, &einvoiceapi.RotateWebhookSecretParams{})
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// TestWebhookEndpoint sends the endpoint a sample event
// (webhook_endpoint.test) now; the answer is its delivery.
func (c *EInvoice) TestWebhookEndpoint(ctx context.Context, id string) (*einvoiceapi.WebhookDelivery, error) {
	r, err := c.Raw.TestWebhookEndpointWithResponse(ctx, id, &einvoiceapi.TestWebhookEndpointParams{})
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// RecoverWebhookEndpoint re-queues the endpoint's failed and abandoned
// deliveries created since in.Since.
func (c *EInvoice) RecoverWebhookEndpoint(ctx context.Context, id string, in einvoiceapi.RecoverBody) (*einvoiceapi.Recovery, error) {
	r, err := c.Raw.RecoverWebhookEndpointWithResponse(ctx, id, &einvoiceapi.RecoverWebhookEndpointParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON202, r, nil)
}

// WebhookDeliveries iterates over an endpoint's deliveries, newest first,
// each with its attempts.
func (c *EInvoice) WebhookDeliveries(ctx context.Context, endpointID string, params einvoiceapi.ListWebhookEndpointDeliveriesParams) iter.Seq2[einvoiceapi.WebhookDelivery, error] {
	return pages(func(cursor *string) (*[]einvoiceapi.WebhookDelivery, *string, error) {
		params.Cursor = cursor
		r, err := c.Raw.ListWebhookEndpointDeliveriesWithResponse(ctx, endpointID, &params)
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

// Usage is the account's documents in a month against its plan (GET
// /v1/usage); params.Period (YYYY-MM) is required, and
// params.Environment must be the credential's ("sandbox" for a sandbox
// key; production when unset).
func (c *EInvoice) Usage(ctx context.Context, params einvoiceapi.GetUsageParams) (*einvoiceapi.Usage, error) {
	r, err := c.Raw.GetUsageWithResponse(ctx, &params)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// Codebooks lists UJP's code lists the service checks requests against,
// and whether they are UJP's live lists or the shipped snapshot.
func (c *EInvoice) Codebooks(ctx context.Context) (*einvoiceapi.CodebookList, error) {
	r, err := c.Raw.ListCodebooksWithResponse(ctx)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// Codebook is one code list and its values (GET /v1/codebooks/{name}):
// name as a field error's codebook names it ("tax-indicators",
// "reject-reasons", …).
func (c *EInvoice) Codebook(ctx context.Context, name string) (*einvoiceapi.Codebook, error) {
	r, err := c.Raw.GetCodebookWithResponse(ctx, name)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// Convert converts a base salary between gross and net (POST
// /v1/calculations/convert).
func (c *Payroll) Convert(ctx context.Context, in payrollapi.ConvertInput) (*payrollapi.ConvertResult, error) {
	r, err := c.Raw.ConvertWithResponse(ctx, &payrollapi.ConvertParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// Rates are the statutory rates in force on date (YYYY-MM-DD; "" for
// today), GET /v1/rates.
func (c *Payroll) Rates(ctx context.Context, date string) (*payrollapi.RatesOutputBody, error) {
	params := &payrollapi.GetRatesParams{}
	if date != "" {
		params.Date = &date
	}
	r, err := c.Raw.GetRatesWithResponse(ctx, params)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}

// ValidateMpin runs the МПИН checks on a month's records without making a
// file (POST /v1/files/mpin/validate).
func (c *Payroll) ValidateMpin(ctx context.Context, in payrollapi.MpinRequest) (*payrollapi.ValidationResult, error) {
	r, err := c.Raw.MpinValidateWithResponse(ctx, &payrollapi.MpinValidateParams{}, in)
	if err != nil {
		return nil, err
	}
	return result(r.JSON200, r, nil)
}
