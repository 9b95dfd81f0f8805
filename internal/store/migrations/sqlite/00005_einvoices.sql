-- +goose Up
-- Issued e-invoices (issue 7). document is the UJP document JSON as built
-- (and, once signed, as signed); ujp_doc_id is its header.docId, fixed at
-- creation so every submission attempt carries the same one and UJP refuses
-- a duplicate. fingerprint is the canonical request body, compared when a
-- clientReference is reused. original_id links a storno or correction to
-- the document it supersedes; kind is invoice, storno or correction.
CREATE TABLE einvoices (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts(id),
    company_id       TEXT NOT NULL REFERENCES companies(id),
    environment      TEXT NOT NULL,
    kind             TEXT NOT NULL,
    status           TEXT NOT NULL,
    document_type    TEXT NOT NULL,
    number           TEXT NOT NULL,
    issue_date       TEXT NOT NULL,
    document         TEXT NOT NULL,
    ujp_doc_id       TEXT NOT NULL UNIQUE,
    euid             TEXT,
    qr_link          TEXT,
    total_net        TEXT NOT NULL,
    total_vat        TEXT NOT NULL,
    total_gross      TEXT NOT NULL,
    currency         TEXT NOT NULL,
    problems         TEXT NOT NULL DEFAULT '[]',
    client_reference TEXT,
    fingerprint      TEXT NOT NULL,
    original_id      TEXT REFERENCES einvoices(id),
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX einvoices_client_reference ON einvoices(company_id, client_reference);
CREATE INDEX einvoices_company ON einvoices(company_id, id);
CREATE INDEX einvoices_euid ON einvoices(euid);
CREATE INDEX einvoices_status ON einvoices(status, id);

-- Every status move, with its cause (signed, submitted, ujp_outage,
-- ujp_rejected, ujp_status, storno_accepted, …) and UJP's status or error
-- code when UJP caused it.
CREATE TABLE einvoice_status_history (
    id           TEXT PRIMARY KEY,
    einvoice_id  TEXT NOT NULL REFERENCES einvoices(id),
    from_status  TEXT,
    to_status    TEXT NOT NULL,
    cause        TEXT NOT NULL,
    ujp_code     TEXT,
    at           TIMESTAMP NOT NULL
);
CREATE INDEX einvoice_status_history_einvoice ON einvoice_status_history(einvoice_id, id);

-- Events (GET /v1/events; webhooks later read the same table). Written in
-- the transaction of the move they describe.
CREATE TABLE events (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts(id),
    company_id  TEXT NOT NULL REFERENCES companies(id),
    environment TEXT NOT NULL,
    type        TEXT NOT NULL,
    object_id   TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX events_account ON events(account_id, id);
CREATE INDEX events_object ON events(object_id, id);

-- +goose Down
DROP TABLE events;
DROP TABLE einvoice_status_history;
DROP TABLE einvoices;
