-- name: ListPlans :many
SELECT * FROM plans ORDER BY included_documents, code;

-- name: GetPlan :one
SELECT * FROM plans WHERE code = sqlc.arg(code);

-- name: PutPlan :exec
INSERT INTO plans (code, included_documents, extra_document_price, currency, production)
VALUES (sqlc.arg(code), sqlc.arg(included_documents), sqlc.arg(extra_document_price), sqlc.arg(currency), sqlc.arg(production))
ON CONFLICT (code) DO UPDATE SET included_documents = excluded.included_documents,
    extra_document_price = excluded.extra_document_price, currency = excluded.currency, production = excluded.production;

-- name: SyncPlanAccounts :exec
-- Accounts on a plan follow its production flag.
UPDATE accounts SET production_enabled = sqlc.arg(production) WHERE plan = sqlc.arg(code);

-- name: SetAccountPlan :execrows
UPDATE accounts SET plan = sqlc.arg(plan), production_enabled = sqlc.arg(production_enabled) WHERE id = sqlc.arg(id);

-- name: GetAccountWithPlan :one
-- The account with its plan; an account whose plan row is missing has no
-- production and no allowance.
SELECT a.id, a.name, a.plan, a.created_at,
       COALESCE(p.production, FALSE) AS production,
       CAST(COALESCE(p.included_documents, 0) AS INTEGER) AS included_documents,
       CAST(COALESCE(p.extra_document_price, '0.00') AS TEXT) AS extra_document_price,
       CAST(COALESCE(p.currency, 'MKD') AS TEXT) AS currency
FROM accounts a LEFT JOIN plans p ON p.code = a.plan
WHERE a.id = sqlc.arg(id);

-- name: CountUsageDocument :execrows
-- Counts a document once: a second insert of the same document is a no-op.
INSERT INTO usage_documents (document_id, account_id, company_id, environment, direction, period, day, signing_request_id, at)
VALUES (sqlc.arg(document_id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(direction),
        sqlc.arg(period), sqlc.arg(day), sqlc.narg(signing_request_id), sqlc.arg(at))
ON CONFLICT (document_id) DO NOTHING;

-- name: AddUsageCount :exec
INSERT INTO usage_counters (account_id, environment, period, company_id, direction, slot, n)
VALUES (sqlc.arg(account_id), sqlc.arg(environment), sqlc.arg(period), sqlc.arg(company_id), sqlc.arg(direction), sqlc.arg(slot), 1)
ON CONFLICT (account_id, environment, period, company_id, direction, slot) DO UPDATE SET n = usage_counters.n + 1;

-- name: UsageByCompany :many
-- Counted documents of the companies within the credential's reach
-- (tenancy.sql).
SELECT company_id, direction, CAST(SUM(n) AS BIGINT) AS n FROM usage_counters
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment) AND period = sqlc.arg(period)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
GROUP BY company_id, direction
ORDER BY company_id, direction;

-- name: UsageTotal :one
-- Counted documents of the whole account (what it is billed for, whatever
-- the credential reaches).
SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) AS n FROM usage_counters
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment) AND period = sqlc.arg(period);

-- name: LedgerByCompany :many
-- The same figures counted from the ledger itself (consistency checks).
SELECT company_id, direction, COUNT(*) AS n FROM usage_documents
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment) AND period = sqlc.arg(period)
GROUP BY company_id, direction
ORDER BY company_id, direction;

