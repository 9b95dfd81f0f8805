-- +goose Up
-- Rate limits shared by every process on one database (issue 12): one row
-- per credential and second, counting its requests in that second. Rows
-- older than a minute are deleted by the ratelimit.purge job.
CREATE TABLE rate_windows (
    credential   TEXT NOT NULL,
    window_start BIGINT NOT NULL, -- Unix seconds
    hits         BIGINT NOT NULL,
    PRIMARY KEY (credential, window_start)
);

-- +goose Down
DROP TABLE rate_windows;
