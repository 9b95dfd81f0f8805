-- +goose Up
-- instance_settings holds facts about this installation, such as whether the
-- first-run bootstrap has happened (its row doubles as the lock that keeps
-- two processes starting together from both bootstrapping).
CREATE TABLE instance_settings (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
-- Timestamps are stored as UTC text in the driver's "sqlite" time format, so
-- that text comparison orders them correctly.
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    plan        TEXT NOT NULL,
    production_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  TIMESTAMP NOT NULL
);

CREATE TABLE companies (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    name        TEXT NOT NULL,
    tax_number  TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX companies_account ON companies(account_id, id);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    service      TEXT NOT NULL,
    environment  TEXT NOT NULL,
    display      TEXT NOT NULL,
    secret_hash  TEXT NOT NULL UNIQUE,
    scopes       TEXT NOT NULL,
    company_ids  TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    revoked_at   TIMESTAMP
);
CREATE INDEX api_keys_account ON api_keys(account_id, id);

CREATE TABLE idempotency_keys (
    account_id    TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    state         TEXT NOT NULL,
    locked_until  TIMESTAMP NOT NULL,
    status_code   INTEGER NOT NULL DEFAULT 0,
    content_type  TEXT NOT NULL DEFAULT '',
    location      TEXT NOT NULL DEFAULT '',
    body          BLOB,
    created_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (account_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL,
    args          TEXT NOT NULL,
    state         TEXT NOT NULL,
    run_at        TIMESTAMP NOT NULL,
    attempt       INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    last_error    TEXT NOT NULL DEFAULT '',
    unique_key    TEXT UNIQUE,
    locked_by     TEXT NOT NULL DEFAULT '',
    locked_until  TIMESTAMP,
    created_at    TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP
);
CREATE INDEX jobs_ready ON jobs(state, run_at, id);

-- +goose Down
DROP TABLE jobs;
DROP TABLE idempotency_keys;
DROP TABLE api_keys;
DROP TABLE companies;
DROP TABLE accounts;
DROP TABLE instance_settings;
