-- name: CreateCompany :one
INSERT INTO companies (id, account_id, name, tax_number, vat_number, external_ref, status, signing_mode,
                       environment, address, representative_name, representative_email, created_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(name), sqlc.arg(tax_number), sqlc.arg(vat_number),
        sqlc.arg(external_ref), sqlc.arg(status), sqlc.arg(signing_mode), sqlc.arg(environment),
        sqlc.arg(address), sqlc.arg(representative_name), sqlc.arg(representative_email), sqlc.arg(created_at))
RETURNING *;

-- name: GetCompany :one
-- Unscoped: for jobs and the signing path, which start from rows already
-- scoped. Requests use GetAccountCompany.
SELECT * FROM companies WHERE id = sqlc.arg(id);

-- name: GetAccountCompany :one
SELECT * FROM companies WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id);

-- name: GetCompanyByTaxNumber :one
SELECT * FROM companies
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment) AND tax_number = sqlc.arg(tax_number)
ORDER BY payroll_employer, id LIMIT 1;

-- name: GetCompanyInReach :one
-- A company the credential reaches (account, environment, allow-list:
-- tenancy.sql says how the allow-list is given).
SELECT * FROM companies
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');

-- name: ListAccountCompanies :many
-- Newest first; after = '' starts at the newest. Within the credential's
-- reach (tenancy.sql).
SELECT * FROM companies
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND (sqlc.arg(after) = '' OR id < sqlc.arg(after))
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: ListAccountCompanyIDs :many
SELECT id FROM companies WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: UpdateCompanySettings :one
UPDATE companies SET external_ref = sqlc.arg(external_ref), signing_mode = sqlc.arg(signing_mode)
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) RETURNING *;

-- name: SetCompanyAnnualAccount :one
UPDATE companies SET annual_account_filed_for = sqlc.arg(year)
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) RETURNING *;

-- name: SetCompanyStatus :exec
UPDATE companies SET status = sqlc.arg(status) WHERE id = sqlc.arg(id);

-- name: CreateMandate :exec
INSERT INTO mandates (token_hash, company_id, account_id, created_at, expires_at)
VALUES (sqlc.arg(token_hash), sqlc.arg(company_id), sqlc.arg(account_id), sqlc.arg(created_at), sqlc.arg(expires_at));

-- name: GetMandate :one
SELECT * FROM mandates WHERE token_hash = sqlc.arg(token_hash);

-- name: UseMandate :execrows
UPDATE mandates SET used_at = sqlc.arg(used_at) WHERE token_hash = sqlc.arg(token_hash) AND used_at IS NULL;
