-- name: CreateArchiveExport :one
INSERT INTO archive_exports (id, account_id, company_id, environment, from_day, to_day, as_of, state, created_at, expires_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(from_day), sqlc.arg(to_day),
        sqlc.arg(as_of), 'pending', sqlc.arg(created_at), sqlc.arg(expires_at))
RETURNING *;

-- name: GetArchiveExport :one
SELECT * FROM archive_exports WHERE id = sqlc.arg(id);

-- name: GetArchiveExportInReach :one
-- An export within the credential's reach (tenancy.sql).
SELECT * FROM archive_exports
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');

-- name: StartArchiveBuild :execrows
-- An attempt takes over the build: its blob replaces whatever an earlier
-- attempt was writing.
UPDATE archive_exports SET build_key = sqlc.arg(build_key)
WHERE id = sqlc.arg(id) AND state = 'pending' AND build_key = sqlc.arg(previous_key);

-- name: FinishArchiveExport :execrows
-- Only the attempt that holds the build finishes it.
UPDATE archive_exports SET state = 'ready', blob_key = build_key, build_key = '', sent = sqlc.arg(sent), received = sqlc.arg(received),
    files = sqlc.arg(files), size_bytes = sqlc.arg(size_bytes), sha256 = sqlc.arg(sha256),
    completed_at = sqlc.arg(completed_at), expires_at = sqlc.arg(expires_at)
WHERE id = sqlc.arg(id) AND state = 'pending' AND build_key = sqlc.arg(build_key);

-- name: FailArchiveExport :execrows
UPDATE archive_exports SET state = 'failed', build_key = '', failure_code = sqlc.arg(failure_code), failure_message = sqlc.arg(failure_message),
    completed_at = sqlc.arg(completed_at), expires_at = sqlc.arg(expires_at)
WHERE id = sqlc.arg(id) AND state = 'pending';

-- name: ExpiredArchiveExports :many
SELECT * FROM archive_exports WHERE expires_at <= sqlc.arg(now) ORDER BY expires_at, id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: DeleteArchiveExport :execrows
DELETE FROM archive_exports WHERE id = sqlc.arg(id);

-- name: ArchiveDocuments :many
-- A page of the company's counted documents in [from_day, to_day] recorded
-- by as_of, in (day, document_id) order after the given key.
SELECT * FROM usage_documents
WHERE company_id = sqlc.arg(company_id) AND day >= sqlc.arg(from_day) AND day <= sqlc.arg(to_day) AND at <= sqlc.arg(as_of)
  AND (day > sqlc.arg(after_day) OR (day = sqlc.arg(after_day) AND document_id > sqlc.arg(after_id)))
ORDER BY day, document_id
LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: EInvoiceHistoryAsOf :many
SELECT * FROM einvoice_status_history WHERE einvoice_id = sqlc.arg(einvoice_id) AND at <= sqlc.arg(as_of) ORDER BY id;
