-- +goose Up
-- Usage against plans, and archive exports (issue 15).

-- Plans are data: what an account on the plan may do and what it pays.
-- included_documents is the monthly allowance of production documents
-- (sent plus received); extra_document_price (a decimal string in
-- currency) is the price of each production document beyond it;
-- production says whether production credentials work at all
-- (403 production_not_enabled otherwise). The seed rows are the plans the
-- code knew before; `denar admin plan set` changes or adds plans.
CREATE TABLE plans (
    code                 TEXT PRIMARY KEY,
    included_documents   INTEGER NOT NULL CHECK (included_documents >= 0),
    extra_document_price TEXT NOT NULL,
    currency             TEXT NOT NULL,
    production           BOOLEAN NOT NULL
);
INSERT INTO plans (code, included_documents, extra_document_price, currency, production) VALUES
    ('sandbox', 0, '0.00', 'MKD', FALSE),
    ('starter', 100, '12.00', 'MKD', TRUE),
    ('business', 1000, '8.00', 'MKD', TRUE),
    ('enterprise', 10000, '5.00', 'MKD', TRUE);
-- accounts.production_enabled mirrors the plan's production flag for
-- listings; `denar admin account set-plan` and `plan set` keep it in step,
-- and authentication reads the plan itself.
UPDATE accounts SET production_enabled = COALESCE((SELECT p.production FROM plans p WHERE p.code = accounts.plan), FALSE);

-- The usage ledger: one row per counted document, written in the
-- transaction that makes it count — a sent document's move to delivered
-- (UJP assigned its EUID), a received document's arrival in the inbox. The
-- document id is the key, so a retried submission, a re-delivered change or
-- a second process can never count a document twice. period and day are
-- the Skopje calendar month and day of at. signing_request_id is, for a
-- sent document, the signing request whose JWS UJP accepted.
CREATE TABLE usage_documents (
    document_id        TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL REFERENCES accounts(id),
    company_id         TEXT NOT NULL REFERENCES companies(id),
    environment        TEXT NOT NULL,
    direction          TEXT NOT NULL CHECK (direction IN ('sent', 'received')),
    period             TEXT NOT NULL,
    day                TEXT NOT NULL,
    signing_request_id TEXT,
    at                 TIMESTAMPTZ NOT NULL
);
CREATE INDEX usage_documents_period ON usage_documents(account_id, environment, period, company_id, direction);
-- Archive exports walk a company's documents by day.
CREATE INDEX usage_documents_company_day ON usage_documents(company_id, day, document_id);

-- Documents delivered before this migration count too.
INSERT INTO usage_documents (document_id, account_id, company_id, environment, direction, period, day, signing_request_id, at)
SELECT e.id, e.account_id, e.company_id, e.environment, 'sent',
       to_char(e.delivered_at AT TIME ZONE 'Europe/Skopje', 'YYYY-MM'),
       to_char(e.delivered_at AT TIME ZONE 'Europe/Skopje', 'YYYY-MM-DD'),
       (SELECT s.id FROM signing_requests s WHERE s.link_type = 'einvoice' AND s.link_id = e.id AND s.state = 'signed'
        ORDER BY s.id DESC LIMIT 1),
       e.delivered_at
FROM einvoices e WHERE e.delivered_at IS NOT NULL AND e.euid IS NOT NULL;

-- What GET /v1/usage reads: the ledger's counts per account, environment,
-- month, company and direction, incremented in the transaction whose
-- ledger insert counted a document (never for a duplicate). Each count is
-- spread over 8 slots (by document) so concurrent deliveries of one company
-- seldom wait on one row; the report sums them.
CREATE TABLE usage_counters (
    account_id  TEXT NOT NULL,
    environment TEXT NOT NULL,
    period      TEXT NOT NULL,
    company_id  TEXT NOT NULL,
    direction   TEXT NOT NULL,
    slot        INTEGER NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (account_id, environment, period, company_id, direction, slot)
);
INSERT INTO usage_counters (account_id, environment, period, company_id, direction, slot, n)
SELECT account_id, environment, period, company_id, direction, 0, COUNT(*)
FROM usage_documents GROUP BY account_id, environment, period, company_id, direction;

-- Archive exports (POST /v1/archive-exports). state: pending, ready,
-- failed. as_of is the moment the archive shows: documents, history and
-- PDFs recorded after it are left out, so a rebuild after a crash makes the
-- same archive. build_key is the blob the current attempt writes; blob_key
-- the finished zip (sha256 and size_bytes describe it).
CREATE TABLE archive_exports (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts(id),
    company_id      TEXT NOT NULL REFERENCES companies(id),
    environment     TEXT NOT NULL,
    from_day        TEXT NOT NULL,
    to_day          TEXT NOT NULL,
    as_of           TIMESTAMPTZ NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'ready', 'failed')),
    sent            INTEGER NOT NULL DEFAULT 0,
    received        INTEGER NOT NULL DEFAULT 0,
    files           INTEGER NOT NULL DEFAULT 0,
    size_bytes      BIGINT,
    sha256          TEXT,
    build_key       TEXT NOT NULL DEFAULT '',
    blob_key        TEXT NOT NULL DEFAULT '',
    failure_code    TEXT,
    failure_message TEXT,
    created_at      TIMESTAMPTZ NOT NULL,
    completed_at    TIMESTAMPTZ,
    expires_at      TIMESTAMPTZ NOT NULL
);
CREATE INDEX archive_exports_account ON archive_exports(account_id, id);
CREATE INDEX archive_exports_expiry ON archive_exports(expires_at);

-- The embedded blob store: an object is its chunks in order; it is
-- complete (readable) once its writer closed it.
CREATE TABLE blobs (
    key        TEXT PRIMARY KEY,
    size       BIGINT NOT NULL DEFAULT 0,
    complete   BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE blob_chunks (
    key  TEXT NOT NULL,
    seq  INTEGER NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (key, seq)
);

-- +goose Down
DROP TABLE blob_chunks;
DROP TABLE blobs;
DROP TABLE archive_exports;
DROP TABLE usage_counters;
DROP TABLE usage_documents;
DROP TABLE plans;
