-- +goose Up
-- The e-invoice submission pipeline (issue 7).
--
-- ujp_slots: one row per UJP signer (environment + X-EUJP-ID). A submission
-- holds the slot while its call is in flight and leaves until = the earliest
-- time of the signer's next call, so across every denar process sharing the
-- store at most one call per signer is in flight and UJP's 1 request/second
-- per user is respected. A crashed holder's slot frees itself when until
-- passes.
CREATE TABLE ujp_slots (
    key    TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TIMESTAMPTZ NOT NULL
);

-- The signer's UJP user (X-EUJP-ID) comes with the certificate; in the
-- sandbox the service registers the certificate at the simulator once
-- (ujp_registered_at), on the real UJP that is done in its portal.
ALTER TABLE signing_certificates ADD COLUMN eujp_id TEXT NOT NULL DEFAULT '';
ALTER TABLE signing_certificates ADD COLUMN ujp_registered_at TIMESTAMPTZ;

-- held_since starts the legal window of a held document; submit_attempts
-- counts calls to UJP's receiver; delivered_at is when UJP gave the EUID.
ALTER TABLE einvoices ADD COLUMN held_since TIMESTAMPTZ;
ALTER TABLE einvoices ADD COLUMN submit_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE einvoices ADD COLUMN delivered_at TIMESTAMPTZ;
ALTER TABLE einvoices ADD COLUMN settled_at TIMESTAMPTZ;

-- UJP's PDF rendering (base64), fetched once a document is delivered.
CREATE TABLE einvoice_pdfs (
    einvoice_id TEXT PRIMARY KEY REFERENCES einvoices(id),
    pdf         TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);

-- How far the change feeds of a company were read: every day before
-- polled_through (YYYY-MM-DD, UJP's calendar) is done.
CREATE TABLE ujp_change_cursors (
    company_id     TEXT NOT NULL REFERENCES companies(id),
    environment    TEXT NOT NULL,
    polled_through TEXT NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (company_id, environment)
);

-- +goose Down
DROP TABLE ujp_change_cursors;
DROP TABLE einvoice_pdfs;
ALTER TABLE einvoices DROP COLUMN settled_at;
ALTER TABLE einvoices DROP COLUMN delivered_at;
ALTER TABLE einvoices DROP COLUMN submit_attempts;
ALTER TABLE einvoices DROP COLUMN held_since;
ALTER TABLE signing_certificates DROP COLUMN ujp_registered_at;
ALTER TABLE signing_certificates DROP COLUMN eujp_id;
DROP TABLE ujp_slots;
