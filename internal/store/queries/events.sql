-- Events (GET /v1/events, the event feed, webhook fan-out). CreateEvent is
-- in einvoices.sql. Events are written in the transaction of the change
-- they describe, without a feed position (seq); the sequencer numbers them
-- after they committed (see migration 00011).

-- name: ListEvents :many
-- (The CASTs only test for NULL: on SQLite they would not give a time.)
-- Newest first by id; after_id = '' starts at the newest. all_companies
-- and allowed are the credential's allow-list (auth.Principal.AllowList):
-- TRUE for every company, else the listed ids separated by spaces. A row
-- of company X is in the list when removing ' X ' from ' allowed '
-- changes it: replace() and || mean the same on both engines, where arrays
-- and IN-lists of variable length do not. FALSE and '' reach nothing.
SELECT * FROM events
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND (CAST(sqlc.arg(after_id) AS TEXT) = '' OR id < sqlc.arg(after_id))
  AND (CAST(sqlc.narg(type) AS TEXT) IS NULL OR type = sqlc.narg(type))
  AND (CAST(sqlc.narg(object_id) AS TEXT) IS NULL OR object_id = sqlc.narg(object_id))
  AND (CAST(sqlc.narg(company_id) AS TEXT) IS NULL OR company_id = sqlc.narg(company_id))
  AND (CAST(sqlc.narg(created_from) AS TIMESTAMPTZ) IS NULL OR created_at >= sqlc.narg(created_from))
  AND (CAST(sqlc.narg(created_to) AS TIMESTAMPTZ) IS NULL OR created_at < sqlc.narg(created_to))
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: GetEventInReach :one
-- An event within the credential's reach (tenancy.sql).
SELECT * FROM events
WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');

-- name: GetEvent :one
SELECT * FROM events WHERE id = sqlc.arg(id);

-- name: HasUnsequencedEvents :one
SELECT EXISTS (SELECT 1 FROM events WHERE seq IS NULL);

-- name: LockEventSequence :one
-- Takes the sequencer's lock (the row lock on PostgreSQL; SQLite's single
-- writer already serialises) and returns the last number given out.
UPDATE event_sequence SET last = last WHERE id = 1 RETURNING last;

-- name: SequenceEvents :execrows
-- Numbers up to lim committed events that have no seq yet, in id order,
-- from base + 1 on. Run only while holding LockEventSequence.
UPDATE events SET seq = CAST(sqlc.arg(base) AS BIGINT) + s.n
FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM events
      WHERE seq IS NULL ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT)) s
WHERE events.id = s.id;

-- name: AdvanceEventSequence :exec
UPDATE event_sequence SET last = sqlc.arg(last) WHERE id = 1;

-- name: EventHead :one
-- The last number given out: every event numbered up to it is visible.
SELECT last FROM event_sequence WHERE id = 1;

-- name: EventFeed :many
-- Oldest first, strictly after the cursor and up to the head read before;
-- all_companies and allowed as in ListEvents.
SELECT * FROM events
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND seq > CAST(sqlc.arg(after_seq) AS BIGINT) AND seq <= CAST(sqlc.arg(head) AS BIGINT)
  AND (CAST(sqlc.narg(type) AS TEXT) IS NULL OR type = sqlc.narg(type))
  AND (CAST(sqlc.narg(object_id) AS TEXT) IS NULL OR object_id = sqlc.narg(object_id))
  AND (CAST(sqlc.narg(company_id) AS TEXT) IS NULL OR company_id = sqlc.narg(company_id))
  AND (CAST(sqlc.narg(created_from) AS TIMESTAMPTZ) IS NULL OR created_at >= sqlc.narg(created_from))
  AND (CAST(sqlc.narg(created_to) AS TIMESTAMPTZ) IS NULL OR created_at < sqlc.narg(created_to))
ORDER BY seq LIMIT CAST(sqlc.arg(lim) AS BIGINT);
