-- +goose Up
-- The sandbox simulator of UJP (internal/ujpsim) keeps its state here, so
-- that every `denar serve` process sharing this database is one and the same
-- simulated UJP, and `denar ujp-sim` keeps its documents across restarts.
-- Nothing here is e-invoicing data of ours: these are the simulated
-- authority's records. Timestamps are UTC text in the driver's "sqlite"
-- format, so that text comparison orders them.

-- One row: the simulator's global faults and its business clock.
CREATE TABLE ujpsim_settings (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    clock_offset_ns BIGINT NOT NULL DEFAULT 0,
    outage          BOOLEAN NOT NULL DEFAULT FALSE,
    latency_ns      BIGINT NOT NULL DEFAULT 0,
    error_rate      REAL NOT NULL DEFAULT 0,
    rate_limit      BOOLEAN NOT NULL DEFAULT FALSE,
    -- The next reject_count sends fail with reject_code (all sellers).
    reject_code     TEXT NOT NULL DEFAULT '',
    reject_message  TEXT NOT NULL DEFAULT '',
    reject_count    INTEGER NOT NULL DEFAULT 0
);
INSERT INTO ujpsim_settings (id) VALUES (1);

-- Faults seen only by the calls of one company (X-EDB).
CREATE TABLE ujpsim_seller_faults (
    edb             TEXT PRIMARY KEY,
    outage          BOOLEAN NOT NULL DEFAULT FALSE,
    reject_code     TEXT NOT NULL DEFAULT '',
    reject_message  TEXT NOT NULL DEFAULT '',
    reject_count    INTEGER NOT NULL DEFAULT 0
);

-- Registry entries added through /_sim/companies (the seeded ones live in
-- the code); company is ujp.Company as JSON.
CREATE TABLE ujpsim_companies (
    tax_number  TEXT PRIMARY KEY,
    company     TEXT NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);

-- Signing certificates registered for a company's signer (UJP's portal).
CREATE TABLE ujpsim_certificates (
    edb           TEXT NOT NULL,
    serial        TEXT NOT NULL,
    eujp_id       TEXT NOT NULL,
    der           BLOB NOT NULL,
    not_after     TIMESTAMP NOT NULL,
    registered_at TIMESTAMP NOT NULL,
    PRIMARY KEY (edb, serial)
);
CREATE INDEX ujpsim_certificates_serial ON ujpsim_certificates(serial);

-- Accepted documents. UNIQUE (seller_tin, doc_id) is UJP's E1023: two
-- processes sending one docId at once store one document. received_at and
-- decide_by are on the simulator's business clock; created_at is the real
-- time of storage, which the retention rule reads.
CREATE TABLE ujpsim_documents (
    euid            TEXT PRIMARY KEY,
    seller_tin      TEXT NOT NULL,
    doc_id          TEXT NOT NULL,
    doc_type        TEXT NOT NULL,
    doc_storno      INTEGER NOT NULL,
    buyer_tin       TEXT NOT NULL,
    status          TEXT NOT NULL,
    qr_link         TEXT NOT NULL,
    received_at     TIMESTAMP NOT NULL,
    decide_by       TIMESTAMP NOT NULL,
    references_euid TEXT NOT NULL DEFAULT '',
    payload         BLOB NOT NULL,
    created_at      TIMESTAMP NOT NULL,
    UNIQUE (seller_tin, doc_id)
);
CREATE INDEX ujpsim_documents_seller_received ON ujpsim_documents(seller_tin, received_at);
CREATE INDEX ujpsim_documents_buyer_received ON ujpsim_documents(buyer_tin, received_at);
CREATE INDEX ujpsim_documents_due ON ujpsim_documents(status, decide_by);
CREATE INDEX ujpsim_documents_created ON ujpsim_documents(created_at);

-- Status changes; id is UJP's statusHistory id, change the rest of it
-- (ujp.StatusChange as JSON). Seller and buyer are repeated for the change
-- feeds.
CREATE TABLE ujpsim_history (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    euid        TEXT NOT NULL REFERENCES ujpsim_documents(euid) ON DELETE CASCADE,
    seller_tin  TEXT NOT NULL,
    buyer_tin   TEXT NOT NULL,
    at          TIMESTAMP NOT NULL,
    change      TEXT NOT NULL
);
CREATE INDEX ujpsim_history_euid ON ujpsim_history(euid, id);
CREATE INDEX ujpsim_history_seller ON ujpsim_history(seller_tin, at);
CREATE INDEX ujpsim_history_buyer ON ujpsim_history(buyer_tin, at);

-- UJP's one request per second per user (the rateLimit fault): the earliest
-- time of the user's next call, shared by every process.
CREATE TABLE ujpsim_rate (
    eujp_id  TEXT PRIMARY KEY,
    next_at  TIMESTAMP NOT NULL
);

-- +goose Down
DROP TABLE ujpsim_rate;
DROP TABLE ujpsim_history;
DROP TABLE ujpsim_documents;
DROP TABLE ujpsim_certificates;
DROP TABLE ujpsim_companies;
DROP TABLE ujpsim_seller_faults;
DROP TABLE ujpsim_settings;
