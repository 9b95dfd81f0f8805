-- +goose Up
-- Signing agents, their certificates and signing requests (issue 6). The
-- service never holds a signing key: it stores what must be signed and the
-- verified JWS. Agent secrets and pairing codes are SHA-256 hashes.
CREATE TABLE agent_pairing_codes (
    code_hash    TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    environment  TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    expires_at   TIMESTAMP NOT NULL,
    used_at      TIMESTAMP
);

CREATE TABLE signing_agents (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    environment  TEXT NOT NULL,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL,
    -- last_seen_at is refreshed by every authenticated agent request; an
    -- agent seen within the reachability window counts for signerReady.
    last_seen_at TIMESTAMP,
    revoked_at   TIMESTAMP
);
CREATE INDEX signing_agents_account ON signing_agents(account_id, id);

CREATE TABLE signing_certificates (
    id           TEXT PRIMARY KEY,
    agent_id     TEXT NOT NULL REFERENCES signing_agents(id),
    company_id   TEXT NOT NULL REFERENCES companies(id),
    der          TEXT NOT NULL, -- base64 (standard) of the DER certificate
    serial       TEXT NOT NULL,
    subject      TEXT NOT NULL,
    not_before   TIMESTAMP NOT NULL,
    not_after    TIMESTAMP NOT NULL,
    created_at   TIMESTAMP NOT NULL
);
CREATE INDEX signing_certificates_company ON signing_certificates(company_id, created_at);

CREATE TABLE signing_requests (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts(id),
    company_id       TEXT NOT NULL REFERENCES companies(id),
    certificate_id   TEXT NOT NULL REFERENCES signing_certificates(id),
    purpose          TEXT NOT NULL,
    state            TEXT NOT NULL,
    protected_header TEXT NOT NULL, -- base64url of the header JSON
    payload          TEXT NOT NULL, -- base64url of the bytes to sign
    link_type        TEXT NOT NULL,
    link_id          TEXT NOT NULL,
    claimed_by       TEXT NOT NULL DEFAULT '',
    jws              TEXT NOT NULL DEFAULT '',
    refusal_reason   TEXT NOT NULL DEFAULT '',
    refusal_message  TEXT NOT NULL DEFAULT '',
    replaced_by      TEXT NOT NULL DEFAULT '',
    expires_at       TIMESTAMP NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL
);
CREATE INDEX signing_requests_account ON signing_requests(account_id, state, id);

-- Events of the signing side (signing_agent.online/offline,
-- signing_request.signed); the webhooks issue delivers them.
CREATE TABLE signing_events (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts(id),
    type         TEXT NOT NULL,
    object_id    TEXT NOT NULL,
    created_at   TIMESTAMP NOT NULL
);
CREATE INDEX signing_events_account ON signing_events(account_id, id);

-- +goose Down
DROP TABLE signing_events;
DROP TABLE signing_requests;
DROP TABLE signing_certificates;
DROP TABLE signing_agents;
DROP TABLE agent_pairing_codes;
