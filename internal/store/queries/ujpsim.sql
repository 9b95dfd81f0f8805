-- The sandbox simulator of UJP (package internal/ujpsim). Every write that
-- must not happen twice when several processes share the store is one
-- conditional statement: the unique (seller_tin, doc_id) of a document, a
-- status move only from the status it was read in, a counter decremented
-- only while positive, the rate slot taken only when free.

-- name: GetUJPSimState :one
-- The global faults, the clock and the faults of one seller (X-EDB), read
-- once per API call.
SELECT s.clock_offset_ns, s.clock_skew_ns, s.outage, s.latency_ns, s.error_rate,
       s.reject_code, s.reject_message, s.reject_count,
       COALESCE(f.outage, FALSE) AS seller_outage, COALESCE(f.reject_count, 0) AS seller_reject_count,
       COALESCE(f.call_count, 0) AS call_count, COALESCE(f.call_path, '') AS call_path,
       COALESCE(f.call_kind, '') AS call_kind, COALESCE(f.codelists_changed, FALSE) AS codelists_changed
FROM ujpsim_settings s
LEFT JOIN ujpsim_seller_faults f ON f.edb = sqlc.arg(edb)
WHERE s.id = 1;

-- name: GetUJPSimSettings :one
SELECT * FROM ujpsim_settings WHERE id = 1;

-- name: SetUJPSimFaults :exec
UPDATE ujpsim_settings
SET outage = sqlc.arg(outage), latency_ns = sqlc.arg(latency_ns), error_rate = sqlc.arg(error_rate),
    reject_code = sqlc.arg(reject_code),
    reject_message = sqlc.arg(reject_message), reject_count = sqlc.arg(reject_count)
WHERE id = 1;

-- name: SetUJPSimClockSkew :exec
UPDATE ujpsim_settings SET clock_skew_ns = sqlc.arg(clock_skew_ns) WHERE id = 1;

-- name: SetUJPSimOutage :exec
UPDATE ujpsim_settings SET outage = sqlc.arg(outage) WHERE id = 1;

-- name: SetUJPSimLatency :exec
UPDATE ujpsim_settings SET latency_ns = sqlc.arg(latency_ns) WHERE id = 1;

-- name: SetUJPSimErrorRate :exec
UPDATE ujpsim_settings SET error_rate = sqlc.arg(error_rate) WHERE id = 1;

-- name: SetUJPSimRejectSends :exec
UPDATE ujpsim_settings
SET reject_code = sqlc.arg(reject_code), reject_message = sqlc.arg(reject_message), reject_count = sqlc.arg(reject_count)
WHERE id = 1;

-- name: TakeUJPSimRejectSend :one
-- Consumes one forced rejection of every seller; no row when none is left.
UPDATE ujpsim_settings SET reject_count = reject_count - 1
WHERE id = 1 AND reject_count > 0
RETURNING reject_code, reject_message;

-- name: AdvanceUJPSimClock :one
UPDATE ujpsim_settings SET clock_offset_ns = clock_offset_ns + sqlc.arg(by_ns) WHERE id = 1
RETURNING clock_offset_ns;

-- name: ListUJPSimSellerFaults :many
SELECT * FROM ujpsim_seller_faults ORDER BY edb;

-- name: DeleteUJPSimSellerFaults :exec
DELETE FROM ujpsim_seller_faults;

-- name: PutUJPSimSellerFaults :exec
INSERT INTO ujpsim_seller_faults (edb, outage, reject_code, reject_message, reject_count,
    call_count, call_path, call_kind, call_status, call_code, call_shape, codelists_changed)
VALUES (sqlc.arg(edb), sqlc.arg(outage), sqlc.arg(reject_code), sqlc.arg(reject_message), sqlc.arg(reject_count),
    sqlc.arg(call_count), sqlc.arg(call_path), sqlc.arg(call_kind), sqlc.arg(call_status), sqlc.arg(call_code),
    sqlc.arg(call_shape), sqlc.arg(codelists_changed))
ON CONFLICT (edb) DO UPDATE SET outage = excluded.outage, reject_code = excluded.reject_code,
    reject_message = excluded.reject_message, reject_count = excluded.reject_count,
    call_count = excluded.call_count, call_path = excluded.call_path, call_kind = excluded.call_kind,
    call_status = excluded.call_status, call_code = excluded.call_code, call_shape = excluded.call_shape,
    codelists_changed = excluded.codelists_changed;

-- name: SetUJPSimSellerCallFault :exec
INSERT INTO ujpsim_seller_faults (edb, call_count, call_path, call_kind, call_status, call_code, call_shape)
VALUES (sqlc.arg(edb), sqlc.arg(call_count), sqlc.arg(call_path), sqlc.arg(call_kind), sqlc.arg(call_status),
    sqlc.arg(call_code), sqlc.arg(call_shape))
ON CONFLICT (edb) DO UPDATE SET call_count = excluded.call_count, call_path = excluded.call_path,
    call_kind = excluded.call_kind, call_status = excluded.call_status, call_code = excluded.call_code,
    call_shape = excluded.call_shape;

-- name: TakeUJPSimSellerCallFault :one
-- Consumes one call fault of a seller of one of two kinds; no row when
-- none is left.
UPDATE ujpsim_seller_faults SET call_count = call_count - 1
WHERE edb = sqlc.arg(edb) AND call_count > 0 AND (call_kind = sqlc.arg(kind_a) OR call_kind = sqlc.arg(kind_b))
RETURNING call_path, call_kind, call_status, call_code, call_shape;

-- name: SetUJPSimSellerCodeLists :exec
INSERT INTO ujpsim_seller_faults (edb, codelists_changed) VALUES (sqlc.arg(edb), sqlc.arg(codelists_changed))
ON CONFLICT (edb) DO UPDATE SET codelists_changed = excluded.codelists_changed;

-- name: SetUJPSimSellerOutage :exec
INSERT INTO ujpsim_seller_faults (edb, outage) VALUES (sqlc.arg(edb), sqlc.arg(outage))
ON CONFLICT (edb) DO UPDATE SET outage = excluded.outage;

-- name: SetUJPSimSellerRejects :exec
INSERT INTO ujpsim_seller_faults (edb, reject_code, reject_message, reject_count)
VALUES (sqlc.arg(edb), sqlc.arg(reject_code), sqlc.arg(reject_message), sqlc.arg(reject_count))
ON CONFLICT (edb) DO UPDATE SET reject_code = excluded.reject_code, reject_message = excluded.reject_message,
    reject_count = excluded.reject_count;

-- name: TakeUJPSimSellerRejectSend :one
-- Consumes one forced rejection of a seller; no row when none is left.
UPDATE ujpsim_seller_faults SET reject_count = reject_count - 1
WHERE edb = sqlc.arg(edb) AND reject_count > 0
RETURNING reject_code, reject_message;

-- name: SetUJPSimBurst :exec
-- The next burst calls of a user are answered E4007.
INSERT INTO ujpsim_rate (eujp_id, next_at, burst) VALUES (sqlc.arg(eujp_id), sqlc.arg(next_at), sqlc.arg(burst))
ON CONFLICT (eujp_id) DO UPDATE SET burst = excluded.burst;

-- name: TakeUJPSimBurst :execrows
UPDATE ujpsim_rate SET burst = burst - 1 WHERE eujp_id = sqlc.arg(eujp_id) AND burst > 0;

-- name: CountUJPSimRefusal :exec
-- One more call of the user answered E4007.
UPDATE ujpsim_rate SET refused = refused + 1 WHERE eujp_id = sqlc.arg(eujp_id);

-- name: ListUJPSimRefusals :many
-- The users with calls answered E4007, and how many.
SELECT eujp_id, refused FROM ujpsim_rate WHERE refused > 0 ORDER BY eujp_id;

-- name: PutUJPSimUser :exec
INSERT INTO ujpsim_users (eujp_id, created_at) VALUES (sqlc.arg(eujp_id), sqlc.arg(created_at))
ON CONFLICT (eujp_id) DO NOTHING;

-- name: CountUJPSimUser :one
SELECT COUNT(*) FROM ujpsim_users WHERE eujp_id = sqlc.arg(eujp_id);

-- name: PutUJPSimPrivilege :exec
INSERT INTO ujpsim_privileges (eujp_id, edb, privilege) VALUES (sqlc.arg(eujp_id), sqlc.arg(edb), sqlc.arg(privilege))
ON CONFLICT (eujp_id, edb, privilege) DO NOTHING;

-- name: DeleteUJPSimPrivilege :exec
DELETE FROM ujpsim_privileges WHERE eujp_id = sqlc.arg(eujp_id) AND edb = sqlc.arg(edb) AND privilege = sqlc.arg(privilege);

-- name: CountUJPSimPrivilege :one
SELECT COUNT(*) FROM ujpsim_privileges WHERE eujp_id = sqlc.arg(eujp_id) AND edb = sqlc.arg(edb) AND privilege = sqlc.arg(privilege);

-- name: ListUJPSimPrivileges :many
SELECT * FROM ujpsim_privileges WHERE eujp_id = sqlc.arg(eujp_id) ORDER BY edb, privilege;

-- name: TakeUJPSimRateSlot :execrows
-- UJP's one request per window per user, judged on arrival times: 1 row
-- when the call (arrived at now; next_at = now + window) came at least a
-- window after the user's latest accepted call (ujpsim_rate.next_at, that
-- call's arrival + window, is not after now) or at least a window before it
-- (the store may apply two calls in another order than they arrived:
-- ujpsim_rate.next_at >= early, now + two windows); the latest accepted
-- arrival is kept. 0 when the call came within a window of it.
INSERT INTO ujpsim_rate (eujp_id, next_at) VALUES (sqlc.arg(eujp_id), sqlc.arg(next_at))
ON CONFLICT (eujp_id) DO UPDATE
SET next_at = CASE WHEN ujpsim_rate.next_at > excluded.next_at THEN ujpsim_rate.next_at ELSE excluded.next_at END
WHERE ujpsim_rate.next_at <= sqlc.arg(now) OR ujpsim_rate.next_at >= sqlc.arg(early);

-- name: ListUJPSimCompanies :many
-- The registry entries added through /_sim among two tax numbers (a
-- document's seller and buyer), in one query.
SELECT * FROM ujpsim_companies WHERE tax_number = sqlc.arg(first) OR tax_number = sqlc.arg(second);

-- name: PutUJPSimCompany :exec
INSERT INTO ujpsim_companies (tax_number, company, updated_at)
VALUES (sqlc.arg(tax_number), sqlc.arg(company), sqlc.arg(updated_at))
ON CONFLICT (tax_number) DO UPDATE SET company = excluded.company, updated_at = excluded.updated_at;

-- name: PutUJPSimCertificate :exec
INSERT INTO ujpsim_certificates (edb, serial, eujp_id, der, not_after, registered_at)
VALUES (sqlc.arg(edb), sqlc.arg(serial), sqlc.arg(eujp_id), sqlc.arg(der), sqlc.arg(not_after), sqlc.arg(registered_at))
ON CONFLICT (edb, serial) DO UPDATE SET eujp_id = excluded.eujp_id, der = excluded.der,
    not_after = excluded.not_after, registered_at = excluded.registered_at;

-- name: ListUJPSimCertificatesBySerial :many
SELECT * FROM ujpsim_certificates WHERE serial = sqlc.arg(serial) ORDER BY edb;

-- name: GetUJPSimDocument :one
SELECT * FROM ujpsim_documents WHERE euid = sqlc.arg(euid);

-- name: GetUJPSimDocumentByDocID :one
SELECT euid FROM ujpsim_documents WHERE seller_tin = sqlc.arg(seller_tin) AND doc_id = sqlc.arg(doc_id);

-- name: InsertUJPSimDocument :one
-- No row (sql.ErrNoRows) means the seller already used the docId: E1023.
INSERT INTO ujpsim_documents (euid, seller_tin, doc_id, doc_type, doc_storno, buyer_tin, status, qr_link,
                              received_at, decide_by, references_euid, payload, created_at)
VALUES (sqlc.arg(euid), sqlc.arg(seller_tin), sqlc.arg(doc_id), sqlc.arg(doc_type), sqlc.arg(doc_storno),
        sqlc.arg(buyer_tin), sqlc.arg(status), sqlc.arg(qr_link), sqlc.arg(received_at), sqlc.arg(decide_by),
        sqlc.arg(references_euid), sqlc.arg(payload), sqlc.arg(created_at))
ON CONFLICT (seller_tin, doc_id) DO NOTHING
RETURNING euid;

-- name: LockUJPSimDocument :execrows
-- Takes a document's row lock for the rest of the transaction (a write
-- that changes nothing): a storno or correction of it waits for another
-- being stored, and then reads what that one committed. On SQLite, the
-- one writer already runs them one after the other.
UPDATE ujpsim_documents SET status = status WHERE euid = sqlc.arg(euid);

-- name: MoveUJPSimDocument :execrows
-- A status move from the status the caller read; 0 rows means another
-- call moved it first.
UPDATE ujpsim_documents SET status = sqlc.arg(to_status)
WHERE euid = sqlc.arg(euid) AND status = sqlc.arg(from_status);

-- name: InsertUJPSimHistory :one
INSERT INTO ujpsim_history (euid, seller_tin, buyer_tin, at, change)
VALUES (sqlc.arg(euid), sqlc.arg(seller_tin), sqlc.arg(buyer_tin), sqlc.arg(at), sqlc.arg(change))
RETURNING id;

-- name: ListUJPSimHistory :many
SELECT * FROM ujpsim_history WHERE euid = sqlc.arg(euid) ORDER BY id;

-- name: ListUJPSimDocumentsBySeller :many
SELECT * FROM ujpsim_documents WHERE seller_tin = sqlc.arg(seller_tin) ORDER BY euid;

-- name: ListUJPSimHistoryBySeller :many
SELECT * FROM ujpsim_history WHERE seller_tin = sqlc.arg(seller_tin) ORDER BY id;

-- name: CountUJPSimDocuments :one
SELECT COUNT(*) FROM ujpsim_documents;

-- name: UJPSimSalesChanges :many
-- The change feed of a seller: changes at or after from_at and before
-- until_at.
SELECT * FROM ujpsim_history
WHERE seller_tin = sqlc.arg(seller_tin) AND at >= sqlc.arg(from_at)
  AND at < sqlc.arg(until_at)
ORDER BY id;

-- name: UJPSimPurchaseChanges :many
SELECT * FROM ujpsim_history
WHERE buyer_tin = sqlc.arg(buyer_tin) AND at >= sqlc.arg(from_at)
  AND at < sqlc.arg(until_at)
ORDER BY id;

-- name: UJPSimSalesDocuments :many
SELECT * FROM ujpsim_documents
WHERE seller_tin = sqlc.arg(seller_tin) AND received_at >= sqlc.arg(from_at) AND received_at < sqlc.arg(until_at)
ORDER BY euid;

-- name: UJPSimPurchaseDocuments :many
SELECT * FROM ujpsim_documents
WHERE buyer_tin = sqlc.arg(buyer_tin) AND received_at >= sqlc.arg(from_at) AND received_at < sqlc.arg(until_at)
ORDER BY euid;

-- name: UJPSimStornosOf :many
-- The stornos and corrections that reference a document, oldest first.
SELECT * FROM ujpsim_documents WHERE references_euid = sqlc.arg(euid) ORDER BY euid;

-- name: UJPSimDueDocuments :many
-- Documents still in 01 whose buyer's deadline has passed (a storno too:
-- its auto-acceptance voids its original).
SELECT euid, seller_tin, buyer_tin, decide_by, received_at FROM ujpsim_documents
WHERE status = '01' AND decide_by <= sqlc.arg(now)
ORDER BY decide_by, euid
LIMIT sqlc.arg(max_rows);

-- name: DeleteUJPSimDocumentsBefore :execrows
-- Retention: documents stored before the cutoff, oldest first, at most
-- max_rows at a time; their history goes with them (ON DELETE CASCADE).
DELETE FROM ujpsim_documents
WHERE euid IN (SELECT d.euid FROM ujpsim_documents d WHERE d.created_at < sqlc.arg(before)
               ORDER BY d.created_at, d.euid LIMIT sqlc.arg(max_rows));

-- name: DeleteUJPSimCertificatesExpiredBefore :execrows
DELETE FROM ujpsim_certificates WHERE not_after < sqlc.arg(before);

-- name: DeleteUJPSimRateBefore :execrows
DELETE FROM ujpsim_rate WHERE next_at < sqlc.arg(before);

-- name: DeleteUJPSimHistoryOf :exec
-- A document the simulator loses (LoseDocument): its history first.
DELETE FROM ujpsim_history WHERE euid = sqlc.arg(euid);

-- name: DeleteUJPSimDocument :execrows
DELETE FROM ujpsim_documents WHERE euid = sqlc.arg(euid);
