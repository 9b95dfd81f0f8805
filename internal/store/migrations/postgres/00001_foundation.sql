-- +goose Up
-- instance_settings holds facts about this installation, such as whether the
-- first-run bootstrap has happened (its row doubles as the lock that keeps
-- two processes starting together from both bootstrapping).
CREATE TABLE instance_settings (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    plan        TEXT NOT NULL,
    -- production_enabled is true only while the account has an active production plan.
    production_enabled BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE companies (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    name        TEXT NOT NULL,
    tax_number  TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX companies_account ON companies(account_id, id);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    service      TEXT NOT NULL,
    environment  TEXT NOT NULL,
    -- The first characters of the key, shown in listings so a person can tell keys apart.
    display      TEXT NOT NULL,
    -- SHA-256 of the whole key; the key itself is never stored.
    secret_hash  TEXT NOT NULL UNIQUE,
    scopes       TEXT NOT NULL,
    company_ids  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX api_keys_account ON api_keys(account_id, id);

CREATE TABLE idempotency_keys (
    account_id    TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    -- 'running' while the first request executes, 'done' once its response is stored.
    state         TEXT NOT NULL,
    locked_until  TIMESTAMPTZ NOT NULL,
    status_code   INTEGER NOT NULL DEFAULT 0,
    content_type  TEXT NOT NULL DEFAULT '',
    location      TEXT NOT NULL DEFAULT '',
    body          BYTEA,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (account_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

CREATE TABLE jobs (
    id            BIGSERIAL PRIMARY KEY,
    kind          TEXT NOT NULL,
    args          TEXT NOT NULL,
    -- available, running, retryable, completed, cancelled, discarded
    state         TEXT NOT NULL,
    run_at        TIMESTAMPTZ NOT NULL,
    attempt       INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    last_error    TEXT NOT NULL DEFAULT '',
    unique_key    TEXT UNIQUE,
    locked_by     TEXT NOT NULL DEFAULT '',
    locked_until  TIMESTAMPTZ,
    created_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ
);
CREATE INDEX jobs_ready ON jobs(state, run_at, id);

-- +goose Down
DROP TABLE jobs;
DROP TABLE idempotency_keys;
DROP TABLE api_keys;
DROP TABLE companies;
DROP TABLE accounts;
DROP TABLE instance_settings;
