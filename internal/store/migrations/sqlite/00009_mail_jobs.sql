-- +goose Up
-- Mail is a job (issue 11): every queued message gets a mail.send job of
-- internal/jobs, claimed by one runner across every process, retried with
-- backoff up to DENAR_MAIL_MAX_ATTEMPTS, and its outcome is kept here.
--
-- state: queued (its job is pending), sent (the SMTP server took it, at
-- sent_at), logged (no SMTP configured: written to the log instead), dead
-- (a permanent refusal, or the attempts ran out; see last_error).
-- attempts counts SMTP attempts of the current job; updated_at is when the
-- row last changed. link is the action link of the message (the mandate
-- URL, also in body), logged when there is no SMTP so that a person trying
-- the sandbox can open it.
ALTER TABLE mail_outbox ADD COLUMN state TEXT NOT NULL DEFAULT 'queued'
    CHECK (state IN ('queued', 'sent', 'logged', 'dead'));
ALTER TABLE mail_outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mail_outbox ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
ALTER TABLE mail_outbox ADD COLUMN link TEXT NOT NULL DEFAULT '';
ALTER TABLE mail_outbox ADD COLUMN updated_at TIMESTAMP;
UPDATE mail_outbox SET state = 'sent', updated_at = sent_at WHERE sent_at IS NOT NULL;
DROP INDEX mail_outbox_unsent;
CREATE INDEX mail_outbox_state ON mail_outbox(state, created_at);

-- Mail the old delivery loop had not sent yet becomes a job like new mail
-- (110: the job ceiling of package mail, above any configured limit).
INSERT INTO jobs (kind, args, state, run_at, max_attempts, unique_key, created_at)
SELECT 'mail.send', '{"id":"' || id || '"}', 'available', created_at, 110, 'mail:' || id, created_at
FROM mail_outbox WHERE state = 'queued';

-- +goose Down
DELETE FROM jobs WHERE kind = 'mail.send';
DROP INDEX mail_outbox_state;
CREATE INDEX mail_outbox_unsent ON mail_outbox(sent_at, id);
ALTER TABLE mail_outbox DROP COLUMN updated_at;
ALTER TABLE mail_outbox DROP COLUMN link;
ALTER TABLE mail_outbox DROP COLUMN last_error;
ALTER TABLE mail_outbox DROP COLUMN attempts;
ALTER TABLE mail_outbox DROP COLUMN state;
