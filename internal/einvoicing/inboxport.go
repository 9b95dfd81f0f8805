package einvoicing

import (
	"context"
	"errors"
	"time"

	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// Inbox is the port through which this package reaches the inbox room
// (internal/einvoicing/inbox), which is built on it and so cannot be one
// of its Deps: cmd/denar wires it with UseInbox once the room is built.
type Inbox interface {
	// StartSync, in the poll's transaction, starts the read of co's
	// purchase side when one is due (nothing when the company's inbox is
	// not read).
	StartSync(ctx context.Context, tx *store.Tx, co dbq.Company, today time.Time) error
}

// UseInbox wires the inbox room; cmd/denar calls it once, before the
// service runs jobs. Without it the poll reads no company's purchase
// side (a test of this package alone) and CheckLinks fails.
func (s *Service) UseInbox(in Inbox) { s.inbox = in }

// errNoInbox is CheckLinks before UseInbox.
var errNoInbox = errors.New("einvoicing: no inbox room wired (Service.UseInbox)")
