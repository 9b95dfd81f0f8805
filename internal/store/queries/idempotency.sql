-- name: InsertIdempotencyKey :execrows
-- Claims a key for a first request. Zero rows means the key exists.
INSERT INTO idempotency_keys (account_id, environment, credential_id, idem_key, fingerprint, state, token, locked_until, created_at)
VALUES (sqlc.arg(account_id), sqlc.arg(environment), sqlc.arg(credential_id), sqlc.arg(idem_key), sqlc.arg(fingerprint),
        'running', sqlc.arg(token), sqlc.arg(locked_until), sqlc.arg(created_at))
ON CONFLICT (account_id, environment, credential_id, idem_key) DO NOTHING;

-- name: GetIdempotencyKey :one
SELECT * FROM idempotency_keys
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND credential_id = sqlc.arg(credential_id) AND idem_key = sqlc.arg(idem_key);

-- name: TakeOverIdempotencyKey :execrows
-- A running key whose lease ran out belongs to a request that died (or is
-- too slow); the next request with the same key and body takes it over with
-- a new token, which fences the old holder out of completing it.
UPDATE idempotency_keys SET locked_until = sqlc.arg(locked_until), token = sqlc.arg(token)
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND credential_id = sqlc.arg(credential_id) AND idem_key = sqlc.arg(idem_key)
  AND state = 'running' AND locked_until < sqlc.arg(now);

-- name: CompleteIdempotencyKey :execrows
-- Stores the response, in the transaction of the work, only while the
-- caller's claim (its token) still holds the key.
UPDATE idempotency_keys
SET state = 'done', status_code = sqlc.arg(status_code), content_type = sqlc.arg(content_type),
    location = sqlc.arg(location), body = sqlc.arg(body)
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND credential_id = sqlc.arg(credential_id) AND idem_key = sqlc.arg(idem_key)
  AND state = 'running' AND token = sqlc.arg(token);

-- name: ReleaseIdempotencyKey :exec
DELETE FROM idempotency_keys
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND credential_id = sqlc.arg(credential_id) AND idem_key = sqlc.arg(idem_key)
  AND state = 'running' AND token = sqlc.arg(token);

-- name: PurgeIdempotencyKeys :execrows
DELETE FROM idempotency_keys WHERE created_at < sqlc.arg(before);
