package mail_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/denar-mk/denar/internal/mail"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func TestParseSMTPURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"smtp://user:pass@mail.example.mk:587", true},
		{"smtp://mail.example.mk", true},
		{"smtps://u:p@mail.example.mk", true},
		{"http://mail.example.mk", false},
		{"smtp://", false},
		{"smtp://mail.example.mk:99999", false},
	} {
		if _, err := mail.ParseSMTPURL(tc.url, "denar <no-reply@denar.mk>"); (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}

type fakeSender struct {
	got  []mail.Message
	fail bool
}

func (f *fakeSender) Deliver(_ context.Context, m mail.Message) error {
	if f.fail {
		return errors.New("421 try later")
	}
	f.got = append(f.got, m)
	return nil
}

// TestOutboxDelivery: a mail queued in a transaction that rolls back is
// never sent; a committed one is sent once, after a failed attempt.
func TestOutboxDelivery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		log := slog.New(slog.DiscardHandler)
		ob := mail.Outbox{Log: log, SMTP: true}
		rollback := errors.New("rollback")
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := ob.Send(ctx, tx, mail.Message{To: "a@example.mk", Subject: "x", Body: "x"}); err != nil {
				return err
			}
			return rollback
		}); !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return ob.Send(ctx, tx, mail.Message{To: "b@example.mk", Subject: "Овластување", Body: "Почитувани"})
		}); err != nil {
			t.Fatal(err)
		}
		s := &fakeSender{fail: true}
		d := &mail.Deliverer{DB: db, Sender: s, Log: log}
		if n, err := d.Once(ctx); err == nil || n != 0 {
			t.Fatalf("failing server: %d %v", n, err)
		}
		s.fail = false
		if n, err := d.Once(ctx); err != nil || n != 1 {
			t.Fatalf("deliver: %d %v", n, err)
		}
		if n, _ := d.Once(ctx); n != 0 {
			t.Fatalf("sent twice")
		}
		if len(s.got) != 1 || s.got[0].To != "b@example.mk" || s.got[0].Subject != "Овластување" {
			t.Fatalf("sent %+v", s.got)
		}
	})
}
