-- +goose Up
-- A user's documents in flight (a request issued, not sent yet) and its
-- sends (queued, submitting) are counted at every issue, top-up and
-- send; the indexes by pace key alone held every document of a
-- month-end backlog waiting to be signed, and the count walked them all
-- (PostgreSQL read the whole table about once per document). These hold
-- what each count wants and nothing else; the queries (pacing.sql) repeat
-- their predicates word for word, which is how both engines see that
-- they apply.
CREATE INDEX einvoices_pace_inflight ON einvoices (pace_key, created_at, id)
  WHERE status IN ('queued', 'submitting') OR (status = 'awaiting_signature' AND signing_request_id IS NOT NULL);
CREATE INDEX einvoices_pace_send ON einvoices (pace_key, updated_at, id)
  WHERE status IN ('queued', 'submitting');

-- +goose Down
DROP INDEX einvoices_pace_send;
DROP INDEX einvoices_pace_inflight;
