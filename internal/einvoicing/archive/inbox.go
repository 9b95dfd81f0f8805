package archive

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store/dbq"
)

// inboxArchive is the inbox as the archive reads it: the document exactly
// as UJP handed it, UJP's PDF when it was fetched by the export's asOf, and
// the document's history as the inbox knows it by then.
type inboxArchive struct{}

// ReceivedFiles implements receivedArchive.
func (inboxArchive) ReceivedFiles(ctx context.Context, q *dbq.Queries, documentID string, asOf time.Time) (receivedFiles, error) {
	d, err := q.GetInboxDocument(ctx, documentID)
	if errors.Is(err, sql.ErrNoRows) {
		return receivedFiles{}, &errArchiveContent{msg: "received document " + documentID + " is not in the inbox"}
	}
	if err != nil {
		return receivedFiles{}, fmt.Errorf("inbox document %s: %w", documentID, err)
	}
	rf := receivedFiles{EUID: d.Euid, Number: d.Number, DocumentType: d.DocumentType, Document: d.Payload}
	pdf, err := q.GetInboxPDF(ctx, documentID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return receivedFiles{}, fmt.Errorf("inbox document %s: PDF: %w", documentID, err)
	case !pdf.CreatedAt.After(asOf):
		b, err := base64.StdEncoding.DecodeString(pdf.Pdf)
		if err != nil {
			return receivedFiles{}, &errArchiveContent{msg: "inbox document " + documentID + ": UJP's PDF is not base64"}
		}
		rf.PDF = b
	}
	rf.History = inboxHistory(d, asOf)
	return rf, nil
}

// inboxHistory is what the inbox recorded of a document by asOf: its
// arrival, then the decision it reached and UJP's latest status when they
// were recorded by then. The inbox keeps UJP's latest status, not every
// one, so a status UJP replaced before the export is not listed.
func inboxHistory(d dbq.InboxDocument, asOf time.Time) []einvoicing.StatusChange {
	received := "received"
	h := []einvoicing.StatusChange{{To: received, Cause: "received", At: d.ReceivedAt}}
	last := received
	type step struct {
		to, cause string
		code      *string
		at        time.Time
	}
	var steps []step
	if d.DecidedAt.Valid && d.DecisionState != "" {
		steps = append(steps, step{to: d.DecisionState, cause: "decision", at: d.DecidedAt.Time})
	}
	if d.UjpStatusAt.After(d.ReceivedAt) {
		code := d.UjpStatus
		steps = append(steps, step{to: d.UjpStatusName, cause: "ujp_status", code: &code, at: d.UjpStatusAt})
	}
	if len(steps) == 2 && steps[1].at.Before(steps[0].at) {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, s := range steps {
		if s.at.After(asOf) {
			continue
		}
		from := last
		h = append(h, einvoicing.StatusChange{From: &from, To: s.to, Cause: s.cause, UJPCode: s.code, At: s.at})
		last = s.to
	}
	return h
}
