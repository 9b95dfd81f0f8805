-- name: CreateAccount :one
INSERT INTO accounts (id, name, plan, production_enabled, created_at)
VALUES (sqlc.arg(id), sqlc.arg(name), sqlc.arg(plan), sqlc.arg(production_enabled), sqlc.arg(created_at))
RETURNING *;

-- name: GetAccount :one
SELECT * FROM accounts WHERE id = sqlc.arg(id);

-- name: CountAccounts :one
SELECT COUNT(*) FROM accounts;

-- name: ListAccounts :many
SELECT * FROM accounts ORDER BY id;

-- name: CreateCompanyRecord :one
-- An employer company of the payroll service.
INSERT INTO companies (id, account_id, name, tax_number, payroll_employer, created_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(name), sqlc.arg(tax_number), TRUE, sqlc.arg(created_at))
RETURNING *;

-- name: ListEmployerIDs :many
SELECT id FROM companies WHERE account_id = sqlc.arg(account_id) AND payroll_employer
ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: GetEmployer :one
SELECT id FROM companies WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND payroll_employer;

-- name: ListCompanies :many
-- Newest first; after = '' starts at the newest.
SELECT * FROM companies
WHERE account_id = sqlc.arg(account_id) AND (sqlc.arg(after) = '' OR id < sqlc.arg(after))
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: ClaimSetting :execrows
-- Inserts a setting unless it exists; 1 row means this caller set it first.
INSERT INTO instance_settings (name, value, updated_at) VALUES (sqlc.arg(name), sqlc.arg(value), sqlc.arg(updated_at))
ON CONFLICT (name) DO NOTHING;
