-- +goose Up
-- The inbox (issue 13): incoming e-invoices read from UJP's purchase side,
-- the company's accept/reject decisions, deadline reminders, and how far
-- UJP's purchase side has been read.

-- One row per incoming document of a company (UNIQUE (company_id, euid):
-- a document read twice, by two processes or after a crash, is recorded
-- once). payload is the seller's document JSON exactly as UJP gave it.
-- ujp_status is UJP's status code (01, 03, 04, 05, 07, 09, …) and when it
-- was reported. decision_state is the spec's decision (pending, accepted,
-- auto_accepted, rejected); decision_requested (accept, reject) is a
-- decision of ours on its way (waiting for its signature, or for UJP), with
-- signing_request_id the request it waits on. decide_by is the deadline
-- (einvoice.DecideBy of transaction_date), a date. version counts updates:
-- every change is written only over the version it was read in, so two
-- processes changing one document never lose either change.
CREATE TABLE inbox_documents (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL REFERENCES accounts(id),
    company_id         TEXT NOT NULL REFERENCES companies(id),
    environment        TEXT NOT NULL,
    euid               TEXT NOT NULL,
    kind               TEXT NOT NULL,
    original_euid      TEXT,
    document_type      TEXT NOT NULL,
    number             TEXT NOT NULL,
    issue_date         TEXT NOT NULL,
    transaction_date   TEXT NOT NULL,
    seller             TEXT NOT NULL,
    total_net          TEXT NOT NULL,
    total_vat          TEXT NOT NULL,
    total_gross        TEXT NOT NULL,
    currency           TEXT NOT NULL,
    ujp_status         TEXT NOT NULL,
    ujp_status_name    TEXT NOT NULL,
    ujp_status_at      TIMESTAMP NOT NULL,
    decision_state     TEXT NOT NULL DEFAULT 'pending',
    decision_requested TEXT NOT NULL DEFAULT '',
    decision_reason    TEXT,
    decision_comment   TEXT,
    decided_at         TIMESTAMP,
    signing_request_id TEXT,
    problems           TEXT NOT NULL DEFAULT '[]',
    decide_by          TEXT NOT NULL,
    payload            BLOB NOT NULL,
    received_at        TIMESTAMP NOT NULL,
    updated_at         TIMESTAMP NOT NULL,
    version            INTEGER NOT NULL DEFAULT 0,
    UNIQUE (company_id, euid)
);
CREATE INDEX inbox_documents_company ON inbox_documents(company_id, id);
CREATE INDEX inbox_documents_deadline ON inbox_documents(decision_state, decide_by);

-- UJP's PDF of an incoming document (base64), fetched by a signed read.
CREATE TABLE inbox_pdfs (
    document_id TEXT PRIMARY KEY REFERENCES inbox_documents(id),
    pdf         TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);

-- inbox.deadline_approaching sent: one row per document and reminder (5, 2,
-- 1 days), inserted in the event's transaction, so a reminder is sent once
-- however many processes look.
CREATE TABLE inbox_reminders (
    document_id TEXT NOT NULL REFERENCES inbox_documents(id),
    days        INTEGER NOT NULL,
    sent_at     TIMESTAMP NOT NULL,
    PRIMARY KEY (document_id, days)
);

-- How far UJP's purchase side of a company has been read (days are UJP's,
-- Europe/Skopje): polled_through is the first day whose status changes are
-- not all applied; discovered_through the last day whose received documents
-- are all stored ('' before the first complete discovery).
CREATE TABLE ujp_purchase_cursors (
    company_id         TEXT NOT NULL REFERENCES companies(id),
    environment        TEXT NOT NULL,
    polled_through     TEXT NOT NULL,
    discovered_through TEXT NOT NULL DEFAULT '',
    updated_at         TIMESTAMP NOT NULL,
    PRIMARY KEY (company_id, environment)
);

-- +goose Down
DROP TABLE ujp_purchase_cursors;
DROP TABLE inbox_reminders;
DROP TABLE inbox_pdfs;
DROP TABLE inbox_documents;
