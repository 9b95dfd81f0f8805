-- +goose Up
-- The gateway as UJP publishes it (issue 27).
--
-- ujp_waiters: the calls waiting for a turn of a UJP user (ujp_slots.key,
-- environment + X-EUJP-ID). Every call to UJP, signed or not, takes a turn:
-- ujp_slots.until is when the user's next call may start, and a turn goes
-- only to a waiter with no fresher waiter (seen_at recent) ahead of it, of a
-- higher priority, or of the same priority waiting since earlier. A waiter
-- that gave up keeps its row (and its place) with an old seen_at until it
-- asks again.
CREATE TABLE ujp_waiters (
    key      TEXT NOT NULL,
    waiter   TEXT NOT NULL,
    priority INTEGER NOT NULL,
    since    TIMESTAMPTZ NOT NULL,
    seen_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (key, waiter)
);
CREATE INDEX ujp_waiters_queue ON ujp_waiters (key, priority, since);

-- A company's problems with UJP that are not a document's: access refused
-- in UJP's portal (a missing privilege, an unknown user or certificate), as
-- a JSON array, cleared by the next call that succeeds.
ALTER TABLE companies ADD COLUMN ujp_problems TEXT NOT NULL DEFAULT '[]';

-- send_unknown_since: a send of the document got no answer (or E1023
-- without the EUID), so UJP may hold it; until UJP's records are read the
-- document is neither sent again nor failed.
ALTER TABLE einvoices ADD COLUMN send_unknown_since TIMESTAMPTZ;

-- Certificates are registered at UJP (and the simulator) out of band, never
-- by the gateway; a sandbox certificate registered without an EUJP id was
-- known to the simulator as denar-<id>, and keeps that id.
UPDATE signing_certificates SET eujp_id = 'denar-' || id WHERE eujp_id = '';
ALTER TABLE signing_certificates DROP COLUMN ujp_registered_at;

-- +goose Down
ALTER TABLE signing_certificates ADD COLUMN ujp_registered_at TIMESTAMPTZ;
ALTER TABLE einvoices DROP COLUMN send_unknown_since;
ALTER TABLE companies DROP COLUMN ujp_problems;
DROP TABLE ujp_waiters;
