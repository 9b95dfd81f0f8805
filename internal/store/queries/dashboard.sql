-- name: CreateUser :one
INSERT INTO users (id, account_id, email, role, password_hash, created_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(email), sqlc.arg(role), sqlc.arg(password_hash), sqlc.arg(created_at))
RETURNING *;

-- name: GetUserByEmail :one
SELECT * FROM users WHERE email = sqlc.arg(email);

-- name: GetUser :one
SELECT * FROM users WHERE id = sqlc.arg(id);

-- name: ListAccountUsers :many
SELECT * FROM users WHERE account_id = sqlc.arg(account_id) ORDER BY email;

-- name: SetUserTOTPSecret :execrows
UPDATE users SET totp_secret = sqlc.arg(totp_secret), totp_enabled = FALSE
WHERE id = sqlc.arg(id) AND NOT totp_enabled;

-- name: ListClearTOTPSecrets :many
-- TOTP seeds stored before seeds were sealed (a sealed one starts v1.).
SELECT id, totp_secret FROM users WHERE totp_secret <> '' AND totp_secret NOT LIKE 'v1.%' ORDER BY id;

-- name: SealUserTOTPSecret :execrows
-- Replaces a clear seed by its sealed form, unless it changed meanwhile.
UPDATE users SET totp_secret = sqlc.arg(sealed) WHERE id = sqlc.arg(id) AND totp_secret = sqlc.arg(clear);

-- name: EnableUserTOTP :execrows
-- Turns the second factor on with the step of the code that confirmed it.
UPDATE users SET totp_enabled = TRUE, totp_last_step = sqlc.arg(step)
WHERE id = sqlc.arg(id) AND totp_secret <> '' AND NOT totp_enabled;

-- name: UseTOTPStep :execrows
-- Accepts a code's step once: a step at or before the last one used is a replay.
UPDATE users SET totp_last_step = sqlc.arg(step)
WHERE id = sqlc.arg(id) AND totp_last_step < sqlc.arg(step);

-- name: CreateUserSession :exec
INSERT INTO user_sessions (id_hash, user_id, state, csrf, environment, created_at, expires_at)
VALUES (sqlc.arg(id_hash), sqlc.arg(user_id), sqlc.arg(state), sqlc.arg(csrf), sqlc.arg(environment),
        sqlc.arg(created_at), sqlc.arg(expires_at));

-- name: GetUserSession :one
SELECT s.id_hash, s.state, s.csrf, s.environment, s.created_at, s.expires_at,
       u.id AS user_id, u.account_id, u.email, u.role, u.totp_enabled, u.disabled_at,
       a.production_enabled
FROM user_sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
WHERE s.id_hash = sqlc.arg(id_hash);

-- name: DeleteUserSession :execrows
DELETE FROM user_sessions WHERE id_hash = sqlc.arg(id_hash);

-- name: SetSessionEnvironment :execrows
UPDATE user_sessions SET environment = sqlc.arg(environment) WHERE id_hash = sqlc.arg(id_hash) AND state = 'active';

-- name: PurgeUserSessions :execrows
DELETE FROM user_sessions WHERE expires_at < sqlc.arg(before);

-- name: RecordSignInFailure :exec
INSERT INTO sign_in_failures (throttle, at) VALUES (sqlc.arg(throttle), sqlc.arg(at));

-- name: CountSignInFailures :one
SELECT COUNT(*) FROM sign_in_failures WHERE throttle = sqlc.arg(throttle) AND at > sqlc.arg(since);

-- name: ForgetSignInFailures :exec
DELETE FROM sign_in_failures WHERE throttle = sqlc.arg(throttle);

-- name: PurgeSignInFailures :execrows
DELETE FROM sign_in_failures WHERE at < sqlc.arg(before);

-- name: RecordAudit :exec
INSERT INTO audit_log (account_id, user_id, user_email, environment, action, target, detail, remote_addr, form_nonce, at)
VALUES (sqlc.arg(account_id), sqlc.arg(user_id), sqlc.arg(user_email), sqlc.arg(environment), sqlc.arg(action),
        sqlc.arg(target), sqlc.arg(detail), sqlc.arg(remote_addr), sqlc.narg(form_nonce), sqlc.arg(at));

-- name: AuditNonceUsed :one
SELECT COUNT(*) FROM audit_log WHERE user_id = sqlc.arg(user_id) AND form_nonce = sqlc.arg(form_nonce);

-- name: ListAudit :many
SELECT * FROM audit_log WHERE account_id = sqlc.arg(account_id) ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: ListAccountAPIKeys :many
SELECT * FROM api_keys WHERE account_id = sqlc.arg(account_id) AND service = sqlc.arg(service)
ORDER BY created_at DESC, id DESC;

-- name: RevokeAccountAPIKey :execrows
UPDATE api_keys SET revoked_at = sqlc.arg(revoked_at)
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND revoked_at IS NULL;

-- name: ListAccountOAuthClients :many
SELECT * FROM oauth_clients WHERE account_id = sqlc.arg(account_id) ORDER BY created_at DESC, id DESC;

-- name: RevokeAccountOAuthClient :execrows
UPDATE oauth_clients SET revoked_at = sqlc.arg(revoked_at)
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND revoked_at IS NULL;

-- name: LockAccountUsers :execrows
-- Serialises changes to an account's users, so that two owners demoting or
-- removing each other at once cannot leave the account without an owner
-- (the account row's lock on PostgreSQL; SQLite's single writer already
-- serialises).
UPDATE accounts SET name = name WHERE id = sqlc.arg(id);

-- name: CountAccountOwners :one
SELECT COUNT(*) FROM users WHERE account_id = sqlc.arg(account_id) AND role = 'owner' AND disabled_at IS NULL;

-- name: SetUserRole :execrows
UPDATE users SET role = sqlc.arg(role) WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id);

-- name: DeleteUser :execrows
DELETE FROM users WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id);

-- name: SetUserPasswordIf :execrows
-- Replaces the password hash only if it is still previous (the one the
-- current password was checked against).
UPDATE users SET password_hash = sqlc.arg(password_hash) WHERE id = sqlc.arg(id) AND password_hash = sqlc.arg(previous);

-- name: DeleteUserSessionsExcept :execrows
-- Ends every session of a user but the one whose hash is keep ('' ends all).
DELETE FROM user_sessions WHERE user_id = sqlc.arg(user_id) AND id_hash <> sqlc.arg(keep);
