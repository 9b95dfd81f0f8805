package einvoicing

import (
	"context"
	"errors"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// Inbox is the port through which this package reaches the inbox room
// (internal/einvoicing/inbox), which is built on it and so cannot be one
// of its Deps: cmd/denar wires it with UseInbox once the room is built.
type Inbox interface {
	// StartSync, in the poll's transaction, starts the read of co's
	// purchase side when one is due (nothing when the company's inbox is
	// not read).
	StartSync(ctx context.Context, tx *store.Tx, co dbq.Company, today time.Time) error
	// StoreIncoming, ApplyUJPStatus and StatusName are the inbox's, for
	// the reconciliation (see the methods of the same names on Service).
	StoreIncoming(ctx context.Context, tx *store.Tx, co dbq.Company, it ujp.Payload, statusName string) (dbq.InboxDocument, bool, error)
	ApplyUJPStatus(ctx context.Context, tx *store.Tx, d dbq.InboxDocument, code, name string, at time.Time, ch *ujp.StatusChange) (dbq.InboxDocument, error)
	StatusName(env, code string) string
}

// UseInbox wires the inbox room; cmd/denar calls it once, before the
// service runs jobs. Without it the poll reads no company's purchase
// side (a test of this package alone) and CheckLinks fails.
func (s *Service) UseInbox(in Inbox) { s.inbox = in }

// errNoInbox is a call into the inbox before UseInbox.
var errNoInbox = errors.New("einvoicing: no inbox room wired (Service.UseInbox)")

// StoreIncoming stores an incoming document through the inbox room
// (inbox.Service.StoreIncoming).
func (s *Service) StoreIncoming(ctx context.Context, tx *store.Tx, co dbq.Company, it ujp.Payload, statusName string) (dbq.InboxDocument, bool, error) {
	if s.inbox == nil {
		return dbq.InboxDocument{}, false, errNoInbox
	}
	return s.inbox.StoreIncoming(ctx, tx, co, it, statusName)
}

// ApplyUJPStatus records a status UJP reported for an inbox document
// through the inbox room (inbox.Service.ApplyUJPStatus).
func (s *Service) ApplyUJPStatus(ctx context.Context, tx *store.Tx, d dbq.InboxDocument, code, name string, at time.Time, ch *ujp.StatusChange) (dbq.InboxDocument, error) {
	if s.inbox == nil {
		return d, errNoInbox
	}
	return s.inbox.ApplyUJPStatus(ctx, tx, d, code, name, at, ch)
}

// StatusName is UJP's name of a document status in env's code lists
// (inbox.Service.StatusName).
func (s *Service) StatusName(env, code string) string {
	if s.inbox == nil {
		return ""
	}
	return s.inbox.StatusName(env, code)
}
