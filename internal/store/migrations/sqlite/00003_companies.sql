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

-- +goose Down
DROP TABLE oauth_tokens;
DROP TABLE oauth_clients;
