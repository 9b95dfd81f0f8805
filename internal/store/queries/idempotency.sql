-- name: InsertIdempotencyKey :execrows
-- Claims (account, key) for a first request. Zero rows means the key exists.
INSERT INTO idempotency_keys (account_id, idem_key, fingerprint, state, locked_until, created_at)
VALUES (sqlc.arg(account_id), sqlc.arg(idem_key), sqlc.arg(fingerprint), 'running', sqlc.arg(locked_until), sqlc.arg(created_at))
ON CONFLICT (account_id, idem_key) DO NOTHING;

-- name: GetIdempotencyKey :one
SELECT * FROM idempotency_keys WHERE account_id = sqlc.arg(account_id) AND idem_key = sqlc.arg(idem_key);

-- name: TakeOverIdempotencyKey :execrows
-- A running key whose lease ran out belongs to a request that died with its
-- process; the next request with the same key and body takes it over.
UPDATE idempotency_keys SET locked_until = sqlc.arg(locked_until)
WHERE account_id = sqlc.arg(account_id) AND idem_key = sqlc.arg(idem_key)
  AND state = 'running' AND locked_until < sqlc.arg(now);

-- name: CompleteIdempotencyKey :exec
UPDATE idempotency_keys
SET state = 'done', status_code = sqlc.arg(status_code), content_type = sqlc.arg(content_type),
    location = sqlc.arg(location), body = sqlc.arg(body)
WHERE account_id = sqlc.arg(account_id) AND idem_key = sqlc.arg(idem_key);

-- name: ReleaseIdempotencyKey :exec
DELETE FROM idempotency_keys
WHERE account_id = sqlc.arg(account_id) AND idem_key = sqlc.arg(idem_key) AND state = 'running';

-- name: PurgeIdempotencyKeys :execrows
DELETE FROM idempotency_keys WHERE created_at < sqlc.arg(before);
