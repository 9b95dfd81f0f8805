-- +goose Up
-- Daily reconciliation of a company's records with UJP's (docs/reconciliation.md).
-- One row per company, environment and day (UNIQUE: however many processes
-- schedule or ask for a day, it is reconciled by one row), moved by its
-- steps: state running → completed; step is the read the run waits for,
-- seq counts the reads asked for, and each read's signing request names
-- its seq (link id "<id>/<seq>"), so an answer is applied once, only while
-- the row is still at that read (a conditional update on seq). work is the
-- run's working set between reads (JSON), counts what it found (JSON:
-- sales and purchase figures), problems what it could not settle. runs
-- counts the runs of the day (one more each time a completed day is asked
-- for again).
CREATE TABLE reconciliations (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    company_id    TEXT NOT NULL REFERENCES companies(id),
    environment   TEXT NOT NULL,
    day           TEXT NOT NULL,
    state         TEXT NOT NULL,
    step          TEXT NOT NULL,
    seq           INTEGER NOT NULL DEFAULT 0,
    runs          INTEGER NOT NULL DEFAULT 1,
    work          TEXT NOT NULL DEFAULT '{}',
    counts        TEXT NOT NULL DEFAULT '{}',
    problems      TEXT NOT NULL DEFAULT '[]',
    started_at    TIMESTAMP NOT NULL,
    completed_at  TIMESTAMP,
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL,
    UNIQUE (company_id, environment, day)
);
CREATE INDEX reconciliations_account ON reconciliations(account_id, id);
CREATE INDEX reconciliations_state ON reconciliations(state, updated_at);

-- The documents of a company UJP gave an EUID on a day: what the
-- reconciliation of that day looks for at UJP.
CREATE INDEX einvoices_company_delivered ON einvoices(company_id, delivered_at);

-- +goose Down
DROP INDEX einvoices_company_delivered;
DROP TABLE reconciliations;
