-- +goose Up
-- Month-end at UJP's pace: a UJP user's documents are signed just in time
-- for their send turn, and the companies sharing the user take turns.
--
-- einvoices.pace_key: the UJP user whose budget (one request a second)
-- sends the document (environment/EUJP id of its signer; '' for documents
-- from before, which the per-document submit job sends).
-- einvoices.sign_turn_since: set while the document waits, in
-- awaiting_signature with no signing request, for its turn to be signed.
-- einvoices.send_after: a signed (queued) document the user's pacer may
-- send from then on; NULL while anything else is in charge of it.
ALTER TABLE einvoices ADD COLUMN pace_key TEXT NOT NULL DEFAULT '';
ALTER TABLE einvoices ADD COLUMN sign_turn_since TIMESTAMP;
ALTER TABLE einvoices ADD COLUMN send_after TIMESTAMP;
CREATE INDEX einvoices_pace_wait ON einvoices (pace_key, company_id, created_at, id) WHERE sign_turn_since IS NOT NULL;
CREATE INDEX einvoices_pace_ready ON einvoices (pace_key, send_after) WHERE send_after IS NOT NULL;
CREATE INDEX einvoices_pace_flight ON einvoices (pace_key, status) WHERE status IN ('awaiting_signature', 'queued', 'submitting');

-- ujp_pacers: one row per UJP user with documents to pace; active while a
-- pacer job (einvoice.pace) is scheduled or running for it. Waking a pacer
-- and a pacer going idle both lock the row, so no wake is lost between them.
CREATE TABLE ujp_pacers (
    key     TEXT PRIMARY KEY,
    active  BOOLEAN NOT NULL,
    seen_at TIMESTAMP NOT NULL
);

-- ujp_pace_companies: when a company of a UJP user last had a document's
-- signing request issued (issued_at) and a document sent (sent_at): the
-- companies sharing the user take turns in that order.
CREATE TABLE ujp_pace_companies (
    key        TEXT NOT NULL,
    company_id TEXT NOT NULL,
    issued_at  TIMESTAMP NOT NULL,
    sent_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (key, company_id)
);

-- Delivered documents whose PDF is read from UJP once their user's sends
-- are done: a PDF read never takes a turn a send is waiting for.
CREATE TABLE einvoice_pdf_wanted (
    einvoice_id TEXT PRIMARY KEY,
    pace_key    TEXT NOT NULL,
    at          TIMESTAMP NOT NULL
);
CREATE INDEX einvoice_pdf_wanted_key ON einvoice_pdf_wanted (pace_key, at);

-- Turns by group (a company) within a priority: the group served least
-- recently goes first (ujp_turn_groups.served_at), then the longest waiting.
ALTER TABLE ujp_waiters ADD COLUMN grp TEXT NOT NULL DEFAULT '';
CREATE TABLE ujp_turn_groups (
    key       TEXT NOT NULL,
    grp       TEXT NOT NULL,
    served_at TIMESTAMP NOT NULL,
    PRIMARY KEY (key, grp)
);

-- +goose Down
DROP TABLE ujp_turn_groups;
ALTER TABLE ujp_waiters DROP COLUMN grp;
DROP TABLE einvoice_pdf_wanted;
DROP TABLE ujp_pace_companies;
DROP TABLE ujp_pacers;
DROP INDEX einvoices_pace_flight;
DROP INDEX einvoices_pace_ready;
DROP INDEX einvoices_pace_wait;
ALTER TABLE einvoices DROP COLUMN send_after;
ALTER TABLE einvoices DROP COLUMN sign_turn_since;
ALTER TABLE einvoices DROP COLUMN pace_key;
