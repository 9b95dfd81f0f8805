-- Tenancy. Every read of a tenant's rows for a request takes the
-- credential's reach in its WHERE clause: account_id, environment, and the
-- allow-list as two parameters, all_companies (TRUE: no allow-list, every
-- company of the account) and allowed (the listed company ids,
-- separated by spaces). A row of company X is in the list when removing
-- ' X ' from ' allowed ' changes it: replace() and || mean the same on
-- both engines, where arrays and IN-lists of variable length do not. The
-- zero values (FALSE and the empty string) reach nothing.

-- name: RowHome :one
-- Where a row a path names lives in the account, whatever the credential:
-- its environment and company. Read only when the scoped read found nothing,
-- to tell 404 from 403 (auth.InReach). Ids carry their table's
-- prefix, so at most one branch answers.
SELECT co.environment, co.id AS company_id FROM companies co WHERE co.id = sqlc.arg(id) AND co.account_id = sqlc.arg(account_id)
UNION ALL
SELECT environment, company_id FROM archive_exports WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id)
UNION ALL
SELECT environment, company_id FROM reconciliations WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id)
UNION ALL
SELECT environment, company_id FROM events WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id)
LIMIT 1;
