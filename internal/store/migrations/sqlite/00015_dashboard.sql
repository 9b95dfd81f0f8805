-- +goose Up
-- The web dashboard (issue 18): the account's people, their sessions, the
-- sign-in throttle and the audit log.

-- A person who signs in to the dashboard. The e-mail address is the sign-in
-- name, unique across accounts (stored lower-case). password_hash is an
-- Argon2id PHC string ($argon2id$v=19$m=…,t=…,p=…$salt$hash).
-- totp_secret is the base32 TOTP secret once enrolment started; totp_enabled
-- turns the second factor on once a code was confirmed. totp_last_step is
-- the last 30-second step accepted, so that a code works once.
CREATE TABLE users (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts(id),
    email          TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL CHECK (role IN ('owner', 'staff', 'viewer')),
    password_hash  TEXT NOT NULL,
    totp_secret    TEXT NOT NULL DEFAULT '',
    totp_enabled   BOOLEAN NOT NULL DEFAULT FALSE,
    totp_last_step BIGINT NOT NULL DEFAULT 0,
    created_at     TIMESTAMP NOT NULL,
    disabled_at    TIMESTAMP
);
CREATE INDEX users_account ON users(account_id, email);

-- A dashboard session. id_hash is the SHA-256 of the cookie's value (the
-- value itself is never stored). state is 'mfa' between the password and
-- the second factor, 'active' after. csrf is the session's form token.
-- environment is the environment the person works in (sandbox by default).
CREATE TABLE user_sessions (
    id_hash      TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id),
    state        TEXT NOT NULL CHECK (state IN ('mfa', 'active')),
    csrf         TEXT NOT NULL,
    environment  TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions(user_id);
CREATE INDEX user_sessions_expiry ON user_sessions(expires_at);

-- Failed sign-ins, by key ('email:<address>' or 'addr:<ip>'), counted over
-- a window to throttle guessing. Every process reads the same rows.
CREATE TABLE sign_in_failures (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    throttle   TEXT NOT NULL,
    at         TIMESTAMP NOT NULL
);
CREATE INDEX sign_in_failures_key ON sign_in_failures(throttle, at);

-- Who did what through the dashboard, written in the transaction of the act.
-- form_nonce is the random token of the form that asked for the act: unique
-- per user, so a form submitted twice (a browser's resubmission, a double
-- click) acts once — the second transaction cannot write its row and rolls
-- back with everything it did.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    user_id     TEXT NOT NULL,
    user_email  TEXT NOT NULL,
    environment TEXT NOT NULL,
    action      TEXT NOT NULL,
    target      TEXT NOT NULL,
    detail      TEXT NOT NULL,
    remote_addr TEXT NOT NULL,
    form_nonce  TEXT,
    at          TIMESTAMP NOT NULL
);
CREATE INDEX audit_log_account ON audit_log(account_id, id);
CREATE UNIQUE INDEX audit_log_nonce ON audit_log(user_id, form_nonce);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE sign_in_failures;
DROP TABLE user_sessions;
DROP TABLE users;
