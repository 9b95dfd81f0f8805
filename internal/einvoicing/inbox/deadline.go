package inbox

// The decision deadline as a periodic job (KindDeadlines, every
// minute by default, run once at a time across processes by the jobs
// table): inbox.deadline_approaching at 5, 2 and 1 days left, and, once
// decideBy is over in Skopje, the move of an undecided document UJP still
// holds as sent (01; not one its seller voided or corrected) to
// auto_accepted with inbox.auto_accepted (UJP's status 04 confirms it when
// a change feed reports it). A reminder is sent once per document and
// number of days whatever the number of processes: its row in
// inbox_reminders is inserted in the event's transaction, and only the
// insert that wrote the row writes the event. The auto-acceptance is an
// update over the version read, so it too happens once.

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/jobs"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// inboxDeadlines is the worker of KindDeadlines.
func (s *Service) inboxDeadlines(ctx context.Context, _ *jobs.Job, _ deadlinesArgs) error {
	if err := s.InboxReminders(ctx); err != nil {
		return err
	}
	return s.InboxAutoAccepts(ctx)
}

// InboxReminders sends every inbox.deadline_approaching due now
// (einvoice.ReminderDue), once per document and reminder.
func (s *Service) InboxReminders(ctx context.Context) error {
	today := einvoice.Today(s.db.Now())
	for i, days := range einvoice.ReminderDays {
		next := 0
		if i+1 < len(einvoice.ReminderDays) {
			next = einvoice.ReminderDays[i+1]
		}
		err := s.eachDue(ctx, "reminders", "reminder of", func() ([]dbq.InboxDocument, error) {
			return s.db.Reader().DueInboxReminders(ctx, dbq.DueInboxRemindersParams{
				FromDate: today.AddDate(0, 0, next+1).Format(time.DateOnly), ToDate: today.AddDate(0, 0, days).Format(time.DateOnly), Days: int32(days)})
		}, func(tx *store.Tx, id string) (bool, error) {
			return s.remind(ctx, tx, id, days)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// eachDue reads the documents due (the list named "due <list>") and
// applies act to each, one transaction a document (act reports whether it
// acted), and reads again while a full page (200) brought something to
// do; an error of act names the document after item.
func (s *Service) eachDue(ctx context.Context, list, item string, due func() ([]dbq.InboxDocument, error), act func(tx *store.Tx, id string) (bool, error)) error {
	for {
		rows, err := due()
		if err != nil {
			return fmt.Errorf("due %s: %w", list, err)
		}
		done := 0
		for _, r := range rows {
			err := s.inboxInTx(ctx, func(tx *store.Tx) error {
				ok, err := act(tx, r.ID)
				if ok {
					done++
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("%s %s: %w", item, r.ID, err)
			}
		}
		if len(rows) < 200 || done == 0 {
			return nil
		}
	}
}

// remind sends the reminder of days for document id if it is due now and
// was not sent; true when it sent it.
func (s *Service) remind(ctx context.Context, tx *store.Tx, id string, days int) (bool, error) {
	d, err := tx.GetInboxDocument(ctx, id)
	if err != nil {
		return false, err
	}
	by, err := time.Parse(time.DateOnly, d.DecideBy)
	if err != nil {
		return false, err
	}
	due, ok := einvoice.ReminderDue(einvoice.DaysLeft(tx.Now, by))
	if d.DecisionState != einvoice.DecisionPending || d.UjpStatus != ujp.StatusSent || !ok || due != days {
		return false, nil
	}
	n, err := tx.InsertInboxReminder(ctx, dbq.InsertInboxReminderParams{DocumentID: d.ID, Days: int32(days), SentAt: tx.Now})
	if err != nil || n == 0 {
		return false, err
	}
	return true, s.inboxEvent(ctx, tx, d, webhooks.EventInboxDeadlineApproaching)
}

// InboxAutoAccepts moves every document still pending after its deadline
// to auto_accepted (a decision still on its way fails with
// decision_deadline_passed).
func (s *Service) InboxAutoAccepts(ctx context.Context) error {
	today := einvoice.Today(s.db.Now()).Format(time.DateOnly)
	return s.eachDue(ctx, "auto-acceptances", "auto-accept", func() ([]dbq.InboxDocument, error) {
		return s.db.Reader().DueInboxAutoAccepts(ctx, today)
	}, func(tx *store.Tx, id string) (bool, error) {
		return s.autoAccept(ctx, tx, id)
	})
}

// autoAccept records the deadline's passing on document id.
func (s *Service) autoAccept(ctx context.Context, tx *store.Tx, id string) (bool, error) {
	d, err := tx.GetInboxDocument(ctx, id)
	if err != nil {
		return false, err
	}
	by, err := time.Parse(time.DateOnly, d.DecideBy)
	if err != nil {
		return false, err
	}
	if d.DecisionState != einvoice.DecisionPending || d.UjpStatus != ujp.StatusSent || !einvoice.DeadlinePassed(tx.Now, by) {
		return false, nil
	}
	if d.DecisionRequested != "" {
		if d, err = s.failDecision(ctx, tx, d, inboxProblem{Code: "decision_late",
			Message:          fmt.Sprintf("the %s decision had not reached UJP when the deadline (%s) passed", d.DecisionRequested, d.DecideBy),
			SigningRequestID: d.SigningRequestID.String}); err != nil {
			return false, err
		}
	}
	d.DecisionState = einvoice.DecisionAutoAccepted
	d.DecidedAt = sql.NullTime{Time: einvoice.DeadlineEnd(by).UTC(), Valid: true}
	saved, err := saveInbox(ctx, tx, d)
	if err != nil {
		return false, err
	}
	return true, s.inboxEvent(ctx, tx, saved, webhooks.EventInboxAutoAccepted)
}
