-- +goose Up
-- A company's documents of a UJP user in flight or waiting for their turn
-- to be signed: whether the company has any (CompanyPaced) is asked when
-- one of its documents is issued or signed, so that a company with none
-- takes a place at once and its send goes before the user's others.
CREATE INDEX einvoices_pace_company ON einvoices (pace_key, company_id, status) WHERE status IN ('awaiting_signature', 'queued', 'submitting');

-- +goose Down
DROP INDEX einvoices_pace_company;
