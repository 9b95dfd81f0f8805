-- +goose Up
-- What a signer is shown before signing (company, document, buyer or
-- seller, total, what the signature does), as JSON, written where the
-- request is created; '' for requests made before.
ALTER TABLE signing_requests ADD COLUMN summary TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE signing_requests DROP COLUMN summary;
