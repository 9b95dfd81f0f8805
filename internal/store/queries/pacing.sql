-- Month-end at UJP's pace (package internal/einvoicing, pacing.go): each UJP
-- user's (pace_key's) documents are signed just in time for their send
-- turn. A document is "in flight" from the moment its document signing
-- request is issued until it is sent (awaiting_signature with a request,
-- queued, submitting); one "waiting for its turn" has no request yet
-- (sign_turn_since set). The queries of the documents in flight say so
-- in the words of einvoices_pace_inflight's predicate, and those of the
-- sends in einvoices_pace_send's, so that both engines see the index
-- applies (a backlog of thousands waiting to be signed is not walked).

-- name: PaceState :one
-- -2 when one of the company's documents of the user waits for its turn
-- to be signed, -1 when another company's does (then nothing is counted:
-- an issue during a backlog costs one or two index probes); otherwise the
-- user's documents in flight, counted up to lim.
SELECT CAST(CASE WHEN EXISTS (SELECT 1 FROM einvoices c WHERE c.pace_key = sqlc.arg(key) AND c.company_id = sqlc.arg(company_id) AND c.sign_turn_since IS NOT NULL) THEN -2
  WHEN EXISTS (SELECT 1 FROM einvoices w WHERE w.pace_key = sqlc.arg(key) AND w.sign_turn_since IS NOT NULL) THEN -1
  ELSE (SELECT COUNT(*) FROM (
     SELECT 1 FROM einvoices f
     WHERE f.pace_key = sqlc.arg(key)
       AND (f.status IN ('queued', 'submitting') OR (f.status = 'awaiting_signature' AND f.signing_request_id IS NOT NULL))
     LIMIT sqlc.arg(lim)) AS t) END AS BIGINT) AS in_flight;

-- name: OldestWaitingOfCompany :one
-- A company's oldest document of the user waiting for its turn to be signed.
SELECT * FROM einvoices
WHERE pace_key = sqlc.arg(key) AND company_id = sqlc.arg(company_id) AND sign_turn_since IS NOT NULL
ORDER BY created_at, id
LIMIT 1;

-- name: PaceCompanies :many
-- When each company of the user last had a request issued: the order in
-- which they take turns.
SELECT company_id, issued_at FROM ujp_pace_companies WHERE key = sqlc.arg(key);

-- name: PaceCompanyIssued :exec
INSERT INTO ujp_pace_companies (key, company_id, issued_at, sent_at)
VALUES (sqlc.arg(key), sqlc.arg(company_id), sqlc.arg(at), sqlc.arg(at))
ON CONFLICT (key, company_id) DO UPDATE SET issued_at = excluded.issued_at;

-- name: EndSignTurnWait :execrows
-- The document's turn to be signed has come: 1 when it was still waiting
-- (0: another transaction took it first).
UPDATE einvoices SET sign_turn_since = NULL WHERE id = sqlc.arg(id) AND sign_turn_since IS NOT NULL;

-- name: PaceKeysWaiting :many
-- The users with documents waiting for their turn to be signed.
SELECT DISTINCT pace_key FROM einvoices WHERE sign_turn_since IS NOT NULL;

-- name: WaitingCounts :many
-- The user's documents waiting for their turn, by company.
SELECT company_id, COUNT(*) AS n FROM einvoices
WHERE pace_key = sqlc.arg(key) AND sign_turn_since IS NOT NULL
GROUP BY company_id;

-- name: WaitingAheadInCompany :one
-- The company's documents of the user waiting for their turn that are
-- older than (created_at, id).
SELECT COUNT(*) FROM einvoices
WHERE pace_key = sqlc.arg(key) AND company_id = sqlc.arg(company_id) AND sign_turn_since IS NOT NULL
  AND (created_at < sqlc.arg(created_at) OR (created_at = sqlc.arg(created_at) AND id < sqlc.arg(id)));

-- name: InFlightAhead :one
-- The user's documents in flight issued before (created_at, id).
SELECT COUNT(*) FROM einvoices
WHERE pace_key = sqlc.arg(key)
  AND (status IN ('queued', 'submitting') OR (status = 'awaiting_signature' AND signing_request_id IS NOT NULL))
  AND (created_at < sqlc.arg(created_at) OR (created_at = sqlc.arg(created_at) AND id < sqlc.arg(id)));

-- name: SendsAhead :one
-- The user's documents whose send goes before that of a document queued
-- at (updated_at, id): those being sent, and those queued (signed)
-- before it. The queued ones are a range of einvoices_pace_send, which
-- the row comparison lets the engines seek.
SELECT CAST((SELECT COUNT(*) FROM einvoices s
        WHERE s.pace_key = sqlc.arg(key) AND s.status IN ('queued', 'submitting') AND s.status = 'submitting')
     + (SELECT COUNT(*) FROM einvoices q
        WHERE q.pace_key = sqlc.arg(key) AND q.status IN ('queued', 'submitting') AND q.status = 'queued'
          AND (q.updated_at, q.id) < (sqlc.arg(updated_at), CAST(sqlc.arg(id) AS TEXT))) AS BIGINT) AS ahead;

-- name: InFlightCount :one
-- The user's documents in flight.
SELECT COUNT(*) FROM einvoices
WHERE pace_key = sqlc.arg(key)
  AND (status IN ('queued', 'submitting') OR (status = 'awaiting_signature' AND signing_request_id IS NOT NULL));

-- name: LockPace :exec
-- Holds the user's pacing row until the transaction ends: a transaction
-- that may issue one of the user's last places in flight takes it first,
-- so two (on PostgreSQL) do not both take the last one.
INSERT INTO ujp_pacers (key, active, seen_at) VALUES (sqlc.arg(key), TRUE, sqlc.arg(now))
ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at;

-- name: WantPDF :exec
-- A delivered document whose PDF is read once its user's sends are done.
INSERT INTO einvoice_pdf_wanted (einvoice_id, pace_key, at) VALUES (sqlc.arg(einvoice_id), sqlc.arg(pace_key), sqlc.arg(at))
ON CONFLICT (einvoice_id) DO NOTHING;

-- name: WantedPDFs :many
SELECT einvoice_id FROM einvoice_pdf_wanted WHERE pace_key = sqlc.arg(key) ORDER BY at, einvoice_id LIMIT sqlc.arg(lim);

-- name: DeleteWantedPDF :exec
DELETE FROM einvoice_pdf_wanted WHERE einvoice_id = sqlc.arg(einvoice_id);

-- name: CompanyPaced :one
-- 1 when the company has a document of the user, other than id, in flight
-- or waiting for its turn to be signed; 0 when it has none.
SELECT COUNT(*) FROM (
  SELECT 1 FROM einvoices
  WHERE pace_key = sqlc.arg(key) AND company_id = sqlc.arg(company_id) AND id <> sqlc.arg(id)
    AND status IN ('awaiting_signature', 'queued', 'submitting')
  LIMIT 1) AS t;
