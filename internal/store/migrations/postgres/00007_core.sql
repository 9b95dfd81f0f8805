-- +goose Up
-- E-invoicing core (issue 11).
--
-- Idempotency keys are scoped by account, environment and credential: a
-- production key reusing a sandbox request's key is a new request. A claim
-- carries a random token; the work's transaction completes the key only
-- while it still holds that token (a fenced write), so a request whose lease
-- ran out and was taken over can never commit its effect next to the
-- taker's.
DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
    account_id    TEXT NOT NULL,
    environment   TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    -- 'running' while the first request executes, 'done' once its response is stored.
    state         TEXT NOT NULL,
    token         TEXT NOT NULL,
    locked_until  TIMESTAMPTZ NOT NULL,
    status_code   INTEGER NOT NULL DEFAULT 0,
    content_type  TEXT NOT NULL DEFAULT '',
    location      TEXT NOT NULL DEFAULT '',
    body          BYTEA,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (account_id, environment, credential_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

-- Employer companies of the payroll service (made with `denar admin company
-- create`) are told apart from client companies onboarded for e-invoicing,
-- so payroll's X-Company-Id rule counts only employers. Rows made before
-- had no representative.
ALTER TABLE companies ADD COLUMN payroll_employer BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE companies SET payroll_employer = TRUE WHERE representative_email = '';
-- An account onboards a tax number once per environment (409 company_exists),
-- also when two requests race.
CREATE UNIQUE INDEX companies_onboarded_tax ON companies(account_id, environment, tax_number) WHERE payroll_employer = FALSE;

-- The signing request an e-invoice waits on (null when none), shown on the
-- e-invoice so an integrator can follow it.
ALTER TABLE einvoices ADD COLUMN signing_request_id TEXT;

-- Agents find the open requests of the companies they hold certificates
-- for.
CREATE INDEX signing_requests_open ON signing_requests(company_id, state, expires_at);
CREATE INDEX signing_certificates_agent ON signing_certificates(agent_id, company_id);

-- Agent connection events are events of the companies the agent signs for
-- (the events table); signature and refusal leave their trace on the
-- request itself.
DROP TABLE signing_events;

-- +goose Down
CREATE TABLE signing_events (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    type         TEXT NOT NULL,
    object_id    TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX signing_events_account ON signing_events(account_id, id);
DROP INDEX signing_certificates_agent;
DROP INDEX signing_requests_open;
ALTER TABLE einvoices DROP COLUMN signing_request_id;
DROP INDEX companies_onboarded_tax;
ALTER TABLE companies DROP COLUMN payroll_employer;
DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
    account_id    TEXT NOT NULL,
    idem_key      TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
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
