-- name: CreateEInvoice :one
-- signing_request_id names the request created in the same transaction
-- for the document's signature (NULL when there is none).
INSERT INTO einvoices (id, account_id, company_id, environment, kind, status, document_type, number, issue_date,
                       document, ujp_doc_id, total_net, total_vat, total_gross, currency, problems,
                       client_reference, fingerprint, original_id, signing_request_id, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(kind),
        sqlc.arg(status), sqlc.arg(document_type), sqlc.arg(number), sqlc.arg(issue_date), sqlc.arg(document),
        sqlc.arg(ujp_doc_id), sqlc.arg(total_net), sqlc.arg(total_vat), sqlc.arg(total_gross), sqlc.arg(currency),
        sqlc.arg(problems), sqlc.narg(client_reference), sqlc.arg(fingerprint), sqlc.narg(original_id),
        sqlc.narg(signing_request_id), sqlc.arg(created_at), sqlc.arg(updated_at))
RETURNING *;

-- name: InsertEInvoice :exec
-- CreateEInvoice for a caller that holds every value of the row (the
-- columns it does not name start at their defaults) and needs none back.
INSERT INTO einvoices (id, account_id, company_id, environment, kind, status, document_type, number, issue_date,
                       document, ujp_doc_id, total_net, total_vat, total_gross, currency, problems,
                       client_reference, fingerprint, original_id, signing_request_id, created_at, updated_at,
                       pace_key, sign_turn_since)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(kind),
        sqlc.arg(status), sqlc.arg(document_type), sqlc.arg(number), sqlc.arg(issue_date), sqlc.arg(document),
        sqlc.arg(ujp_doc_id), sqlc.arg(total_net), sqlc.arg(total_vat), sqlc.arg(total_gross), sqlc.arg(currency),
        sqlc.arg(problems), sqlc.narg(client_reference), sqlc.arg(fingerprint), sqlc.narg(original_id),
        sqlc.narg(signing_request_id), sqlc.arg(created_at), sqlc.arg(updated_at),
        sqlc.arg(pace_key), sqlc.narg(sign_turn_since));

-- name: IssueEInvoiceRows :many
-- PostgreSQL only (SQLite has no INSERT inside WITH): a new e-invoice's
-- signing request, the e-invoice, its first history row and its event in
-- one statement — one round trip instead of five. The rows are the ones
-- InsertSigningRequest, InsertEInvoice, AddEInvoiceStatus and CreateEvent
-- write; the foreign keys are checked at the end of the statement. It
-- answers with what ListFanOutEndpoints reads, the endpoints the event may
-- go to (PostgreSQL runs every data-modifying WITH once, whether or not
-- the query reads it). The request's RETURNING is the account's wake-up
-- on commit, as store.Tx.Notify(ctx, "signing_requests", account) sends it
-- (channel denar_signing_requests, the account id): the agents' sockets
-- look at once.
WITH sr AS (
  INSERT INTO signing_requests (id, account_id, company_id, certificate_id, purpose, state, protected_header, payload,
                                link_type, link_id, expires_at, created_at, updated_at, summary)
  VALUES (sqlc.arg(sr_id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(sr_certificate_id), sqlc.arg(sr_purpose),
          'pending', sqlc.arg(sr_protected_header), sqlc.arg(sr_payload), sqlc.arg(sr_link_type), sqlc.arg(id),
          sqlc.arg(sr_expires_at), sqlc.arg(created_at), sqlc.arg(created_at), sqlc.arg(sr_summary))
  RETURNING pg_notify('denar_signing_requests', account_id)
), inv AS (
  INSERT INTO einvoices (id, account_id, company_id, environment, kind, status, document_type, number, issue_date,
                         document, ujp_doc_id, total_net, total_vat, total_gross, currency, problems,
                         client_reference, fingerprint, original_id, signing_request_id, created_at, updated_at, pace_key)
  VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(kind),
          sqlc.arg(status), sqlc.arg(document_type), sqlc.arg(number), sqlc.arg(issue_date), sqlc.arg(document),
          sqlc.arg(ujp_doc_id), sqlc.arg(total_net), sqlc.arg(total_vat), sqlc.arg(total_gross), sqlc.arg(currency),
          sqlc.arg(problems), sqlc.narg(client_reference), sqlc.arg(fingerprint), sqlc.narg(original_id),
          sqlc.arg(sr_id), sqlc.arg(created_at), sqlc.arg(created_at), sqlc.arg(pace_key))
), hist AS (
  INSERT INTO einvoice_status_history (id, einvoice_id, from_status, to_status, cause, ujp_code, at)
  VALUES (sqlc.arg(history_id), sqlc.arg(id), NULL, sqlc.arg(status), sqlc.arg(history_cause), NULL, sqlc.arg(created_at))
), ev AS (
  INSERT INTO events (id, account_id, company_id, environment, type, object_id, payload, created_at)
  VALUES (sqlc.arg(event_id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(event_type),
          sqlc.arg(id), sqlc.arg(event_payload), sqlc.arg(created_at))
)
SELECT we.id, we.event_types, we.company_ids, we.enabled FROM webhook_endpoints we
WHERE we.account_id = sqlc.arg(account_id) AND we.environment = sqlc.arg(environment)
ORDER BY we.id;

-- name: GetEInvoice :one
-- An e-invoice of company_id within the credential's reach (tenancy.sql).
SELECT * FROM einvoices
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND company_id = sqlc.arg(company_id)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');

-- name: GetEInvoiceByID :one
SELECT * FROM einvoices WHERE id = sqlc.arg(id);

-- name: GetEInvoiceByClientReference :one
SELECT * FROM einvoices WHERE company_id = sqlc.arg(company_id) AND client_reference = sqlc.arg(client_reference);

-- name: ListEInvoices :many
-- Newest first; after_id is the last id of the previous page ('' for the
-- first). Each filter applies only when given.
SELECT * FROM einvoices
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment) AND company_id = sqlc.arg(company_id)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND (CAST(sqlc.arg(after_id) AS TEXT) = '' OR id < sqlc.arg(after_id))
  AND (CAST(sqlc.narg(status) AS TEXT) IS NULL OR status = sqlc.narg(status))
  AND (CAST(sqlc.narg(document_type) AS TEXT) IS NULL OR document_type = sqlc.narg(document_type))
  AND (CAST(sqlc.narg(issued_from) AS TEXT) IS NULL OR issue_date >= sqlc.narg(issued_from))
  AND (CAST(sqlc.narg(issued_to) AS TEXT) IS NULL OR issue_date <= sqlc.narg(issued_to))
  AND (CAST(sqlc.narg(client_reference) AS TEXT) IS NULL OR client_reference = sqlc.narg(client_reference))
  AND (CAST(sqlc.narg(euid) AS TEXT) IS NULL OR euid = sqlc.narg(euid))
  AND (CAST(sqlc.narg(number) AS TEXT) IS NULL OR number = sqlc.narg(number))
  -- The buyer's ЕДБ (digits only, checked by the caller) as the built
  -- document states it.
  AND (CAST(sqlc.narg(buyer_tin) AS TEXT) IS NULL OR document LIKE '%"buyerTin":"' || CAST(sqlc.narg(buyer_tin) AS TEXT) || '"%')
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: SetEInvoiceStatus :execrows
-- Moves only from the expected status, so two workers cannot both move it.
UPDATE einvoices SET status = sqlc.arg(to_status), problems = sqlc.arg(problems), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status);

-- name: SetEInvoiceDelivered :execrows
UPDATE einvoices SET status = sqlc.arg(to_status), euid = sqlc.arg(euid), qr_link = sqlc.narg(qr_link),
       updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status);

-- name: SetEInvoiceDocument :exec
UPDATE einvoices SET document = sqlc.arg(document), updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id);

-- name: AddEInvoiceStatus :exec
INSERT INTO einvoice_status_history (id, einvoice_id, from_status, to_status, cause, ujp_code, at)
VALUES (sqlc.arg(id), sqlc.arg(einvoice_id), sqlc.narg(from_status), sqlc.arg(to_status), sqlc.arg(cause),
        sqlc.narg(ujp_code), sqlc.arg(at));

-- name: ListEInvoiceStatus :many
SELECT * FROM einvoice_status_history WHERE einvoice_id = sqlc.arg(einvoice_id) ORDER BY id;

-- name: CreateEvent :exec
INSERT INTO events (id, account_id, company_id, environment, type, object_id, payload, created_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(type),
        sqlc.arg(object_id), sqlc.arg(payload), sqlc.arg(created_at));


-- name: SetEInvoiceSigningRequest :exec
UPDATE einvoices SET signing_request_id = sqlc.narg(signing_request_id) WHERE id = sqlc.arg(id);

-- name: SetEInvoiceProblems :exec
UPDATE einvoices SET problems = sqlc.arg(problems), updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id);

-- name: ListEInvoicesWithoutRequest :many
-- E-invoices of a company waiting for a signature with no request open
-- (asked when the company had no valid certificate, or in the backoff
-- after a passing refusal): registering a certificate asks for them.
SELECT * FROM einvoices
WHERE company_id = sqlc.arg(company_id) AND status = 'awaiting_signature' AND signing_request_id IS NULL
  AND sign_turn_since IS NULL
ORDER BY id LIMIT 500;
