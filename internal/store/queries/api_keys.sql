-- name: CreateAPIKey :one
INSERT INTO api_keys (id, account_id, service, environment, display, secret_hash, scopes, company_ids, created_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(service), sqlc.arg(environment), sqlc.arg(display),
        sqlc.arg(secret_hash), sqlc.arg(scopes), sqlc.arg(company_ids), sqlc.arg(created_at))
RETURNING *;

-- name: GetAPIKeyByHash :one
SELECT * FROM api_keys WHERE secret_hash = sqlc.arg(secret_hash);

-- name: ListAPIKeys :many
SELECT * FROM api_keys ORDER BY account_id, id;

-- name: RevokeAPIKey :execrows
UPDATE api_keys SET revoked_at = sqlc.arg(revoked_at) WHERE id = sqlc.arg(id) AND revoked_at IS NULL;

-- name: GetAPIKey :one
SELECT * FROM api_keys WHERE id = sqlc.arg(id);
