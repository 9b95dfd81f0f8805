-- name: CreateOAuthClient :one
INSERT INTO oauth_clients (id, account_id, environment, secret_hash, scopes, company_ids, created_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(environment), sqlc.arg(secret_hash),
        sqlc.arg(scopes), sqlc.arg(company_ids), sqlc.arg(created_at))
RETURNING *;

-- name: GetOAuthClient :one
SELECT * FROM oauth_clients WHERE id = sqlc.arg(id);

-- name: RevokeOAuthClient :execrows
UPDATE oauth_clients SET revoked_at = sqlc.arg(revoked_at) WHERE id = sqlc.arg(id) AND revoked_at IS NULL;

-- name: CreateOAuthToken :exec
INSERT INTO oauth_tokens (token_hash, client_id, scopes, created_at, expires_at)
VALUES (sqlc.arg(token_hash), sqlc.arg(client_id), sqlc.arg(scopes), sqlc.arg(created_at), sqlc.arg(expires_at));

-- name: GetOAuthToken :one
SELECT * FROM oauth_tokens WHERE token_hash = sqlc.arg(token_hash);

-- name: ListOAuthClients :many
SELECT * FROM oauth_clients ORDER BY account_id, id;
