-- name: HitRateWindow :one
-- Counts one request of a credential in a window and returns the count so
-- far; the upsert takes the row's lock, so concurrent processes count
-- exactly.
INSERT INTO rate_windows (credential, window_start, hits) VALUES (sqlc.arg(credential), sqlc.arg(window_start), 1)
ON CONFLICT (credential, window_start) DO UPDATE SET hits = rate_windows.hits + 1
RETURNING hits;

-- name: PurgeRateWindows :execrows
DELETE FROM rate_windows WHERE window_start < sqlc.arg(before);
