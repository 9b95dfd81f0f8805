-- +goose Up
-- OAuth client credentials of the e-invoicing service (issue 5). Secrets and
-- access tokens are stored only as SHA-256 hashes, like API keys.
CREATE TABLE oauth_clients (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    environment  TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    company_ids  TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    revoked_at   TIMESTAMP
);
CREATE INDEX oauth_clients_account ON oauth_clients(account_id, id);

CREATE TABLE oauth_tokens (
    token_hash   TEXT PRIMARY KEY,
    client_id    TEXT NOT NULL REFERENCES oauth_clients(id),
    scopes       TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL
);
CREATE INDEX oauth_tokens_expires ON oauth_tokens(expires_at);

-- Companies onboarded through the API (issue 5). Rows created before (admin
-- command) keep working: they are active sandbox companies in bridge mode.
-- environment is where the company was created; see docs/decisions.md.
ALTER TABLE companies ADD COLUMN vat_number TEXT NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN external_ref TEXT NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
ALTER TABLE companies ADD COLUMN signing_mode TEXT NOT NULL DEFAULT 'bridge';
ALTER TABLE companies ADD COLUMN environment TEXT NOT NULL DEFAULT 'sandbox';
-- The registry address as JSON ({street, number, city, zip}).
ALTER TABLE companies ADD COLUMN address TEXT NOT NULL DEFAULT '{}';
ALTER TABLE companies ADD COLUMN annual_account_filed_for INTEGER;
ALTER TABLE companies ADD COLUMN representative_name TEXT NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN representative_email TEXT NOT NULL DEFAULT '';

-- Mandate links: single use, hashed at rest, expiring.
CREATE TABLE mandates (
    token_hash   TEXT PRIMARY KEY,
    company_id   TEXT NOT NULL REFERENCES companies(id),
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL,
    used_at      TIMESTAMP
);
CREATE INDEX mandates_company ON mandates(company_id);

-- Outbox of e-mails when no SMTP server is configured (and the record of
-- what was sent when one is).
CREATE TABLE mail_outbox (
    id           TEXT PRIMARY KEY,
    recipient    TEXT NOT NULL,
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    -- Set when SMTP accepted the message; NULL rows are still to deliver.
    sent_at      TIMESTAMP
);
CREATE INDEX mail_outbox_unsent ON mail_outbox(sent_at, id);

-- +goose Down
DROP TABLE mail_outbox;
DROP TABLE mandates;
DROP TABLE oauth_tokens;
DROP TABLE oauth_clients;
