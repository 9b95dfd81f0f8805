-- name: CreateBlob :exec
INSERT INTO blobs (key, size, complete, created_at) VALUES (sqlc.arg(key), 0, FALSE, sqlc.arg(created_at));

-- name: PutBlobChunk :exec
INSERT INTO blob_chunks (key, seq, data) VALUES (sqlc.arg(key), sqlc.arg(seq), sqlc.arg(data));

-- name: CompleteBlob :execrows
UPDATE blobs SET size = sqlc.arg(size), complete = TRUE WHERE key = sqlc.arg(key) AND NOT complete;

-- name: GetBlob :one
SELECT * FROM blobs WHERE key = sqlc.arg(key);

-- name: GetBlobChunk :one
SELECT data FROM blob_chunks WHERE key = sqlc.arg(key) AND seq = sqlc.arg(seq);

-- name: DeleteBlobChunks :exec
DELETE FROM blob_chunks WHERE key = sqlc.arg(key);

-- name: DeleteBlob :exec
DELETE FROM blobs WHERE key = sqlc.arg(key);
