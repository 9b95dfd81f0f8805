-- Mail (package internal/mail). A row of mail_outbox is written in the
-- transaction that causes the message, with a mail.send job that delivers
-- it; the job records the outcome here. States: queued, sent, logged, dead.

-- name: CreateOutboxMail :exec
INSERT INTO mail_outbox (id, recipient, subject, body, link, state, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(recipient), sqlc.arg(subject), sqlc.arg(body), sqlc.arg(link), 'queued',
        sqlc.arg(created_at), sqlc.arg(created_at));

-- name: ListOutboxMail :many
SELECT * FROM mail_outbox ORDER BY id;

-- name: GetOutboxMail :one
SELECT * FROM mail_outbox WHERE id = sqlc.arg(id);

-- name: ListMail :many
-- Newest first, optionally of one state, with the pending job of a queued
-- message (its state and when it runs next).
SELECT m.id, m.recipient, m.subject, m.body, m.link, m.state, m.attempts, m.last_error,
       m.created_at, m.sent_at, m.updated_at, j.state AS job_state, j.run_at AS job_run_at
FROM mail_outbox m
LEFT JOIN jobs j ON j.unique_key = 'mail:' || m.id AND j.state IN ('available', 'retryable', 'running')
WHERE (CAST(sqlc.arg(state) AS TEXT) = '' OR m.state = sqlc.arg(state))
ORDER BY m.id DESC
LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: SetMailOutcome :execrows
-- Only a queued row moves: an outcome recorded twice (a job re-run after
-- its runner died) changes nothing the second time.
UPDATE mail_outbox SET state = sqlc.arg(state), attempts = sqlc.arg(attempts), last_error = sqlc.arg(last_error),
    sent_at = sqlc.narg(sent_at), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND state = 'queued';

-- name: RecordMailAttempt :execrows
-- A failed attempt that will be retried: the row stays queued.
UPDATE mail_outbox SET attempts = sqlc.arg(attempts), last_error = sqlc.arg(last_error), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND state = 'queued';

-- name: RequeueMail :execrows
-- denar admin mail retry: a message that was not sent goes back to queued
-- with a fresh set of attempts (the last error stays until the next one).
UPDATE mail_outbox SET state = 'queued', attempts = 0, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND state <> 'sent';
