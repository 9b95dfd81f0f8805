-- +goose Up
-- Lookups that walked a whole table. A document's send reads its
-- signature, and a PDF read, a re-sign or an inbox read asks whether one
-- is still open, by the request's link: with no index on it, every look
-- read every signing request ever made (at month-end, on SQLite, a
-- hundred PDF reads held the one writer for most of a second). The expiry
-- sweep and an agent's own claims look requests up by state, whose open
-- ones are few among the signed; a storno or correction looks for the
-- others of its original.
CREATE INDEX signing_requests_link ON signing_requests(link_id, link_type, state);
CREATE INDEX signing_requests_expiry ON signing_requests(state, expires_at);
CREATE INDEX einvoices_original ON einvoices(original_id);

-- +goose Down
DROP INDEX einvoices_original;
DROP INDEX signing_requests_expiry;
DROP INDEX signing_requests_link;
