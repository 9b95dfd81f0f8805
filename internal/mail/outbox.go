package mail

import (
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
)

func dbqOutbox(id string, m Message, tx *store.Tx) dbq.CreateOutboxMailParams {
	return dbq.CreateOutboxMailParams{ID: id, Recipient: m.To, Subject: m.Subject, Body: m.Body, CreatedAt: tx.Now}
}
