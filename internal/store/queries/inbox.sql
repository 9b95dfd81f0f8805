-- The inbox (issue 13): incoming e-invoices, their decisions, reminders and
-- the purchase-side cursor. Every write that must not happen twice is one
-- conditional statement: the unique (company_id, euid) of a document, an
-- update over the version it was read in, a reminder row per (document,
-- days), a cursor moved only from the day it was read at.

-- name: InsertInboxDocument :one
-- No row (sql.ErrNoRows) means the company already has this EUID.
INSERT INTO inbox_documents (id, account_id, company_id, environment, euid, kind, original_euid, document_type, number,
    issue_date, transaction_date, seller, total_net, total_vat, total_gross, currency, ujp_status, ujp_status_name,
    ujp_status_at, decision_state, decided_at, problems, decide_by, payload, received_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(euid), sqlc.arg(kind),
    sqlc.narg(original_euid), sqlc.arg(document_type), sqlc.arg(number), sqlc.arg(issue_date), sqlc.arg(transaction_date),
    sqlc.arg(seller), sqlc.arg(total_net), sqlc.arg(total_vat), sqlc.arg(total_gross), sqlc.arg(currency),
    sqlc.arg(ujp_status), sqlc.arg(ujp_status_name), sqlc.arg(ujp_status_at), sqlc.arg(decision_state),
    sqlc.narg(decided_at), sqlc.arg(problems), sqlc.arg(decide_by), sqlc.arg(payload), sqlc.arg(received_at),
    sqlc.arg(received_at))
ON CONFLICT (company_id, euid) DO NOTHING
RETURNING *;

-- name: GetInboxDocument :one
SELECT * FROM inbox_documents WHERE id = sqlc.arg(id);

-- name: GetInboxDocumentInReach :one
-- An inbox document of company_id within the credential's reach
-- (tenancy.sql).
SELECT * FROM inbox_documents
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND company_id = sqlc.arg(company_id)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');

-- name: GetInboxDocumentByEUID :one
SELECT * FROM inbox_documents WHERE company_id = sqlc.arg(company_id) AND euid = sqlc.arg(euid);

-- name: ListInboxDocuments :many
-- Newest first; after_id is the last id of the previous page ('' for the
-- first). deadline_before (a date) keeps documents whose decide_by is
-- before it.
SELECT * FROM inbox_documents
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment) AND company_id = sqlc.arg(company_id)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND (CAST(sqlc.arg(after_id) AS TEXT) = '' OR id < sqlc.arg(after_id))
  AND (CAST(sqlc.narg(decision_state) AS TEXT) IS NULL OR decision_state = sqlc.narg(decision_state))
  AND (CAST(sqlc.narg(deadline_before) AS TEXT) IS NULL OR decide_by < sqlc.narg(deadline_before))
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: UpdateInboxDocument :execrows
-- Writes every changing column over the version the caller read; 0 rows
-- means another transaction changed the document first.
UPDATE inbox_documents
SET ujp_status = sqlc.arg(ujp_status), ujp_status_name = sqlc.arg(ujp_status_name), ujp_status_at = sqlc.arg(ujp_status_at),
    decision_state = sqlc.arg(decision_state), decision_requested = sqlc.arg(decision_requested),
    decision_reason = sqlc.narg(decision_reason), decision_comment = sqlc.narg(decision_comment),
    decided_at = sqlc.narg(decided_at), signing_request_id = sqlc.narg(signing_request_id),
    problems = sqlc.arg(problems), updated_at = sqlc.arg(updated_at), version = version + 1
WHERE id = sqlc.arg(id) AND version = sqlc.arg(version);

-- name: PutInboxPDF :exec
INSERT INTO inbox_pdfs (document_id, pdf, created_at) VALUES (sqlc.arg(document_id), sqlc.arg(pdf), sqlc.arg(created_at))
ON CONFLICT (document_id) DO UPDATE SET pdf = excluded.pdf, created_at = excluded.created_at;

-- name: GetInboxPDF :one
SELECT * FROM inbox_pdfs WHERE document_id = sqlc.arg(document_id);

-- name: InsertInboxReminder :execrows
-- 1 row: this reminder is now recorded as sent (write its event in the same
-- transaction); 0: it was sent already.
INSERT INTO inbox_reminders (document_id, days, sent_at) VALUES (sqlc.arg(document_id), sqlc.arg(days), sqlc.arg(sent_at))
ON CONFLICT (document_id, days) DO NOTHING;

-- name: DueInboxReminders :many
-- Pending documents UJP holds as sent (01) whose deadline is between two
-- dates and that have not had the reminder of days yet.
SELECT d.* FROM inbox_documents d
WHERE d.decision_state = 'pending' AND d.ujp_status = '01'
  AND d.decide_by >= sqlc.arg(from_date) AND d.decide_by <= sqlc.arg(to_date)
  AND NOT EXISTS (SELECT 1 FROM inbox_reminders r WHERE r.document_id = d.id AND r.days = sqlc.arg(days))
ORDER BY d.id LIMIT 200;

-- name: DueInboxAutoAccepts :many
-- Pending documents UJP holds as sent (01) whose deadline is before today
-- (a document its seller voided or corrected is not auto-accepted).
SELECT * FROM inbox_documents
WHERE decision_state = 'pending' AND ujp_status = '01' AND decide_by < sqlc.arg(today)
ORDER BY decide_by, id LIMIT 200;

-- name: CompaniesForInboxSync :many
-- Active client companies with a signer ready: a valid certificate whose
-- agent is not revoked and was seen since seen_after.
SELECT c.id FROM companies c
WHERE c.status = 'active' AND c.payroll_employer = FALSE
  AND EXISTS (SELECT 1 FROM signing_certificates s JOIN signing_agents a ON a.id = s.agent_id
              WHERE s.company_id = c.id AND s.not_before <= sqlc.arg(now) AND s.not_after > sqlc.arg(now)
                AND a.revoked_at IS NULL AND a.last_seen_at >= sqlc.arg(seen_after))
ORDER BY c.id;

-- name: OpenInboxSyncRequest :one
-- A signed read of the company's purchase side still waiting for its signer.
SELECT id FROM signing_requests
WHERE company_id = sqlc.arg(company_id)
  AND link_type IN ('ujp_purchase_ids', 'ujp_purchase_payloads', 'ujp_purchase_changes')
  AND state IN ('pending', 'claimed') AND expires_at > sqlc.arg(now)
ORDER BY id LIMIT 1;

-- name: GetPurchaseCursor :one
SELECT * FROM ujp_purchase_cursors WHERE company_id = sqlc.arg(company_id) AND environment = sqlc.arg(environment);

-- name: InitPurchaseCursor :exec
INSERT INTO ujp_purchase_cursors (company_id, environment, polled_through, updated_at)
VALUES (sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(polled_through), sqlc.arg(updated_at))
ON CONFLICT (company_id, environment) DO NOTHING;

-- name: SetPurchaseDiscovered :exec
-- Records that every document received up to through is stored; it only
-- moves forward.
UPDATE ujp_purchase_cursors SET discovered_through = sqlc.arg(through), updated_at = sqlc.arg(updated_at)
WHERE company_id = sqlc.arg(company_id) AND environment = sqlc.arg(environment)
  AND discovered_through < sqlc.arg(through);

-- name: AdvancePurchaseCursor :execrows
-- Day from is done: the cursor moves to next, only from from (a day is
-- never skipped, whatever order the reads finish in).
UPDATE ujp_purchase_cursors SET polled_through = sqlc.arg(next), updated_at = sqlc.arg(updated_at)
WHERE company_id = sqlc.arg(company_id) AND environment = sqlc.arg(environment)
  AND polled_through = sqlc.arg(from_day);

-- name: CountInboxDocuments :one
SELECT COUNT(*) FROM inbox_documents WHERE company_id = sqlc.arg(company_id);
