-- name: GetUJPCodeLists :one
SELECT * FROM ujp_codelists WHERE environment = sqlc.arg(environment);

-- name: GetUJPCodeListsState :one
-- The row without the lists: what a process looks at to know whether its
-- copy is current.
SELECT environment, digests, version, fetched_at, changed_at FROM ujp_codelists WHERE environment = sqlc.arg(environment);

-- name: InsertUJPCodeLists :execrows
-- The first lists of an environment; 0 rows when another process recorded
-- them first.
INSERT INTO ujp_codelists (environment, lists, digests, version, fetched_at, changed_at)
VALUES (sqlc.arg(environment), sqlc.arg(lists), sqlc.arg(digests), 1, sqlc.arg(fetched_at), sqlc.arg(fetched_at))
ON CONFLICT (environment) DO NOTHING;

-- name: ChangeUJPCodeLists :execrows
-- New lists, recorded by the one process that still saw version: 0 rows
-- when another recorded this change (or a later one) first.
UPDATE ujp_codelists SET lists = sqlc.arg(lists), digests = sqlc.arg(digests), version = version + 1,
    fetched_at = sqlc.arg(fetched_at), changed_at = sqlc.arg(fetched_at)
WHERE environment = sqlc.arg(environment) AND version = sqlc.arg(version);

-- name: TouchUJPCodeLists :exec
-- The same lists read again.
UPDATE ujp_codelists SET fetched_at = sqlc.arg(fetched_at)
WHERE environment = sqlc.arg(environment) AND fetched_at < sqlc.arg(fetched_at);

-- name: CompaniesOfEnvironment :many
-- The e-invoicing companies of an environment, by account: who hears of a
-- change of UJP's code lists.
SELECT id, account_id FROM companies
WHERE environment = sqlc.arg(environment) AND payroll_employer = FALSE
ORDER BY account_id, id;

-- name: InsertUJPCheck :exec
INSERT INTO ujp_checks (id, environment, company_id, ok, lines, created_at)
VALUES (sqlc.arg(id), sqlc.arg(environment), sqlc.arg(company_id), sqlc.arg(ok), sqlc.arg(lines), sqlc.arg(created_at));

-- name: LastUJPCheck :one
-- The last check of a company ('' for the checks made without one) in an
-- environment.
SELECT * FROM ujp_checks WHERE company_id = sqlc.arg(company_id) AND environment = sqlc.arg(environment)
ORDER BY created_at DESC, id DESC LIMIT 1;

-- name: ListUJPSlots :many
-- The UJP users of an environment (keys "env/EUJP-ID") and when the next
-- call of each may start.
SELECT key, until FROM ujp_slots WHERE key LIKE sqlc.arg(prefix) ORDER BY key;

-- name: ListUJPWaitersLike :many
-- The calls waiting for a turn of the users of an environment that still
-- wait (seen after fresh_after).
SELECT key, priority, since FROM ujp_waiters
WHERE key LIKE sqlc.arg(prefix) AND seen_at > sqlc.arg(fresh_after)
ORDER BY key, priority DESC, since;
