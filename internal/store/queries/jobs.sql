-- Durable jobs (package internal/jobs). The claim statement is not here: it
-- needs FOR UPDATE SKIP LOCKED on PostgreSQL only, so package jobs keeps its
-- two dialect versions itself.
--
-- States: available (waiting for run_at), running (claimed, lease in
-- locked_until), retryable (failed, waiting for run_at), and the terminal
-- completed, cancelled, discarded.

-- name: ReleaseJobUniqueKey :exec
-- A unique key dedupes only while its job is unfinished; a finished job gives
-- the key up lazily, when the next job with that key is enqueued, so that
-- finished rows keep their key for inspection until then.
UPDATE jobs SET unique_key = NULL
WHERE unique_key = sqlc.arg(unique_key) AND state IN ('completed', 'cancelled', 'discarded');

-- name: InsertJob :one
-- No row (sql.ErrNoRows) means an unfinished job holds the unique key.
INSERT INTO jobs (kind, args, state, run_at, max_attempts, unique_key, created_at)
VALUES (sqlc.arg(kind), sqlc.arg(args), 'available', sqlc.arg(run_at), sqlc.arg(max_attempts),
        sqlc.narg(unique_key), sqlc.arg(created_at))
ON CONFLICT (unique_key) DO NOTHING
RETURNING id;

-- name: GetJobIDByUniqueKey :one
SELECT id FROM jobs WHERE unique_key = sqlc.arg(unique_key);

-- name: GetJob :one
SELECT * FROM jobs WHERE id = sqlc.arg(id);

-- name: ListJobsByKind :many
SELECT * FROM jobs WHERE kind = sqlc.arg(kind) ORDER BY id;

-- name: CountJobsByState :many
SELECT state, COUNT(*) AS n FROM jobs GROUP BY state ORDER BY state;

-- name: FinishJob :execrows
-- Ends a job the caller still holds (same runner, same attempt): completed,
-- cancelled or discarded. Zero rows means the lease was lost to another
-- runner, whose result wins.
UPDATE jobs
SET state = sqlc.arg(state), last_error = sqlc.arg(last_error), finished_at = sqlc.arg(finished_at),
    locked_by = '', locked_until = NULL
WHERE id = sqlc.arg(id) AND state = 'running'
  AND locked_by = sqlc.arg(locked_by) AND attempt = sqlc.arg(attempt);

-- name: RetryJob :execrows
UPDATE jobs
SET state = 'retryable', last_error = sqlc.arg(last_error), run_at = sqlc.arg(run_at),
    locked_by = '', locked_until = NULL
WHERE id = sqlc.arg(id) AND state = 'running'
  AND locked_by = sqlc.arg(locked_by) AND attempt = sqlc.arg(attempt);

-- name: SnoozeJob :execrows
-- A snooze is not a failure: the attempt the claim counted is given back.
UPDATE jobs
SET state = 'available', attempt = attempt - 1, run_at = sqlc.arg(run_at),
    locked_by = '', locked_until = NULL
WHERE id = sqlc.arg(id) AND state = 'running'
  AND locked_by = sqlc.arg(locked_by) AND attempt = sqlc.arg(attempt);

-- name: ExtendJobLease :execrows
UPDATE jobs SET locked_until = sqlc.arg(locked_until)
WHERE id = sqlc.arg(id) AND state = 'running'
  AND locked_by = sqlc.arg(locked_by) AND attempt = sqlc.arg(attempt);

-- name: DeleteFinishedJobs :execrows
-- Retention: finished jobs older than the cutoff are history nobody needs.
DELETE FROM jobs
WHERE state IN ('completed', 'cancelled', 'discarded') AND finished_at < sqlc.arg(before);

-- name: RescheduleJob :execrows
-- Moves the waiting job that holds a unique key to run_at (a retry brought
-- forward by a person); a running or finished job is left alone.
UPDATE jobs SET run_at = sqlc.arg(run_at)
WHERE unique_key = sqlc.arg(unique_key) AND state IN ('available', 'retryable');
