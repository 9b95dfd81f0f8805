package einvoicing

import (
	"context"
	"fmt"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Publisher is the port through which the use cases publish events: each
// is written in tx, the transaction of the change that causes it, so an
// event exists exactly when its change does. *webhooks.Service is the one
// cmd/denar passes (Deps.Events).
type Publisher interface {
	// Publish writes the events, each with its webhook deliveries.
	Publish(ctx context.Context, tx *store.Tx, drafts ...webhooks.Draft) error
	// Prepare returns an event's row for a statement of the caller's that
	// writes it with other rows (issuing an e-invoice on PostgreSQL);
	// Stored then writes its deliveries to the endpoints that statement
	// read.
	Prepare(tx *store.Tx, d webhooks.Draft) (webhooks.Prepared, error)
	Stored(ctx context.Context, tx *store.Tx, ev webhooks.Prepared, endpoints []dbq.ListFanOutEndpointsRow) error
}

// EventResources maps each Resource of the event catalogue that this
// package renders to the Go type GET renders it as (a zero value): the
// publisher refuses an event whose object is of another type
// (webhooks.Deps.Resources), and the OpenAPI document describes each
// kind's payload from it. The rooms add theirs (archive.EventResources,
// reconcile.EventResources); einvoiceapi.EventResources is the whole
// catalogue.
func EventResources() map[string]any {
	return map[string]any{
		webhooks.ResourceEInvoice:        EInvoice{},
		webhooks.ResourceSigningAgent:    SigningAgent{},
		webhooks.ResourceWebhookEndpoint: webhooks.WebhookEndpoint{},
		webhooks.ResourceInboxDocument:   InboxDocument{},
		webhooks.ResourceCodeListChange:  codelists.CodeListChange{},
	}
}

// WriteEvent publishes one event about object (rendered now, in tx) of a
// company.
func (s *Service) WriteEvent(ctx context.Context, tx *store.Tx, account, companyID, env, typ, objectID string, object any) error {
	return s.WriteEventAt(ctx, tx, account, companyID, env, typ, objectID, object, tx.Now)
}

// WriteEventAt is WriteEvent for a change that happened at at (an agent
// found to have gone quiet earlier).
func (s *Service) WriteEventAt(ctx context.Context, tx *store.Tx, account, companyID, env, typ, objectID string, object any, at time.Time) error {
	return s.events.Publish(ctx, tx, webhooks.Draft{AccountID: account, CompanyID: companyID, Environment: env, Type: typ,
		ObjectID: objectID, Object: object, At: at})
}

// einvoiceDraft is the event of typ about an e-invoice rendered already
// (renderedView): its data is made from those bytes instead of rendering
// the e-invoice again.
func einvoiceDraft(account, typ string, inv EInvoice) (webhooks.Draft, error) {
	obj, err := inv.MarshalJSON()
	if err != nil {
		return webhooks.Draft{}, fmt.Errorf("event %s data: %w", typ, err)
	}
	return webhooks.Draft{AccountID: account, CompanyID: inv.CompanyID, Environment: inv.Environment, Type: typ,
		ObjectID: inv.ID, Object: inv, Rendered: obj}, nil
}

// writeEInvoiceEvent is writeEvent for an e-invoice rendered already.
func (s *Service) writeEInvoiceEvent(ctx context.Context, tx *store.Tx, inv EInvoice, account, typ string) error {
	d, err := einvoiceDraft(account, typ, inv)
	if err != nil {
		return err
	}
	return s.events.Publish(ctx, tx, d)
}
