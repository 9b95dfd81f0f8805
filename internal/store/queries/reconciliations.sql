-- name: InsertReconciliation :execrows
-- A day of a company to reconcile, unless it is there already (whoever
-- asked first: the daily job or a caller, in this process or another).
INSERT INTO reconciliations (id, account_id, company_id, environment, day, state, step, seq, started_at, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(day), 'running',
        sqlc.arg(step), 0, sqlc.arg(now), sqlc.arg(now), sqlc.arg(now))
ON CONFLICT (company_id, environment, day) DO NOTHING;

-- name: GetReconciliation :one
SELECT * FROM reconciliations WHERE id = sqlc.arg(id);

-- name: GetReconciliationInReach :one
-- A reconciliation within the credential's reach (tenancy.sql).
SELECT * FROM reconciliations
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');

-- name: GetReconciliationByDay :one
SELECT * FROM reconciliations
WHERE company_id = sqlc.arg(company_id) AND environment = sqlc.arg(environment) AND day = sqlc.arg(day);

-- name: ListReconciliations :many
-- Newest first; after_id is the last id of the previous page ('' for the
-- first). company_id and day filter only when given.
SELECT * FROM reconciliations
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND (CAST(sqlc.arg(after_id) AS TEXT) = '' OR id < sqlc.arg(after_id))
  AND (CAST(sqlc.narg(company_id) AS TEXT) IS NULL OR company_id = sqlc.narg(company_id))
  AND (CAST(sqlc.narg(day) AS TEXT) IS NULL OR day = sqlc.narg(day))
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: AdvanceReconciliation :execrows
-- A run moves to its next read (seq + 1), only from the read it was at:
-- an answer applied twice, or late, changes nothing.
UPDATE reconciliations SET step = sqlc.arg(step), seq = seq + 1, work = sqlc.arg(work), counts = sqlc.arg(counts),
       problems = sqlc.arg(problems), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND seq = sqlc.arg(from_seq) AND state = 'running';

-- name: CompleteReconciliation :execrows
UPDATE reconciliations SET state = 'completed', step = 'done', seq = seq + 1, work = '{}', counts = sqlc.arg(counts),
       problems = sqlc.arg(problems), completed_at = sqlc.arg(completed_at), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND seq = sqlc.arg(from_seq) AND state = 'running';

-- name: RestartReconciliation :execrows
-- A completed day asked for again: a new run of the same row.
UPDATE reconciliations SET state = 'running', step = sqlc.arg(step), seq = seq + 1, runs = runs + 1, work = '{}', counts = '{}',
       problems = '[]', started_at = sqlc.arg(now), completed_at = NULL, updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND state = 'completed';

-- name: TouchReconciliation :exec
UPDATE reconciliations SET updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id) AND state = 'running';

-- name: QuietReconciliations :many
-- Runs that have not moved since before: the daily job looks at each.
SELECT * FROM reconciliations WHERE state = 'running' AND updated_at < sqlc.arg(before)
ORDER BY updated_at LIMIT 200;

-- name: CompanyReconciliationDays :many
-- The days of a company reconciled or being reconciled, from a day on.
SELECT day, state FROM reconciliations
WHERE company_id = sqlc.arg(company_id) AND environment = sqlc.arg(environment) AND day >= sqlc.arg(from_day)
ORDER BY day;

-- name: GetEInvoiceByDocID :one
SELECT * FROM einvoices WHERE company_id = sqlc.arg(company_id) AND ujp_doc_id = sqlc.arg(ujp_doc_id);

-- name: EInvoicesWithoutEUID :many
-- A company's documents of a number and date that UJP may hold without our
-- knowing (queued, submitting, held, failed, no EUID): what a document UJP
-- lists is matched against when its payload cannot be read.
SELECT * FROM einvoices
WHERE company_id = sqlc.arg(company_id) AND number = sqlc.arg(number) AND issue_date = sqlc.arg(issue_date)
  AND euid IS NULL AND status IN ('queued', 'submitting', 'held', 'failed')
ORDER BY id LIMIT 10;

-- name: EInvoicesDeliveredBetween :many
-- A company's own documents (not external ones) UJP gave an EUID in
-- [from_at, until_at).
SELECT id, euid FROM einvoices
WHERE company_id = sqlc.arg(company_id) AND delivered_at >= sqlc.arg(from_at) AND delivered_at < sqlc.arg(until_at)
  AND euid IS NOT NULL AND kind <> 'external'
ORDER BY id;

-- name: InsertExternalEInvoice :execrows
-- A document UJP holds that the service never issued. ujp_doc_id is
-- 'ujp:' + its EUID, unique like every docId: imported once, however many
-- runs or processes find it.
INSERT INTO einvoices (id, account_id, company_id, environment, kind, status, document_type, number, issue_date,
                       document, ujp_doc_id, euid, total_net, total_vat, total_gross, currency, problems,
                       fingerprint, delivered_at, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), 'external',
        sqlc.arg(status), sqlc.arg(document_type), sqlc.arg(number), sqlc.arg(issue_date), sqlc.arg(document),
        sqlc.arg(ujp_doc_id), sqlc.arg(euid), sqlc.arg(total_net), sqlc.arg(total_vat), sqlc.arg(total_gross),
        sqlc.arg(currency), '[]', '', sqlc.arg(delivered_at), sqlc.arg(created_at), sqlc.arg(created_at))
ON CONFLICT (ujp_doc_id) DO NOTHING;
